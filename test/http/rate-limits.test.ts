/**
 * Rate limits as a client meets them: each policy answers 429 in the contract's error form
 * with Retry-After once its window is used up, only for the address (or account) that used
 * it; nobody is exempt unless configured; RATE_LIMIT=off turns it all off; IPv6 clients
 * are counted per /64; and TRUST_PROXY decides whether X-Forwarded-For names the client.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test, type TestContext } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { DEFAULT_RATE_LIMIT_POLICIES, loadConfig, type Config, type RateLimitPolicies } from '../../src/config.ts';
import { createMemoryCounters } from '../../src/rate-limit/counters.ts';
import { TEST_BASE_URL } from '../helpers/app.ts';
import { appFor, assertError, HTML, type LinkJson, type Reply } from './support.ts';
import type { Account } from '../../src/http/schemas.ts';

const CLIENT = '203.0.113.7';
const OTHER_CLIENT = '203.0.113.8';
const MINUTE = 60_000;

/** Every policy roomy, so that only the one a test narrows can bite. */
const ROOMY: RateLimitPolicies = {
  newAccount: { limit: 1000, windowMs: MINUTE },
  failedAuth: { limit: 1000, windowMs: MINUTE },
  createLink: { limit: 1000, windowMs: MINUTE },
  resolve: { limit: 1000, windowMs: MINUTE },
  unknownCode: { limit: 1000, windowMs: MINUTE },
  createWebhook: { limit: 1000, windowMs: MINUTE },
  password: { limit: 1000, windowMs: MINUTE },
};

/** An app with rate limits on, nobody exempt, and `policies` narrowed. */
async function limitedApp(
  t: TestContext,
  policies: Partial<RateLimitPolicies>,
  overrides: Partial<Config> = {},
  extra: Parameters<typeof appFor>[2] = {},
) {
  return appFor(t, { rateLimit: true, rateLimitExempt: [], rateLimitPolicies: { ...ROOMY, ...policies }, ...overrides }, extra);
}

/** Asserts a 429 in the contract's form, and returns the seconds it asks the client to wait. */
function assertLimited(response: Reply, operation: string, windowMs = MINUTE): number {
  assertError(response, 429, operation);
  const match = /^Unable to (.+): too many requests; try again in (\d+) s$/.exec(response.body);
  assert.ok(match, `429 body: ${JSON.stringify(response.body)}`);
  const seconds = Number(match[2]);
  assert.equal(response.headers['retry-after'], String(seconds), 'Retry-After says the same as the body');
  assert.ok(seconds >= 1 && seconds <= windowMs / 1000, `waits ${seconds} s, within the window`);
  return seconds;
}

function newAccountFrom(app: FastifyInstance, remoteAddress: string, method: 'GET' | 'POST' = 'GET', headers = {}) {
  return app.inject({ method, url: '/v1/new_account', remoteAddress, headers });
}

/** Creates an account (from an address with room to spare) and returns its code and Uid. */
async function account(app: FastifyInstance, remoteAddress = '198.51.100.250'): Promise<{ code: string; uid: number }> {
  const response = await newAccountFrom(app, remoteAddress);
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json() as Account;
  return { code: body.AccessCode, uid: body.Uid };
}

function createLinkFrom(app: FastifyInstance, remoteAddress: string, code: string, query: Record<string, string>) {
  return app.inject({ method: 'GET', url: '/v1/link', query, headers: { authorization: `Bearer ${code}` }, remoteAddress });
}

async function linkFor(app: FastifyInstance, code: string, short: string): Promise<void> {
  const response = await createLinkFrom(app, '198.51.100.250', code, { url: `https://example.org/${short}`, short });
  assert.equal(response.statusCode, 200, response.body);
}

function resolveFrom(app: FastifyInstance, remoteAddress: string, short: string, via: 'api' | 'redirect' = 'api') {
  return app.inject({ method: 'GET', url: via === 'api' ? `/v1/get/${short}` : `/${short}`, remoteAddress });
}

function createWebhookFrom(app: FastifyInstance, remoteAddress: string, code: string, url: string) {
  return app.inject({
    method: 'POST', url: '/v1/webhooks', headers: { authorization: `Bearer ${code}` }, payload: { url, events: 'link.created' }, remoteAddress,
  });
}

