/**
 * CONTRACT §7.3: `/v1/admin/…` behind ADMIN_TOKEN — authentication (never an access code),
 * listing and changing accounts, searching links across accounts, takedown, paging and the
 * audit log.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { AdminAccount, LinkDetails } from '../../src/http/schemas.ts';
import { newAccount, TEST_BASE_URL } from '../helpers/app.ts';
import { appFor, assertError, createLink, createLinkOk, JSON_TYPE, listLinks, resolve, TEXT } from './support.ts';

const TEST_BASE_HOST = new URL(TEST_BASE_URL).hostname;
const TOKEN = 'T0ken-for-the-admin-tests_0123456789abcdef';
const ADMIN_KEYS = ['Uid', 'DateCreated', 'MaxLinks', 'Links', 'Disabled'];
const DETAILS_KEYS = ['ShortCode', 'PointsTo', 'CreatedBy', 'Accesses', 'DateCreated', 'Title', 'Tags', 'ExpiresAt', 'MaxVisits', 'Domain', 'ForwardQuery', 'Protected', 'Rules'];

function admin(app: FastifyInstance, method: 'GET' | 'PATCH' | 'DELETE' | 'PUT', url: string, query: Record<string, string> = {}, token = TOKEN) {
  return app.inject({ method, url, query, headers: { authorization: `Bearer ${token}` } });
}

/** Follows a Link header's next URL (absolute, on BASE_URL) through inject. */
function nextPath(link: string | string[] | number | undefined): string | undefined {
  if (typeof link !== 'string') return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(link);
  assert.ok(match, `Link header ${link}`);
  assert.ok(match[1]!.startsWith(`${TEST_BASE_URL}/v1/admin/`), match[1]);
  return match[1]!.slice(TEST_BASE_URL.length);
}

describe('admin routes without ADMIN_TOKEN', () => {
  test('do not exist: 404 as unknown routes, even with a token', async (t) => {
    const { app } = await appFor(t);
    for (const [method, url] of [['GET', '/v1/admin/accounts'], ['PATCH', '/v1/admin/account'], ['GET', '/v1/admin/links'], ['DELETE', '/v1/admin/link']] as const) {
      const response = await admin(app, method, url);
      assert.equal(response.statusCode, 404, `${method} ${url}`);
      assert.equal(response.headers['content-type'], TEXT);
    }
    const spec = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
    assert.equal(Object.keys(spec.paths).some((path) => path.startsWith('/v1/admin')), false);
  });
});

describe('admin authentication', () => {
  test('a missing, wrong or foreign-scheme token is 401 "Unable to administer" with WWW-Authenticate', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    const cases = [
      await app.inject({ method: 'GET', url: '/v1/admin/accounts' }),
      await admin(app, 'GET', '/v1/admin/accounts', {}, `${TOKEN}x`),
      await admin(app, 'GET', '/v1/admin/accounts', {}, TOKEN.slice(1)),
      await app.inject({ method: 'GET', url: '/v1/admin/accounts', headers: { authorization: `Basic ${TOKEN}` } }),
      await app.inject({ method: 'GET', url: '/v1/admin/accounts', headers: { authorization: TOKEN } }),
      await app.inject({ method: 'GET', url: '/v1/admin/accounts', query: { auth: TOKEN } }),
    ];
    for (const response of cases) {
      assertError(response, 401, 'administer');
      assert.equal(response.headers['www-authenticate'], 'Bearer realm="shortlink"');
    }
    assert.equal((await app.inject({ method: 'GET', url: '/v1/admin/accounts', headers: { authorization: `bearer   ${TOKEN}` } })).statusCode, 200);
  });

  test('an access code never opens the admin routes, and the admin token is never an access code', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    const { code } = await newAccount(app);
    assertError(await admin(app, 'GET', '/v1/admin/accounts', {}, code), 401, 'administer');
    assertError(await app.inject({ method: 'GET', url: '/v1/links', headers: { authorization: `Bearer ${TOKEN}` } }), 401, 'list links');
    assertError(await app.inject({ method: 'GET', url: '/v1/get_account', query: { auth: TOKEN } }), 401, 'get account information');
  });

  test('failed tokens are rate limited like failed access codes (429 with Retry-After)', async (t) => {
    const { app } = await appFor(t, {
      adminToken: TOKEN,
      rateLimit: true,
      rateLimitPolicies: {
        newAccount: { limit: 100, windowMs: 60_000 },
        failedAuth: { limit: 3, windowMs: 60_000 },
        createLink: { limit: 100, windowMs: 60_000 },
        resolve: { limit: 1000, windowMs: 60_000 },
        unknownCode: { limit: 1000, windowMs: 60_000 },
        createWebhook: { limit: 1000, windowMs: 60_000 },
        password: { limit: 1000, windowMs: 60_000 },
      },
    });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await admin(app, 'GET', '/v1/admin/accounts', {}, `wrong-token-${i}`.padEnd(40, 'x'))).statusCode);
    assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
    const limited = await admin(app, 'GET', '/v1/admin/accounts');
    assertError(limited, 429, 'administer');
    assert.ok(Number(limited.headers['retry-after']) > 0);
  });
});

