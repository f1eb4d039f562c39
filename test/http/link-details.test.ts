/**
 * Link details and lifecycle through HTTP (CONTRACT §7.1, §2's 410 row, guarantee 7): create
 * with details, PATCH /v1/link, the owner's list with filters and pages, and links that stop
 * resolving (expiry, visit limit) on resolve, redirect and HEAD.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { LinkDetails } from '../../src/http/schemas.ts';
import { newAccount, TEST_BASE_URL } from '../helpers/app.ts';
import { disableAccountForTest } from '../helpers/disable-account.ts';
import {
  appFor, assertError, createLink, createLinkOk, HTML, JSON_TYPE, LINK_KEYS, resolve, type Reply,
} from './support.ts';

const DETAILS_KEYS = [...LINK_KEYS, 'DateCreated', 'Title', 'Tags', 'ExpiresAt', 'MaxVisits', 'Domain', 'ForwardQuery', 'Protected', 'Rules'];
const START = new Date('2030-01-01T00:00:00.000Z');

/** A clock the test moves by hand. */
function manualClock(start = START) {
  let now = start.getTime();
  return { clock: () => new Date(now), advance: (ms: number) => void (now += ms) };
}

function patch(app: FastifyInstance, code: string | undefined, params: Record<string, string>, body?: unknown): Promise<Reply> {
  return app.inject({
    method: 'PATCH',
    url: '/v1/link',
    query: params,
    ...(code === undefined ? {} : { headers: { authorization: `Bearer ${code}` } }),
    ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
  });
}

async function listDetails(app: FastifyInstance, code: string, query: Record<string, string> = {}) {
  const response = await app.inject({ method: 'GET', url: '/v1/links', query: { ...query, auth: code } });
  assert.equal(response.statusCode, 200, response.body);
  return { links: response.json() as LinkDetails[], link: response.headers['link'] as string | undefined };
}