async function listFrom(app: FastifyInstance, remoteAddress: string, code: string): Promise<LinkJson[]> {
  const response = await app.inject({ method: 'GET', url: '/v1/links', headers: { authorization: code }, remoteAddress });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as LinkJson[];
}

describe('account creation limit (per client address)', () => {
  test('refuses accounts past the limit with 429 and Retry-After, creating nothing', async (t) => {
    const { app } = await limitedApp(t, { newAccount: { limit: 3, windowMs: MINUTE } });
    // GET and POST draw on the same allowance.
    for (const method of ['GET', 'POST', 'GET'] as const) {
      assert.equal((await newAccountFrom(app, CLIENT, method)).statusCode, 200);
    }
    assertLimited(await newAccountFrom(app, CLIENT, 'GET'), 'create account');
    assertLimited(await newAccountFrom(app, CLIENT, 'POST'), 'create account');

    const other = await newAccountFrom(app, OTHER_CLIENT);
    assert.equal(other.statusCode, 200, 'another address is unaffected');
    assert.equal((other.json() as Account).Uid, 4, 'the refused requests created no account');
  });

  test('counts a fixed window from the first request, then allows again', async (t) => {
    const clock = { now: Date.parse('2026-11-22T04:00:00Z') };
    const counters = createMemoryCounters({ now: () => clock.now });
    t.after(() => counters.close());
    const { app } = await appFor(
      t,
      { rateLimit: true, rateLimitExempt: [], rateLimitPolicies: { ...ROOMY, newAccount: { limit: 2, windowMs: MINUTE } } },
      { counters },
    );
    assert.equal((await newAccountFrom(app, CLIENT)).statusCode, 200);
    clock.now += 10_000;
    assert.equal((await newAccountFrom(app, CLIENT)).statusCode, 200);
    assert.equal(assertLimited(await newAccountFrom(app, CLIENT), 'create account'), 50, 'the window began at the first request');
    clock.now += 45_000;
    const refused = await newAccountFrom(app, CLIENT);
    assert.equal(assertLimited(refused, 'create account'), 5, 'refusals do not extend the window');
    clock.now += 5_000;
    assert.equal((await newAccountFrom(app, CLIENT)).statusCode, 200, 'a new window has begun');
    assert.equal((await newAccountFrom(app, CLIENT)).statusCode, 200);
    assert.equal(assertLimited(await newAccountFrom(app, CLIENT), 'create account'), 60);
  });
});

describe('failed authentication limit (per client address)', () => {
  test('counts failed authentications only, then refuses even a valid code', async (t) => {
    const { app } = await limitedApp(t, { failedAuth: { limit: 3, windowMs: MINUTE } });
    const { code } = await account(app);

    // Successes never count.
    for (let i = 0; i < 10; i++) assert.equal((await listFrom(app, CLIENT, code)).length, 0);
    // Neither do requests refused for other reasons than the code (here: two different codes, 400).
    for (let i = 0; i < 5; i++) {
      const conflicting = await app.inject({
        method: 'GET',
        url: '/v1/links',
        query: { auth: randomUUID() },
        headers: { authorization: code },
        remoteAddress: CLIENT,
      });
      assertError(conflicting, 400, 'list links');
    }

    const failures: InjectOptions[] = [
      { method: 'GET', url: '/v1/links' }, // no code
      { method: 'GET', url: '/v1/get_account', headers: { authorization: `Bearer ${randomUUID()}` } }, // unknown code
      { method: 'GET', url: '/v1/link', query: { url: 'https://example.org/', auth: 'not-a-code' } }, // malformed
    ];
    for (const failure of failures) {
      const response = await app.inject({ ...failure, remoteAddress: CLIENT });
      assert.equal(response.statusCode, 401, response.body);
      assert.equal(response.headers['www-authenticate'], 'Bearer realm="shortlink"');
    }

    // Spent: the next attempt is refused before its code is looked at, whatever the route.
    const listing = await app.inject({ method: 'GET', url: '/v1/links', headers: { authorization: code }, remoteAddress: CLIENT });
    assertLimited(listing, 'list links');
    assertLimited(
      await app.inject({ method: 'GET', url: '/v1/user_info', headers: { authorization: code }, remoteAddress: CLIENT }),
      'get account information',
    );
    assertLimited(await createLinkFrom(app, CLIENT, code, { url: 'https://example.org/' }), 'create link');
    assertLimited(
      await app.inject({ method: 'DELETE', url: '/v1/link', query: { short: 'whatever', auth: code }, remoteAddress: CLIENT }),
      'delete link',
    );

    assert.equal((await listFrom(app, OTHER_CLIENT, code)).length, 0, 'the same code from another address works');
    assert.equal((await newAccountFrom(app, CLIENT)).statusCode, 200, 'routes without authentication are not locked');
  });
});