describe('GET /v1/admin/accounts', () => {
  test('lists accounts by uid with Links and Disabled, keys in order, never an access code', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN, defaultMaxLinks: 5 });
    const first = await newAccount(app);
    const second = await newAccount(app);
    await createLinkOk(app, second.code, { url: 'https://example.com/' });
    const response = await admin(app, 'GET', '/v1/admin/accounts');
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['content-type'], JSON_TYPE);
    assert.equal(response.headers.link, undefined);
    const body = response.json() as AdminAccount[];
    assert.deepEqual(body.map((account) => Object.keys(account)), [ADMIN_KEYS, ADMIN_KEYS]);
    assert.deepEqual(body.map((a) => [a.Uid, a.MaxLinks, a.Links, a.Disabled]), [[first.uid, 5, 0, false], [second.uid, 5, 1, false]]);
    assert.ok(!response.body.includes(first.code) && !response.body.includes(second.code));
  });

  test('pages with limit and an RFC 8288 Link to the next page, until the last', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    const uids: number[] = [];
    for (let i = 0; i < 5; i++) uids.push((await newAccount(app)).uid);
    const seen: number[] = [];
    let path: string | undefined = '/v1/admin/accounts?limit=2';
    let pages = 0;
    while (path !== undefined) {
      const response: Awaited<ReturnType<FastifyInstance['inject']>> = await app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(response.statusCode, 200, response.body);
      seen.push(...(response.json() as AdminAccount[]).map((a) => a.Uid));
      path = nextPath(response.headers.link);
      if (path !== undefined) assert.match(path, /limit=2/);
      pages++;
    }
    assert.deepEqual(seen, uids);
    assert.equal(pages, 3);
  });

  test('refuses a bad limit or cursor (400) and a repeated parameter', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    for (const query of [{ limit: '0' }, { limit: '1001' }, { limit: 'ten' }, { cursor: 'abc' }, { cursor: '-1' }] as Record<string, string>[]) {
      assertError(await admin(app, 'GET', '/v1/admin/accounts', query), 400, 'administer');
    }
    assertError(await app.inject({ method: 'GET', url: '/v1/admin/accounts?limit=1&limit=2', headers: { authorization: `Bearer ${TOKEN}` } }), 400, 'administer');
  });
});

