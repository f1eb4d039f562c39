/**
 * CONTRACT §8.1 from the link side, as a client sees it: links on a registered domain (create,
 * short URL, the same code once per domain, edit, delete, resolve, stats, list filter, caps),
 * the redirect by `Host`, the loop rule over every registered domain, and each domain's
 * fallbacks (NotFoundUrl, RootUrl, ExpiredUrl) with the JSON API unchanged.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config.ts';
import type { LinkDetails, Statistics } from '../../src/http/schemas.ts';
import { newAccount, TEST_BASE_URL } from '../helpers/app.ts';
import { appFor, assertError, HTML, JSON_TYPE, LINK_KEYS, TEXT, type Reply } from './support.ts';

const TOKEN = 'Admin-token-for-domain-link-tests-0123456789';
const DEFAULT_HOST = new URL(TEST_BASE_URL).hostname;
const GO = 'go.example.com';
const GO_ORIGIN = 'https://go.example.com';
const PORTED = 'links.example.org';
const PORTED_ORIGIN = 'http://links.example.org:8080';
const DETAILS_KEYS = [
  ...LINK_KEYS, 'DateCreated', 'Title', 'Tags', 'ExpiresAt', 'MaxVisits', 'Domain', 'ForwardQuery', 'Protected', 'Rules',
];

function putDomain(app: FastifyInstance, params: Record<string, string>): Promise<Reply> {
  return app.inject({ method: 'PUT', url: '/v1/admin/domain', query: params, headers: { authorization: `Bearer ${TOKEN}` } });
}

async function putDomainOk(app: FastifyInstance, params: Record<string, string>): Promise<void> {
  const response = await putDomain(app, params);
  assert.equal(response.statusCode, 200, response.body);
}

/** An app with ADMIN_TOKEN and the two test domains registered, and one account. */
async function domainApp(t: TestContext, overrides: Partial<Config> = {}, extra: Parameters<typeof appFor>[2] = {}) {
  const testApp = await appFor(t, { adminToken: TOKEN, ...overrides }, extra);
  await putDomainOk(testApp.app, { origin: GO_ORIGIN });
  await putDomainOk(testApp.app, { origin: PORTED_ORIGIN });
  const account = await newAccount(testApp.app);
  return { ...testApp, ...account };
}

function create(app: FastifyInstance, code: string, params: Record<string, string>): Promise<Reply> {
  return app.inject({ method: 'GET', url: '/v1/link', query: params, headers: { authorization: `Bearer ${code}` } });
}

async function createOk(app: FastifyInstance, code: string, params: Record<string, string>): Promise<string> {
  const response = await create(app, code, params);
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['content-type'], TEXT);
  return response.body;
}

async function list(app: FastifyInstance, code: string, query: Record<string, string> = {}): Promise<LinkDetails[]> {
  const response = await app.inject({ method: 'GET', url: '/v1/links', query, headers: { authorization: `Bearer ${code}` } });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as LinkDetails[];
}

/** The Accesses of the owner's link `short` on `domain` (null for the default), read without counting. */
async function accesses(app: FastifyInstance, code: string, short: string, domain: string | null): Promise<number> {
  const link = (await list(app, code)).find((l) => l.ShortCode === short && l.Domain === domain);
  assert.ok(link, `${domain ?? 'default'}/${short} is listed`);
  return link.Accesses;
}

function visit(app: FastifyInstance, path: string, host?: string, method: 'GET' | 'HEAD' = 'GET'): Promise<Reply> {
  return app.inject({ method, url: path, headers: host === undefined ? {} : { host } });
}

function assertRedirect(response: Reply, location: string, status = 302): void {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.headers.location, location);
}