describe('link creation limit (per account)', () => {
  test('refuses links past the limit for that account, from any address, and only for it', async (t) => {
    const { app } = await limitedApp(t, { createLink: { limit: 3, windowMs: MINUTE } });
    const first = await account(app);
    const second = await account(app);

    for (let i = 0; i < 3; i++) {
      const response = await createLinkFrom(app, CLIENT, first.code, { url: `https://example.org/${i}` });
      assert.equal(response.statusCode, 200, response.body);
      assert.ok(response.body.startsWith(`${TEST_BASE_URL}/`));
    }
    assertLimited(await createLinkFrom(app, CLIENT, first.code, { url: 'https://example.org/4' }), 'create link');
    assertLimited(await createLinkFrom(app, OTHER_CLIENT, first.code, { url: 'https://example.org/5' }), 'create link');
    // POST with a JSON body counts the same.
    const posted = await app.inject({
      method: 'POST',
      url: '/v1/link',
      headers: { authorization: first.code, 'content-type': 'application/json' },
      payload: { url: 'https://example.org/6' },
      remoteAddress: CLIENT,
    });
    assertLimited(posted, 'create link');

    const other = await createLinkFrom(app, CLIENT, second.code, { url: 'https://example.org/other' });
    assert.equal(other.statusCode, 200, 'another account from the same address is unaffected');
    assert.equal((await listFrom(app, CLIENT, first.code)).length, 3, 'refused creates made no link');
  });
});

describe('webhook registration limit (per account)', () => {
  test('refuses registrations past the limit for that account before resolving the target, from any address, and only for it', async (t) => {
    const lookups: string[] = [];
    // Every name resolves to a private address: refused with 400 after its lookup, so the
    // account never reaches its cap of 5 and only the rate limit can answer 429.
    const resolve = async (hostname: string) => {
      lookups.push(hostname);
      return [{ address: '10.0.0.1', family: 4 }];
    };
    const { app } = await limitedApp(t, { createWebhook: { limit: 3, windowMs: MINUTE } }, { webhookAllowPrivate: false }, { webhooks: { resolve, dispatch: false } });
    const first = await account(app);
    const second = await account(app);
    for (let i = 1; i <= 3; i++) {
      const response = await createWebhookFrom(app, CLIENT, first.code, `https://hooks${i}.example.com/`);
      assertError(response, 400, 'manage webhooks');
    }
    assert.equal(lookups.length, 3);
    assertLimited(await createWebhookFrom(app, CLIENT, first.code, 'https://hooks4.example.com/'), 'manage webhooks');
    assertLimited(await createWebhookFrom(app, OTHER_CLIENT, first.code, 'https://hooks5.example.com/'), 'manage webhooks');
    // A bad parameter counts too, and is refused by the limit before it is read.
    assertLimited(await createWebhookFrom(app, CLIENT, first.code, 'ftp://nowhere'), 'manage webhooks');
    assert.equal(lookups.length, 3, 'no DNS lookup once the account is limited');
    const listed = await app.inject({ method: 'GET', url: '/v1/webhooks', headers: { authorization: `Bearer ${first.code}` }, remoteAddress: CLIENT });
    assert.deepEqual(listed.json(), [], 'nothing was registered');
    // Another account from the same address is untouched, and its link creation too.
    assertError(await createWebhookFrom(app, CLIENT, second.code, 'https://other.example.com/'), 400, 'manage webhooks');
    assert.equal(lookups.length, 4);
    assert.equal((await createLinkFrom(app, CLIENT, first.code, { url: 'https://example.org/' })).statusCode, 200);
  });
});

