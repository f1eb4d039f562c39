/**
 * GET /v1/events over a real socket: the owner's events as Server-Sent Events, once each
 * change has committed, and nobody else's; the 401 rules; not cut by the whole-request
 * deadline; ended when the app closes; ended when the credential it was opened with is
 * rotated, disabled or deleted, on any instance; the cap counted across instances; HEAD.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hashAccessCode } from '../../src/accounts/access-code.ts';
import { buildApp } from '../../src/app.ts';
import type { Store } from '../../src/store/store.ts';
import { newAccount } from '../helpers/app.ts';
import { openEventStream, type EventStream } from '../helpers/event-stream.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { appFor, createLinkOk, listen } from './support.ts';

const TARGET = 'https://example.com/';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';

async function started(t: Parameters<typeof appFor>[0], overrides: Parameters<typeof appFor>[1] = {}, extra: Parameters<typeof appFor>[2] = {}) {
  const testApp = await appFor(t, overrides, extra);
  const { host, port } = await listen(testApp.app);
  return { ...testApp, base: `http://${host}:${port}` };
}

describe('GET /v1/events', () => {
  test('streams each of the owner\'s events, with id, event and data lines, and nobody else\'s', async (t) => {
    const { app, base } = await started(t, { trustProxy: ['127.0.0.1'] });
    const owner = await newAccount(app);
    const other = await newAccount(app);
    const stream = await openEventStream(base, { authorization: `Bearer ${owner.code}` });
    t.after(() => stream.close());
    assert.equal(stream.status, 200);
    assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
    assert.equal(stream.headers['cache-control'], 'no-store');

    const theirs = await createLinkOk(app, other.code, { url: TARGET });
    const short = await createLinkOk(app, owner.code, { url: TARGET, title: 'Hello', tags: 'a,b' });
    const created = await stream.next((e) => e.event === 'link.created', 'link.created');
    assert.match(created.id, /^msg_[0-9a-f]{32}$/);
    assert.deepEqual(Object.keys(created.data), ['type', 'timestamp', 'data']);
    assert.equal(created.data.type, 'link.created');
    assert.deepEqual(created.data.data, {
      ShortCode: short, PointsTo: TARGET, CreatedBy: owner.uid, Accesses: 0,
      DateCreated: created.data.data.DateCreated, Title: 'Hello', Tags: ['a', 'b'], ExpiresAt: null, MaxVisits: null, Domain: null, ForwardQuery: false, Protected: false, Rules: [],
    });

    await app.inject({ method: 'GET', url: `/${short}`, headers: { 'user-agent': CHROME, referer: 'https://news.example.org/x', 'x-forwarded-for': '81.2.69.160' } });
    await app.inject({ method: 'GET', url: `/v1/get/${short}`, headers: { 'user-agent': CHROME } });
    await app.inject({ method: 'GET', url: `/${theirs}` });
    const visitsSoFar = () => stream.events.filter((e) => e.event === 'link.visited').flatMap((e) => e.data.data.visits as Record<string, unknown>[]);
    await waitFor(() => visitsSoFar().length >= 2, 'two visits');
    const visits = visitsSoFar();
    assert.equal(visits.length, 2);
    assert.deepEqual(Object.keys(visits[0]!), ['ShortCode', 'Time', 'Bot', 'Referrer', 'Country', 'Browser', 'OperatingSystem', 'Device']);
    assert.deepEqual(
      { ...visits[0], Time: undefined },
      { ShortCode: short, Time: undefined, Bot: false, Referrer: 'news.example.org', Country: 'GB', Browser: 'Chrome', OperatingSystem: 'Windows', Device: 'desktop' },
    );
    assert.equal(visits[1]!.Referrer, '(direct)');

    const patched = await app.inject({ method: 'PATCH', url: '/v1/link', query: { short, title: 'Changed' }, headers: { authorization: `Bearer ${owner.code}` } });
    assert.equal(patched.statusCode, 200, patched.body);
    const updated = await stream.next((e) => e.event === 'link.updated', 'link.updated');
    assert.equal(updated.data.data.Title, 'Changed');
    assert.equal(updated.data.data.Accesses, 2);

    const deleted = await app.inject({ method: 'DELETE', url: '/v1/link', query: { short }, headers: { authorization: `Bearer ${owner.code}` } });
    assert.equal(deleted.statusCode, 200, deleted.body);
    const gone = await stream.next((e) => e.event === 'link.deleted', 'link.deleted');
    assert.deepEqual({ ShortCode: gone.data.data.ShortCode, Title: gone.data.data.Title, Accesses: gone.data.data.Accesses }, { ShortCode: short, Title: 'Changed', Accesses: 2 });

    const rotated = await app.inject({ method: 'POST', url: '/v1/rotate_access_code', headers: { authorization: `Bearer ${owner.code}` } });
    assert.equal(rotated.statusCode, 200, rotated.body);
    const rotation = await stream.next((e) => e.event === 'account.rotated', 'account.rotated');
    assert.deepEqual(rotation.data.data, { Uid: owner.uid });

    assert.deepEqual(stream.events.map((e) => e.event), ['link.created', ...stream.events.slice(1, -3).map(() => 'link.visited'), 'link.updated', 'link.deleted', 'account.rotated']);
    assert.ok(stream.events.every((e) => e.event !== 'link.created' || e.data.data.ShortCode !== theirs), 'another account\'s link leaked');
    assert.equal(new Set(stream.events.map((e) => e.id)).size, stream.events.length);
  });

  test('answers 401 with WWW-Authenticate without a valid access code, and takes the code from the query too', async (t) => {
    const { app, base } = await started(t);
    const none = await openEventStream(base);
    assert.equal(none.status, 401);
    assert.equal(none.headers['www-authenticate'], 'Bearer realm="shortlink"');
    assert.equal(none.body(), 'Unable to handle request: an access code is required');
    const wrong = await openEventStream(base, { authorization: 'Basic abc' });
    assert.equal(wrong.status, 401);
    const { code } = await newAccount(app);
    const conflicting = await openEventStream(base, { authorization: `Bearer ${code}` }, `/v1/events?auth=${crypto.randomUUID()}`);
    assert.equal(conflicting.status, 400);
    const byQuery = await openEventStream(base, {}, `/v1/events?auth=${code}`);
    t.after(() => byQuery.close());
    assert.equal(byQuery.status, 200);
  });

  test('caps the streams of one account (429)', async (t) => {
    const { app, base } = await started(t);
    const { code } = await newAccount(app);
    const streams: EventStream[] = [];
    for (let i = 0; i < 10; i++) streams.push(await openEventStream(base, { authorization: code }));
    t.after(() => streams.forEach((s) => s.close()));
    assert.ok(streams.every((s) => s.status === 200));
    const refused = await openEventStream(base, { authorization: code });
    assert.equal(refused.status, 429);
    assert.match(refused.body(), /^Unable to handle request: at most 10 event streams/);
    assert.ok(refused.headers['retry-after'] !== undefined);
    // One closed frees its place.
    streams.pop()!.close();
    const again = await waitFor(async () => {
      const s = await openEventStream(base, { authorization: code });
      return s.status === 200 ? s : undefined;
    }, 'a free stream slot');
    streams.push(again);
  });

  test('outlives the whole-request deadline', async (t) => {
    // STORAGE_TIMEOUT 50 ms: any other request would be cut after 1.05 s.
    const { app, base } = await started(t, { storageTimeoutMs: 50 });
    const { code } = await newAccount(app);
    const stream = await openEventStream(base, { authorization: code });
    t.after(() => stream.close());
    const { setTimeout: pause } = await import('node:timers/promises');
    await pause(1600);
    assert.equal(stream.ended(), false, 'the deadline cut the stream');
    await createLinkOk(app, code, { url: TARGET });
    await stream.next((e) => e.event === 'link.created', 'link.created after the deadline');
  });

  test('an API key with the webhooks scope reads the stream; deleting the key ends it, and a key without the scope is 403', async (t) => {
    const { app, base } = await started(t);
    const { code } = await newAccount(app);
    const createKey = async (scopes: string) => {
      const created = await app.inject({ method: 'POST', url: '/v1/keys', query: { name: `stream ${scopes}`, scopes }, headers: { authorization: `Bearer ${code}` } });
      assert.equal(created.statusCode, 200, created.body);
      return created.json() as { Id: string; Key: string };
    };
    const key = await createKey('webhooks');
    const stream = await openEventStream(base, { authorization: `Bearer ${key.Key}` });
    t.after(() => stream.close());
    assert.equal(stream.status, 200);
    await createLinkOk(app, code, { url: TARGET });
    await stream.next((e) => e.event === 'link.created', 'link.created on the key\'s stream');
    const readOnly = await createKey('links:read');
    const refused = await openEventStream(base, { authorization: `Bearer ${readOnly.Key}` });
    assert.equal(refused.status, 403);
    assert.match(refused.body(), /^Unable to handle request: the key does not allow this/);
    const deleted = await app.inject({ method: 'DELETE', url: '/v1/keys', query: { id: key.Id }, headers: { authorization: `Bearer ${code}` } });
    assert.equal(deleted.statusCode, 200, deleted.body);
    await waitFor(() => stream.ended(), 'the deleted key\'s stream to end');
    assert.ok(stream.comments.includes('revoked'));
  });

  test('ends open streams when the app closes, without waiting for them', async (t) => {
    const testApp = await appFor(t);
    const { host, port } = await listen(testApp.app);
    const { code } = await newAccount(testApp.app);
    const stream = await openEventStream(`http://${host}:${port}`, { authorization: code });
    const began = performance.now();
    await testApp.app.close();
    assert.ok(performance.now() - began < 2000, `close took ${Math.round(performance.now() - began)} ms`);
    await waitFor(() => stream.ended(), 'the stream to end');
    assert.ok(stream.comments.includes('closing'));
  });
});

/** A second app on the same database, as another instance would be; closed by the caller before the first. */
async function sibling(first: Awaited<ReturnType<typeof appFor>>) {
  const app = await buildApp({ config: first.config, store: first.store });
  const { host, port } = await listen(app);
  return { app, base: `http://${host}:${port}` };
}

