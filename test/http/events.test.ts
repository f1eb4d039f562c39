/**
 * GET /v1/events over a real socket: the owner's events as Server-Sent Events, once each
 * change has committed, and nobody else's; the 401 rules; not cut by the whole-request
 * deadline; ended when the app closes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newAccount } from '../helpers/app.ts';
import { openEventStream, type EventStream } from '../helpers/event-stream.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { appFor, createLinkOk, listen } from './support.ts';

const TARGET = 'https://example.com/';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';

async function started(t: Parameters<typeof appFor>[0], overrides: Parameters<typeof appFor>[1] = {}) {
  const testApp = await appFor(t, overrides);
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
      DateCreated: created.data.data.DateCreated, Title: 'Hello', Tags: ['a', 'b'], ExpiresAt: null, MaxVisits: null,
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