describe('PATCH /v1/admin/account', () => {
  test('sets max_links and disabled (query, JSON or form), answering the account', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    const { uid, code } = await newAccount(app);
    const raised = await admin(app, 'PATCH', '/v1/admin/account', { uid: String(uid), max_links: '50' });
    assert.equal(raised.statusCode, 200, raised.body);
    assert.deepEqual(Object.keys(raised.json() as object), ADMIN_KEYS);
    assert.deepEqual({ ...(raised.json() as AdminAccount), DateCreated: '' }, { Uid: uid, DateCreated: '', MaxLinks: 50, Links: 0, Disabled: false });
    const json = await app.inject({
      method: 'PATCH', url: '/v1/admin/account', headers: { authorization: `Bearer ${TOKEN}` }, payload: { uid: String(uid), disabled: 'true' },
    });
    assert.equal((json.json() as AdminAccount).Disabled, true);
    const form = await app.inject({
      method: 'PATCH', url: '/v1/admin/account',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `uid=${uid}&disabled=false&max_links=7`,
    });
    assert.deepEqual([(form.json() as AdminAccount).Disabled, (form.json() as AdminAccount).MaxLinks], [false, 7]);
    const shown = await app.inject({ method: 'GET', url: '/v1/get_account', query: { auth: code } });
    assert.equal((shown.json() as { MaxLinks: number }).MaxLinks, 7);
  });

  test('refuses bad parameters (400), an unknown uid (404), and a cap below the links held (400)', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    const { uid, code } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://example.com/1' });
    await createLinkOk(app, code, { url: 'https://example.com/2' });
    for (const query of [{}, { max_links: '3' }, { uid: String(uid) }, { uid: 'x', max_links: '3' }, { uid: String(uid), max_links: '-1' },
      { uid: String(uid), max_links: '1000000001' }, { uid: String(uid), disabled: 'yes' }] as Record<string, string>[]) {
      assertError(await admin(app, 'PATCH', '/v1/admin/account', query), 400, 'administer');
    }
    const unknown = await admin(app, 'PATCH', '/v1/admin/account', { uid: String(uid + 1000), max_links: '3' });
    assertError(unknown, 404, 'administer');
    assert.equal(unknown.body, 'Unable to administer: no account has this uid');
    const below = await admin(app, 'PATCH', '/v1/admin/account', { uid: String(uid), max_links: '1' });
    assertError(below, 400, 'administer');
    assert.equal(below.body, 'Unable to administer: the account holds 2 links; "max_links" cannot go below that');
    assert.equal((await admin(app, 'PATCH', '/v1/admin/account', { uid: String(uid), max_links: '2' })).statusCode, 200);
  });

  test('a disabled account\'s links answer 410, uncounted, until it is enabled again', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    const { uid, code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: 'https://example.com/' });
    assert.equal((await admin(app, 'PATCH', '/v1/admin/account', { uid: String(uid), disabled: 'true' })).statusCode, 200);
    const gone = await resolve(app, short);
    assertError(gone, 410, 'resolve link');
    assert.equal(gone.body, 'Unable to resolve link: the link has been disabled');
    assert.equal((await app.inject({ method: 'GET', url: `/${short}` })).statusCode, 410);
    assert.equal((await admin(app, 'PATCH', '/v1/admin/account', { uid: String(uid), disabled: 'false' })).statusCode, 200);
    const back = await resolve(app, short);
    assert.equal(back.statusCode, 200);
    assert.equal((back.json() as { Accesses: number }).Accesses, 1, 'the refused resolutions were not counted');
  });
});