describe('links on a registered domain', () => {
  test('LinkDetails ends with Domain, ForwardQuery, Protected, Rules after MaxVisits; Domain is null on the default domain', async (t) => {
    const { app, code, uid } = await domainApp(t);
    await createOk(app, code, { url: 'https://a.example/', short: 'plain1' });
    await createOk(app, code, { url: 'https://b.example/', short: 'plain1', domain: GO });
    const links = await list(app, code);
    assert.equal(links.length, 2);
    for (const link of links) assert.deepEqual(Object.keys(link), DETAILS_KEYS);
    const [onDefault, onGo] = links;
    assert.deepEqual({ ...onDefault!, DateCreated: '' }, {
      ShortCode: 'plain1', PointsTo: 'https://a.example/', CreatedBy: uid, Accesses: 0, DateCreated: '', Title: null, Tags: [],
      ExpiresAt: null, MaxVisits: null, Domain: null, ForwardQuery: false, Protected: false, Rules: [],
    });
    assert.equal(onGo!.ShortCode, 'plain1', 'the shortcode is shown without its domain');
    assert.equal(onGo!.Domain, GO);
  });

  test('a shortcode is unique per domain: once on each domain, 409 twice on one', async (t) => {
    const { app, code } = await domainApp(t);
    assert.equal(await createOk(app, code, { url: 'https://a.example/', short: 'same1' }), `${TEST_BASE_URL}/same1`);
    assert.equal(await createOk(app, code, { url: 'https://b.example/', short: 'same1', domain: GO }), `${GO_ORIGIN}/same1`);
    assert.equal(await createOk(app, code, { url: 'https://c.example/', short: 'same1', domain: PORTED }), `${PORTED_ORIGIN}/same1`);
    assertError(await create(app, code, { url: 'https://d.example/', short: 'same1', domain: GO }), 409, 'create link');
    assertError(await create(app, code, { url: 'https://d.example/', short: 'same1', domain: 'GO.Example.COM' }), 409, 'create link');
    assertError(await create(app, code, { url: 'https://d.example/', short: 'same1' }), 409, 'create link');
    // The default host by name is the default domain, not another one (shlink#650).
    assertError(await create(app, code, { url: 'https://d.example/', short: 'same1', domain: DEFAULT_HOST }), 409, 'create link');
    assert.equal(await createOk(app, code, { url: 'https://d.example/', short: 'other', domain: DEFAULT_HOST }), `${TEST_BASE_URL}/other`);
    // Shortcodes stay case-sensitive on a domain.
    assert.equal(await createOk(app, code, { url: 'https://d.example/', short: 'SAME1', domain: GO }), `${GO_ORIGIN}/SAME1`);
    assert.equal((await list(app, code)).length, 5);
  });

  test('an unregistered domain is 400 "Unable to create link: …", for a single create and a bulk item', async (t) => {
    const { app, code } = await domainApp(t);
    const response = await create(app, code, { url: 'https://a.example/', short: 'nowhere1', domain: 'nowhere.example' });
    assertError(response, 400, 'create link');
    assert.match(response.body, /nowhere\.example/);
    const bulk = await app.inject({
      method: 'POST', url: '/v1/links', headers: { authorization: `Bearer ${code}` },
      payload: [{ url: 'https://a.example/', domain: 'nowhere.example' }, { url: 'https://a.example/', short: 'bulk1', domain: GO }],
    });
    assert.equal(bulk.statusCode, 200, bulk.body);
    const [refused, created] = bulk.json() as [{ Status: number; Error: string }, { ShortUrl: string }];
    assert.equal(refused.Status, 400);
    assert.match(refused.Error, /^Unable to create link: .*nowhere\.example/);
    assert.deepEqual(created, { ShortUrl: `${GO_ORIGIN}/bulk1` });
    assert.equal((await list(app, code)).length, 1);
  });

  test('the short URL is the domain\'s origin, "/", the code; a generated code too; the port is kept', async (t) => {
    const { app, code } = await domainApp(t);
    const generated = await createOk(app, code, { url: 'https://a.example/', domain: PORTED });
    assert.match(generated, /^http:\/\/links\.example\.org:8080\/[A-Za-z0-9]{6}$/);
    const json = await app.inject({
      method: 'POST', url: '/v1/link', headers: { authorization: `Bearer ${code}` }, payload: { url: 'https://a.example/', short: 'jsonbody', domain: GO },
    });
    assert.equal(json.statusCode, 200, json.body);
    assert.equal(json.body, `${GO_ORIGIN}/jsonbody`);
  });
});