describe('resolution limit (per client address)', () => {
  test('refuses resolutions and redirects past the limit in plain text, and does not count them', async (t) => {
    const { app } = await limitedApp(t, { resolve: { limit: 5, windowMs: MINUTE } });
    const owner = await account(app);
    await linkFor(app, owner.code, 'hot-link');

    // The API and the short URL draw on one allowance.
    for (let i = 0; i < 5; i++) {
      const response = await resolveFrom(app, CLIENT, 'hot-link', i % 2 === 0 ? 'api' : 'redirect');
      assert.equal(response.statusCode, i % 2 === 0 ? 200 : 302, response.body);
    }
    assertLimited(await resolveFrom(app, CLIENT, 'hot-link'), 'resolve link');
    const redirect = await resolveFrom(app, CLIENT, 'hot-link', 'redirect');
    assertLimited(redirect, 'resolve link');
    assert.equal(redirect.headers.location, undefined);

    const other = await resolveFrom(app, OTHER_CLIENT, 'hot-link');
    assert.equal(other.statusCode, 200, 'another address is unaffected');
    assert.equal((other.json() as LinkJson).Accesses, 6, 'the two refused resolutions were not counted');
  });
});

describe('unknown-shortcode limit (per client address)', () => {
  test('counts lookups of unknown codes apart from resolutions, then refuses every lookup', async (t) => {
    const { app } = await limitedApp(t, { unknownCode: { limit: 3, windowMs: MINUTE }, resolve: { limit: 100, windowMs: MINUTE } });
    const owner = await account(app);
    await linkFor(app, owner.code, 'known-link');

    // Many resolutions of a live link do not touch the unknown-code allowance.
    for (let i = 0; i < 10; i++) assert.equal((await resolveFrom(app, CLIENT, 'known-link')).statusCode, 200);

    const api = await resolveFrom(app, CLIENT, 'nope-1');
    assertError(api, 404, 'resolve link');
    const page = await resolveFrom(app, CLIENT, 'nope-2', 'redirect');
    assert.equal(page.statusCode, 404);
    assert.equal(page.headers['content-type'], HTML, 'an unknown short URL still gets the HTML page');
    assert.equal((await app.inject({ method: 'HEAD', url: '/v1/get/nope-3', remoteAddress: CLIENT })).statusCode, 404);

    // Spent: this address may look nothing up now, live links included, on either path.
    assertLimited(await resolveFrom(app, CLIENT, 'known-link'), 'resolve link');
    assertLimited(await resolveFrom(app, CLIENT, 'nope-4'), 'resolve link');
    assertLimited(await resolveFrom(app, CLIENT, 'known-link', 'redirect'), 'resolve link');

    assert.equal((await resolveFrom(app, OTHER_CLIENT, 'known-link')).statusCode, 200, 'another address is unaffected');
    assertError(await resolveFrom(app, OTHER_CLIENT, 'nope-1'), 404, 'resolve link');
    assert.equal((await listFrom(app, OTHER_CLIENT, owner.code))[0]!.Accesses, 11, 'refused lookups counted no access');
  });
});

