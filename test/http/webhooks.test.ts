/**
 * Webhooks end to end in one process (CONTRACT §7.5): registrations through the API, events
 * written by the changes themselves, delivered by the dispatcher to a receiver on loopback
 * (WEBHOOK_ALLOW_PRIVATE=true) and verified with the `standardwebhooks` package. Runs on
 * SQLite, and on PostgreSQL through on-postgres-{1,2}.test.ts (or SHORTLINK_TEST_ENGINE=postgres).
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { Config } from '../../src/config.ts';
import type { CreatedWebhook, Delivery, Webhook as WebhookBody } from '../../src/http/schemas.ts';
import { newAccount, type TestAppExtras } from '../helpers/app.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { openEventStream } from '../helpers/event-stream.ts';
import { appFor, assertError, createLinkOk, listen } from './support.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { DISPATCH_DEFAULTS } from '../../src/webhooks/dispatcher.ts';
import type { Deliver } from '../../src/webhooks/deliver.ts';

const KEY = 'k'.repeat(40);
const ADMIN_TOKEN = 'a'.repeat(40);
const ALL = 'link.created,link.updated,link.deleted,link.visited,account.rotated';

interface Event { type: string; timestamp: string; data: Record<string, unknown> }

async function hookApp(t: TestContext, overrides: Partial<Config> = {}, webhooks: TestAppExtras['webhooks'] = {}, logStream?: TestAppExtras['logStream']) {
  return appFor(t, { webhookSecretKey: KEY, webhookAllowPrivate: true, ...overrides }, {
    webhooks: { pollMs: 20, collectEveryMs: 50, ...webhooks }, ...(logStream === undefined ? {} : { logStream }),
  });
}

async function receiver(t: TestContext): Promise<Receiver> {
  const r = await startReceiver();
  t.after(() => r.close());
  return r;
}

async function addWebhook(app: Awaited<ReturnType<typeof hookApp>>['app'], code: string, url: string, events = ALL): Promise<CreatedWebhook> {
  const response = await app.inject({ method: 'POST', url: '/v1/webhooks', headers: { authorization: `Bearer ${code}` }, payload: { url, events } });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as CreatedWebhook;
}

function verified(secret: string, r: Receiver): Event[] {
  const verifier = new Webhook(secret);
  return r.received.map((request) => verifier.verify(request.body, request.headers as Record<string, string>) as Event);
}

describe('webhooks', () => {
  test('delivers every event type, signed so that standardwebhooks verifies it, with the contract\'s data', async (t) => {
    const { app } = await hookApp(t);
    const r = await receiver(t);
    const { code, uid } = await newAccount(app);
    const hook = await addWebhook(app, code, r.url);
    assert.deepEqual(Object.keys(hook), ['Id', 'Url', 'Events', 'Secret', 'DateCreated']);
    assert.match(hook.Secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(hook.Events, ALL.split(','));

    const short = await createLinkOk(app, code, { url: 'https://example.com/a', title: 'A' });
    const patched = await app.inject({ method: 'PATCH', url: '/v1/link', headers: { authorization: `Bearer ${code}` }, payload: { short, title: 'B' } });
    assert.equal(patched.statusCode, 200, patched.body);
    const resolved = await app.inject({ method: 'GET', url: `/v1/get/${short}`, headers: { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0.0.0' } });
    assert.equal(resolved.statusCode, 200);
    await r.until((got) => got.some((request) => request.body.includes('"link.visited"')));
    const deleted = await app.inject({ method: 'DELETE', url: '/v1/link', query: { short, auth: code } });
    assert.equal(deleted.statusCode, 200);
    const rotated = await app.inject({ method: 'POST', url: '/v1/rotate_access_code', headers: { authorization: `Bearer ${code}` } });
    assert.equal(rotated.statusCode, 200, rotated.body);

    await r.until((got) => got.length >= 5);
    const events = verified(hook.Secret, r);
    const byType = new Map(events.map((event) => [event.type, event]));
    assert.deepEqual([...byType.keys()].sort(), ALL.split(',').sort());
    const details = ['ShortCode', 'PointsTo', 'CreatedBy', 'Accesses', 'DateCreated', 'Title', 'Tags', 'ExpiresAt', 'MaxVisits', 'Domain', 'ForwardQuery', 'Protected', 'Rules'];
    assert.deepEqual(Object.keys(byType.get('link.created')!.data), details);
    assert.equal(byType.get('link.created')!.data.Title, 'A');
    assert.equal(byType.get('link.created')!.data.Accesses, 0);
    assert.equal(byType.get('link.updated')!.data.Title, 'B');
    assert.equal(byType.get('link.deleted')!.data.ShortCode, short);
    assert.equal(byType.get('link.deleted')!.data.Accesses, 1, 'its last state');
    assert.deepEqual(byType.get('account.rotated')!.data, { Uid: uid });
    const visits = byType.get('link.visited')!.data.visits as Record<string, unknown>[];
    assert.equal(visits.length, 1);
    assert.deepEqual(Object.keys(visits[0]!), ['ShortCode', 'Time', 'Bot', 'Referrer', 'Country', 'Browser', 'OperatingSystem', 'Device']);
    assert.equal(visits[0]!.ShortCode, short);
    assert.equal(visits[0]!.Bot, false);
    for (const event of events) assert.match(event.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // Each event once, each with its own id.
    assert.equal(new Set(r.received.map((request) => request.headers['webhook-id'])).size, r.received.length);

    const deliveries = await deliveriesOf(app, hook.Id, (rotated.json() as { AccessCode: string }).AccessCode, 5);
    assert.equal(deliveries.length, 5);
    assert.deepEqual(Object.keys(deliveries[0]!), ['EventId', 'Type', 'Attempt', 'Time', 'Status', 'Error']);
    assert.ok(deliveries.every((d) => d.Status === 200 && d.Error === null && d.Attempt === 1));
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    for (const type of ALL.split(',')) assert.match(metrics, new RegExp(`^shortlink_webhook_events_delivered_total\\{type="${type}"\\} 1$`, 'm'));
    assert.match(metrics, /^shortlink_webhook_delivery_latency_seconds_count\{type="link.created"\} 1$/m);
  });

  test('only the types a webhook subscribed to, only the account\'s own changes', async (t) => {
    const { app } = await hookApp(t);
    const r = await receiver(t);
    const mine = await newAccount(app);
    const theirs = await newAccount(app);
    await addWebhook(app, mine.code, r.url, 'link.deleted');
    const a = await createLinkOk(app, mine.code, { url: 'https://example.com/' });
    const b = await createLinkOk(app, theirs.code, { url: 'https://example.com/' });
    await app.inject({ method: 'DELETE', url: '/v1/link', query: { short: b, auth: theirs.code } });
    await app.inject({ method: 'DELETE', url: '/v1/link', query: { short: a, auth: mine.code } });
    await r.until((got) => got.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300)); // anything else would have come by now
    assert.equal(r.received.length, 1);
    assert.match(r.received[0]!.body, new RegExp(`"type":"link.deleted".*"ShortCode":"${a}"`));
  });

  test('an administrator\'s takedown tells the owner\'s webhooks and live stream: link.deleted with the link\'s last state', async (t) => {
    const { app } = await hookApp(t, { adminToken: ADMIN_TOKEN });
    const { host, port } = await listen(app);
    const r = await receiver(t);
    const owner = await newAccount(app);
    const hook = await addWebhook(app, owner.code, r.url, 'link.deleted');
    const stream = await openEventStream(`http://${host}:${port}`, { authorization: `Bearer ${owner.code}` });
    t.after(() => stream.close());
    const short = await createLinkOk(app, owner.code, { url: 'https://phish.example/login', title: 'Bait' });
    const takenDown = await app.inject({ method: 'DELETE', url: '/v1/admin/link', query: { short }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(takenDown.statusCode, 200, takenDown.body);

    const live = await stream.next((e) => e.event === 'link.deleted', 'link.deleted on the stream');
    assert.deepEqual([live.data.data.ShortCode, live.data.data.PointsTo, live.data.data.Title], [short, 'https://phish.example/login', 'Bait']);
    await r.until((got) => got.length >= 1);
    const [event] = verified(hook.Secret, r);
    assert.equal(event!.type, 'link.deleted');
    assert.deepEqual(event!.data, live.data.data, 'the same LinkDetails on both');
    assert.equal(event!.data.CreatedBy, owner.uid);
  });

  test('the live stream\'s id of a change is its webhook-id, so an integrator using both can drop duplicates', async (t) => {
    const { app } = await hookApp(t, { adminToken: ADMIN_TOKEN });
    const { host, port } = await listen(app);
    const r = await receiver(t);
    const owner = await newAccount(app);
    await addWebhook(app, owner.code, r.url, 'link.created,link.updated,link.deleted,account.rotated');
    const stream = await openEventStream(`http://${host}:${port}`, { authorization: `Bearer ${owner.code}` });
    t.after(() => stream.close());
    const auth = { authorization: `Bearer ${owner.code}` };
    const kept = await createLinkOk(app, owner.code, { url: 'https://example.com/kept' });
    const custom = await createLinkOk(app, owner.code, { url: 'https://example.com/custom', short: 'custom-one' });
    assert.equal((await app.inject({ method: 'PATCH', url: '/v1/link', headers: auth, payload: { short: kept, title: 'T' } })).statusCode, 200);
    assert.equal((await app.inject({ method: 'DELETE', url: '/v1/link', query: { short: kept }, headers: auth })).statusCode, 200);
    assert.equal((await app.inject({ method: 'DELETE', url: '/v1/admin/link', query: { short: custom }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).statusCode, 200);
    const rotated = await app.inject({ method: 'POST', url: '/v1/rotate_access_code', headers: auth });
    assert.equal(rotated.statusCode, 200, rotated.body);

    await stream.next((e) => e.event === 'account.rotated', 'account.rotated');
    await r.until((got) => got.length >= 6);
    const delivered = new Map(r.received.map((request) => {
      const event = JSON.parse(request.body) as Event;
      return [`${event.type} ${String(event.data.ShortCode ?? event.data.Uid)}`, request.headers['webhook-id']];
    }));
    const streamed = new Map(stream.events.map((e) => [`${e.event} ${String(e.data.data.ShortCode ?? e.data.data.Uid)}`, e.id]));
    const keys = [`link.created ${kept}`, `link.created ${custom}`, `link.updated ${kept}`, `link.deleted ${kept}`, `link.deleted ${custom}`, `account.rotated ${owner.uid}`];
    assert.deepEqual([...delivered.keys()].sort(), [...keys].sort());
    for (const key of keys) {
      assert.match(String(streamed.get(key)), /^msg_[0-9a-f]{32}$/, key);
      assert.equal(streamed.get(key), delivered.get(key), `${key}: the same id on the stream and in webhook-id`);
    }
  });

  test('retries a receiver that fails with the same webhook-id and the same body, until it answers 2xx', async (t) => {
    let offset = 0;
    const { app } = await hookApp(t, {}, { clock: () => Date.now() + offset });
    const r = await receiver(t);
    r.answer(500, 503, 404);
    const { code } = await newAccount(app);
    const hook = await addWebhook(app, code, r.url, 'link.created');
    await createLinkOk(app, code, { url: 'https://example.com/' });
    for (let attempt = 1; attempt <= 3; attempt++) {
      // Settled (logged) before the clock moves on, so the retry is scheduled from the old time.
      assert.equal((await deliveriesOf(app, hook.Id, code, attempt)).length, attempt);
      // Past the next retry (at most 2 min × 1.2 for the first three).
      offset += 3 * 60_000;
    }
    await r.until((got) => got.length >= 4);
    const ids = new Set(r.received.map((request) => request.headers['webhook-id']));
    assert.equal(ids.size, 1, 'the same webhook-id on every attempt');
    assert.equal(new Set(r.received.map((request) => request.body)).size, 1, 'the same body');
    // The attempts carry the (shifted) clock's time: checked with the library's own signer.
    for (const request of r.received) {
      const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = request.headers as Record<string, string>;
      assert.equal(signature, new Webhook(hook.Secret).sign(id!, new Date(Number(timestamp) * 1000), request.body));
    }
    const deliveries = await deliveriesOf(app, hook.Id, code, 4);
    assert.deepEqual(deliveries.map((d) => [d.Attempt, d.Status]), [[4, 200], [3, 404], [2, 503], [1, 500]]);
    assert.equal(await waitForPending(app, 0), 0);
  });

  test('a receiver that hangs costs an attempt after the timeout, and no API answer waits for it', async (t) => {
    const { app } = await hookApp(t, {}, { timeoutMs: 300 });
    const r = await receiver(t);
    r.otherwise('hang');
    const { code } = await newAccount(app);
    const hook = await addWebhook(app, code, r.url, 'link.created');
    await createLinkOk(app, code, { url: 'https://example.com/' });
    await r.until((got) => got.length >= 1);
    const started = performance.now();
    await createLinkOk(app, code, { url: 'https://example.com/2' });
    assert.ok(performance.now() - started < 250, 'a create is answered while a delivery hangs');
    let deliveries: Delivery[] = [];
    for (const deadline = Date.now() + 5000; deliveries.length === 0 && Date.now() < deadline;) {
      deliveries = (await app.inject({ method: 'GET', url: '/v1/webhooks/deliveries', query: { id: hook.Id, auth: code } })).json() as Delivery[];
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(deliveries[0]?.Status, null);
    assert.match(deliveries[0]!.Error!, /no answer within 0.3 s/);
  });

  test('fair across accounts: hanging receivers cost their own accounts, another account\'s event goes first at the next free slot', async (t) => {
    // Two accounts with 5 webhooks each to receivers that never answer (each attempt ends at
    // the timeout), a third with a receiver that answers at once. The third's event is queued
    // behind hundreds of theirs; it must not wait for them (the issue: 58 s behind 240 events).
    const maxConcurrent = 6;
    const started: string[] = [];
    const inFlight = new Map<string, number>();
    let mostInFlight = 0;
    const deliver: Deliver = async (request, options) => {
      const host = new URL(request.url).hostname;
      started.push(host);
      if (host === 'ok.test') return { status: 200, error: null };
      const now = (inFlight.get(host) ?? 0) + 1;
      inFlight.set(host, now);
      mostInFlight = Math.max(mostInFlight, now);
      await new Promise<void>((settle) => {
        const timer = setTimeout(settle, options.timeoutMs);
        options.signal?.addEventListener('abort', () => { clearTimeout(timer); settle(); }, { once: true });
      });
      inFlight.set(host, inFlight.get(host)! - 1);
      return { status: null, error: `no answer within ${options.timeoutMs / 1000} s` };
    };
    const { app } = await hookApp(t, {}, { maxConcurrent, timeoutMs: 200, deliver, resolve: async () => [{ address: '192.0.2.1', family: 4 }] });
    const hanging = [await newAccount(app), await newAccount(app)];
    const other = await newAccount(app);
    await addWebhook(app, other.code, 'http://ok.test/hook', 'link.created');
    for (const [n, account] of hanging.entries()) {
      for (let i = 0; i < 5; i++) await addWebhook(app, account.code, `http://hang-${n}.test/${i}`, 'link.created');
    }
    for (let i = 0; i < 20; i++) for (const account of hanging) await createLinkOk(app, account.code, { url: `https://example.com/${i}` });
    await createLinkOk(app, other.code, { url: 'https://example.com/other' });
    // Counted from the answer (the event is committed): a claim that began before may still
    // start hanging attempts (one claim's worth), and the next claim takes this event in its
    // first round: the accounts in turn, oldest first, so when the hanging accounts have no
    // attempt in flight at that moment (each ends at the 200 ms timeout), each one's oldest
    // event may come just before it in that claim.
    const before = started.length;
    await waitFor(() => started.includes('ok.test'), () => `the other account's delivery (${started.length} attempts started)`, { timeoutMs: 60_000 });
    const hangingMeanwhile = Math.max(0, started.indexOf('ok.test') - before);
    assert.ok(hangingMeanwhile <= maxConcurrent + hanging.length,
      `${hangingMeanwhile} attempts to hanging receivers went first; at most one claim's worth and one per hanging account may`);
    assert.ok(mostInFlight <= DISPATCH_DEFAULTS.perAccount, `at most ${DISPATCH_DEFAULTS.perAccount} attempts of one account at a time (${mostInFlight})`);
  });

  test('shutdown does not wait for a name lookup that never answers: the attempt is cut and its event released', async (t) => {
    let hang = false;
    let lookups = 0;
    const { app, store } = await hookApp(t, {}, {
      resolve: (host) => {
        if (!hang) return Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
        lookups++;
        // A resolver that never answers (getaddrinfo can spend many seconds per nameserver).
        return new Promise(() => assert.equal(host, 'hooks.test'));
      },
    });
    const { code } = await newAccount(app);
    await addWebhook(app, code, 'http://hooks.test:9/hook', 'link.created');
    hang = true;
    await createLinkOk(app, code, { url: 'https://example.com/' });
    await waitFor(() => lookups > 0, 'the delivery\'s address lookup', { intervalMs: 20 });
    assert.equal(lookups, 1, 'the delivery is waiting for its lookup');
    // Before, close() waited for the lookup, here for ever (this test's timeout).
    await app.close();
    const [event, ...others] = await store.webhooks.claim({ now: Date.now(), leaseMs: 30_000, owner: 'd_test', limit: 10, busyWebhooks: [] });
    assert.equal(others.length, 0);
    assert.equal(event?.type, 'link.created', 'released: due again at once');
    assert.equal(event.attempts, 0, 'not counted as an attempt');
  });

  test('a 410 from the receiver fails the event at once: it is not retried', async (t) => {
    let offset = 0;
    const { app } = await hookApp(t, {}, { clock: () => Date.now() + offset });
    const r = await receiver(t);
    r.otherwise(410);
    const { code } = await newAccount(app);
    const hook = await addWebhook(app, code, r.url, 'link.created');
    await createLinkOk(app, code, { url: 'https://example.com/' });
    await r.until((got) => got.length >= 1);
    assert.equal(await waitForPending(app, 0), 0);
    offset += 2 * 3_600_000;
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(r.received.length, 1);
    const [delivery] = await deliveriesOf(app, hook.Id, code, 1);
    assert.equal(delivery!.Status, 410);
    assert.match(delivery!.Error!, /410 Gone: not retried/);
  });

  test('gives up after 24 h of retries', async (t) => {
    let offset = 0;
    const { app } = await hookApp(t, {}, { clock: () => Date.now() + offset });
    const r = await receiver(t);
    r.otherwise(500);
    const { code } = await newAccount(app);
    const hook = await addWebhook(app, code, r.url, 'link.created');
    await createLinkOk(app, code, { url: 'https://example.com/' });
    const attempts = async () => ((await app.inject({ method: 'GET', url: '/v1/webhooks/deliveries', query: { id: hook.Id, auth: code } })).json() as Delivery[]).length;
    for (let attempt = 1; ; attempt++) {
      // Settled (logged) before the clock moves on, so the next retry is scheduled from the old time.
      for (const deadline = Date.now() + 10_000; (await attempts()) < attempt;) {
        assert.ok(Date.now() < deadline, `attempt ${attempt} was settled`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      if ((await pending(app)) === 0) break;
      offset += 75 * 60_000;
      assert.ok(attempt < 40, 'stops within a day of hourly retries');
    }
    const deliveries = (await app.inject({ method: 'GET', url: '/v1/webhooks/deliveries', query: { id: hook.Id, auth: code } })).json() as Delivery[];
    const last = deliveries[0]!;
    assert.equal(last.Attempt, r.received.length);
    assert.ok(Date.parse(last.Time) - Date.parse(deliveries.at(-1)!.Time) <= 24 * 3_600_000 + 60_000);
  });

  test('link.visited is batched: many resolutions, at most one delivery a second, every visit in one', async (t) => {
    const { app } = await hookApp(t, {}, { collectEveryMs: 1000 });
    const r = await receiver(t);
    const { code } = await newAccount(app);
    const hook = await addWebhook(app, code, r.url, 'link.visited');
    const short = await createLinkOk(app, code, { url: 'https://example.com/' });
    const started = Date.now();
    await Promise.all(Array.from({ length: 300 }, () => app.inject({ method: 'GET', url: `/${short}` })));
    await r.until((got) => verified(hook.Secret, { ...r, received: got as typeof r.received })
      .reduce((sum, event) => sum + (event.data.visits as unknown[]).length, 0) >= 300);
    const events = verified(hook.Secret, r);
    assert.equal(events.reduce((sum, event) => sum + (event.data.visits as unknown[]).length, 0), 300, 'every visit exactly once');
    const seconds = (Date.now() - started) / 1000;
    assert.ok(r.received.length <= Math.ceil(seconds) + 1, `${r.received.length} deliveries in ${seconds.toFixed(1)} s`);
    for (let i = 1; i < r.received.length; i++) assert.ok(r.received[i]!.at - r.received[i - 1]!.at >= 900, 'a second apart');
  });

  test('registrations: at most 5, listed without secrets, deleted with Success, others\' refused', async (t) => {
    const { app } = await hookApp(t);
    const mine = await newAccount(app);
    const theirs = await newAccount(app);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await addWebhook(app, mine.code, `http://127.0.0.1:9/h${i}`, 'link.created')).Id);
    const sixth = await app.inject({ method: 'POST', url: '/v1/webhooks', query: { url: 'http://127.0.0.1:9/h6', events: 'link.created', auth: mine.code } });
    assertError(sixth, 403, 'manage webhooks');
    assert.match(sixth.body, /maximum of 5 webhooks/);

    const list = await app.inject({ method: 'GET', url: '/v1/webhooks', query: { auth: mine.code } });
    assert.equal(list.statusCode, 200);
    const listed = list.json() as WebhookBody[];
    assert.deepEqual(listed.map((w) => w.Id), ids);
    assert.deepEqual(Object.keys(listed[0]!), ['Id', 'Url', 'Events', 'DateCreated']);
    assert.doesNotMatch(list.body, /whsec_/);

    assertError(await app.inject({ method: 'DELETE', url: '/v1/webhooks', query: { id: ids[0]!, auth: theirs.code } }), 403, 'manage webhooks');
    assertError(await app.inject({ method: 'GET', url: '/v1/webhooks/deliveries', query: { id: ids[0]!, auth: theirs.code } }), 403, 'manage webhooks');
    assertError(await app.inject({ method: 'DELETE', url: '/v1/webhooks', query: { auth: mine.code } }), 400, 'manage webhooks');
    assertError(await app.inject({ method: 'DELETE', url: '/v1/webhooks', query: { id: 'wh_000000000000000000000000', auth: mine.code } }), 404, 'manage webhooks');
    assertError(await app.inject({ method: 'DELETE', url: '/v1/webhooks', query: { id: 'nope' } }), 401, 'manage webhooks');
    const deleted = await app.inject({ method: 'DELETE', url: '/v1/webhooks', query: { id: ids[0]!, auth: mine.code } });
    assert.equal(deleted.statusCode, 200);
    assert.equal(deleted.body, 'Success');
    assertError(await app.inject({ method: 'GET', url: '/v1/webhooks/deliveries', query: { id: ids[0]!, auth: mine.code } }), 404, 'manage webhooks');
    // A slot is free again.
    await addWebhook(app, mine.code, 'http://127.0.0.1:9/again', 'link.created');

    // Deleting the account removes its webhooks.
    assert.equal((await app.inject({ method: 'DELETE', url: '/v1/account', query: { auth: mine.code } })).statusCode, 200);
    const again = await newAccount(app);
    assertError(await app.inject({ method: 'GET', url: '/v1/webhooks/deliveries', query: { id: ids[1]!, auth: again.code } }), 404, 'manage webhooks');
  });

  test('every /v1/webhooks error names the contract\'s one operation, "manage webhooks", 401s included', async (t) => {
    const { app } = await hookApp(t);
    const { code } = await newAccount(app);
    const routes = [['POST', '/v1/webhooks'], ['GET', '/v1/webhooks'], ['DELETE', '/v1/webhooks'], ['GET', '/v1/webhooks/deliveries']] as const;
    for (const [method, url] of routes) {
      const missing = await app.inject({ method, url });
      assert.equal(missing.body, 'Unable to manage webhooks: an access code is required', `${method} ${url}`);
      assertError(await app.inject({ method, url, query: { auth: crypto.randomUUID() } }), 401, 'manage webhooks');
      // Without its parameters (the list has none).
      if (method !== 'GET' || url !== '/v1/webhooks') assertError(await app.inject({ method, url, query: { auth: code } }), 400, 'manage webhooks');
    }
  });

  test('refuses bad parameters with 400 and changes nothing', async (t) => {
    const { app } = await hookApp(t);
    const { code } = await newAccount(app);
    const cases: Record<string, string>[] = [
      { events: 'link.created' },
      { url: 'http://127.0.0.1:9/' },
      { url: 'ftp://example.com/', events: 'link.created' },
      { url: 'http://user:pw@example.com/', events: 'link.created' },
      { url: 'http://127.0.0.1:9/', events: 'link.created,link.exploded' },
      { url: 'http://127.0.0.1:9/', events: 'link.created,link.created' },
    ];
    for (const query of cases) assertError(await app.inject({ method: 'POST', url: '/v1/webhooks', query: { ...query, auth: code } }), 400, 'manage webhooks');
    assert.equal((await app.inject({ method: 'GET', url: '/v1/webhooks', query: { auth: code } })).body, '[]');
  });

  test('SSRF: loopback, private, link-local and metadata targets are refused at creation, names after DNS', async (t) => {
    const names: Record<string, string> = { 'rebind.test': '127.0.0.1', 'public.test': '93.184.215.14', 'mixed.test': '10.0.0.1' };
    const { app } = await hookApp(t, { webhookAllowPrivate: false }, {
      dispatch: false,
      resolve: async (host) => {
        const address = names[host];
        if (address === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
        return [{ address, family: 4 }];
      },
    });
    const { code } = await newAccount(app);
    for (const url of [
      'http://127.0.0.1/', 'http://[::1]/', 'http://10.1.2.3/', 'http://192.168.0.1/', 'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:127.0.0.1]/', 'http://[fd00:ec2::254]/', 'http://0.0.0.0/', 'http://224.0.0.1/', 'http://rebind.test/',
      'http://mixed.test/', 'http://2130706433/',
    ]) {
      const response = await app.inject({ method: 'POST', url: '/v1/webhooks', query: { url, events: 'link.created', auth: code } });
      assertError(response, 400, 'manage webhooks');
    }
    assert.equal((await app.inject({ method: 'POST', url: '/v1/webhooks', query: { url: 'http://public.test/', events: 'link.created', auth: code } })).statusCode, 200);
    assert.equal((await app.inject({ method: 'POST', url: '/v1/webhooks', query: { url: 'https://93.184.215.14/', events: 'link.created', auth: code } })).statusCode, 200);
  });

  test('SSRF: every refusal after DNS gives the same reason, naming no address; the log has the detail', async (t) => {
    const names: Record<string, string> = { 'rebind.test': '127.0.0.1', 'inside.test': '10.20.30.40' };
    const lines: string[] = [];
    const { app } = await hookApp(t, { webhookAllowPrivate: false, logLevel: 'info' }, {
      dispatch: false,
      resolve: async (host) => {
        const address = names[host];
        if (address === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
        return [{ address, family: 4 }];
      },
    }, { write: (line) => lines.push(line) });
    const { code } = await newAccount(app);
    const bodies = new Set<string>();
    for (const url of ['http://rebind.test/', 'http://inside.test/x?token=s3cret', 'http://nowhere.test/', 'http://10.1.2.3/', 'http://[64:ff9b:1::7f00:1]/']) {
      const response = await app.inject({ method: 'POST', url: '/v1/webhooks', query: { url, events: 'link.created', auth: code } });
      assert.equal(response.statusCode, 400, response.body);
      bodies.add(response.body);
    }
    // The operation's name is §2's (`manage webhooks`); the reason is the same for every cause.
    assert.equal(bodies.size, 1, `one reason for an internal answer, no answer and a literal: ${[...bodies].join(' | ')}`);
    assert.match([...bodies][0]!, /^Unable to [a-z ]+: the url does not resolve to a public address$/);
    const logged = lines.filter((line) => line.includes('a target was refused')).join('\n');
    assert.match(logged, /inside\.test resolves to 10\.20\.30\.40/, 'the operator sees why');
    assert.match(logged, /nowhere\.test/);
    assert.doesNotMatch(logged, /s3cret/, 'the refusal names the host, not the path or query (a token may live there)');
  });

  test('SSRF: `localhost` (the system resolver) is refused too', async (t) => {
    const { app } = await hookApp(t, { webhookAllowPrivate: false }, { dispatch: false });
    const { code } = await newAccount(app);
    assertError(await app.inject({ method: 'POST', url: '/v1/webhooks', query: { url: 'http://localhost:8080/', events: 'link.created', auth: code } }), 400, 'manage webhooks');
  });

  test('works without WEBHOOK_SECRET_KEY: create answers a secret, the list shows the webhook', async (t) => {
    const { app } = await appFor(t, { webhookAllowPrivate: true }, { webhooks: { dispatch: false } });
    const { code } = await newAccount(app);
    const created = await app.inject({ method: 'POST', url: '/v1/webhooks', query: { url: 'http://127.0.0.1:9/hook', events: 'link.created', auth: code } });
    assert.equal(created.statusCode, 200, created.body);
    const body = created.json() as { Id: string; Secret: string };
    assert.match(body.Secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = await app.inject({ method: 'GET', url: '/v1/webhooks', query: { auth: code } });
    assert.deepEqual((listed.json() as { Id: string }[]).map((hook) => hook.Id), [body.Id]);
  });
});

/** The webhook's delivery log once it holds at least `count` attempts (they are logged just after the receiver answers). */
async function deliveriesOf(app: Awaited<ReturnType<typeof hookApp>>['app'], id: string, code: string, count: number): Promise<Delivery[]> {
  for (const deadline = Date.now() + 5000; ;) {
    const response = await app.inject({ method: 'GET', url: '/v1/webhooks/deliveries', query: { id, auth: code } });
    assert.equal(response.statusCode, 200, response.body);
    const deliveries = response.json() as Delivery[];
    if (deliveries.length >= count || Date.now() > deadline) return deliveries;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function pending(app: Awaited<ReturnType<typeof hookApp>>['app']): Promise<number> {
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  const match = /^shortlink_webhook_events_pending (\d+)/m.exec(metrics);
  return Number(match?.[1] ?? Number.NaN);
}

async function waitForPending(app: Awaited<ReturnType<typeof hookApp>>['app'], wanted: number): Promise<number> {
  const deadline = Date.now() + 5000;
  let now = await pending(app);
  while (now !== wanted && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    now = await pending(app);
  }
  return now;
}

