/**
 * CONTRACT §8.1, domain administration: `PUT /v1/admin/domain`, `GET /v1/admin/domains`,
 * `DELETE /v1/admin/domain` behind ADMIN_TOKEN, and the owner's `GET /v1/domains`; the default
 * domain's fallbacks; errors named `manage domains`; the audit lines.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { linkKey } from '../../src/links/link-key.ts';
import type { AdminDomain, Domain } from '../../src/http/schemas.ts';
import { newAccount, TEST_BASE_URL } from '../helpers/app.ts';
import { appFor, assertError, JSON_TYPE, TEXT } from './support.ts';

const TOKEN = 'T0ken-for-the-domain-tests_0123456789abcdef';
const DOMAIN_KEYS = ['Host', 'Origin', 'NotFoundUrl', 'RootUrl', 'ExpiredUrl', 'Links', 'DateCreated'];
const DEFAULT_HOST = new URL(TEST_BASE_URL).hostname;
const OPERATION = 'manage domains';

function admin(app: FastifyInstance, method: 'GET' | 'PUT' | 'DELETE', url: string, query: Record<string, string> = {}, token = TOKEN) {
  return app.inject({ method, url, query, headers: { authorization: `Bearer ${token}` } });
}

async function put(app: FastifyInstance, query: Record<string, string>): Promise<AdminDomain> {
  const response = await admin(app, 'PUT', '/v1/admin/domain', query);
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['content-type'], JSON_TYPE);
  assert.deepEqual(Object.keys(response.json() as object), DOMAIN_KEYS);
  return response.json() as AdminDomain;
}

async function listAdmin(app: FastifyInstance): Promise<AdminDomain[]> {
  const response = await admin(app, 'GET', '/v1/admin/domains');
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as AdminDomain[];
}

describe('PUT /v1/admin/domain', () => {
  test('registers a domain: Host lower case without port, Origin as short URLs use it, no fallbacks, Links 0', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    const before = Date.now();
    const domain = await put(app, { origin: 'HTTPS://Go.Example.COM/' });
    assert.deepEqual({ ...domain, DateCreated: null }, {
      Host: 'go.example.com', Origin: 'https://go.example.com', NotFoundUrl: null, RootUrl: null, ExpiredUrl: null, Links: 0, DateCreated: null,
    });
    assert.ok(Date.parse(domain.DateCreated!) >= before - 1000, domain.DateCreated!);
    assert.match(domain.DateCreated!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const withPort = await put(app, { origin: 'http://links.example.org:8080' });
    assert.equal(withPort.Host, 'links.example.org');
    assert.equal(withPort.Origin, 'http://links.example.org:8080');
  });

  test('takes its parameters from the query, a JSON body or a form body; a PUT sets the domain as given', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    const first = await put(app, {
      origin: 'https://go.example.com', not_found_url: 'https://www.example.com/404', root_url: 'https://www.example.com/',
      expired_url: 'https://www.example.com/gone',
    });
    assert.deepEqual([first.NotFoundUrl, first.RootUrl, first.ExpiredUrl], ['https://www.example.com/404', 'https://www.example.com/', 'https://www.example.com/gone']);

    // JSON: an omitted URL is none, an empty one too; DateCreated stays.
    const json = await app.inject({
      method: 'PUT', url: '/v1/admin/domain', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ origin: 'https://go.example.com', root_url: '', expired_url: 'https://www.example.com/expired' }),
    });
    assert.equal(json.statusCode, 200, json.body);
    assert.deepEqual(json.json(), { ...first, NotFoundUrl: null, RootUrl: null, ExpiredUrl: 'https://www.example.com/expired' });

    const form = await app.inject({
      method: 'PUT', url: '/v1/admin/domain', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ origin: 'https://go.example.com', not_found_url: 'https://www.example.com/missing' }).toString(),
    });
    assert.equal(form.statusCode, 200, form.body);
    assert.deepEqual(form.json(), { ...first, NotFoundUrl: 'https://www.example.com/missing', RootUrl: null, ExpiredUrl: null });
    assert.equal((await listAdmin(app)).length, 2, 'still one registered domain beside the default');
  });

  test('a fallback may point at this service, but RootUrl not at the domain\'s own root', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    const domain = await put(app, { origin: 'https://go.example.com', root_url: `${TEST_BASE_URL}/ui`, not_found_url: 'https://go.example.com/' });
    assert.equal(domain.RootUrl, `${TEST_BASE_URL}/ui`);
    for (const root of ['https://go.example.com/', 'http://GO.example.com:8443/?from=root']) {
      const response = await admin(app, 'PUT', '/v1/admin/domain', { origin: 'https://go.example.com', root_url: root });
      assertError(response, 400, OPERATION);
      assert.match(response.body, /root_url.*own root/);
    }
    assertError(await admin(app, 'PUT', '/v1/admin/domain', { origin: TEST_BASE_URL, root_url: `${TEST_BASE_URL}/` }), 400, OPERATION);
  });

  test('refuses an origin that is not just scheme, host and port, and fallbacks that are no http(s) URL (400)', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    const cases: [Record<string, string>, RegExp][] = [
      [{}, /"origin" is required/],
      [{ origin: '' }, /"origin" is required/],
      [{ origin: 'go.example.com' }, /"origin" is not a valid absolute URL/],
      [{ origin: 'ftp://go.example.com' }, /"origin" must use http or https/],
      [{ origin: 'https://go.example.com/path' }, /"origin" must be a scheme, a host/],
      [{ origin: 'https://go.example.com/?q=1' }, /"origin" must be a scheme, a host/],
      [{ origin: 'https://go.example.com/?' }, /"origin" must be a scheme, a host/],
      [{ origin: 'https://go.example.com#top' }, /"origin" must be a scheme, a host/],
      [{ origin: 'https://user:pw@go.example.com' }, /"origin" must not contain a user name/],
      [{ origin: 'https://go.example.com.' }, /trailing dot/],
      [{ origin: 'https://go.example.com', not_found_url: 'javascript:alert(1)' }, /"not_found_url" must use http or https/],
      [{ origin: 'https://go.example.com', expired_url: '/relative' }, /"expired_url" is not a valid absolute URL/],
      [{ origin: 'https://go.example.com', root_url: 'https://a.example/ b' }, /"root_url" must not contain whitespace/],
    ];
    for (const [query, reason] of cases) {
      const response = await admin(app, 'PUT', '/v1/admin/domain', query);
      assertError(response, 400, OPERATION);
      assert.match(response.body, reason, JSON.stringify(query));
    }
    assertError(await app.inject({ method: 'PUT', url: '/v1/admin/domain?origin=https://a.example&origin=https://b.example', headers: { authorization: `Bearer ${TOKEN}` } }), 400, OPERATION);
    assert.equal((await listAdmin(app)).length, 1, 'nothing was registered');
  });

  test('the default domain\'s host sets its fallbacks only: its origin stays BASE_URL\'s, DateCreated null', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    const domain = await put(app, { origin: `https://${DEFAULT_HOST.toUpperCase()}:9999`, not_found_url: 'https://www.example.com/404' });
    assert.deepEqual(domain, {
      Host: DEFAULT_HOST, Origin: TEST_BASE_URL, NotFoundUrl: 'https://www.example.com/404', RootUrl: null, ExpiredUrl: null, Links: 0, DateCreated: null,
    });
    assert.deepEqual(await listAdmin(app), [domain]);
    // Cleared again by a PUT without it.
    assert.equal((await put(app, { origin: TEST_BASE_URL })).NotFoundUrl, null);
  });
});

describe('GET /v1/admin/domains', () => {
  test('the default domain first, then the registered ones by host, each with the links it holds', async (t) => {
    const { app, store } = await appFor(t, { adminToken: TOKEN });
    const [plain] = await listAdmin(app);
    assert.deepEqual(plain, {
      Host: DEFAULT_HOST, Origin: TEST_BASE_URL, NotFoundUrl: null, RootUrl: null, ExpiredUrl: null, Links: 0, DateCreated: null,
    });
    await put(app, { origin: 'https://zz.example' });
    await put(app, { origin: 'https://aa.example', expired_url: 'https://www.example.com/gone' });
    const { uid } = await newAccount(app);
    // Links keyed on each domain (ADR 26), made by the store: the routes that take `domain` are not this test's.
    for (const key of [linkKey('aa.example', 'one'), linkKey('aa.example', 'two'), linkKey(null, 'three')]) {
      assert.equal(await store.createLink({ shortCode: key, pointsTo: 'https://target.example/', createdBy: uid, dateCreated: new Date().toISOString() }), 'created');
    }
    const listed = await listAdmin(app);
    assert.deepEqual(listed.map((domain) => [domain.Host, domain.Links]), [[DEFAULT_HOST, 1], ['aa.example', 2], ['zz.example', 0]]);
    for (const domain of listed) assert.deepEqual(Object.keys(domain), DOMAIN_KEYS);
    assert.equal(listed[1]!.ExpiredUrl, 'https://www.example.com/gone');
  });
});

describe('DELETE /v1/admin/domain', () => {
  test('removes a domain without links (200 Success); unknown 404; still in use 409; the default domain 400', async (t) => {
    const { app, store } = await appFor(t, { adminToken: TOKEN });
    await put(app, { origin: 'https://go.example.com' });
    await put(app, { origin: 'https://free.example.com' });
    const { uid } = await newAccount(app);
    const key = linkKey('go.example.com', 'busy1');
    assert.equal(await store.createLink({ shortCode: key, pointsTo: 'https://target.example/', createdBy: uid, dateCreated: new Date().toISOString() }), 'created');

    const inUse = await admin(app, 'DELETE', '/v1/admin/domain', { host: 'go.example.com' });
    assertError(inUse, 409, OPERATION);
    assert.equal(inUse.body, 'Unable to manage domains: the domain still has links; delete them first');
    const unknown = await admin(app, 'DELETE', '/v1/admin/domain', { host: 'nowhere.example' });
    assertError(unknown, 404, OPERATION);
    assert.equal(unknown.body, 'Unable to manage domains: no domain has this host');
    assertError(await admin(app, 'DELETE', '/v1/admin/domain', { host: DEFAULT_HOST }), 400, OPERATION);
    assertError(await admin(app, 'DELETE', '/v1/admin/domain'), 400, OPERATION);

    // Any case, a port ignored, as a Host header.
    const removed = await admin(app, 'DELETE', '/v1/admin/domain', { host: 'FREE.example.com:443' });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.equal(removed.headers['content-type'], TEXT);
    assert.equal(removed.body, 'Success');
    assert.deepEqual((await listAdmin(app)).map((domain) => domain.Host), [DEFAULT_HOST, 'go.example.com']);

    assert.equal((await store.deleteLink(key, uid)).status, 'deleted');
    assert.equal((await admin(app, 'DELETE', '/v1/admin/domain', { host: 'go.example.com' })).statusCode, 200);
    assert.deepEqual((await listAdmin(app)).map((domain) => domain.Host), [DEFAULT_HOST]);
  });
});

describe('domain administration and the admin token', () => {
  test('a missing or wrong token, or an access code, is 401 "Unable to manage domains"', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    const { code } = await newAccount(app);
    for (const [method, url] of [['PUT', '/v1/admin/domain'], ['GET', '/v1/admin/domains'], ['DELETE', '/v1/admin/domain']] as const) {
      const cases = [
        await app.inject({ method, url }),
        await admin(app, method, url, {}, `${TOKEN}x`),
        await admin(app, method, url, {}, code),
      ];
      for (const response of cases) {
        assertError(response, 401, OPERATION);
        assert.equal(response.headers['www-authenticate'], 'Bearer realm="shortlink"');
      }
    }
  });

  test('without ADMIN_TOKEN the admin domain routes do not exist (404)', async (t) => {
    const { app } = await appFor(t);
    for (const [method, url] of [['PUT', '/v1/admin/domain'], ['GET', '/v1/admin/domains'], ['DELETE', '/v1/admin/domain']] as const) {
      assert.equal((await admin(app, method, url)).statusCode, 404, `${method} ${url}`);
    }
  });

  test('each action writes one audit line with its target and outcome', async (t) => {
    const lines: string[] = [];
    const { app } = await appFor(t, { adminToken: TOKEN, logLevel: 'info' }, { logStream: { write: (chunk: string) => void lines.push(chunk) } });
    await admin(app, 'PUT', '/v1/admin/domain', { origin: 'https://go.example.com' });
    await admin(app, 'GET', '/v1/admin/domains');
    await admin(app, 'DELETE', '/v1/admin/domain', { host: 'nowhere.example' });
    const audits = lines.map((line) => JSON.parse(line) as { audit?: unknown }).filter((entry) => entry.audit !== undefined).map((entry) => entry.audit);
    assert.deepEqual(audits, [
      { action: 'put domain', target: 'origin="https://go.example.com"', outcome: 'done' },
      { action: 'list domains', target: '', outcome: 'done' },
      { action: 'remove domain', target: 'host="nowhere.example"', outcome: 'refused (404)' },
    ]);
  });
});

describe('GET /v1/domains', () => {
  test('answers every domain as {Host, Origin}, the default first; a domain put on this instance is there at once', async (t) => {
    const { app } = await appFor(t, { adminToken: TOKEN });
    const { code } = await newAccount(app);
    const list = async (): Promise<Domain[]> => {
      const response = await app.inject({ method: 'GET', url: '/v1/domains', headers: { authorization: `Bearer ${code}` } });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['content-type'], JSON_TYPE);
      return response.json() as Domain[];
    };
    assert.deepEqual(await list(), [{ Host: DEFAULT_HOST, Origin: TEST_BASE_URL }]);
    await put(app, { origin: 'https://zz.example', root_url: 'https://www.example.com/' });
    await put(app, { origin: 'http://aa.example:8080' });
    const listed = await list();
    assert.deepEqual(listed, [{ Host: DEFAULT_HOST, Origin: TEST_BASE_URL }, { Host: 'aa.example', Origin: 'http://aa.example:8080' }, { Host: 'zz.example', Origin: 'https://zz.example' }]);
    for (const domain of listed) assert.deepEqual(Object.keys(domain), ['Host', 'Origin']);
    assert.equal((await admin(app, 'DELETE', '/v1/admin/domain', { host: 'zz.example' })).statusCode, 200);
    assert.deepEqual((await list()).map((domain) => domain.Host), [DEFAULT_HOST, 'aa.example']);
  });

  test('needs an access code, or an API key with links:read (401, 403 "Unable to manage domains")', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    assertError(await app.inject({ method: 'GET', url: '/v1/domains' }), 401, OPERATION);
    assertError(await app.inject({ method: 'GET', url: '/v1/domains', query: { auth: TOKEN } }), 401, OPERATION);
    const key = async (scopes: string) => {
      const response = await app.inject({ method: 'POST', url: '/v1/keys', headers: { authorization: `Bearer ${code}` }, payload: { name: scopes, scopes } });
      assert.equal(response.statusCode, 200, response.body);
      return (response.json() as { Key: string }).Key;
    };
    const reader = await key('links:read');
    const stats = await key('stats:read');
    const allowed = await app.inject({ method: 'GET', url: '/v1/domains', headers: { authorization: `Bearer ${reader}` } });
    assert.equal(allowed.statusCode, 200, allowed.body);
    assertError(await app.inject({ method: 'GET', url: '/v1/domains', headers: { authorization: `Bearer ${stats}` } }), 403, OPERATION);
  });
});