describe('exemptions and switches', () => {
  const TINY: RateLimitPolicies = {
    newAccount: { limit: 1, windowMs: MINUTE },
    failedAuth: { limit: 1, windowMs: MINUTE },
    createLink: { limit: 1, windowMs: MINUTE },
    resolve: { limit: 1, windowMs: MINUTE },
    unknownCode: { limit: 1, windowMs: MINUTE },
    createWebhook: { limit: 1, windowMs: MINUTE },
    password: { limit: 1, windowMs: MINUTE },
  };

  test('exempts nobody by default: loopback (a proxy on this host) is limited like any client', async (t) => {
    const config = loadConfig({ LOG_LEVEL: 'silent', BASE_URL: TEST_BASE_URL });
    const { app } = await appFor(t, { ...config, rateLimitPolicies: TINY });
    for (const address of ['127.0.0.1', '::1', CLIENT]) {
      assert.equal((await newAccountFrom(app, address)).statusCode, 200, address);
      assertLimited(await newAccountFrom(app, address), 'create account');
    }
    assertLimited(await newAccountFrom(app, '::ffff:127.0.0.1'), 'create account');
  });

  test('exempts the RATE_LIMIT_EXEMPT addresses, however the socket spells them', async (t) => {
    const config = loadConfig({ LOG_LEVEL: 'silent', BASE_URL: TEST_BASE_URL, RATE_LIMIT_EXEMPT: '127.0.0.1, 2001:DB8::5' });
    assert.deepEqual(config.rateLimitExempt, ['127.0.0.1', '2001:DB8::5']);
    const { app } = await appFor(t, { ...config, rateLimitPolicies: TINY });
    for (const address of ['127.0.0.1', '::ffff:127.0.0.1', '2001:db8:0:0::5']) {
      for (let i = 0; i < 3; i++) assert.equal((await newAccountFrom(app, address)).statusCode, 200, `${address} #${i + 1}`);
    }
    assert.equal((await newAccountFrom(app, '2001:db8::6')).statusCode, 200);
    assertLimited(await newAccountFrom(app, '2001:db8::6'), 'create account');
  });

  test('limits loopback too when RATE_LIMIT_EXEMPT is empty', async (t) => {
    const config = loadConfig({ LOG_LEVEL: 'silent', BASE_URL: TEST_BASE_URL, RATE_LIMIT_EXEMPT: '', RATE_LIMIT_NEW_ACCOUNT: '1/1m' });
    assert.deepEqual(config.rateLimitExempt, []);
    const { app } = await appFor(t, config);
    assert.equal((await newAccountFrom(app, '127.0.0.1')).statusCode, 200);
    assertLimited(await newAccountFrom(app, '127.0.0.1'), 'create account');
  });

  test('reads every policy from its RATE_LIMIT_* variable', async (t) => {
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      BASE_URL: TEST_BASE_URL,
      RATE_LIMIT_EXEMPT: '',
      RATE_LIMIT_NEW_ACCOUNT: '2/1m',
      RATE_LIMIT_FAILED_AUTH: '3/10m',
      RATE_LIMIT_CREATE_LINK: '4/30s',
      RATE_LIMIT_RESOLVE: '5/1h',
      RATE_LIMIT_UNKNOWN_CODE: '6/2m',
      RATE_LIMIT_CREATE_WEBHOOK: '7/3h',
      RATE_LIMIT_PASSWORD: '8/15m',
    });
    assert.deepEqual(config.rateLimitPolicies, {
      newAccount: { limit: 2, windowMs: MINUTE },
      failedAuth: { limit: 3, windowMs: 10 * MINUTE },
      createLink: { limit: 4, windowMs: 30_000 },
      resolve: { limit: 5, windowMs: 60 * MINUTE },
      unknownCode: { limit: 6, windowMs: 2 * MINUTE },
      createWebhook: { limit: 7, windowMs: 180 * MINUTE },
      password: { limit: 8, windowMs: 15 * MINUTE },
    });
    const { app } = await appFor(t, config);
    for (let i = 0; i < 2; i++) assert.equal((await newAccountFrom(app, CLIENT)).statusCode, 200);
    assertLimited(await newAccountFrom(app, CLIENT), 'create account');
    const { code } = await account(app);
    for (let i = 0; i < 4; i++) assert.equal((await createLinkFrom(app, CLIENT, code, { url: 'https://example.org/' })).statusCode, 200);
    assertLimited(await createLinkFrom(app, CLIENT, code, { url: 'https://example.org/' }), 'create link', 30_000);
    for (let i = 0; i < 7; i++) assertError(await createWebhookFrom(app, CLIENT, code, 'http://10.0.0.1/'), 400, 'manage webhooks');
    assertLimited(await createWebhookFrom(app, CLIENT, code, 'http://10.0.0.1/'), 'manage webhooks', 180 * MINUTE);
  });

  test('refuses a RATE_LIMIT_CREATE_WEBHOOK that is not a count per window', () => {
    assert.throws(() => loadConfig({ RATE_LIMIT_CREATE_WEBHOOK: '20 per hour' }), /RATE_LIMIT_CREATE_WEBHOOK must look like 100\/1m/);
  });

  test('keeps the documented defaults when no RATE_LIMIT_* variable is set', () => {
    const config = loadConfig({});
    assert.deepEqual(config.rateLimitPolicies, DEFAULT_RATE_LIMIT_POLICIES);
    assert.deepEqual(config.rateLimitPolicies.createWebhook, { limit: 20, windowMs: 60 * MINUTE });
    assert.deepEqual(config.rateLimitPolicies.password, { limit: 10, windowMs: 15 * MINUTE }, 'CONTRACT §8.3: 10/15m');
    assert.deepEqual(config.rateLimitExempt, []);
    assert.equal(config.rateLimitIpv6Prefix, 64);
    assert.equal(config.trustProxy, false);
  });

  test('RATE_LIMIT=off disables every limit', async (t) => {
    const config = loadConfig({ LOG_LEVEL: 'silent', BASE_URL: TEST_BASE_URL, RATE_LIMIT: 'off', RATE_LIMIT_EXEMPT: '' });
    const { app } = await appFor(t, { ...config, rateLimitPolicies: TINY });
    for (let i = 0; i < 5; i++) assert.equal((await newAccountFrom(app, CLIENT)).statusCode, 200);
    for (let i = 0; i < 5; i++) assert.equal((await app.inject({ method: 'GET', url: '/v1/links', remoteAddress: CLIENT })).statusCode, 401);
    const { code } = await account(app);
    assert.equal((await listFrom(app, CLIENT, code)).length, 0);
    for (let i = 0; i < 5; i++) {
      assert.equal((await createLinkFrom(app, CLIENT, code, { url: 'https://example.org/', short: `off-${i}` })).statusCode, 200);
    }
    for (let i = 0; i < 5; i++) assert.equal((await resolveFrom(app, CLIENT, 'off-0')).statusCode, 200);
    for (let i = 0; i < 5; i++) assert.equal((await resolveFrom(app, CLIENT, `missing-${i}`)).statusCode, 404);
    for (let i = 0; i < 5; i++) assertError(await createWebhookFrom(app, CLIENT, code, 'http://10.0.0.1/'), 400, 'manage webhooks');
  });
});