const ADMIN_TOKEN = 'b'.repeat(24) + '-admin-token-for-tests';

describe('GET /v1/events and its credential', () => {
  test('a rotation, a disabled account and a deleted one end the streams opened with the old credential, here and on another instance', async (t) => {
    const first = await appFor(t, { adminToken: ADMIN_TOKEN });
    const { host, port } = await listen(first.app);
    const base = `http://${host}:${port}`;
    const other = await sibling(first);
    const streams: EventStream[] = [];
    t.after(() => streams.forEach((s) => s.close()));
    try {
      const open = async (at: string, code: string) => {
        const stream = await openEventStream(at, { authorization: `Bearer ${code}` });
        streams.push(stream);
        return stream;
      };

      // Rotation, on the first app: both streams of the old code end.
      const rotating = await newAccount(first.app);
      const here = await open(base, rotating.code);
      const there = await open(other.base, rotating.code);
      assert.deepEqual([here.status, there.status], [200, 200]);
      // The other app remembers the old code (its account cache) while the rotation happens here.
      assert.equal((await other.app.inject({ method: 'GET', url: '/v1/links', query: { auth: rotating.code } })).statusCode, 200);
      const rotated = await first.app.inject({ method: 'POST', url: '/v1/rotate_access_code', query: { auth: rotating.code } });
      assert.equal(rotated.statusCode, 200, rotated.body);
      const fresh = (rotated.json() as { AccessCode: string }).AccessCode;
      // The old code opens nothing any more, even where it is still cached.
      assert.equal((await open(other.base, rotating.code)).status, 401);
      await waitFor(() => here.ended() && there.ended(), 'the old code\'s streams to end');
      assert.ok(there.comments.includes('revoked'));
      // The new code's stream stays and hears the account's changes.
      const renewed = await open(base, fresh);
      assert.equal(renewed.status, 200);
      await createLinkOk(first.app, fresh, { url: TARGET, title: 'after the rotation' });
      await renewed.next((e) => e.event === 'link.created', 'link.created on the new code\'s stream');
      assert.ok(!here.events.some((e) => e.event === 'link.created'), 'the old code\'s stream heard a change made after the rotation');

      // Disabled by an administrator on the first app: the other app's stream ends.
      const disabling = await newAccount(first.app);
      const disabled = await open(other.base, disabling.code);
      assert.equal(disabled.status, 200);
      const patched = await first.app.inject({
        method: 'PATCH', url: '/v1/admin/account', query: { uid: String(disabling.uid), disabled: 'true' }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      assert.equal(patched.statusCode, 200, patched.body);
      await waitFor(() => disabled.ended(), 'the disabled account\'s stream to end');
      const refused = await open(other.base, disabling.code);
      assert.equal(refused.status, 403);
      assert.equal(refused.body(), 'Unable to handle request: the account is disabled');

      // Deleted on the first app: the other app's stream ends.
      const deleting = await newAccount(first.app);
      const deleted = await open(other.base, deleting.code);
      assert.equal(deleted.status, 200);
      assert.equal((await first.app.inject({ method: 'DELETE', url: '/v1/account', query: { auth: deleting.code } })).statusCode, 200);
      await waitFor(() => deleted.ended(), 'the deleted account\'s stream to end');
      assert.equal(renewed.ended(), false, 'a stream of a valid code was ended');
    } finally {
      streams.forEach((s) => s.close());
      await other.app.close();
    }
  });

  test('after a rotation, a change made at once with the new code never reaches the old code\'s stream', async (t) => {
    // A slow database: every credential check answers only once the link below is made.
    let linkMade!: () => void;
    const gate = new Promise<void>((resolve) => (linkMade = resolve));
    const slowChecks = (store: Store): Store => new Proxy(store, {
      get: (target, name, receiver) => (name !== 'streamSlots' ? Reflect.get(target, name, receiver) : {
        ...target.streamSlots,
        current: async (holder: string) => {
          const answer = await target.streamSlots.current(holder);
          await gate;
          return answer;
        },
      }),
    });
    const { app, base } = await started(t, {}, { wrapStore: slowChecks });
    const { code } = await newAccount(app);
    const old = await openEventStream(base, { authorization: `Bearer ${code}` });
    t.after(() => old.close());
    const rotated = await app.inject({ method: 'POST', url: '/v1/rotate_access_code', query: { auth: code } });
    assert.equal(rotated.statusCode, 200, rotated.body);
    const fresh = (rotated.json() as { AccessCode: string }).AccessCode;
    // No wait: the link is made while the old stream may still be open.
    await createLinkOk(app, fresh, { url: 'https://example.com/secret-target', title: 'made with the new code' });
    linkMade();
    await waitFor(() => old.ended(), 'the old code\'s stream to end');
    assert.deepEqual(old.events.map((e) => e.event), ['account.rotated']);
  });

  test('the cap of 10 streams per account counts the streams of every instance; an ended one frees its slot for all', async (t) => {
    const first = await appFor(t);
    const { host, port } = await listen(first.app);
    const base = `http://${host}:${port}`;
    const other = await sibling(first);
    const streams: EventStream[] = [];
    try {
      const { code } = await newAccount(first.app);
      for (let i = 0; i < 10; i++) streams.push(await openEventStream(i % 2 === 0 ? base : other.base, { authorization: code }));
      assert.deepEqual(streams.map((s) => s.status), new Array(10).fill(200));
      for (const at of [base, other.base]) {
        const refused = await openEventStream(at, { authorization: code });
        assert.equal(refused.status, 429, refused.body());
        assert.match(refused.body(), /^Unable to handle request: at most 10 event streams/);
      }
      streams.shift()!.close(); // one on the first app
      streams.push(await waitFor(async () => {
        const s = await openEventStream(other.base, { authorization: code });
        return s.status === 200 ? s : undefined;
      }, 'the freed slot, on the other app'));
    } finally {
      streams.forEach((s) => s.close());
      await other.app.close();
    }
  });

  test('the slots of a process that stopped renewing them count until their lease runs out, then free', async (t) => {
    const { app, store } = await appFor(t);
    const { host, port } = await listen(app);
    const { code, uid } = await newAccount(app);
    // Ten slots of a process that died (it never renews or releases them), leased for an hour.
    const now = Date.now();
    for (let i = 0; i < 10; i++) {
      const taken = await store.streamSlots.acquire(
        { id: `dead-${i}`, accountUid: uid, codeHash: hashAccessCode(code), holder: 'a-process-that-died' },
        { now, leaseMs: 3_600_000, perAccount: 10 },
      );
      assert.equal(taken, 'acquired');
    }
    const refused = await openEventStream(`http://${host}:${port}`, { authorization: code });
    assert.equal(refused.status, 429);
    // Two hours on, as a live process renewing its own slots sees it: the dead ones are swept.
    await store.streamSlots.renew('a-live-process', { now: now + 7_200_000, leaseMs: 30_000 });
    const stream = await openEventStream(`http://${host}:${port}`, { authorization: code });
    t.after(() => stream.close());
    assert.equal(stream.status, 200, stream.body());
  });
});

describe('HEAD /v1/events', () => {
  test('answers GET\'s headers without a body, and takes no slot; 401 and 403 as GET', async (t) => {
    const { app } = await appFor(t, { adminToken: ADMIN_TOKEN });
    const { code, uid } = await newAccount(app);
    for (let i = 0; i < 12; i++) {
      const head = await app.inject({ method: 'HEAD', url: '/v1/events', headers: { authorization: `Bearer ${code}` } });
      assert.equal(head.statusCode, 200, head.body);
      assert.equal(head.headers['content-type'], 'text/event-stream; charset=utf-8');
      assert.equal(head.headers['cache-control'], 'no-store');
      assert.equal(head.body, '');
    }
    const missing = await app.inject({ method: 'HEAD', url: '/v1/events' });
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.headers['www-authenticate'], 'Bearer realm="shortlink"');
    await app.inject({ method: 'PATCH', url: '/v1/admin/account', query: { uid: String(uid), disabled: 'true' }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal((await app.inject({ method: 'HEAD', url: '/v1/events', query: { auth: code } })).statusCode, 403);
  });
});
