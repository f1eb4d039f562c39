/**
 * Hostile input, table-driven. Every request below is refused the contract's way: never a
 * 5xx; a plain-text `Unable to <operation>: …` line with the right status (or, for a GET in
 * the short-URL space, the HTML 404 page); and nothing written: both accounts and their links
 * and counts read the same through the API afterwards, and for the cases carrying SQL the
 * database file, read directly, holds the same rows and every table. The cases of a table
 * share one app and database (a file for the first table, in memory for the others), seeded
 * with two accounts and one link each: every case compares all of it before and after its own
 * request, so a case that wrote anything fails itself, and the next case starts from what it
 * sees. (An app per case cost 300 app builds, a fifth of the fast suite's CPU.)
 *
 * Most requests go through `app.inject`. Those it cannot express (raw CR/LF or NUL on the
 * wire, repeated or malformed headers, request smuggling, paths with dot segments, which
 * inject normalises like a browser would) go over a real socket.
 *
 * A last table lists hostile-looking targets that *are* valid http(s) URLs and are accepted:
 * each is stored exactly as given and redirected to its WHATWG-normalised, ASCII-only form,
 * so every client follows the link to the same place.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import { TEST_BASE_URL } from '../helpers/app.ts';
import {
  account, assertErrorBody, assertInjectedError, assertNotFoundPage, listenLocal, rawExchange, securityApp, snapshot,
  suiteCleanup, tableNames, TEXT, type CleanupOwner, type SecurityApp,
} from './support.ts';
import type { Link } from '../../src/http/schemas.ts';

/** What the seeded database holds; cases build their requests from it. */
interface Seed {
  /** Access code of account A, which owns `mine`. */
  readonly code: string;
  /** Access code of account B, which owns `theirs`. */
  readonly other: string;
  readonly mine: string;
  readonly theirs: string;
}

const MINE = 'seeded-link';
const THEIRS = 'their-link';
const TARGET = 'https://example.org/landing';
// Every table the schema has, the migration record included (ADR 13).
const TABLES = ['accounts', 'api_keys', 'domains', 'links', 'schema_migrations', 'stats_journal', 'stats_rollups', 'stats_tuples', 'stream_slots', 'visit_classes', 'webhook_deliveries', 'webhook_events', 'webhook_visits', 'webhooks'];

type Seeded = SecurityApp & { seed: Seed };

async function seeded(t: CleanupOwner, file: boolean): Promise<Seeded> {
  const testApp = await securityApp(t, {}, { memory: !file });
  const { app } = testApp;
  const a = await account(app);
  const b = await account(app);
  for (const [code, short] of [[a.code, MINE], [b.code, THEIRS]] as const) {
    const response = await app.inject({ method: 'GET', url: '/v1/link', query: { url: TARGET, short, auth: code } });
    assert.equal(response.statusCode, 200, response.body);
  }
  // One resolution each, so a stray count would show as a changed number.
  for (const short of [MINE, THEIRS]) assert.equal((await app.inject({ url: `/v1/get/${short}` })).statusCode, 200);
  return { ...testApp, seed: { code: a.code, other: b.code, mine: MINE, theirs: THEIRS } };
}

/**
 * What the service holds, seen two ways: through the API (both accounts and their links,
 * with counts; the cases below can write nothing else), and, for a database file, every row
 * and the schema read directly.
 */
async function observe({ app, databasePath, seed }: SecurityApp & { seed: Seed }): Promise<string> {
  const seen: unknown[] = [];
  for (const code of [seed.code, seed.other]) {
    for (const url of ['/v1/get_account', '/v1/links']) {
      const response = await app.inject({ method: 'GET', url, headers: { authorization: code } });
      assert.equal(response.statusCode, 200, response.body);
      seen.push(response.json());
    }
  }
  return JSON.stringify({ api: seen, file: databasePath === undefined ? null : snapshot(databasePath) });
}

/**
 * One seeded app for the tests of the enclosing describe, built before the first and closed
 * after the last: `file` puts its database in a file, read directly by observe().
 */
function sharedSeeded(file: boolean): () => Seeded {
  const cleanup = suiteCleanup();
  let fixture: Seeded | undefined;
  before(async () => {
    fixture = await seeded(cleanup.owner, file);
  });
  after(() => cleanup.run());
  return () => {
    if (fixture === undefined) throw new Error('the shared app was not built');
    return fixture;
  };
}

type Expect = { readonly status: number; readonly op: string } | 'html404';

interface InjectCase {
  readonly name: string;
  readonly request: (seed: Seed) => InjectOptions;
  readonly expect: Expect;
}

const CREATE = 'create link';
const DELETE = 'delete link';
const LIST = 'list links';
const RESOLVE = 'resolve link';
const OTHER = 'handle request';
const ACCOUNT = 'get account information';
const UPDATE = 'update link';

const bad = (status: number, op: string): Expect => ({ status, op });

/** GET /v1/link with these query parameters and A's code in the query. */
const createWith = (params: Record<string, string>) => (seed: Seed): InjectOptions => ({
  method: 'GET',
  url: '/v1/link',
  query: { ...params, auth: seed.code },
});

/** POST /v1/link with A's code in the header and this body. */
const postWith = (contentType: string | undefined, payload: string, query = '') => (seed: Seed): InjectOptions => ({
  method: 'POST',
  url: `/v1/link${query}`,
  headers: { authorization: `Bearer ${seed.code}`, ...(contentType === undefined ? {} : { 'content-type': contentType }) },
  payload,
});

const json = (body: unknown, query = '') => postWith('application/json', JSON.stringify(body), query);
const form = (body: string, query = '') => postWith('application/x-www-form-urlencoded', body, query);

/** GET /v1/links with the access code in the query. */
const listWithAuth = (auth: string) => (): InjectOptions => ({ method: 'GET', url: '/v1/links', query: { auth } });
/** GET /v1/links with this Authorization header. */
const listWithHeader = (authorization: string) => (): InjectOptions => ({ method: 'GET', url: '/v1/links', headers: { authorization } });

const deleteWith = (query: string) => (seed: Seed): InjectOptions => ({
  method: 'DELETE',
  url: `/v1/link?${query}`,
  headers: { authorization: seed.code },
});

const get = (url: string, method: 'GET' | 'HEAD' = 'GET') => (): InjectOptions => ({ method, url });