describe('client address behind a proxy (TRUST_PROXY)', () => {
  const policies = { newAccount: { limit: 2, windowMs: MINUTE } };
  const viaProxy = (app: FastifyInstance, proxy: string, forwardedFor: string) =>
    newAccountFrom(app, proxy, 'GET', { 'x-forwarded-for': forwardedFor });

  test('with TRUST_PROXY=true, the client is the right-most address that no loopback or private proxy could have written', async (t) => {
    const config = loadConfig({ LOG_LEVEL: 'silent', BASE_URL: TEST_BASE_URL, TRUST_PROXY: 'true' });
    assert.deepEqual(config.trustProxy, ['loopback', 'linklocal', 'uniquelocal']);
    const { app } = await appFor(t, { ...config, rateLimitPolicies: { ...ROOMY, ...policies } });
    for (let i = 0; i < 2; i++) assert.equal((await viaProxy(app, '127.0.0.1', '198.51.100.1')).statusCode, 200);
    assertLimited(await viaProxy(app, '127.0.0.1', '198.51.100.1'), 'create account');
    assertLimited(await viaProxy(app, '10.0.0.9', '198.51.100.1'), 'create account');
    // Through two private hops, as Kubernetes ingress behind a cloud balancer does.
    assertLimited(await viaProxy(app, '10.0.0.9', '198.51.100.1, 10.1.2.3'), 'create account');
    // An appending proxy: whatever the client wrote first changes nothing.
    for (const forged of ['127.0.0.1', '192.0.2.1', '::1', 'not-an-address']) {
      assertLimited(await viaProxy(app, '127.0.0.1', `${forged}, 198.51.100.1`), 'create account');
    }
    assert.equal((await viaProxy(app, '127.0.0.1', '198.51.100.2')).statusCode, 200, 'each forwarded client has its own count');
    // A peer on a public address is no proxy: it is the client, whatever it claims.
    assert.equal((await viaProxy(app, CLIENT, '198.51.100.3')).statusCode, 200);
    assert.equal((await viaProxy(app, CLIENT, '198.51.100.4')).statusCode, 200);
    assertLimited(await viaProxy(app, CLIENT, '198.51.100.5'), 'create account');
  });

  test('a client cannot borrow an exempt address through an appending proxy', async (t) => {
    const config = loadConfig({ LOG_LEVEL: 'silent', BASE_URL: TEST_BASE_URL, TRUST_PROXY: 'true', RATE_LIMIT_EXEMPT: '127.0.0.1,::1' });
    const { app } = await appFor(t, { ...config, rateLimitPolicies: { ...ROOMY, ...policies } });
    for (let i = 0; i < 2; i++) assert.equal((await viaProxy(app, '127.0.0.1', `127.0.0.1, ${CLIENT}`)).statusCode, 200);
    assertLimited(await viaProxy(app, '127.0.0.1', `127.0.0.1, ${CLIENT}`), 'create account');
    assertLimited(await viaProxy(app, '127.0.0.1', `::1, ${CLIENT}`), 'create account');
    for (let i = 0; i < 3; i++) assert.equal((await newAccountFrom(app, '127.0.0.1')).statusCode, 200, 'the local tool itself stays exempt');
  });

  test('refuses TRUST_PROXY entries that are neither addresses, CIDRs nor range names', () => {
    for (const value of ['10.0.0.999', '10.0.0.0/33', '::1/129', '10.0.0.1/8/8', 'localhost', 'loopback, nonsense']) {
      assert.throws(() => loadConfig({ TRUST_PROXY: value }), /TRUST_PROXY must be true, false or a list/, value);
    }
    assert.deepEqual(loadConfig({ TRUST_PROXY: 'loopback, fd00::/8, 192.0.2.1' }).trustProxy, ['loopback', 'fd00::/8', '192.0.2.1']);
  });

  test('with TRUST_PROXY naming the proxy, only what that proxy saw counts: not what a client forged, nor a direct client\'s header', async (t) => {
    const config = loadConfig({ LOG_LEVEL: 'silent', BASE_URL: TEST_BASE_URL, TRUST_PROXY: '10.0.0.9, 10.1.0.0/16' });
    assert.deepEqual(config.trustProxy, ['10.0.0.9', '10.1.0.0/16']);
    const { app } = await appFor(t, { ...config, rateLimitPolicies: { ...ROOMY, ...policies } });
    // The client forges a first entry; the proxy appends the address it really saw.
    assert.equal((await viaProxy(app, '10.0.0.9', '192.0.2.1, 198.51.100.1')).statusCode, 200);
    assert.equal((await viaProxy(app, '10.1.2.3', '192.0.2.2, 198.51.100.1')).statusCode, 200);
    assertLimited(await viaProxy(app, '10.0.0.9', '192.0.2.3, 198.51.100.1'), 'create account');
    assert.equal((await viaProxy(app, '10.0.0.9', '198.51.100.1, 198.51.100.2')).statusCode, 200);
    // A client reaching the server directly is counted by its own address, whatever it claims.
    assert.equal((await viaProxy(app, CLIENT, '198.51.100.3')).statusCode, 200);
    assert.equal((await viaProxy(app, CLIENT, '198.51.100.4')).statusCode, 200);
    assertLimited(await viaProxy(app, CLIENT, '198.51.100.5'), 'create account');
  });

  test('refuses a hop count, which Fastify would silently ignore', () => {
    assert.throws(() => loadConfig({ TRUST_PROXY: '1' }), /TRUST_PROXY hop counts are not supported/);
  });

  test('without TRUST_PROXY, X-Forwarded-For is ignored: it neither splits nor escapes the count', async (t) => {
    const config = loadConfig({ LOG_LEVEL: 'silent', BASE_URL: TEST_BASE_URL });
    assert.equal(config.trustProxy, false);
    const { app } = await appFor(t, { ...config, rateLimitPolicies: { ...ROOMY, ...policies } });
    assert.equal((await viaProxy(app, CLIENT, '198.51.100.1')).statusCode, 200);
    assert.equal((await viaProxy(app, CLIENT, '198.51.100.2')).statusCode, 200);
    assertLimited(await viaProxy(app, CLIENT, '198.51.100.3'), 'create account');
    assertLimited(await viaProxy(app, CLIENT, '127.0.0.1'), 'create account');
    // Nor can a loopback client be blamed for (or limited by) an address it claims: it has its own count.
    for (let i = 0; i < 2; i++) assert.equal((await viaProxy(app, '127.0.0.1', CLIENT)).statusCode, 200);
    assertLimited(await viaProxy(app, '127.0.0.1', CLIENT), 'create account');
  });
});