describe('the redirect by Host', () => {
  test('resolves in the domain the Host names, any case, port ignored; an unknown Host in the default domain', async (t) => {
    const { app, code } = await domainApp(t);
    await createOk(app, code, { url: 'https://default.example/', short: 'twice' });
    await createOk(app, code, { url: 'https://go.example/', short: 'twice', domain: GO });
    await createOk(app, code, { url: 'https://only-go.example/', short: 'goonly', domain: GO });

    assertRedirect(await visit(app, '/twice', GO), 'https://go.example/');
    assertRedirect(await visit(app, '/twice', 'GO.EXAMPLE.com:8443'), 'https://go.example/');
    assertRedirect(await visit(app, '/twice', `${DEFAULT_HOST}:9999`), 'https://default.example/');
    assertRedirect(await visit(app, '/twice', 'unknown.example'), 'https://default.example/');
    assertRedirect(await visit(app, '/twice'), 'https://default.example/');
    // A link on GO is not on the default domain, nor on another registered one.
    const missing = await visit(app, '/goonly', DEFAULT_HOST);
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers['content-type'], HTML);
    assert.equal((await visit(app, '/goonly', PORTED)).statusCode, 404);
    assertRedirect(await visit(app, '/goonly', 'go.example.com.'), 'https://only-go.example/');

    // Each visit counted against its own link (shlink#644), HEAD not at all.
    assert.equal((await visit(app, '/twice', GO, 'HEAD')).statusCode, 302);
    assert.equal(await accesses(app, code, 'twice', GO), 2);
    assert.equal(await accesses(app, code, 'twice', null), 3);
    assert.equal(await accesses(app, code, 'goonly', GO), 1);
  });

  test('the loop rule covers every registered domain, whatever the target\'s scheme or port (create, edit, rules)', async (t) => {
    const { app, code } = await domainApp(t);
    for (const url of ['https://go.example.com/x', 'http://GO.example.com:9999/', 'http://links.example.org/', 'https://links.example.org:8080/a?b']) {
      const response = await create(app, code, { url, short: 'loopy1' });
      assertError(response, 400, 'create link');
    }
    // A subdomain of a registered host, or a host that merely contains it, is no loop.
    await createOk(app, code, { url: 'https://sub.go.example.com/', short: 'notloop1' });
    await createOk(app, code, { url: 'https://go.example.com.evil.example/', short: 'notloop2' });
    const edit = await app.inject({
      method: 'PATCH', url: '/v1/link', query: { short: 'notloop1', url: 'https://go.example.com:1/' }, headers: { authorization: `Bearer ${code}` },
    });
    assertError(edit, 400, 'update link');
    const rules = await create(app, code, {
      url: 'https://a.example/', short: 'looprule', rules: JSON.stringify([{ if: { device: 'mobile' }, to: 'http://links.example.org/' }]),
    });
    assertError(rules, 400, 'create link');
    assert.deepEqual((await list(app, code)).map((l) => l.ShortCode), ['notloop1', 'notloop2']);
  });

  test('a domain registered or removed is seen by the next request of this instance', async (t) => {
    const { app, code } = await domainApp(t);
    await putDomainOk(app, { origin: 'https://late.example' });
    await createOk(app, code, { url: 'https://late-target.example/', short: 'late1', domain: 'late.example' });
    assertRedirect(await visit(app, '/late1', 'late.example'), 'https://late-target.example/');
    assertError(await create(app, code, { url: 'https://late.example/', short: 'late2' }), 400, 'create link');
    const del = await app.inject({ method: 'DELETE', url: '/v1/link', query: { short: 'late1', domain: 'late.example' }, headers: { authorization: `Bearer ${code}` } });
    assert.equal(del.statusCode, 200, del.body);
    const removed = await app.inject({ method: 'DELETE', url: '/v1/admin/domain', query: { host: 'late.example' }, headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(removed.statusCode, 200, removed.body);
    assertError(await create(app, code, { url: 'https://a.example/', short: 'late3', domain: 'late.example' }), 400, 'create link');
    await createOk(app, code, { url: 'https://late.example/', short: 'late4' });
  });
});

describe('the domains\' fallbacks', () => {
  test('NotFoundUrl: an unknown code on that domain answers 302 there; other domains keep the 404 page', async (t) => {
    const { app, code } = await domainApp(t);
    await putDomainOk(app, { origin: GO_ORIGIN, not_found_url: 'https://www.example.com/missing?from=go' });
    await createOk(app, code, { url: 'https://default.example/', short: 'ondefault' });
    const response = await visit(app, '/nosuch1', GO);
    assertRedirect(response, 'https://www.example.com/missing?from=go');
    assert.equal(response.headers['cache-control'], 'private, no-cache');
    // A code that exists only on the default domain is unknown on GO.
    assertRedirect(await visit(app, '/ondefault', GO), 'https://www.example.com/missing?from=go');
    assert.equal(await accesses(app, code, 'ondefault', null), 0, 'nothing counted');
    assert.equal((await visit(app, '/nosuch1', PORTED)).statusCode, 404);
    assert.equal((await visit(app, '/nosuch1')).statusCode, 404);
    // The JSON API answers as before.
    assertError(await app.inject({ method: 'GET', url: '/v1/get/nosuch1', query: { domain: GO } }), 404, 'resolve link');

    // The default domain may have one too.
    await putDomainOk(app, { origin: TEST_BASE_URL, not_found_url: 'https://www.example.com/default-missing' });
    assertRedirect(await visit(app, '/nosuch1'), 'https://www.example.com/default-missing');
    assertRedirect(await visit(app, '/nosuch1', 'unknown.example'), 'https://www.example.com/default-missing');
    assertError(await app.inject({ method: 'GET', url: '/v1/get/nosuch1' }), 404, 'resolve link');
  });

  test('RootUrl: GET / answers 302 there; on the default domain the UI moves to /ui; without one GET / is the UI', async (t) => {
    const { app } = await domainApp(t);
    const plainRoot = await visit(app, '/', GO);
    assert.equal(plainRoot.statusCode, 200);
    assert.equal(plainRoot.headers['content-type'], HTML);
    await putDomainOk(app, { origin: GO_ORIGIN, root_url: 'https://www.example.com/' });
    assertRedirect(await visit(app, '/', GO), 'https://www.example.com/');
    assertRedirect(await visit(app, '/', 'Go.Example.Com:443'), 'https://www.example.com/');
    assert.equal((await visit(app, '/')).statusCode, 200, 'the default domain still shows the UI at /');

    await putDomainOk(app, { origin: TEST_BASE_URL, root_url: 'https://www.example.com/home' });
    assertRedirect(await visit(app, '/'), 'https://www.example.com/home');
    const ui = await visit(app, '/ui');
    assert.equal(ui.statusCode, 200);
    assert.equal(ui.headers['content-type'], HTML);
    assert.match(ui.body, /<html/i);
  });

  test('ExpiredUrl: an expired, used-up or disabled link answers 302 there, not counted; the JSON API still 410', async (t) => {
    let now = Date.parse('2026-11-01T10:00:00.000Z');
    const { app, code, uid } = await domainApp(t, {}, { clock: () => new Date(now) });
    await putDomainOk(app, { origin: GO_ORIGIN, expired_url: 'https://www.example.com/gone' });
    await createOk(app, code, { url: 'https://a.example/', short: 'expires', domain: GO, expires: '2026-11-01T11:00:00Z' });
    await createOk(app, code, { url: 'https://a.example/', short: 'usedup', domain: GO, max_visits: '1' });
    await createOk(app, code, { url: 'https://a.example/', short: 'expires', expires: '2026-11-01T11:00:00Z' });
    assertRedirect(await visit(app, '/usedup', GO), 'https://a.example/');
    now += 2 * 3_600_000;

    assertRedirect(await visit(app, '/expires', GO), 'https://www.example.com/gone');
    assertRedirect(await visit(app, '/usedup', GO), 'https://www.example.com/gone');
    // The default domain has no ExpiredUrl: its page stays.
    const page = await visit(app, '/expires');
    assert.equal(page.statusCode, 410);
    assert.equal(page.headers['content-type'], HTML);
    const gone = await app.inject({ method: 'GET', url: '/v1/get/usedup', query: { domain: GO } });
    assertError(gone, 410, 'resolve link');
    assert.equal(gone.body, 'Unable to resolve link: the link has reached its visit limit');
    assert.equal((await app.inject({ method: 'GET', url: '/v1/get/expires', query: { domain: GO } })).body, 'Unable to resolve link: the link has expired');
    assert.equal(await accesses(app, code, 'expires', GO), 0);
    assert.equal(await accesses(app, code, 'usedup', GO), 1);

    // Disabled: the account's links are gone (410), here to ExpiredUrl.
    await createOk(app, code, { url: 'https://a.example/', short: 'disabled', domain: GO });
    const disable = await app.inject({
      method: 'PATCH', url: '/v1/admin/account', query: { uid: String(uid), disabled: 'true' }, headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(disable.statusCode, 200, disable.body);
    assertRedirect(await visit(app, '/disabled', GO), 'https://www.example.com/gone');
    const disabled = await app.inject({ method: 'GET', url: '/v1/get/disabled', query: { domain: GO } });
    assertError(disabled, 410, 'resolve link');
    assert.equal(disabled.body, 'Unable to resolve link: the link has been disabled');
  });

  test('the default domain\'s ExpiredUrl applies to its own links and to unknown Hosts', async (t) => {
    const { app, code } = await domainApp(t);
    await putDomainOk(app, { origin: TEST_BASE_URL, expired_url: 'https://www.example.com/expired' });
    await createOk(app, code, { url: 'https://a.example/', short: 'once1', max_visits: '1' });
    assertRedirect(await visit(app, '/once1'), 'https://a.example/');
    assertRedirect(await visit(app, '/once1'), 'https://www.example.com/expired');
    assertRedirect(await visit(app, '/once1', 'elsewhere.example'), 'https://www.example.com/expired');
    assert.equal(await accesses(app, code, 'once1', null), 1);
  });
});

describe('every link operation takes the domain', () => {
  test('edit, resolve, stats and delete address the link on the named domain, never its namesake', async (t) => {
    const { app, code } = await domainApp(t);
    await createOk(app, code, { url: 'https://default.example/', short: 'pair1' });
    await createOk(app, code, { url: 'https://go.example/', short: 'pair1', domain: GO });
    const auth = { authorization: `Bearer ${code}` };

    const edited = await app.inject({ method: 'PATCH', url: '/v1/link', query: { short: 'pair1', domain: GO, title: 'On go' }, headers: auth });
    assert.equal(edited.statusCode, 200, edited.body);
    assert.equal((edited.json() as LinkDetails).Domain, GO);
    assert.equal((edited.json() as LinkDetails).Title, 'On go');
    assert.deepEqual((await list(app, code)).map((l) => [l.Domain, l.Title]), [[null, null], [GO, 'On go']]);
    assertError(
      await app.inject({ method: 'PATCH', url: '/v1/link', query: { short: 'pair1', domain: 'nowhere.example', title: 'x' }, headers: auth }),
      400, 'update link',
    );

    const resolved = await app.inject({ method: 'GET', url: '/v1/get/pair1', query: { domain: GO } });
    assert.equal(resolved.statusCode, 200, resolved.body);
    assert.equal(resolved.headers['content-type'], JSON_TYPE);
    assert.deepEqual(Object.keys(resolved.json() as object), LINK_KEYS);
    assert.deepEqual((resolved.json() as { ShortCode: string; PointsTo: string; Accesses: number }), {
      ShortCode: 'pair1', PointsTo: 'https://go.example/', CreatedBy: (resolved.json() as { CreatedBy: number }).CreatedBy, Accesses: 1,
    });
    assert.equal((await app.inject({ method: 'GET', url: '/v1/get/pair1', query: { domain: 'GO.example.com' } })).json().Accesses, 2);
    assert.equal((await app.inject({ method: 'GET', url: '/v1/get/pair1', query: { domain: DEFAULT_HOST } })).json().Accesses, 1);
    assertError(await app.inject({ method: 'GET', url: '/v1/get/pair1', query: { domain: 'nowhere.example' } }), 400, 'resolve link');
    assertError(await app.inject({ method: 'GET', url: '/v1/get/pair1', query: { domain: PORTED } }), 404, 'resolve link');
    await visit(app, '/pair1', GO);

    const stats = async (query: Record<string, string>): Promise<Statistics> => {
      const response = await app.inject({ method: 'GET', url: '/v1/stats', query, headers: auth });
      assert.equal(response.statusCode, 200, response.body);
      return response.json() as Statistics;
    };
    const onGo = await stats({ short: 'pair1', domain: GO });
    assert.equal(onGo.ShortCode, 'pair1');
    assert.equal(onGo.Visits, 3, 'two resolutions and one redirect on GO');
    assert.equal((await stats({ short: 'pair1' })).Visits, 1, 'the default domain\'s pair1 has its own');
    assert.equal((await stats({})).Visits, 4, 'the account sums both');
    assertError(await app.inject({ method: 'GET', url: '/v1/stats', query: { short: 'pair1', domain: 'nowhere.example' }, headers: auth }), 400, 'get statistics');

    assertError(await app.inject({ method: 'DELETE', url: '/v1/link', query: { short: 'pair1', domain: PORTED }, headers: auth }), 404, 'delete link');
    assertError(await app.inject({ method: 'DELETE', url: '/v1/link', query: { short: 'pair1', domain: 'nowhere.example' }, headers: auth }), 400, 'delete link');
    const deleted = await app.inject({ method: 'DELETE', url: '/v1/link', query: { short: 'pair1', domain: GO }, headers: auth });
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.equal(deleted.body, 'Success');
    assert.deepEqual((await list(app, code)).map((l) => [l.ShortCode, l.Domain]), [['pair1', null]]);
    assert.equal((await visit(app, '/pair1', GO)).statusCode, 404);
    assertRedirect(await visit(app, '/pair1'), 'https://default.example/');
  });

  test('another account\'s link on a domain is 403 to delete and edit', async (t) => {
    const { app, code } = await domainApp(t);
    const other = await newAccount(app);
    await createOk(app, code, { url: 'https://go.example/', short: 'mine1', domain: GO });
    const auth = { authorization: `Bearer ${other.code}` };
    assertError(await app.inject({ method: 'DELETE', url: '/v1/link', query: { short: 'mine1', domain: GO }, headers: auth }), 403, 'delete link');
    assertError(await app.inject({ method: 'PATCH', url: '/v1/link', query: { short: 'mine1', domain: GO, title: 'x' }, headers: auth }), 403, 'update link');
    assert.equal((await list(app, code)).length, 1);
  });

  test('the list filters by domain: a registered host, the default host; an unregistered one is 400', async (t) => {
    const { app, code } = await domainApp(t);
    await createOk(app, code, { url: 'https://a.example/', short: 'listd1' });
    await createOk(app, code, { url: 'https://a.example/', short: 'listg1', domain: GO });
    await createOk(app, code, { url: 'https://a.example/', short: 'listp1', domain: PORTED });
    await createOk(app, code, { url: 'https://a.example/', short: 'listg2', domain: GO });
    const codes = async (query: Record<string, string>) => (await list(app, code, query)).map((l) => `${l.Domain ?? '-'}:${l.ShortCode}`);
    assert.deepEqual(await codes({}), ['-:listd1', `${GO}:listg1`, `${PORTED}:listp1`, `${GO}:listg2`]);
    assert.deepEqual(await codes({ domain: GO }), [`${GO}:listg1`, `${GO}:listg2`]);
    assert.deepEqual(await codes({ domain: 'Go.Example.Com' }), [`${GO}:listg1`, `${GO}:listg2`]);
    assert.deepEqual(await codes({ domain: DEFAULT_HOST }), ['-:listd1']);
    assert.deepEqual(await codes({ domain: PORTED, q: 'listp' }), [`${PORTED}:listp1`]);
    assert.deepEqual(await codes({ domain: GO, order: 'newest' }), [`${GO}:listg2`, `${GO}:listg1`]);
    // Paging within a domain keeps the filter in the next link.
    const first = await app.inject({ method: 'GET', url: '/v1/links', query: { domain: GO, limit: '1' }, headers: { authorization: `Bearer ${code}` } });
    assert.equal(first.statusCode, 200);
    assert.deepEqual((first.json() as LinkDetails[]).map((l) => l.ShortCode), ['listg1']);
    const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1];
    assert.ok(next, String(first.headers.link));
    const nextUrl = new URL(next);
    assert.equal(nextUrl.searchParams.get('domain'), GO);
    const second = await app.inject({ method: 'GET', url: `${nextUrl.pathname}${nextUrl.search}`, headers: { authorization: `Bearer ${code}` } });
    assert.deepEqual((second.json() as LinkDetails[]).map((l) => l.ShortCode), ['listg2']);
    assertError(await app.inject({ method: 'GET', url: '/v1/links', query: { domain: 'nowhere.example' }, headers: { authorization: `Bearer ${code}` } }), 400, 'list links');
  });

  test('a link on any domain takes one slot of the cap; deleting one frees it', async (t) => {
    const { app, code } = await domainApp(t, { defaultMaxLinks: 3 });
    await createOk(app, code, { url: 'https://a.example/', short: 'cap001' });
    await createOk(app, code, { url: 'https://a.example/', short: 'cap001', domain: GO });
    await createOk(app, code, { url: 'https://a.example/', short: 'cap001', domain: PORTED });
    assertError(await create(app, code, { url: 'https://a.example/', short: 'cap002', domain: GO }), 403, 'create link');
    assertError(await create(app, code, { url: 'https://a.example/', short: 'cap002' }), 403, 'create link');
    const deleted = await app.inject({ method: 'DELETE', url: '/v1/link', query: { short: 'cap001', domain: PORTED }, headers: { authorization: `Bearer ${code}` } });
    assert.equal(deleted.statusCode, 200);
    await createOk(app, code, { url: 'https://a.example/', short: 'cap002', domain: GO });
  });

  test('statistics of a visit on a domain are that link\'s, not the default domain\'s same code', async (t) => {
    const { app, code } = await domainApp(t);
    await createOk(app, code, { url: 'https://a.example/', short: 'stat01' });
    await createOk(app, code, { url: 'https://a.example/', short: 'stat01', domain: GO });
    for (let i = 0; i < 3; i++) await visit(app, '/stat01', GO);
    const auth = { authorization: `Bearer ${code}` };
    const onDefault = (await app.inject({ method: 'GET', url: '/v1/stats', query: { short: 'stat01' }, headers: auth })).json() as Statistics;
    const onGo = (await app.inject({ method: 'GET', url: '/v1/stats', query: { short: 'stat01', domain: GO }, headers: auth })).json() as Statistics;
    assert.equal(onDefault.Visits, 0);
    assert.equal(onGo.Visits, 3);
    assert.equal(await accesses(app, code, 'stat01', null), 0);
    assert.equal(await accesses(app, code, 'stat01', GO), 3);
  });
});