/** PATCH /v1/link with this query and A's code in the header. */
const patchWith = (query: string) => (seed: Seed): InjectOptions => ({
  method: 'PATCH',
  url: `/v1/link?${query}`,
  headers: { authorization: seed.code },
});

/** GET /v1/links with this query and A's code in the header. */
const listQuery = (query: string) => (seed: Seed): InjectOptions => ({
  method: 'GET',
  url: `/v1/links?${query}`,
  headers: { authorization: seed.code },
});

const TEN_KB = 'a'.repeat(10 * 1024);
const SQL_OR = "' OR 1=1 --";
const SQL_DROP = '"; DROP TABLE links; --';

const badTargets: readonly [string, string][] = [
  ['javascript: scheme', 'javascript:alert(1)'],
  ['mixed-case JaVaScRiPt: scheme', 'JaVaScRiPt:alert(document.cookie)'],
  ['javascript: with a leading space', ' javascript:alert(1)'],
  ['java<TAB>script:', 'java\tscript:alert(1)'],
  ['java<LF>script:', 'java\nscript:alert(1)'],
  ['java<CR>script:', 'java\rscript:alert(1)'],
  ['javascript: dressed as a URL', 'javascript://example.com/%0aalert(1)'],
  ['vbscript: scheme', 'vbscript:msgbox(1)'],
  ['data: HTML', 'data:text/html,<script>alert(1)</script>'],
  ['data: base64', 'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=='],
  ['file: URL', 'file:///etc/passwd'],
  ['file: URL with a host', 'file://server/share/secret.txt'],
  ['protocol-relative //host', '//evil.example/login'],
  ['a bare path', '/\\evil.example'],
  ['ftp: scheme', 'ftp://example.com/file'],
  ['about: scheme', 'about:blank'],
  ['blob: scheme', 'blob:https://example.com/3f1c'],
  ['mailto: scheme', 'mailto:victim@example.com'],
  ['ws: scheme', 'ws://example.com/socket'],
  ['view-source: scheme', 'view-source:https://example.com/'],
  ['user name and password', 'https://user:pass@example.com/'],
  ['a trusted name as user name (phishing disguise)', 'https://accounts.example.com@evil.example/'],
  ['a user name only', 'https://user@example.com/'],
  ['a password only', 'https://:secret@example.com/'],
  ['a percent-encoded @ in the host', 'https://example.com%40evil.example/'],
  ['the service itself (a loop)', 'http://sl.test/seeded-link'],
  ['the service itself in upper case with its default port', 'HTTP://SL.TEST:80/x'],
  ['the service itself with a trailing dot', 'http://sl.test./x'],
  ['the service itself under the other scheme (a loop behind an HTTP to HTTPS redirect)', 'https://sl.test/x'],
  ['CR/LF (header injection)', 'https://example.com/\r\nSet-Cookie: a=1'],
  ['a NUL in the path', 'https://example.com/a\u0000b'],
  ['a NUL in the host', 'https://exa\u0000mple.com/'],
  ['no host', 'http://'],
  ['scheme only', 'https:'],
  ['only spaces', '   '],
  ['a space in the host', 'https://exa mple.com/'],
  ['2001 characters', `https://example.com/${'a'.repeat(1981)}`],
  ['10 KB', `https://example.com/${TEN_KB}`],
  ['a right-to-left override (spoofed display)', 'https://example.com/\u202egnp.exe'],
  ['a bidi isolate', 'https://example.com/\u2066x\u2069'],
  ['a right-to-left mark', 'https://example.com/\u200fx'],
  ['a no-break space', 'https://example.com/a\u00a0b'],
  ['a line separator', 'https://example.com/a\u2028b'],
  ['an unterminated IPv6 host', 'http://[::1/'],
  ['an out-of-range IPv4 host', 'http://256.256.256.256/'],
  ['a port out of range', 'https://example.com:99999/'],
  ['a bad percent escape in the host', 'http://exa%zzmple.com/'],
  ['a zero-width joiner in the host (invalid IDN)', 'https://exa\u200dmple.com/'],
  ["SQL: ' OR 1=1 --", SQL_OR],
  ['SQL: "; DROP TABLE links; --', SQL_DROP],
  ['SQL after a valid prefix, with spaces', `https://example.com/${SQL_DROP}`],
];

const badShortcodes: readonly [string, string][] = [
  ['a zero-width space', 'abc\u200bdef'],
  ['a zero-width non-joiner', 'abc\u200cdef'],
  ['a zero-width joiner', 'abc\u200ddef'],
  ['a right-to-left override', '\u202eabcdef'],
  ['a bidi isolate', 'abc\u2066def\u2069'],
  ['a right-to-left mark', '\u200fabcdef'],
  ['a byte order mark', 'abc\ufeffdef'],
  ['a slash', 'abc/def'],
  ['a percent escape, kept literally', 'abc%2Fdef'],
  ['dot segments', '../../v1/links'],
  ['encoded dot segments', '..%2f..%2fetc'],
  ['a backslash', 'abc\\def'],
  ['a space', 'abc def'],
  ['CR/LF', 'abc\r\ndef'],
  ['a NUL', 'abc\u0000def'],
  ['a colon', 'javascript:x'],
  ['an @', 'user@host'],
  ['a fragment', 'abcde#frag'],
  ['a query', 'abcde?x=1'],
  ["SQL: ' OR 1=1 --", SQL_OR],
  ['SQL: "; DROP TABLE links; --', SQL_DROP],
  ["SQL: x';DROP TABLE links;--", "x';DROP TABLE links;--"],
  ['SQL: Robert\'); DROP TABLE accounts;--', "Robert'); DROP TABLE accounts;--"],
  ['HTML', '<script>alert(1)</script>'],
  ['a reserved name', 'ADMIN'],
  ['a reserved file name in mixed case', 'Favicon.ICO'],
  ['the assets path', 'assets'],
  ['.well-known', '.well-known'],
  ['10 KB', TEN_KB],
  ['Latin letters with accents', 'ábcdé'],
  ['fullwidth letters', 'ａｂｃｄｅ'],
  ['a Cyrillic lookalike letter', '\u0430bcdef'],
  ['a combining accent', 'abcde\u0301'],
  ['an emoji', 'abc😀def'],
];

