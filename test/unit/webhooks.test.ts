/**
 * The pieces of webhook delivery that need no server: Standard Webhooks signatures (checked
 * against the `standardwebhooks` package and a fixed vector), the retry schedule, the
 * address rules, the secret box, and the payload schemas every event type is documented by.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { Value } from 'typebox/value';
import { EVENT_TYPES, type VisitEventItem } from '../../src/events/events.ts';
import { accountRotatedData, linkDetailsData, visitsData } from '../../src/events/payloads.ts';
import { linkDetailsBody } from '../../src/http/presenters.ts';
import { EventSchemas, LinkDetailsSchema } from '../../src/http/schemas.ts';
import { deliveryData, takeVisits } from '../../src/store/webhooks.ts';
import { JITTER, nextAttemptAt, RETRY_DELAYS_MS, RETRY_FOR_MS, retryDelay } from '../../src/webhooks/backoff.ts';
import { deliver } from '../../src/webhooks/deliver.ts';
import { createSecretBox, newSecret, secretKey } from '../../src/webhooks/secret-box.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';
import { sign, webhookHeaders } from '../../src/webhooks/signature.ts';
import { checkedAddresses, isPublicAddress, RefusedTarget } from '../../src/webhooks/target-address.ts';
import { parseEvents, parseWebhookUrl } from '../../src/webhooks/webhook-service.ts';

describe('Standard Webhooks signatures', () => {
  test('match a fixed vector (the Standard Webhooks reference example)', () => {
    // From the specification's reference implementations' tests.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
    const timestamp = 1614265330;
    const body = '{"test": 2432232314}';
    assert.equal(sign(secret, id, timestamp, body), 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  test('verify with the standardwebhooks package, for random secrets and bodies', () => {
    for (let i = 0; i < 20; i++) {
      const secret = newSecret();
      const id = `msg_${i}`;
      const now = Math.floor(Date.now() / 1000);
      const body = JSON.stringify({ type: 'link.created', timestamp: new Date().toISOString(), data: { n: i, text: 'é ✓ "quoted"' } });
      const headers = webhookHeaders(secret, id, now, body);
      assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
      assert.equal(headers['webhook-signature'], new Webhook(secret).sign(id, new Date(now * 1000), body));
      assert.throws(() => new Webhook(secret).verify(`${body} `, headers), /signature/i, 'a changed body fails');
    }
  });

  test('a secret is whsec_ and the base64 of 32 random bytes; the key is those bytes', () => {
    const secret = newSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(secretKey(secret).length, 32);
    assert.notEqual(newSecret(), secret);
  });
});

describe('the secret box', () => {
  test('seals so that the stored form does not contain the secret, and opens it again', () => {
    const box = createSecretBox('a-key-of-at-least-thirty-two-characters!');
    const secret = newSecret();
    const sealed = box.seal(secret);
    assert.ok(!sealed.includes(secret.slice(6)), 'not stored in plain text');
    assert.notEqual(box.seal(secret), sealed, 'a fresh nonce each time');
    assert.equal(box.open(sealed), secret);
  });

  test('refuses to open under another key or after a change', () => {
    const sealed = createSecretBox('a-key-of-at-least-thirty-two-characters!').seal(newSecret());
    assert.throws(() => createSecretBox('another-key-of-at-least-thirty-two-chars').open(sealed));
    const parts = sealed.split('.');
    parts[3] = `A${parts[3]!.slice(1)}`;
    assert.throws(() => createSecretBox('a-key-of-at-least-thirty-two-characters!').open(parts.join('.')));
  });
});

describe('the secret box without a key', () => {
  test('keeps the secret readable, and a key set later still opens it; a sealed one needs its key', () => {
    const secret = newSecret();
    const stored = createSecretBox(undefined).seal(secret);
    assert.equal(createSecretBox(undefined).open(stored), secret);
    assert.equal(createSecretBox('a-key-of-at-least-thirty-two-characters!').open(stored), secret);
    const sealed = createSecretBox('a-key-of-at-least-thirty-two-characters!').seal(secret);
    assert.throws(() => createSecretBox(undefined).open(sealed), /WEBHOOK_SECRET_KEY is not set/);
  });
});

describe('the retry schedule', () => {
  test('about 5 s, 30 s, 2 min, 10 min, 1 h, then hourly, each within ±20 %', () => {
    assert.deepEqual(RETRY_DELAYS_MS, [5_000, 30_000, 120_000, 600_000, 3_600_000]);
    for (let attempts = 1; attempts <= 30; attempts++) {
      const base: number = RETRY_DELAYS_MS[attempts - 1] ?? 3_600_000;
      assert.equal(retryDelay(attempts, 0), Math.round(base * (1 - JITTER)));
      assert.equal(retryDelay(attempts, 0.5), base);
      assert.ok(retryDelay(attempts, 0.999_999) <= base * (1 + JITTER));
      const sample = retryDelay(attempts);
      assert.ok(sample >= base * 0.8 && sample <= base * 1.2, `${sample} for ${base}`);
    }
  });

  test('stops once the next attempt would be past 24 h after the event', () => {
    const occurred = Date.parse('2026-11-25T00:00:00Z');
    assert.equal(nextAttemptAt(occurred, 1, occurred, 0.5), occurred + 5_000);
    assert.equal(nextAttemptAt(occurred, 8, occurred + RETRY_FOR_MS - 1_800_000, 0.5), undefined);
    assert.equal(nextAttemptAt(occurred, 8, occurred + RETRY_FOR_MS - 3_700_000, 0.5), occurred + RETRY_FOR_MS - 100_000);
    // Following the schedule from the event: the first attempt, 5 retries in the first 73 min, then hourly until 24 h.
    let now = occurred;
    let attempts = 0;
    for (let next: number | undefined = occurred; next !== undefined; next = nextAttemptAt(occurred, attempts, now, 0.5)) {
      now = next;
      attempts++;
    }
    assert.equal(attempts, 28);
    assert.ok(now <= occurred + RETRY_FOR_MS);
  });
});

describe('webhook target addresses', () => {
  test('refuses loopback, private, shared, link-local, multicast, unspecified and reserved addresses', () => {
    for (const address of [
      '127.0.0.1', '127.1.2.3', '10.0.0.1', '172.16.5.4', '192.168.1.1', '100.64.0.1', '169.254.169.254', '0.0.0.0', '224.0.0.251',
      '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd00:ec2::254', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1',
      '::ffff:a9fe:a9fe', '64:ff9b::a00:1', '[::1]',
    ]) assert.equal(isPublicAddress(address), false, address);
  });

  test('judges IPv6 forms that carry an IPv4 address by that address: NAT64, SIIT, 6to4, Teredo', () => {
    for (const address of [
      '64:ff9b:1::7f00:1', '::ffff:0:7f00:1', '2002:7f00:1::', '2001:0:7f00:1::', '64:ff9b::7f00:1', '[64:ff9b:1::a9fe:a9fe]',
      '2002:a00:1::1', '2002:c0a8:101::', '2001:0:4136:e378:8000:63bf:80ff:fffe', '2001:0:0:1::', '64:ff9b:1:7f00:1::',
      '64:ff9b:1:a:a9:fea9:fe00:0', '::ffff:0:10.1.2.3',
    ]) assert.equal(isPublicAddress(address), false, address);
    for (const address of ['64:ff9b::808:808', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:f7f7:f7f7', '::ffff:0:808:808']) {
      assert.equal(isPublicAddress(address), true, address);
    }
  });

  test('allows public addresses, IPv4-mapped ones included', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '172.32.0.1']) {
      assert.equal(isPublicAddress(address), true, address);
    }
  });

  test('a name is refused when any address it resolves to is refused, unless private targets are allowed', async () => {
    const resolve = async () => [{ address: '93.184.215.14', family: 4 }, { address: '127.0.0.1', family: 4 }];
    await assert.rejects(checkedAddresses('two.example', false, resolve), RefusedTarget);
    assert.equal((await checkedAddresses('two.example', true, resolve)).length, 2);
    await assert.rejects(checkedAddresses('localhost', false), RefusedTarget, 'the system resolver: localhost is loopback');
    await assert.rejects(checkedAddresses('[::1]', false), RefusedTarget);
  });
});

describe('registration parameters', () => {
  test('events: comma-separated, each known, none twice', () => {
    assert.deepEqual(parseEvents('link.created, link.visited'), ['link.created', 'link.visited']);
    assert.deepEqual(parseEvents(EVENT_TYPES.join(',')), [...EVENT_TYPES]);
    for (const bad of [undefined, '', 'link.created,', 'link.made', 'link.created,link.created']) assert.throws(() => parseEvents(bad), /events/);
  });

  test('url: http(s), a host, no credentials', () => {
    assert.equal(parseWebhookUrl('https://hooks.example/x?y=1').hostname, 'hooks.example');
    for (const bad of [undefined, '', 'ftp://a.example/', 'https://u:p@a.example/', 'not a url', `https://a.example/${'x'.repeat(2000)}`]) {
      assert.throws(() => parseWebhookUrl(bad), /url/);
    }
  });
});

describe('event payloads', () => {
  const link = {
    shortCode: 'abc123', pointsTo: 'https://example.com/', createdBy: 7, accesses: 3, dateCreated: '2026-11-25T10:00:00.000Z',
    title: null, tags: ['a'], expiresAt: null, maxVisits: 10, forwardQuery: false, rules: null, protected: false,
  };

  test('link events carry LinkDetails exactly as the API shows it', () => {
    assert.deepEqual(Object.entries(linkDetailsData(link)), Object.entries(linkDetailsBody(link)));
    assert.ok(Value.Check(LinkDetailsSchema, linkDetailsData(link)));
  });

  test('every event type has a schema its payload satisfies, and none else', () => {
    assert.deepEqual(Object.keys(EventSchemas).sort(), [...EVENT_TYPES].sort());
    const timestamp = '2026-11-25T10:00:00.000Z';
    const visits = (JSON.parse(deliveryData('link.visited', takeVisits([{
      id: 1, shortCode: 'abc123', time: timestamp, bot: 0, referrer: '(direct)', country: 'ZZ', browser: 'Chrome', os: 'Linux', device: 'desktop', visits: 2,
    }], 10).data)) as { visits: VisitEventItem[] }).visits;
    const samples: Record<string, unknown> = {
      'link.created': linkDetailsData(link), 'link.updated': linkDetailsData(link), 'link.deleted': linkDetailsData(link),
      'link.visited': visitsData(visits), 'account.rotated': accountRotatedData(7),
    };
    for (const type of EVENT_TYPES) {
      const schema = EventSchemas[type];
      assert.ok(Value.Check(schema, { type, timestamp, data: samples[type] }), type);
      assert.ok(!Value.Check(schema, { type: type === 'link.created' ? 'link.updated' : 'link.created', timestamp, data: samples[type] }), `${type}: its own type only`);
    }
    assert.equal(visits.length, 2);
    assert.deepEqual(Object.keys(visits[0]!), ['ShortCode', 'Time', 'Bot', 'Referrer', 'Country', 'Browser', 'OperatingSystem', 'Device']);
  });

  test('visits are taken up to the bound, a row split where it falls', () => {
    const row = (id: number, visits: number) => ({ id, shortCode: 's', time: 't', bot: 1, referrer: 'r', country: 'c', browser: 'b', os: 'o', device: 'bot', visits });
    const taken = takeVisits([row(1, 2), row(2, 5), row(3, 1)], 4);
    assert.equal(taken.count, 4);
    assert.equal((JSON.parse(deliveryData('link.visited', taken.data)) as { visits: unknown[] }).visits.length, 4);
    assert.equal(taken.usedThrough, 1);
    assert.deepEqual(taken.partial, { id: 2, remaining: 3 });
    assert.deepEqual(takeVisits([row(1, 2)], 4).partial, undefined);
  });
});

describe('one delivery attempt', () => {
  test('checks the address again after DNS: a name that now resolves to loopback is refused, nothing is sent', async () => {
    const receiver = await startReceiver();
    try {
      const port = new URL(receiver.url).port;
      const outcome = await deliver(
        { url: `http://rebound.example:${port}/hook`, headers: {}, body: '{}' },
        { timeoutMs: 1000, allowPrivate: false, resolve: async () => [{ address: '127.0.0.1', family: 4 }] },
      );
      assert.equal(outcome.status, null);
      // The account reads this in its deliveries: the same words whatever the name resolved to.
      assert.equal(outcome.error, 'refused: the url does not resolve to a public address');
      assert.equal(receiver.received.length, 0);
      const unknown = await deliver(
        { url: `http://nowhere.example:${port}/hook`, headers: {}, body: '{}' },
        { timeoutMs: 1000, allowPrivate: false, resolve: async () => { throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' }); } },
      );
      assert.equal(unknown.error, outcome.error, 'a name that does not resolve reads the same as one that resolves inside');
      assert.match(outcome.detail!, /rebound\.example resolves to 127\.0\.0\.1/, 'the detail is kept for the log');
      assert.match(unknown.detail!, /ENOTFOUND/);
    } finally {
      await receiver.close();
    }
  });

  test('a name lookup that does not answer counts toward the timeout', async () => {
    const outcome = await deliver(
      { url: 'http://silent.example/hook', headers: {}, body: '{}' },
      { timeoutMs: 100, allowPrivate: true, resolve: () => new Promise(() => {}) },
    );
    assert.deepEqual(outcome, { status: null, error: 'DNS: no answer within 0.1 s' });
  });

  test('a name lookup that does not answer ends when the service stops', async () => {
    const stopping = new AbortController();
    const attempt = deliver(
      { url: 'http://silent.example/hook', headers: {}, body: '{}' },
      { timeoutMs: 60_000, allowPrivate: true, signal: stopping.signal, resolve: () => new Promise(() => {}) },
    );
    stopping.abort();
    assert.deepEqual(await attempt, { status: null, error: 'stopped: the service shut down' });
  });

  test('connects to the address that was checked, whatever a second lookup would say', async () => {
    const receiver = await startReceiver();
    try {
      const port = new URL(receiver.url).port;
      let lookups = 0;
      const outcome = await deliver(
        { url: `http://hooks.example:${port}/hook`, headers: { 'webhook-id': 'msg_1' }, body: '{"a":1}' },
        { timeoutMs: 1000, allowPrivate: true, resolve: async () => (lookups++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '192.0.2.1', family: 4 }]) },
      );
      assert.deepEqual(outcome, { status: 200, error: null });
      assert.equal(lookups, 1, 'one lookup, its answer used for the connection');
      assert.equal(receiver.received[0]!.headers['webhook-id'], 'msg_1');
      assert.equal(receiver.received[0]!.headers.host, `hooks.example:${port}`);
    } finally {
      await receiver.close();
    }
  });

  test('does not follow redirects: a 3xx is a failed attempt', async () => {
    const receiver = await startReceiver();
    try {
      receiver.otherwise(302);
      const outcome = await deliver({ url: receiver.url, headers: {}, body: '{}' }, { timeoutMs: 1000, allowPrivate: true });
      assert.deepEqual(outcome, { status: 302, error: 'the receiver answered 302' });
      assert.equal(receiver.received.length, 1);
    } finally {
      await receiver.close();
    }
  });
});