describe('IPv6 clients (counted per network)', () => {
  const policies = { newAccount: { limit: 1, windowMs: MINUTE } };

  test('counts every address of one /64 together, and another /64 apart', async (t) => {
    const config = loadConfig({ LOG_LEVEL: 'silent', BASE_URL: TEST_BASE_URL });
    const { app } = await limitedApp(t, policies, { rateLimitIpv6Prefix: config.rateLimitIpv6Prefix });
    assert.equal((await newAccountFrom(app, '2001:db8:1:2::1')).statusCode, 200);
    for (const sibling of ['2001:db8:1:2::2', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:DB8:1:2:0:0:0:9', '2001:db8:1:2::1%eth0']) {
      assertLimited(await newAccountFrom(app, sibling), 'create account');
    }
    assert.equal((await newAccountFrom(app, '2001:db8:1:3::1')).statusCode, 200, 'the next /64 has its own count');
  });

  test('counts an IPv4-mapped address as the IPv4 address', async (t) => {
    const { app } = await limitedApp(t, policies);
    assert.equal((await newAccountFrom(app, '::ffff:203.0.113.9')).statusCode, 200);
    assertLimited(await newAccountFrom(app, '203.0.113.9'), 'create account');
    assert.equal((await newAccountFrom(app, '::ffff:203.0.113.10')).statusCode, 200, 'IPv4 is still counted per address');
  });

  test('RATE_LIMIT_IPV6_PREFIX sets the network size', async (t) => {
    const config = loadConfig({ LOG_LEVEL: 'silent', BASE_URL: TEST_BASE_URL, RATE_LIMIT_IPV6_PREFIX: '56' });
    assert.equal(config.rateLimitIpv6Prefix, 56);
    const { app } = await limitedApp(t, policies, { rateLimitIpv6Prefix: 56 });
    assert.equal((await newAccountFrom(app, '2001:db8:1:200::1')).statusCode, 200);
    assertLimited(await newAccountFrom(app, '2001:db8:1:2ff::1'), 'create account');
    assert.equal((await newAccountFrom(app, '2001:db8:1:300::1')).statusCode, 200);
    assert.equal(loadConfig({ RATE_LIMIT_IPV6_PREFIX: '128' }).rateLimitIpv6Prefix, 128);
    for (const value of ['0', '129', 'x', '64.5']) {
      assert.throws(() => loadConfig({ RATE_LIMIT_IPV6_PREFIX: value }), /RATE_LIMIT_IPV6_PREFIX must be a prefix length from 1 to 128/, value);
    }
  });

  test('limits every IPv6 operation per network: resolutions and unknown codes too', async (t) => {
    const { app } = await limitedApp(t, { unknownCode: { limit: 2, windowMs: MINUTE } });
    assert.equal((await resolveFrom(app, '2001:db8:9::1', 'missing-a')).statusCode, 404);
    assert.equal((await resolveFrom(app, '2001:db8:9::2', 'missing-b')).statusCode, 404);
    assertLimited(await resolveFrom(app, '2001:db8:9::3', 'missing-c'), 'resolve link');
  });
});

describe('proxy headers nobody reads (TRUST_PROXY unset)', () => {
  async function loggedApp(t: TestContext, overrides: Partial<Config> = {}) {
    const lines: string[] = [];
    const testApp = await appFor(t, { logLevel: 'info', ...overrides }, { logStream: { write: (line: string) => void lines.push(line) } });
    const warnings = () => lines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((entry) => entry.level === 40);
    return { ...testApp, warnings };
  }

  test('warns once, saying what to set, when a loopback or private peer sends X-Forwarded-For or Forwarded', async (t) => {
    const { app, warnings } = await loggedApp(t);
    await app.inject({ method: 'GET', url: '/healthz', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': CLIENT } });
    assert.equal(warnings().length, 1);
    assert.match(warnings()[0]!.msg, /TRUST_PROXY is unset/);
    assert.match(warnings()[0]!.msg, /TRUST_PROXY=127\.0\.0\.1/);
    for (let i = 0; i < 5; i++) {
      await app.inject({ method: 'GET', url: '/healthz', remoteAddress: '10.0.0.9', headers: { forwarded: `for=${CLIENT}` } });
    }
    assert.equal(warnings().length, 1, 'at most once per 10 minutes');
  });

  test('warns of Forwarded from a private peer too', async (t) => {
    const { app, warnings } = await loggedApp(t);
    await app.inject({ method: 'GET', url: '/healthz', remoteAddress: '::ffff:192.168.1.20', headers: { forwarded: `for=${CLIENT}` } });
    assert.equal(warnings().length, 1);
  });

  test('stays quiet for a public peer sending the header, for requests without it, and when TRUST_PROXY is set', async (t) => {
    const { app, warnings } = await loggedApp(t);
    await app.inject({ method: 'GET', url: '/healthz', remoteAddress: CLIENT, headers: { 'x-forwarded-for': '198.51.100.1' } });
    await app.inject({ method: 'GET', url: '/healthz', remoteAddress: '127.0.0.1' });
    assert.equal(warnings().length, 0);
    const trusting = await loggedApp(t, { trustProxy: ['loopback'] });
    await trusting.app.inject({ method: 'GET', url: '/healthz', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': CLIENT } });
    assert.equal(trusting.warnings().length, 0);
  });
});