function tally(statuses: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

describe('create with details', () => {
  test('takes title, tags, expires and max_visits and lists them as LinkDetails, keys in order', async (t) => {
    const { clock } = manualClock();
    const { app } = await appFor(t, {}, { clock });
    const { code, uid } = await newAccount(app);
    const short = await createLinkOk(app, code, {
      url: 'https://example.com/', short: 'detailed', title: 'Launch ✨', tags: 'Promo, q1 ,promo', expires: '2030-02-01T10:00:00+02:00', max_visits: '5',
    });
    assert.equal(short, 'detailed');
    await createLinkOk(app, code, { url: 'https://example.com/plain', short: 'plain1' });
    const { links, link } = await listDetails(app, code);
    assert.equal(link, undefined);
    assert.deepEqual(Object.keys(links[0]!), DETAILS_KEYS);
    assert.deepEqual(links, [
      {
        ShortCode: 'detailed', PointsTo: 'https://example.com/', CreatedBy: uid, Accesses: 0, DateCreated: START.toISOString(),
        Title: 'Launch ✨', Tags: ['promo', 'q1'], ExpiresAt: '2030-02-01T08:00:00.000Z', MaxVisits: 5, Domain: null, ForwardQuery: false, Protected: false, Rules: [],
      },
      {
        ShortCode: 'plain1', PointsTo: 'https://example.com/plain', CreatedBy: uid, Accesses: 0, DateCreated: START.toISOString(),
        Title: null, Tags: [], ExpiresAt: null, MaxVisits: null, Domain: null, ForwardQuery: false, Protected: false, Rules: [],
      },
    ]);
    // The public view keeps exactly the four spec keys.
    assert.deepEqual(Object.keys((await resolve(app, 'detailed')).json()), LINK_KEYS);
  });

  test('a JSON body may give tags as an array and max_visits as a number; the answer stays the short URL', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const response = await app.inject({
      method: 'POST', url: '/v1/link', headers: { authorization: `Bearer ${code}` },
      payload: { url: 'https://example.com/', short: 'jsonbody', tags: ['A', 'b-c'], max_visits: 3, title: '' },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.body, `${TEST_BASE_URL}/jsonbody`);
    const [listed] = (await listDetails(app, code)).links;
    assert.deepEqual([listed!.Tags, listed!.MaxVisits, listed!.Title], [['a', 'b-c'], 3, null]);
    const form = await app.inject({
      method: 'POST', url: '/v1/link', headers: { authorization: `Bearer ${code}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'url=https%3A%2F%2Fexample.com%2F&short=formbody&tags=x,y&max_visits=2',
    });
    assert.equal(form.statusCode, 200, form.body);
    assert.deepEqual((await listDetails(app, code)).links[1]!.Tags, ['x', 'y']);
  });

  test('refuses invalid details with 400 and creates nothing', async (t) => {
    const { clock } = manualClock();
    const { app } = await appFor(t, {}, { clock });
    const { code } = await newAccount(app);
    const bad: Record<string, string>[] = [
      { title: 'x'.repeat(201) },
      { title: 'line\nbreak' },
      // Bidirectional controls: "\u202egnp.exe" would display as "exe.png".
      { title: 'safe\u202egnp.exe' },
      { title: 'a\u202ab' }, { title: 'a\u2066b\u2069' }, { title: '\u200fx' }, { title: 'x\u200e' }, { title: 'x\u061c' },
      { tags: 'a,,b' },
      { tags: 'has space' },
      { tags: 'ü' },
      { tags: 'x'.repeat(51) },
      { tags: Array.from({ length: 11 }, (_, i) => `t${i}`).join(',') },
      { expires: '2030-06-01T00:00:00' },
      { expires: '2030-06-01' },
      { expires: '2030-02-30T00:00:00Z' },
      { expires: '2029-12-31T23:59:59Z' },
      { expires: '2030-01-01T00:00:00Z' },
      { expires: 'tomorrow' },
      { max_visits: '0' },
      { max_visits: '-1' },
      { max_visits: '1.5' },
      { max_visits: '2147483648' },
      { max_visits: 'ten' },
    ];
    for (const params of bad) {
      const response = await createLink(app, code, { url: 'https://example.com/', ...params });
      assertError(response, 400, 'create link');
    }
    assert.deepEqual((await listDetails(app, code)).links, []);
    assert.equal((await createLink(app, code, { url: 'https://example.com/', title: 'x'.repeat(200), max_visits: '2147483647', tags: Array.from({ length: 10 }, (_, i) => `t${i}`).join(',') })).statusCode, 200);
    const repeated = await app.inject({ method: 'GET', url: `/v1/link?url=https://example.com/&tags=a&tags=b&auth=${code}` });
    assertError(repeated, 400, 'create link');
  });

  test('refuses a title with a lone surrogate or a bidirectional control, on create and on edit, naming the title', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const headers = { authorization: `Bearer ${code}`, 'content-type': 'application/json' };
    for (const payload of ['{"url":"https://example.com/","title":"\\ud800x"}', '{"url":"https://example.com/","title":"x\\udfff"}']) {
      const response = await app.inject({ method: 'POST', url: '/v1/link', headers, payload });
      assertError(response, 400, 'create link');
      assert.match(response.body, /^Unable to create link: title must be well-formed Unicode text/);
    }
    const rlo = await app.inject({ method: 'POST', url: '/v1/link', headers, payload: JSON.stringify({ url: 'https://example.com/', title: 'safe\u202egnp.exe' }) });
    assertError(rlo, 400, 'create link');
    assert.match(rlo.body, /^Unable to create link: title must not contain bidirectional controls/);
    // Any text parameter: the target would otherwise carry U+FFFD's escape.
    const target = await app.inject({ method: 'POST', url: '/v1/link', headers, payload: '{"url":"https://example.com/\\ud800"}' });
    assertError(target, 400, 'create link');
    assert.match(target.body, /^Unable to create link: url must be well-formed Unicode text/);
    assert.deepEqual((await listDetails(app, code)).links, []);

    await createLinkOk(app, code, { url: 'https://example.com/', short: 'bidi-edit', title: 'plain' });
    for (const payload of ['{"short":"bidi-edit","title":"\\ud83dx"}', JSON.stringify({ short: 'bidi-edit', title: '\u2067x' })]) {
      assertError(await app.inject({ method: 'PATCH', url: '/v1/link', headers, payload }), 400, 'update link');
    }
    assert.deepEqual((await listDetails(app, code)).links.map((link) => link.Title), ['plain']);
    // Right-to-left text itself is welcome.
    await createLinkOk(app, code, { url: 'https://example.com/', short: 'rtl-title', title: 'שלום עולם' });
  });
});

describe('PATCH /v1/link', () => {
  test('edits the given fields, clears with empty values, keeps shortcode and Accesses; answers LinkDetails', async (t) => {
    const { clock } = manualClock();
    const { app } = await appFor(t, {}, { clock });
    const { code, uid } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://before.example/', short: 'editable', title: 'Old', tags: 'one' });
    await resolve(app, 'editable');
    const edited = await patch(app, code, { short: 'editable', url: 'https://after.example/x', title: 'New', tags: 'a,B', expires: '2030-03-01T00:00:00Z', max_visits: '10' });
    assert.equal(edited.statusCode, 200, edited.body);
    assert.equal(edited.headers['content-type'], JSON_TYPE);
    assert.deepEqual(Object.keys(edited.json()), DETAILS_KEYS);
    assert.deepEqual(edited.json(), {
      ShortCode: 'editable', PointsTo: 'https://after.example/x', CreatedBy: uid, Accesses: 1, DateCreated: START.toISOString(),
      Title: 'New', Tags: ['a', 'b'], ExpiresAt: '2030-03-01T00:00:00.000Z', MaxVisits: 10, Domain: null, ForwardQuery: false, Protected: false, Rules: [],
    });
    const titleOnly = await patch(app, code, { short: 'editable', title: 'Only this' });
    assert.deepEqual([titleOnly.json().Title, titleOnly.json().PointsTo, titleOnly.json().MaxVisits], ['Only this', 'https://after.example/x', 10]);
    const cleared = await patch(app, code, {}, { short: 'editable', title: '', tags: [], expires: '', max_visits: '' });
    assert.equal(cleared.statusCode, 200, cleared.body);
    assert.deepEqual([cleared.json().Title, cleared.json().Tags, cleared.json().ExpiresAt, cleared.json().MaxVisits], [null, [], null, null]);
    assert.equal((await resolve(app, 'editable')).json().PointsTo, 'https://after.example/x');
  });

  test('checks in order: 401, then 400, then 404, then 403', async (t) => {
    const { app } = await appFor(t);
    const owner = await newAccount(app);
    const other = await newAccount(app);
    await createLinkOk(app, owner.code, { url: 'https://example.com/', short: 'owned' });
    assertError(await patch(app, undefined, { short: 'nosuch', title: 'x'.repeat(300) }), 401, 'update link');
    assertError(await patch(app, other.code, { short: 'nosuch', title: 'x'.repeat(300) }), 400, 'update link');
    assertError(await patch(app, other.code, { short: 'nosuch' }), 400, 'update link');
    assertError(await patch(app, other.code, { title: 'x' }), 400, 'update link');
    assertError(await patch(app, other.code, { short: 'owned', url: '' }), 400, 'update link');
    assertError(await patch(app, other.code, { short: 'owned', expires: '2020-01-01T00:00:00Z' }), 400, 'update link');
    assertError(await patch(app, other.code, { short: 'owned', title: 'a', tags: 'b' }, { title: 'c' }), 400, 'update link');
    assertError(await patch(app, other.code, { short: 'nosuch', title: 'x' }), 404, 'update link');
    assertError(await patch(app, other.code, { short: 'x', title: 'x' }), 404, 'update link');
    const foreign = await patch(app, other.code, { short: 'owned', url: 'https://evil.example/' });
    assertError(foreign, 403, 'update link');
    assert.equal(foreign.body, 'Unable to update link: the link belongs to another account');
    assert.equal((await resolve(app, 'owned')).json().PointsTo, 'https://example.com/');
    const loop = await patch(app, owner.code, { short: 'owned', url: `${TEST_BASE_URL}/owned` });
    assertError(loop, 400, 'update link');
  });

  test('a disabled account\'s edit answers 403 "the account is disabled" and its links 410', async (t) => {
    const testApp = await appFor(t);
    const { app } = testApp;
    const { code, uid } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://example.com/', short: 'soon-off' });
    await disableAccountForTest(testApp.config.storage, uid);
    const edit = await patch(app, code, { short: 'soon-off', title: 'x' });
    assertError(edit, 403, 'update link');
    assert.equal(edit.body, 'Unable to update link: the account is disabled');
    const resolved = await resolve(app, 'soon-off');
    assertError(resolved, 410, 'resolve link');
    assert.equal(resolved.body, 'Unable to resolve link: the link has been disabled');
    const page = await app.inject({ method: 'GET', url: '/soon-off' });
    assert.equal(page.statusCode, 410);
    assert.match(page.body, /has been disabled/);
  });
});

describe('GET /v1/links filters and pages', () => {
  test('q matches shortcode, target or title case-insensitively; tag needs every tag', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://shop.example/', short: 'Spring-Sale', tags: 'promo,shop' });
    await createLinkOk(app, code, { url: 'https://docs.example/API', short: 'docs1', tags: 'docs' });
    await createLinkOk(app, code, { url: 'https://blog.example/', short: 'blog1', title: 'Our SPRING news', tags: 'promo' });
    const codes = async (query: Record<string, string>) => (await listDetails(app, code, query)).links.map((l) => l.ShortCode);
    assert.deepEqual(await codes({ q: 'spring' }), ['Spring-Sale', 'blog1']);
    assert.deepEqual(await codes({ q: 'api' }), ['docs1']);
    assert.deepEqual(await codes({ tag: 'PROMO' }), ['Spring-Sale', 'blog1']);
    assert.deepEqual(await codes({ tag: 'promo,shop' }), ['Spring-Sale']);
    assert.deepEqual(await codes({ q: 'blog', tag: 'promo' }), ['blog1']);
    assert.deepEqual(await codes({ q: 'nothing' }), []);
    for (const query of [{ limit: '0' }, { limit: '1001' }, { limit: 'x' }, { cursor: 'not-a-cursor' }, { tag: 'a b' }] as Record<string, string>[]) {
      assertError(await app.inject({ method: 'GET', url: '/v1/links', query: { ...query, auth: code } }), 400, 'list links');
    }
  });

  test('limit pages oldest first with an RFC 8288 Link to the next page, without the access code', async (t) => {
    const { app } = await appFor(t, { defaultMaxLinks: 30 });
    const { code } = await newAccount(app);
    for (let i = 0; i < 12; i++) await createLinkOk(app, code, { url: `https://example.com/${i}`, short: `page${String(i).padStart(2, '0')}`, tags: i % 3 === 0 ? 'third' : 'rest' });
    const seen: string[] = [];
    let query: Record<string, string> = { limit: '5' };
    const links: (string | undefined)[] = [];
    for (;;) {
      const page = await listDetails(app, code, query);
      seen.push(...page.links.map((l) => l.ShortCode));
      links.push(page.link);
      if (page.link === undefined) break;
      const match = /^<([^>]+)>; rel="next"$/.exec(page.link);
      assert.ok(match, page.link);
      const next = new URL(match[1]!);
      assert.equal(next.origin + next.pathname, `${TEST_BASE_URL}/v1/links`);
      assert.equal(next.searchParams.get('auth'), null);
      assert.equal(next.searchParams.get('limit'), '5');
      query = Object.fromEntries(next.searchParams);
    }
    assert.deepEqual(seen, Array.from({ length: 12 }, (_, i) => `page${String(i).padStart(2, '0')}`));
    assert.equal(links.length, 3);
    const tagged = await listDetails(app, code, { tag: 'third', limit: '2' });
    assert.deepEqual(tagged.links.map((l) => l.ShortCode), ['page00', 'page03']);
    const next = new URL(/^<([^>]+)>/.exec(tagged.link!)![1]!);
    assert.equal(next.searchParams.get('tag'), 'third');
    const rest = await listDetails(app, code, Object.fromEntries(next.searchParams));
    assert.deepEqual(rest.links.map((l) => l.ShortCode), ['page06', 'page09']);
    assert.equal(rest.link, undefined);
    // Exactly a full last page: no Link.
    assert.equal((await listDetails(app, code, { limit: '12' })).link, undefined);
  });

  test('order=newest and order=visits sort on the server and page through that order; the cursor keeps it', async (t) => {
    const { app } = await appFor(t, { defaultMaxLinks: 30 });
    const { code } = await newAccount(app);
    const visits = [2, 0, 4, 2, 1, 0, 3];
    for (const [i, count] of visits.entries()) {
      await createLinkOk(app, code, { url: `https://example.com/${i}`, short: `order${i}` });
      for (let n = 0; n < count; n++) assert.equal((await resolve(app, `order${i}`)).statusCode, 200);
    }
    const walk = async (query: Record<string, string>) => {
      const seen: string[] = [];
      let next: Record<string, string> | undefined = query;
      while (next !== undefined) {
        const page = await listDetails(app, code, next);
        seen.push(...page.links.map((l) => l.ShortCode));
        next = page.link === undefined ? undefined : Object.fromEntries(new URL(/^<([^>]+)>/.exec(page.link)![1]!).searchParams);
      }
      return seen;
    };
    const oldest = visits.map((_, i) => `order${i}`);
    assert.deepEqual(await walk({}), oldest);
    assert.deepEqual(await walk({ order: 'oldest', limit: '3' }), oldest);
    assert.deepEqual(await walk({ order: 'newest', limit: '3' }), [...oldest].reverse());
    // Most visits first; ties newest first.
    const byVisits = ['order2', 'order6', 'order3', 'order0', 'order4', 'order5', 'order1'];
    assert.deepEqual(await walk({ order: 'visits' }), byVisits);
    assert.deepEqual(await walk({ order: 'visits', limit: '2' }), byVisits);
    // The next page's Link names its order, and a cursor alone continues in it.
    const first = await listDetails(app, code, { order: 'newest', limit: '2' });
    const next = new URL(/^<([^>]+)>/.exec(first.link!)![1]!);
    assert.equal(next.searchParams.get('order'), 'newest');
    const cursor = next.searchParams.get('cursor')!;
    assert.deepEqual((await listDetails(app, code, { cursor, limit: '2' })).links.map((l) => l.ShortCode), ['order4', 'order3']);
    for (const query of [{ order: 'popular' }, { order: 'NEWEST' }, { order: 'oldest', cursor }] as Record<string, string>[]) {
      assertError(await app.inject({ method: 'GET', url: '/v1/links', query: { ...query, auth: code } }), 400, 'list links');
    }
  });

  test('format=csv or Accept: text/csv answers the same links as CSV, the columns of shortlink export; JSON stays the default', async (t) => {
    const { app } = await appFor(t);
    const { code, uid } = await newAccount(app);
    await createLinkOk(app, code, {
      url: 'https://example.com/a,b?q="x"', short: 'csv-one', title: 'Say "hi", twice', tags: 'b,a', expires: '2031-01-01T00:00:00Z', max_visits: '9',
    });
    await createLinkOk(app, code, { url: 'https://example.com/plain', short: 'csv-two' });
    const { links } = await listDetails(app, code);
    const header = 'ShortCode,PointsTo,CreatedBy,Accesses,DateCreated,Title,Tags,ExpiresAt,MaxVisits,Domain,ForwardQuery,Protected,Rules';
    const expected = `${header}\n` +
      `csv-one,"https://example.com/a,b?q=""x""",${uid},0,${links[0]!.DateCreated},"Say ""hi"", twice","b,a",2031-01-01T00:00:00.000Z,9,,false,false,\n` +
      `csv-two,https://example.com/plain,${uid},0,${links[1]!.DateCreated},,,,,,false,false,\n`;
    const byFormat = await app.inject({ method: 'GET', url: '/v1/links', query: { format: 'csv' }, headers: { authorization: `Bearer ${code}` } });
    assert.equal(byFormat.statusCode, 200, byFormat.body);
    assert.equal(byFormat.headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(byFormat.body, expected);
    const byAccept = await app.inject({ method: 'GET', url: '/v1/links', headers: { authorization: `Bearer ${code}`, accept: 'text/csv' } });
    assert.equal(byAccept.body, expected);
    // Paged like JSON, the next page keeping the format.
    const page = await app.inject({ method: 'GET', url: '/v1/links', query: { format: 'csv', limit: '1' }, headers: { authorization: `Bearer ${code}` } });
    assert.equal(page.body, expected.split('\n').slice(0, 2).join('\n') + '\n');
    const next = new URL(/^<([^>]+)>/.exec(page.headers['link'] as string)![1]!);
    assert.equal(next.searchParams.get('format'), 'csv');
    // JSON as before, whatever else is accepted.
    const json = await app.inject({ method: 'GET', url: '/v1/links', headers: { authorization: `Bearer ${code}`, accept: 'application/json, text/csv;q=0.5' } });
    assert.match(String(json.headers['content-type']), /^application\/json/);
    assert.deepEqual(json.json(), links);
    assertError(await app.inject({ method: 'GET', url: '/v1/links', query: { format: 'xml', auth: code } }), 400, 'list links');
  });
});

describe('expiry and visit limits', () => {
  test('an expired link answers 410 on resolve, an HTML 410 on redirect, and is not counted', async (t) => {
    const { clock, advance } = manualClock();
    const { app } = await appFor(t, {}, { clock });
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://example.com/', short: 'shortlived', expires: '2030-01-01T00:01:00Z' });
    assert.equal((await resolve(app, 'shortlived')).json().Accesses, 1);
    advance(60_000);
    const gone = await resolve(app, 'shortlived');
    assertError(gone, 410, 'resolve link');
    assert.equal(gone.body, 'Unable to resolve link: the link has expired');
    const page = await app.inject({ method: 'GET', url: '/shortlived' });
    assert.equal(page.statusCode, 410);
    assert.equal(page.headers['content-type'], HTML);
    assert.match(page.body, /<h1>This short link has expired<\/h1>/);
    assert.equal(page.headers['location'], undefined);
    assert.equal((await app.inject({ method: 'HEAD', url: '/shortlived' })).statusCode, 410);
    assert.equal((await app.inject({ method: 'HEAD', url: '/v1/get/shortlived' })).statusCode, 410);
    assert.equal((await listDetails(app, code)).links[0]!.Accesses, 1);
    // Clearing the expiry revives it.
    assert.equal((await patch(app, code, { short: 'shortlived', expires: '' })).statusCode, 200);
    assert.equal((await resolve(app, 'shortlived')).json().Accesses, 2);
  });

  test('max_visits N: N resolutions and redirects succeed, then 410; HEAD never counts; raising it revives', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://example.com/', short: 'threeonly', max_visits: '3' });
    assert.equal((await app.inject({ method: 'HEAD', url: '/threeonly' })).statusCode, 302);
    assert.equal((await resolve(app, 'threeonly')).json().Accesses, 1);
    assert.equal((await app.inject({ method: 'GET', url: '/threeonly' })).statusCode, 302);
    assert.equal((await resolve(app, 'threeonly')).json().Accesses, 3);
    const limited = await resolve(app, 'threeonly');
    assertError(limited, 410, 'resolve link');
    assert.equal(limited.body, 'Unable to resolve link: the link has reached its visit limit');
    const page = await app.inject({ method: 'GET', url: '/threeonly' });
    assert.equal(page.statusCode, 410);
    assert.match(page.body, /visit limit/);
    assert.equal((await app.inject({ method: 'HEAD', url: '/v1/get/threeonly' })).statusCode, 410);
    assert.equal((await listDetails(app, code)).links[0]!.Accesses, 3);
    assert.equal((await patch(app, code, { short: 'threeonly', max_visits: '4' })).json().MaxVisits, 4);
    assert.equal((await resolve(app, 'threeonly')).json().Accesses, 4);
    assert.equal((await resolve(app, 'threeonly')).statusCode, 410);
  });

  test('200 concurrent resolutions and redirects of a link with max_visits 25: exactly 25 succeed, with 1 to 25', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://example.com/', short: 'contested', max_visits: '25' });
    const responses = await Promise.all(Array.from({ length: 200 }, (_, i) =>
      i % 2 === 0 ? resolve(app, 'contested') : app.inject({ method: 'GET', url: '/contested' })));
    assert.deepEqual(tally(responses.map((r) => r.statusCode)), { 200: responses.filter((r) => r.statusCode === 200).length, 302: 25 - responses.filter((r) => r.statusCode === 200).length, 410: 175 });
    const counts = responses.filter((r) => r.statusCode === 200).map((r) => r.json().Accesses as number);
    assert.equal(new Set(counts).size, counts.length, 'distinct counts');
    assert.ok(counts.every((count) => count >= 1 && count <= 25));
    assert.equal((await listDetails(app, code)).links[0]!.Accesses, 25);
  });

  test('edits and a delete racing resolutions keep counts distinct and within the limit', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://example.com/', short: 'racing1', max_visits: '10' });
    const calls: Promise<Reply>[] = [];
    for (let i = 0; i < 120; i++) {
      calls.push(resolve(app, 'racing1'));
      if (i === 30) calls.push(patch(app, code, { short: 'racing1', max_visits: '40' }));
      if (i === 60) calls.push(patch(app, code, { short: 'racing1', url: 'https://example.com/moved' }));
    }
    const responses = await Promise.all(calls);
    const resolved = responses.filter((r) => r.statusCode === 200 && 'Accesses' in r.json() && !('MaxVisits' in r.json()));
    const counts = resolved.map((r) => r.json().Accesses as number).sort((a, b) => a - b);
    const final = (await listDetails(app, code)).links[0]!;
    assert.ok(final.Accesses <= 40, `Accesses ${final.Accesses}`);
    assert.deepEqual(counts, Array.from({ length: final.Accesses }, (_, i) => i + 1));
    assert.ok(responses.every((r) => [200, 410].includes(r.statusCode)), 'only 200 and 410');
    const racingDelete = [...Array.from({ length: 30 }, () => resolve(app, 'racing1')), app.inject({ method: 'DELETE', url: '/v1/link', query: { short: 'racing1', auth: code } })];
    const after = await Promise.all(racingDelete);
    assert.ok(after.every((r) => [200, 404, 410].includes(r.statusCode)));
    assert.equal((await resolve(app, 'racing1')).statusCode, 404);
  });
});