describe('GET /v1/admin/links', () => {
  async function seeded(t: Parameters<typeof appFor>[0]) {
    const testApp = await appFor(t, { adminToken: TOKEN });
    const { app } = testApp;
    const one = await newAccount(app);
    const two = await newAccount(app);
    await createLinkOk(app, one.code, { url: 'https://phish.example/login', short: 'bad-one' });
    await createLinkOk(app, two.code, { url: 'https://WWW.Phish.Example/x', short: 'bad-two' });
    await createLinkOk(app, two.code, { url: 'https://notphish.example/', short: 'fine-one' });
    await createLinkOk(app, one.code, { url: 'https://phish.example.evil.test/', short: 'other-1' });
    await createLinkOk(app, one.code, { url: 'https://bücher.example/buch', short: 'books-1' });
    return { app, one, two };
  }

  const codes = (response: { json(): unknown }) => (response.json() as LinkDetails[]).map((link) => link.ShortCode);

  test('host matches the target\'s host and its subdomains, not look-alikes', async (t) => {
    const { app, one } = await seeded(t);
    const response = await admin(app, 'GET', '/v1/admin/links', { host: 'PHISH.example' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(codes(response), ['bad-one', 'bad-two']);
    const first = (response.json() as LinkDetails[])[0]!;
    assert.deepEqual(Object.keys(first), DETAILS_KEYS);
    assert.deepEqual({ ...first, DateCreated: '' }, {
      ShortCode: 'bad-one', PointsTo: 'https://phish.example/login', CreatedBy: one.uid, Accesses: 0, DateCreated: '',
      Title: null, Tags: [], ExpiresAt: null, MaxVisits: null, Domain: null, ForwardQuery: false, Protected: false, Rules: [],
    });
    assert.deepEqual(codes(await admin(app, 'GET', '/v1/admin/links', { host: 'bücher.example' })), ['books-1']);
    assert.deepEqual(codes(await admin(app, 'GET', '/v1/admin/links', { host: 'xn--bcher-kva.example' })), ['books-1']);
  });

  test('q searches shortcode and target case-insensitively; both filters together; none lists all', async (t) => {
    const { app } = await seeded(t);
    assert.deepEqual(codes(await admin(app, 'GET', '/v1/admin/links', { q: 'LOGIN' })), ['bad-one']);
    assert.deepEqual(codes(await admin(app, 'GET', '/v1/admin/links', { q: 'fine' })), ['fine-one']);
    assert.deepEqual(codes(await admin(app, 'GET', '/v1/admin/links', { q: '/X', host: 'phish.example' })), ['bad-two']);
    assert.deepEqual(codes(await admin(app, 'GET', '/v1/admin/links')), ['bad-one', 'bad-two', 'fine-one', 'other-1', 'books-1']);
  });

  test('pages with limit and Link, keeping the filters', async (t) => {
    const { app } = await seeded(t);
    const seen: string[] = [];
    let path: string | undefined = '/v1/admin/links?host=phish.example&limit=1';
    while (path !== undefined) {
      const response: Awaited<ReturnType<FastifyInstance['inject']>> = await app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(response.statusCode, 200, response.body);
      seen.push(...codes(response));
      path = nextPath(response.headers.link);
      if (path !== undefined) assert.match(path, /host=phish.example/);
    }
    assert.deepEqual(seen, ['bad-one', 'bad-two']);
  });

  test('refuses a host with a scheme, port or path (400)', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    // A default port (80 for http) and an empty one vanish when parsed as a URL; still a port.
    for (const host of ['https://a.example', 'a.example:8080', 'a.example:80', 'a.example:443', 'a.example:', '[::1]:80', '127.0.0.1:80', 'a.example/x', 'a b']) {
      assertError(await admin(app, 'GET', '/v1/admin/links', { host }), 400, 'administer');
    }
  });
});

describe('hostile admin parameters', () => {
  test('SQL, wildcards, huge and odd values are text or a 400, never an error or a wider match', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://safe.example/', short: 'safe-link' });
    for (const q of ["' OR 1=1 --", '%', '_', '\\', 'safe-link\u0000', '😀']) {
      const response = await admin(app, 'GET', '/v1/admin/links', { q });
      assert.equal(response.statusCode, 200, `${JSON.stringify(q)}: ${response.body}`);
      assert.deepEqual(response.json(), [], JSON.stringify(q));
    }
    assertError(await admin(app, 'GET', '/v1/admin/links', { q: 'x'.repeat(2001) }), 400, 'administer');
    for (const query of [{ cursor: '99999999999999999999' }, { cursor: '1e3' }, { limit: '1.5' }, { host: '%2e' }, { host: 'a..b' }, { host: '' + 'x'.repeat(300) + '.' + 'y'.repeat(300) }] as Record<string, string>[]) {
      const response = await admin(app, 'GET', '/v1/admin/links', query);
      assert.ok(response.statusCode === 400 || (response.statusCode === 200 && response.body === '[]'), `${JSON.stringify(query)}: ${response.statusCode} ${response.body}`);
    }
    for (const uid of ['1e3', '0x1', '-1', '1.0', ' 1', '99999999999']) {
      assertError(await admin(app, 'PATCH', '/v1/admin/account', { uid, disabled: 'true' }), 400, 'administer');
    }
    assertError(await admin(app, 'PATCH', '/v1/admin/account', { uid: '1', disabled: 'TRUE' }), 400, 'administer');
    assert.equal((await resolve(app, 'safe-link')).statusCode, 200, 'nothing was changed');
  });
});