const cases: InjectCase[] = [
  // -------------------------------------------------------------------------------- targets
  ...badTargets.map(([name, url]): InjectCase => ({ name: `create: url is ${name}`, request: createWith({ url }), expect: bad(400, CREATE) })),
  {
    name: 'create: url with a lone surrogate in a JSON body',
    request: postWith('application/json', '{"url":"https://example.com/\\ud800"}'),
    expect: bad(400, CREATE),
  },
  {
    name: 'create: url with an escaped NUL in a JSON body',
    request: postWith('application/json', '{"url":"https://example.com/\\u0000"}'),
    expect: bad(400, CREATE),
  },
  {
    name: 'create: javascript: url with a bad access code is 401 before 400',
    request: () => ({ method: 'GET', url: '/v1/link', query: { url: 'javascript:alert(1)', auth: SQL_OR } }),
    expect: bad(401, CREATE),
  },
  // ------------------------------------------------------------------------------ shortcodes
  ...badShortcodes.map(([name, short]): InjectCase => ({
    name: `create: short is ${name}`,
    request: createWith({ url: TARGET, short }),
    expect: bad(400, CREATE),
  })),
  { name: "create: short is another account's code (taken)", request: (s) => createWith({ url: TARGET, short: s.theirs })(s), expect: bad(409, CREATE) },
  { name: 'create: short differs from a taken code only by a NUL', request: (s) => createWith({ url: TARGET, short: `${s.mine}\u0000` })(s), expect: bad(400, CREATE) },
  // ---------------------------------------------------------------------------- access codes
  { name: "auth: SQL ' OR 1=1 --", request: listWithAuth(SQL_OR), expect: bad(401, LIST) },
  { name: 'auth: SQL "; DROP TABLE accounts; --', request: listWithAuth('"; DROP TABLE accounts; --'), expect: bad(401, LIST) },
  { name: "auth: SQL ' OR '1'='1", request: listWithAuth("' OR '1'='1"), expect: bad(401, LIST) },
  { name: 'auth: the valid code followed by a NUL', request: (s) => listWithAuth(`${s.code}\u0000`)(), expect: bad(401, LIST) },
  { name: 'auth: the valid code followed by CR/LF', request: (s) => listWithAuth(`${s.code}\r\n`)(), expect: bad(401, LIST) },
  { name: 'auth: the valid code with a zero-width space inside', request: (s) => listWithAuth(`${s.code.slice(0, 8)}\u200b${s.code.slice(8)}`)(), expect: bad(401, LIST) },
  { name: 'auth: the valid code with a leading space', request: (s) => listWithAuth(` ${s.code}`)(), expect: bad(401, LIST) },
  { name: 'auth: the valid code in fullwidth digits', request: (s) => listWithAuth(s.code.replace(/[0-9]/g, (d) => String.fromCharCode(0xff10 + Number(d))))(), expect: bad(401, LIST) },
  { name: 'auth: 10 KB in the query', request: listWithAuth(TEN_KB), expect: bad(401, LIST) },
  { name: 'auth: 10 KB in the header', request: listWithHeader(TEN_KB), expect: bad(401, LIST) },
  { name: 'auth: Bearer and 10 KB', request: listWithHeader(`Bearer ${TEN_KB}`), expect: bad(401, LIST) },
  { name: 'auth: Basic around the valid code', request: (s) => listWithHeader(`Basic ${Buffer.from(`x:${s.code}`).toString('base64')}`)(), expect: bad(401, LIST) },
  { name: 'auth: Token scheme around the valid code', request: (s) => listWithHeader(`Token ${s.code}`)(), expect: bad(401, LIST) },
  { name: 'auth: Bearer with no code', request: listWithHeader('Bearer   '), expect: bad(401, LIST) },
  { name: 'auth: two Bearer codes in one header', request: (s) => listWithHeader(`Bearer ${s.code}, Bearer ${s.other}`)(), expect: bad(401, LIST) },
  { name: 'auth: the nil UUID', request: listWithAuth('00000000-0000-0000-0000-000000000000'), expect: bad(401, LIST) },
  { name: 'auth: a v1 UUID', request: listWithAuth('c232ab00-9414-11ec-b3c8-9f6bdeced846'), expect: bad(401, LIST) },
  { name: 'auth: an unknown v4 UUID', request: listWithAuth('6f1c1f9e-3d2b-4c4f-9a8e-2b7d5e1a0c3f'), expect: bad(401, LIST) },
  { name: 'auth: the code as auth[]', request: (s) => ({ method: 'GET', url: `/v1/links?auth[]=${s.code}` }), expect: bad(401, LIST) },
  { name: 'auth: the code as AUTH', request: (s) => ({ method: 'GET', url: `/v1/links?AUTH=${s.code}` }), expect: bad(401, LIST) },
  { name: 'auth: the code in a cookie', request: (s) => ({ method: 'GET', url: '/v1/links', headers: { cookie: `auth=${s.code}` } }), expect: bad(401, LIST) },
  { name: 'auth: the code in a JSON body', request: (s) => ({ method: 'POST', url: '/v1/link', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ url: TARGET, auth: s.code }) }), expect: bad(401, CREATE) },
  { name: 'auth: the code in a form body', request: (s) => ({ method: 'POST', url: '/v1/link', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `url=${encodeURIComponent(TARGET)}&auth=${s.code}` }), expect: bad(401, CREATE) },
  { name: 'auth: the code repeated in the query', request: (s) => ({ method: 'GET', url: `/v1/links?auth=${s.code}&auth=${s.code}` }), expect: bad(400, LIST) },
  { name: 'auth: two accounts\u2019 codes, query and header', request: (s) => ({ method: 'GET', url: `/v1/links?auth=${s.code}`, headers: { authorization: s.other } }), expect: bad(400, LIST) },
  { name: 'auth: two Authorization headers', request: (s) => ({ method: 'GET', url: '/v1/get_account', headers: { authorization: [s.code, s.code] as unknown as string } }), expect: bad(400, ACCOUNT) },
  // ------------------------------------------------------------------ resolve and redirect
  { name: 'resolve: SQL in the shortcode', request: get(`/v1/get/${encodeURIComponent(SQL_OR)}`), expect: bad(404, RESOLVE) },
  { name: 'resolve: SQL DROP in the shortcode', request: get(`/v1/get/${encodeURIComponent("x';DROP TABLE links;--")}`), expect: bad(404, RESOLVE) },
  { name: 'resolve: an encoded slash', request: get('/v1/get/abc%2Fdef'), expect: bad(404, RESOLVE) },
  { name: 'resolve: encoded dot segments', request: get('/v1/get/%2e%2e%2fv1%2flinks'), expect: bad(404, RESOLVE) },
  { name: 'resolve: an encoded NUL before a code', request: get('/v1/get/%00abcde'), expect: bad(404, RESOLVE) },
  { name: 'resolve: a live code followed by an encoded NUL', request: get(`/v1/get/${MINE}%00`), expect: bad(404, RESOLVE) },
  { name: 'resolve: a live code followed by encoded CR/LF', request: get(`/v1/get/${MINE}%0d%0a`), expect: bad(404, RESOLVE) },
  { name: 'resolve: a live code followed by an encoded space', request: get(`/v1/get/${MINE}%20`), expect: bad(404, RESOLVE) },
  { name: 'resolve: a live code in upper case', request: get(`/v1/get/${MINE.toUpperCase()}`), expect: bad(404, RESOLVE) },
  { name: 'resolve: a live code behind a right-to-left override', request: get(`/v1/get/%E2%80%AE${MINE}`), expect: bad(404, RESOLVE) },
  { name: 'resolve: a live code with a zero-width space', request: get(`/v1/get/seeded%E2%80%8B-link`), expect: bad(404, RESOLVE) },
  { name: 'resolve: a truncated UTF-8 escape', request: get('/v1/get/%E0%A4%A'), expect: bad(400, OTHER) },
  { name: 'resolve: invalid UTF-8 escapes', request: get('/v1/get/%ff%feabcde'), expect: bad(400, OTHER) },
  { name: 'resolve: 10 KB code (past the router limit)', request: get(`/v1/get/${TEN_KB}`), expect: bad(414, OTHER) },
  { name: 'resolve: HEAD with SQL in the shortcode', request: get(`/v1/get/${encodeURIComponent(SQL_OR)}`, 'HEAD'), expect: bad(404, RESOLVE) },
  { name: 'resolve: HEAD with a bad escape', request: get('/v1/get/%E0%A4%A', 'HEAD'), expect: bad(400, OTHER) },
  { name: 'redirect: SQL in the short URL', request: get(`/${encodeURIComponent(SQL_OR)}`), expect: 'html404' },
  { name: 'redirect: SQL DROP in the short URL', request: get(`/${encodeURIComponent(SQL_DROP)}`), expect: 'html404' },
  { name: 'redirect: a truncated UTF-8 escape', request: get('/%E0%A4%A'), expect: 'html404' },
  { name: 'redirect: invalid UTF-8 escapes', request: get('/%ff%feabcde'), expect: 'html404' },
  { name: 'redirect: encoded //host (no open redirect)', request: get('/%2F%2Fevil.example'), expect: 'html404' },
  { name: 'redirect: encoded backslash host', request: get('/%5Cevil.example'), expect: 'html404' },
  { name: 'redirect: javascript: as a short URL', request: get('/javascript:alert(1)'), expect: 'html404' },
  { name: 'redirect: a live code followed by an encoded NUL', request: get(`/${MINE}%00`), expect: 'html404' },
  { name: 'redirect: a live code followed by encoded CR/LF', request: get(`/${MINE}%0d%0aSet-Cookie:%20a=1`), expect: 'html404' },
  { name: 'redirect: a live code in upper case', request: get(`/${MINE.toUpperCase()}`), expect: 'html404' },
  { name: 'redirect: a live code behind a right-to-left override', request: get(`/%E2%80%AE${MINE}`), expect: 'html404' },
  { name: 'redirect: a zero-width space in a live code', request: get('/seeded%E2%80%8B-link'), expect: 'html404' },
  { name: 'redirect: 10 KB', request: get(`/${TEN_KB}`), expect: 'html404' },
  { name: 'redirect: POST to a live short URL', request: () => ({ method: 'POST', url: `/${MINE}` }), expect: bad(404, OTHER) },
  // ----------------------------------------------------------------------------------- delete
  { name: 'delete: SQL in short', request: deleteWith(`short=${encodeURIComponent(SQL_OR)}`), expect: bad(404, DELETE) },
  { name: 'delete: SQL DROP in short', request: deleteWith(`short=${encodeURIComponent(SQL_DROP)}`), expect: bad(404, DELETE) },
  { name: "delete: another account's link", request: (s) => deleteWith(`short=${s.theirs}`)(s), expect: bad(403, DELETE) },
  { name: 'delete: a live code followed by a NUL', request: deleteWith(`short=${MINE}%00`), expect: bad(404, DELETE) },
  { name: 'delete: a live code in upper case', request: deleteWith(`short=${MINE.toUpperCase()}`), expect: bad(404, DELETE) },
  { name: 'delete: a live code with a zero-width space', request: deleteWith('short=seeded%E2%80%8B-link'), expect: bad(404, DELETE) },
  { name: 'delete: dot segments', request: deleteWith('short=..%2F..%2Fv1%2Flinks'), expect: bad(404, DELETE) },
  { name: 'delete: a wildcard', request: deleteWith('short=%25'), expect: bad(404, DELETE) },
  { name: 'delete: a SQL LIKE pattern', request: deleteWith('short=seeded%25'), expect: bad(404, DELETE) },
  { name: 'delete: 10 KB', request: deleteWith(`short=${TEN_KB}`), expect: bad(404, DELETE) },
  { name: 'delete: short given twice', request: (s) => deleteWith(`short=${s.mine}&short=${s.theirs}`)(s), expect: bad(400, DELETE) },
  { name: 'delete: short as short[]', request: (s) => deleteWith(`short[]=${s.mine}`)(s), expect: bad(400, DELETE) },
  { name: 'delete: short as a JSON array', request: (s) => ({ method: 'DELETE', url: '/v1/link', headers: { authorization: s.code, 'content-type': 'application/json' }, payload: JSON.stringify({ short: [s.mine] }) }), expect: bad(400, DELETE) },
  { name: 'delete: short as a JSON operator object', request: (s) => ({ method: 'DELETE', url: '/v1/link', headers: { authorization: s.code, 'content-type': 'application/json' }, payload: '{"short":{"$ne":""}}' }), expect: bad(400, DELETE) },
  { name: 'delete: with the other account\u2019s code on my link', request: (s) => ({ method: 'DELETE', url: `/v1/link?short=${s.mine}`, headers: { authorization: `Bearer ${s.other}` } }), expect: bad(403, DELETE) },
  // ------------------------------------------------------- link details, edits, list filters (§7.1)
  ...([
    ['title with CR/LF', { title: 'a\r\nSet-Cookie: x=1' }],
    ['title with a NUL', { title: 'a\u0000b' }],
    ['title with a C1 control', { title: 'a\u0085b' }],
    ['title of 201 characters', { title: 't'.repeat(201) }],
    ['title of 10 KB', { title: TEN_KB }],
    ['tags with SQL', { tags: SQL_OR }],
    ['tags with a LIKE wildcard', { tags: 'promo%' }],
    ['tags with an empty item', { tags: 'a,,b' }],
    ['tags with a space inside', { tags: 'a b' }],
    ['tags with a non-ASCII letter', { tags: 'café' }],
    ['tags, eleven of them', { tags: 'a,b,c,d,e,f,g,h,i,j,k' }],
    ['a tag of 51 characters', { tags: 't'.repeat(51) }],
    ['expires with SQL', { expires: SQL_OR }],
    ['expires without an offset', { expires: '2999-01-01T00:00:00' }],
    ['expires as a bare date', { expires: '2999-01-01' }],
    ['expires with month 13', { expires: '2999-13-01T00:00:00Z' }],
    ['expires with hour 24', { expires: '2999-01-01T24:00:00Z' }],
    ['expires with an offset of 24 hours', { expires: '2999-01-01T00:00:00+24:00' }],
    ['expires past the year 9999', { expires: '+275760-09-13T00:00:00Z' }],
    ['expires in the past', { expires: '2000-01-01T00:00:00Z' }],
    ['expires as epoch milliseconds', { expires: '4102444800000' }],
    ['max_visits 0', { max_visits: '0' }],
    ['max_visits negative', { max_visits: '-5' }],
    ['max_visits in exponent form', { max_visits: '1e3' }],
    ['max_visits in hex', { max_visits: '0x10' }],
    ['max_visits with a space', { max_visits: ' 5' }],
    ['max_visits past 32 bits', { max_visits: '2147483648' }],
    ['max_visits of 20 digits', { max_visits: '99999999999999999999' }],
  ] as const).map(([name, params]): InjectCase => ({ name: `create: ${name}`, request: createWith({ url: TARGET, ...params }), expect: bad(400, CREATE) })),
  { name: 'create: tags as a JSON object', request: json({ url: TARGET, tags: { $ne: '' } }), expect: bad(400, CREATE) },
  { name: 'create: tags as a JSON array holding a comma', request: json({ url: TARGET, tags: ['a,b'] }), expect: bad(400, CREATE) },
  { name: 'create: tags as a JSON array of numbers', request: json({ url: TARGET, tags: [1, 2] }), expect: bad(400, CREATE) },
  { name: 'create: max_visits as a JSON fraction', request: json({ url: TARGET, max_visits: 1.5 }), expect: bad(400, CREATE) },
  { name: 'create: max_visits as JSON true', request: json({ url: TARGET, max_visits: true }), expect: bad(400, CREATE) },
  { name: 'create: max_visits as a huge JSON number', request: json({ url: TARGET, max_visits: 1e300 }), expect: bad(400, CREATE) },
  { name: 'create: title in the query and the body', request: json({ url: TARGET, title: 'b' }, '?title=a'), expect: bad(400, CREATE) },
  { name: 'edit: without an access code', request: () => ({ method: 'PATCH', url: `/v1/link?short=${MINE}&title=x` }), expect: bad(401, UPDATE) },
  { name: "edit: another account's link", request: (s) => patchWith(`short=${s.theirs}&url=https%3A%2F%2Fevil.example%2F`)(s), expect: bad(403, UPDATE) },
  { name: 'edit: SQL in short', request: patchWith(`short=${encodeURIComponent(SQL_OR)}&title=x`), expect: bad(404, UPDATE) },
  { name: 'edit: a live code followed by a NUL', request: patchWith(`short=${MINE}%00&title=x`), expect: bad(404, UPDATE) },
  { name: 'edit: a live code in upper case', request: patchWith(`short=${MINE.toUpperCase()}&title=x`), expect: bad(404, UPDATE) },
  { name: 'edit: nothing to change', request: patchWith(`short=${MINE}`), expect: bad(400, UPDATE) },
  { name: 'edit: an empty url', request: patchWith(`short=${MINE}&url=`), expect: bad(400, UPDATE) },
  { name: 'edit: a javascript: url', request: patchWith(`short=${MINE}&url=javascript%3Aalert(1)`), expect: bad(400, UPDATE) },
  { name: 'edit: the service itself as url (a loop)', request: patchWith(`short=${MINE}&url=http%3A%2F%2Fsl.test%2Fx`), expect: bad(400, UPDATE) },
  { name: 'edit: short given twice', request: (s) => patchWith(`short=${s.mine}&short=${s.theirs}&title=x`)(s), expect: bad(400, UPDATE) },
  { name: 'edit: title as a JSON operator object', request: (s) => ({ method: 'PATCH', url: '/v1/link', headers: { authorization: s.code, 'content-type': 'application/json' }, payload: JSON.stringify({ short: s.mine, title: { $ne: '' } }) }), expect: bad(400, UPDATE) },
  { name: 'edit: short as a JSON array', request: (s) => ({ method: 'PATCH', url: '/v1/link', headers: { authorization: s.code, 'content-type': 'application/json' }, payload: JSON.stringify({ short: [s.mine], title: 'x' }) }), expect: bad(400, UPDATE) },
  { name: 'edit: max_visits 0', request: patchWith(`short=${MINE}&max_visits=0`), expect: bad(400, UPDATE) },
  { name: 'edit: a bad title on an unknown link is 400 before 404', request: patchWith(`short=nothing-here&title=${encodeURIComponent('a\n')}`), expect: bad(400, UPDATE) },
  { name: 'list: q of 2001 characters', request: listQuery(`q=${'q'.repeat(2001)}`), expect: bad(400, LIST) },
  { name: 'list: q with a NUL', request: listQuery('q=a%00b'), expect: bad(400, LIST) },
  { name: 'list: tag with SQL', request: listQuery(`tag=${encodeURIComponent(SQL_OR)}`), expect: bad(400, LIST) },
  { name: 'list: limit 0', request: listQuery('limit=0'), expect: bad(400, LIST) },
  { name: 'list: limit 1001', request: listQuery('limit=1001'), expect: bad(400, LIST) },
  { name: 'list: limit negative', request: listQuery('limit=-1'), expect: bad(400, LIST) },
  { name: 'list: limit in exponent form', request: listQuery('limit=1e2'), expect: bad(400, LIST) },
  { name: 'list: limit given twice', request: listQuery('limit=1&limit=2'), expect: bad(400, LIST) },
  { name: 'list: cursor with SQL', request: listQuery(`cursor=${encodeURIComponent(SQL_OR)}`), expect: bad(400, LIST) },
  { name: 'list: cursor forged for a negative position', request: listQuery(`cursor=${Buffer.from('c-1').toString('base64url')}`), expect: bad(400, LIST) },
  { name: 'list: cursor forged with a huge position', request: listQuery(`cursor=${Buffer.from(`c${'9'.repeat(30)}`).toString('base64url')}`), expect: bad(400, LIST) },
  { name: 'list: cursor of 10 KB', request: listQuery(`cursor=${TEN_KB}`), expect: bad(400, LIST) },
  // ----------------------------------------------------------------- parameters and bodies
  { name: 'params: url given twice in the query', request: (s) => ({ method: 'GET', url: `/v1/link?url=${TARGET}&url=https://evil.example/&auth=${s.code}` }), expect: bad(400, CREATE) },
  { name: 'params: short given twice in the query', request: (s) => ({ method: 'GET', url: `/v1/link?url=${TARGET}&short=first1&short=second2&auth=${s.code}` }), expect: bad(400, CREATE) },
  { name: 'params: url in the query and in a JSON body', request: json({ url: 'https://evil.example/' }, `?url=${TARGET}`), expect: bad(400, CREATE) },
  { name: 'params: url in the query and in a form body', request: form('url=https%3A%2F%2Fevil.example%2F', `?url=${TARGET}`), expect: bad(400, CREATE) },
  { name: 'params: short in the query and in a JSON body', request: json({ url: TARGET, short: 'second2' }, '?short=first1'), expect: bad(400, CREATE) },
  { name: 'params: url given twice in a form body', request: form(`url=${encodeURIComponent(TARGET)}&url=https%3A%2F%2Fevil.example%2F`), expect: bad(400, CREATE) },
  { name: 'params: url[a]=1', request: (s) => ({ method: 'GET', url: `/v1/link?url[a]=1&auth=${s.code}` }), expect: bad(400, CREATE) },
  { name: 'params: url[]=…', request: (s) => ({ method: 'GET', url: `/v1/link?url[]=${TARGET}&auth=${s.code}` }), expect: bad(400, CREATE) },
  { name: 'params: url[a]=1 in a form body', request: form('url[a]=1'), expect: bad(400, CREATE) },
  { name: 'params: an empty url', request: createWith({ url: '' }), expect: bad(400, CREATE) },
  { name: 'json: url is an object', request: json({ url: { href: TARGET } }), expect: bad(400, CREATE) },
  { name: 'json: url is an array', request: json({ url: [TARGET] }), expect: bad(400, CREATE) },
  { name: 'json: url is an array of two', request: json({ url: [TARGET, 'https://evil.example/'] }), expect: bad(400, CREATE) },
  { name: 'json: url is a number', request: json({ url: 123 }), expect: bad(400, CREATE) },
  { name: 'json: url is null', request: json({ url: null }), expect: bad(400, CREATE) },
  { name: 'json: url is true', request: json({ url: true }), expect: bad(400, CREATE) },
  { name: 'json: short is an operator object', request: json({ url: TARGET, short: { $ne: null } }), expect: bad(400, CREATE) },
  { name: 'json: short is an array', request: json({ url: TARGET, short: ['abcde'] }), expect: bad(400, CREATE) },
  { name: 'json: short is a number', request: json({ url: TARGET, short: 12345 }), expect: bad(400, CREATE) },
  { name: 'json: the body is an array', request: json([TARGET]), expect: bad(400, CREATE) },
  { name: 'json: the body is a string', request: json(TARGET), expect: bad(400, CREATE) },
  { name: 'json: the body is a number', request: postWith('application/json', '123'), expect: bad(400, CREATE) },
  { name: 'json: the body is null', request: postWith('application/json', 'null'), expect: bad(400, CREATE) },
  { name: 'json: __proto__ carrying the url', request: postWith('application/json', `{"__proto__":{"url":"${TARGET}"}}`), expect: bad(400, CREATE) },
  { name: 'json: constructor.prototype pollution', request: postWith('application/json', `{"url":"${TARGET}","constructor":{"prototype":{"short":"polluted"}}}`), expect: bad(400, CREATE) },
  { name: 'json: 20,000 levels of nesting', request: postWith('application/json', `${'['.repeat(20_000)}${']'.repeat(20_000)}`), expect: bad(400, CREATE) },
  { name: 'json: truncated', request: postWith('application/json', `{"url":"${TARGET}"`), expect: bad(400, CREATE) },
  { name: 'json: a form body labelled JSON', request: postWith('application/json', `url=${encodeURIComponent(TARGET)}`), expect: bad(400, CREATE) },
  { name: 'form: a JSON body labelled as a form', request: postWith('application/x-www-form-urlencoded', JSON.stringify({ url: TARGET })), expect: bad(400, CREATE) },
  { name: 'content type: text/plain', request: postWith('text/plain', `url=${TARGET}`), expect: bad(415, CREATE) },
  { name: 'content type: application/xml', request: postWith('application/xml', `<url>${TARGET}</url>`), expect: bad(415, CREATE) },
  { name: 'content type: multipart/form-data', request: postWith('multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="url"\r\n\r\n${TARGET}\r\n--x--`), expect: bad(415, CREATE) },
  { name: 'content type: none, with a body', request: postWith(undefined, JSON.stringify({ url: TARGET })), expect: bad(415, CREATE) },
  { name: 'content type: garbage', request: postWith(';;;', JSON.stringify({ url: TARGET })), expect: bad(415, CREATE) },
  { name: 'content type: text/html', request: postWith('text/html', `<a href="${TARGET}">x</a>`), expect: bad(415, CREATE) },
  { name: 'body: over 64 KiB', request: json({ url: TARGET, padding: 'x'.repeat(70 * 1024) }), expect: bad(413, CREATE) },
];

describe('hostile requests through app.inject: refused the contract\u2019s way, nothing written', () => {
  // On a file, so the cases carrying SQL (all of them, in fact) are checked on the file itself too.
  const shared = sharedSeeded(true);
  for (const { name, request, expect } of cases) {
    test(name, async () => {
      const fixture = shared();
      const { app, databasePath, seed } = fixture;
      const before = await observe(fixture);
      const options = request(seed);
      const response = await app.inject(options);
      const context = `${String(options.method)} ${String(options.url).slice(0, 120)}`;
      assert.ok(response.statusCode < 500, `${context}: never a 5xx, got ${response.statusCode}: ${response.body}`);
      if (expect === 'html404') assertNotFoundPage(response.statusCode, response.headers, response.body, context);
      else assertInjectedError(response, expect.status, expect.op, context, String(options.method ?? 'GET'));
      assert.equal(await observe(fixture), before, `${context}: nothing was written`);
      if (databasePath !== undefined) assert.deepEqual(tableNames(databasePath), TABLES);
    });
  }

  test('the suite holds at least 100 cases', () => {
    assert.ok(cases.length >= 100, `${cases.length} cases`);
  });
});

// ------------------------------------------------------------------------------ real socket

interface RawCase {
  readonly name: string;
  readonly wire: (seed: Seed) => string | Buffer;
  /** `closed`: the server drops the connection without an answer. */
  readonly expect: Expect | 'closed';
}

const END = 'Host: sl.test\r\nConnection: close\r\n\r\n';

const rawCases: RawCase[] = [
  { name: 'a NUL in the request line', wire: () => `GET /v1/get/ab\u0000cdef HTTP/1.1\r\n${END}`, expect: bad(400, OTHER) },
  { name: 'a bare CR in the request line', wire: () => `GET /seeded\rlink HTTP/1.1\r\n${END}`, expect: bad(400, OTHER) },
  { name: 'a bare LF in the request line', wire: () => `GET /seeded\nlink HTTP/1.1\r\n${END}`, expect: bad(400, OTHER) },
  { name: 'a bare CR inside the Authorization value', wire: (s) => `GET /v1/links HTTP/1.1\r\nAuthorization: ${s.code}\rX-Injected: 1\r\n${END}`, expect: bad(400, OTHER) },
  { name: 'a NUL inside the Authorization value', wire: (s) => `GET /v1/links HTTP/1.1\r\nAuthorization: ${s.code}\u0000\r\n${END}`, expect: bad(400, OTHER) },
  { name: 'a NUL inside another header', wire: () => `GET /v1/get/${MINE} HTTP/1.1\r\nX-Note: a\u0000b\r\n${END}`, expect: bad(400, OTHER) },
  { name: 'a folded (obs-fold) Authorization header', wire: (s) => `GET /v1/links HTTP/1.1\r\nAuthorization: Bearer\r\n ${s.code}\r\n${END}`, expect: bad(400, OTHER) },
  { name: 'two Authorization headers with the same code', wire: (s) => `GET /v1/links HTTP/1.1\r\nAuthorization: ${s.code}\r\nAuthorization: ${s.code}\r\n${END}`, expect: bad(400, LIST) },
  { name: 'two Authorization headers with different codes', wire: (s) => `DELETE /v1/link?short=${THEIRS} HTTP/1.1\r\nAuthorization: ${s.code}\r\nauthorization: Bearer ${s.other}\r\n${END}`, expect: bad(400, DELETE) },
  { name: 'Content-Length and Transfer-Encoding together (smuggling)', wire: (s) => `POST /v1/link HTTP/1.1\r\nAuthorization: ${s.code}\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n${END}0\r\n\r\n`, expect: bad(400, OTHER) },
  { name: 'two different Content-Lengths', wire: (s) => `POST /v1/link HTTP/1.1\r\nAuthorization: ${s.code}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 40\r\n${END}{}`, expect: bad(400, OTHER) },
  { name: 'a malformed chunk', wire: (s) => `POST /v1/link HTTP/1.1\r\nAuthorization: ${s.code}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n${END}zz\r\n{}\r\n0\r\n\r\n`, expect: bad(400, OTHER) },
  { name: 'an unknown method', wire: () => `FOO /v1/links HTTP/1.1\r\n${END}`, expect: bad(400, OTHER) },
  { name: 'a space in a header name', wire: (s) => `GET /v1/links HTTP/1.1\r\nAuth orization: ${s.code}\r\n${END}`, expect: bad(400, OTHER) },
  { name: 'a header line without a colon', wire: (s) => `GET /v1/links HTTP/1.1\r\nAuthorization ${s.code}\r\n${END}`, expect: bad(400, OTHER) },
  { name: 'raw UTF-8 bytes in the path', wire: () => Buffer.from(`GET /\u0430bcdef HTTP/1.1\r\n${END}`, 'utf8'), expect: bad(400, OTHER) },
  { name: 'invalid UTF-8 bytes in the path', wire: () => Buffer.concat([Buffer.from('GET /'), Buffer.from([0xff, 0xfe, 0x41, 0x42, 0x43]), Buffer.from(` HTTP/1.1\r\n${END}`)]), expect: bad(400, OTHER) },
  { name: 'encoded dot segments do not reach another route', wire: (s) => `GET /v1/%2e%2e/v1/links?auth=${s.code} HTTP/1.1\r\n${END}`, expect: bad(404, OTHER) },
  { name: 'plain dot segments do not reach another route', wire: (s) => `GET /v1/get/../links?auth=${s.code} HTTP/1.1\r\n${END}`, expect: bad(404, OTHER) },
  { name: 'an encoded .. as a short URL', wire: () => `GET /%2e%2e HTTP/1.1\r\n${END}`, expect: 'html404' },
  { name: '//host is no open redirect', wire: () => `GET //evil.example HTTP/1.1\r\n${END}`, expect: bad(404, OTHER) },
  { name: '/\\host is no open redirect', wire: () => `GET /\\evil.example HTTP/1.1\r\n${END}`, expect: 'html404' },
  { name: 'an absolute-form target naming another host', wire: () => `GET http://evil.example/nothing-here HTTP/1.1\r\n${END}`, expect: 'html404' },
  { name: 'CONNECT (no proxying)', wire: () => `CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n`, expect: 'closed' },
];

describe('hostile requests over a real socket: refused, nothing written', () => {
  const shared = sharedSeeded(false);
  let port = 0;
  before(async () => {
    port = await listenLocal(shared().app);
  });
  for (const { name, wire, expect } of rawCases) {
    test(name, async () => {
      const fixture = shared();
      const { seed } = fixture;
      const before = await observe(fixture);
      const reply = await rawExchange(port, wire(seed));
      assert.ok(reply.status < 500, `never a 5xx, got ${reply.status}: ${reply.body}`);
      if (expect === 'closed') {
        assert.equal(reply.status, 0, `expected the connection to be closed, got ${reply.status}: ${reply.body}`);
      } else if (expect === 'html404') {
        assertNotFoundPage(reply.status, reply.headers, reply.body, name);
      } else {
        assert.equal(reply.status, expect.status, `${name}: ${reply.body}`);
        assert.equal(reply.headers['content-type'], TEXT);
        assert.equal(reply.headers['x-content-type-options'], 'nosniff');
        assertErrorBody(reply.body, expect.op, name);
      }
      assert.equal(await observe(fixture), before, 'nothing was written');
    });
  }
});

// -------------------------------------------------------- accepted despite looking hostile

interface AcceptedCase {
  readonly name: string;
  readonly url: string;
  /** The host the redirect leads to: what every browser will visit. */
  readonly host: string;
}

const acceptedTargets: AcceptedCase[] = [
  // WHATWG parsers (every browser, Node) read a backslash as a slash in http(s) URLs and
  // ignore missing or extra slashes after the scheme: these are http(s) URLs with a host.
  { name: 'http:/\\host (backslash for a slash)', url: 'http:/\\host.example/x', host: 'host.example' },
  { name: 'http:\\\\host', url: 'http:\\\\host.example', host: 'host.example' },
  { name: 'three slashes', url: 'http:///host.example/', host: 'host.example' },
  { name: 'no slashes', url: 'https:host.example', host: 'host.example' },
  // The user-info trick fails under WHATWG rules: the backslash ends the host.
  { name: 'a backslash before @ (host stays example.com)', url: 'https://example.com\\@evil.example/', host: 'example.com' },
  // Lookalike (homograph) domains are real, distinct domains: accepted, and the redirect
  // shows their punycode, which is what the browser actually visits.
  { name: 'a Cyrillic lookalike of apple.com', url: 'https://\u0430\u0440\u0440le.com/login', host: 'xn--le-6kc8da.com' },
  { name: 'one Cyrillic letter in example.com', url: 'https://ex\u0430mple.com/', host: 'xn--exmple-4nf.com' },
  { name: 'a punycode domain as given', url: 'https://xn--le-6kc8da.com/', host: 'xn--le-6kc8da.com' },
  { name: 'an international domain and path', url: 'https://münchen.de/straße', host: 'xn--mnchen-3ya.de' },
  { name: 'fullwidth letters (mapped to ASCII)', url: 'https://ｅｘａｍｐｌｅ.com/', host: 'example.com' },
  { name: 'a zero-width space in the host (ignored by IDNA)', url: 'https://exa\u200bmple.com/', host: 'example.com' },
  { name: 'a soft hyphen in the host (ignored by IDNA)', url: 'https://exa\u00admple.com/', host: 'example.com' },
  { name: 'encoded CR/LF in the path (stays encoded)', url: 'https://example.com/%0d%0aSet-Cookie:a=1', host: 'example.com' },
  { name: 'SQL in the path', url: "https://example.com/'OR'1'='1", host: 'example.com' },
  { name: 'SQL DROP in the path', url: 'https://example.com/";DROP%20TABLE%20links;--', host: 'example.com' },
  { name: 'HTML in the query', url: 'https://example.com/?q=<script>alert(1)</script>', host: 'example.com' },
  { name: 'an emoji path', url: 'https://example.com/😀?x=ü', host: 'example.com' },
  { name: 'upper-case scheme and host', url: 'HTTPS://EXAMPLE.COM/Path', host: 'example.com' },
  { name: 'a hexadecimal IPv4 host', url: 'http://0x7f.1/', host: '127.0.0.1' },
  { name: 'the service host on another port (another service)', url: 'http://sl.test:8081/x', host: 'sl.test' },
];

const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

describe('hostile-looking targets that are valid http(s) URLs: stored as given, redirected in ASCII', () => {
  const shared = sharedSeeded(false);
  for (const { name, url, host } of acceptedTargets) {
    test(name, async () => {
      const { app } = shared();
      // An account of its own (one holds at most 20 links).
      const { code } = await account(app);
      const created = await app.inject({ method: 'GET', url: '/v1/link', query: { url, auth: code } });
      assert.equal(created.statusCode, 200, created.body);
      assert.equal(created.headers['content-type'], TEXT);
      assert.match(created.body, new RegExp(`^${TEST_BASE_URL.replaceAll('.', '\\.')}/[A-Za-z0-9]{6}$`));
      const short = created.body.slice(TEST_BASE_URL.length + 1);

      const listed = await app.inject({ method: 'GET', url: '/v1/links', headers: { authorization: code } });
      const link = (listed.json() as Link[]).find((l) => l.ShortCode === short);
      assert.equal(link?.PointsTo, url, 'stored exactly as given');

      const followed = await app.inject({ method: 'GET', url: `/${short}` });
      assert.equal(followed.statusCode, 302);
      const location = String(followed.headers.location);
      assert.equal(location, new URL(url).href, 'the Location is the WHATWG-normalised target');
      assert.match(location, PRINTABLE_ASCII, 'the Location is printable ASCII: no raw CR/LF, no Unicode');
      assert.equal(new URL(location).hostname, host, 'the redirect leads to the host the URL parser sees');
      assert.equal(followed.headers['cache-control'], 'private, no-cache');
    });
  }

  test('a forged Host header does not change the short URL', async () => {
    const { app } = shared();
    const { code } = await account(app);
    const created = await app.inject({
      method: 'GET',
      url: '/v1/link',
      query: { url: TARGET, auth: code },
      headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'javascript' },
    });
    assert.equal(created.statusCode, 200, created.body);
    assert.ok(created.body.startsWith(`${TEST_BASE_URL}/`), created.body);
  });
});