describe('DELETE /v1/admin/link', () => {
  test('takes any account\'s link down: Success, gone, slot and shortcode free; unknown 404; missing 400', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN, defaultMaxLinks: 1 });
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://phish.example/', short: 'takedown' });
    const response = await admin(app, 'DELETE', '/v1/admin/link', { short: 'takedown' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['content-type'], TEXT);
    assert.equal(response.body, 'Success');
    assert.equal((await resolve(app, 'takedown')).statusCode, 404);
    assert.deepEqual(await listLinks(app, code), []);
    await createLinkOk(app, code, { url: 'https://ok.example/', short: 'takedown' });
    assertError(await admin(app, 'DELETE', '/v1/admin/link', { short: 'never-was' }), 404, 'administer');
    assertError(await admin(app, 'DELETE', '/v1/admin/link', { short: 'take\u0000down' }), 404, 'administer');
    assertError(await admin(app, 'DELETE', '/v1/admin/link'), 400, 'administer');
  });

  test('takes down the link of the domain named, leaving the same shortcode on another domain', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    assert.equal((await admin(app, 'PUT', '/v1/admin/domain', { origin: 'https://go.example.com' })).statusCode, 200);
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://phish.example/a', short: 'twin-code' });
    assert.equal((await createLink(app, code, { url: 'https://phish.example/b', short: 'twin-code', domain: 'go.example.com' })).statusCode, 200);
    assert.equal((await admin(app, 'DELETE', '/v1/admin/link', { short: 'twin-code', domain: 'GO.example.com' })).statusCode, 200);
    assert.deepEqual((await listLinks(app, code)).map((link) => [link.ShortCode, link.Domain]), [['twin-code', null]]);
    assertError(await admin(app, 'DELETE', '/v1/admin/link', { short: 'twin-code', domain: 'go.example.com' }), 404, 'administer');
    assertError(await admin(app, 'DELETE', '/v1/admin/link', { short: 'twin-code', domain: 'nowhere.example' }), 400, 'administer');
    // The key is never taken from `short`: a slash is in no shortcode.
    assert.equal((await createLink(app, code, { url: 'https://phish.example/c', short: 'other-code', domain: 'go.example.com' })).statusCode, 200);
    assertError(await admin(app, 'DELETE', '/v1/admin/link', { short: 'go.example.com/other-code' }), 404, 'administer');
    assert.equal((await admin(app, 'DELETE', '/v1/admin/link', { short: 'twin-code', domain: TEST_BASE_HOST })).statusCode, 200);
    assert.deepEqual((await listLinks(app, code)).map((link) => [link.ShortCode, link.Domain]), [['other-code', 'go.example.com']]);
  });
});

describe('audit log', () => {
  test('one line per admin action with action, target and outcome, never the token', async (t) => {
    const lines: string[] = [];
    const { app } = await appFor(t, { adminToken: TOKEN, logLevel: 'info' }, { logStream: { write: (chunk: string) => void lines.push(chunk) } });
    const { uid } = await newAccount(app);
    await admin(app, 'PATCH', '/v1/admin/account', { uid: String(uid), disabled: 'true' });
    await admin(app, 'DELETE', '/v1/admin/link', { short: 'nothing-here' });
    await admin(app, 'GET', '/v1/admin/accounts', {}, 'w'.repeat(40));
    const audits = lines.map((line) => JSON.parse(line) as { audit?: { action: string; target: string; outcome: string } })
      .filter((entry) => entry.audit !== undefined).map((entry) => entry.audit);
    assert.deepEqual(audits, [
      { action: 'update account', target: `uid="${uid}" disabled="true"`, outcome: 'done' },
      { action: 'take down link', target: 'short="nothing-here"', outcome: 'refused (404)' },
      { action: 'list accounts', target: '', outcome: 'refused (401)' },
    ]);
    assert.ok(!lines.join('').includes(TOKEN), 'the token never reaches the log');
    assert.ok(!lines.join('').includes('w'.repeat(40)), 'nor does a wrong one');
  });
});
