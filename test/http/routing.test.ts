/**
 * CONTRACT §8.2, routing a visit, through HTTP: `forward_query` (the joining rule, fragments
 * last, visitor values passed through, the FORWARD_QUERY default), `rules` (each condition,
 * first match wins, validation, the ways to send them, how LinkDetails shows them, clearing),
 * and the 302 a routed link always answers whatever REDIRECT_STATUS says.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { LinkDetails } from '../../src/http/schemas.ts';
import { newAccount, TEST_BASE_URL } from '../helpers/app.ts';
import { appFor, assertError, LINK_KEYS, type Reply } from './support.ts';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const IPAD = 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1';
const PIXEL = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36';
const WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
const LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const TARGET = 'https://target.example/landing';

function auth(code: string) {
  return { authorization: `Bearer ${code}` };
}

function create(app: FastifyInstance, code: string, params: Record<string, string>): Promise<Reply> {
  return app.inject({ method: 'GET', url: '/v1/link', query: params, headers: auth(code) });
}

async function createOk(app: FastifyInstance, code: string, params: Record<string, string>): Promise<string> {
  const response = await create(app, code, params);
  assert.equal(response.statusCode, 200, response.body);
  return response.body.slice(`${TEST_BASE_URL}/`.length);
}

async function details(app: FastifyInstance, code: string, short: string): Promise<LinkDetails> {
  const response = await app.inject({ method: 'GET', url: '/v1/links', headers: auth(code) });
  const link = (response.json() as LinkDetails[]).find((l) => l.ShortCode === short);
  assert.ok(link, `${short} is listed`);
  return link;
}

function edit(app: FastifyInstance, code: string, params: Record<string, string>): Promise<Reply> {
  return app.inject({ method: 'PATCH', url: '/v1/link', query: params, headers: auth(code) });
}

/** The Location of a redirect of `path` (status checked). */
async function locationOf(app: FastifyInstance, path: string, headers: Record<string, string> = {}, status = 302): Promise<string> {
  const response = await app.inject({ method: 'GET', url: path, headers });
  assert.equal(response.statusCode, status, `${path}: ${response.body}`);
  assert.equal(response.headers['cache-control'], 'private, no-cache');
  return String(response.headers.location);
}

const rules = (value: unknown) => JSON.stringify(value);

describe('forward_query', () => {
  test('appends the visitor\'s query with ? or &, keeps the target\'s fragment last', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const cases: [string, string, string][] = [
      ['https://t.example/p', 'a=1&b=2', 'https://t.example/p?a=1&b=2'],
      ['https://t.example/p?x=1', 'a=1', 'https://t.example/p?x=1&a=1'],
      ['https://t.example/p#frag', 'a=1', 'https://t.example/p?a=1#frag'],
      ['https://t.example/p?x=1&y=2#sec-2', 'a=1&a=2', 'https://t.example/p?x=1&y=2&a=1&a=2#sec-2'],
      ['https://t.example', 'a=1', 'https://t.example/?a=1'],
    ];
    for (const [url, visitorQuery, expected] of cases) {
      const short = await createOk(app, code, { url, forward_query: 'true' });
      assert.equal(await locationOf(app, `/${short}?${visitorQuery}`), expected, url);
      // No visitor query: the target as it is, with no separator added.
      assert.equal(await locationOf(app, `/${short}`), new URL(url).href, `${url} without a query`);
    }
  });

  test('passes percent-encoded and + values through unchanged', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createOk(app, code, { url: 'https://t.example/p?ref=x', forward_query: 'true' });
    const visitor = 'q=caf%C3%A9&r=a%2Bb+c&s=%26%3D%23&t=%2F%3F&empty=&flag';
    assert.equal(await locationOf(app, `/${short}?${visitor}`), `https://t.example/p?ref=x&${visitor}`);
  });

  test('is false by default: the visitor\'s query is dropped; LinkDetails shows ForwardQuery', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createOk(app, code, { url: TARGET });
    assert.equal(await locationOf(app, `/${short}?utm_source=mail`), TARGET);
    assert.equal((await details(app, code, short)).ForwardQuery, false);
    const on = await edit(app, code, { short, forward_query: 'true' });
    assert.equal(on.statusCode, 200, on.body);
    assert.equal((on.json() as LinkDetails).ForwardQuery, true);
    assert.equal(await locationOf(app, `/${short}?utm_source=mail`), `${TARGET}?utm_source=mail`);
    assert.equal((await edit(app, code, { short, forward_query: 'false' })).statusCode, 200);
    assert.equal(await locationOf(app, `/${short}?utm_source=mail`), TARGET);
    for (const value of ['yes', '1', 'TRUE']) {
      assertError(await create(app, code, { url: TARGET, forward_query: value }), 400, 'create link');
      assertError(await edit(app, code, { short, forward_query: value }), 400, 'update link');
    }
  });

  test('FORWARD_QUERY=true makes it the default; forward_query=false still turns it off', async (t) => {
    const { app } = await appFor(t, { forwardQuery: true });
    const { code } = await newAccount(app);
    const byDefault = await createOk(app, code, { url: TARGET });
    const off = await createOk(app, code, { url: TARGET, forward_query: 'false' });
    assert.equal((await details(app, code, byDefault)).ForwardQuery, true);
    assert.equal((await details(app, code, off)).ForwardQuery, false);
    assert.equal(await locationOf(app, `/${byDefault}?a=b`), `${TARGET}?a=b`);
    assert.equal(await locationOf(app, `/${off}?a=b`), TARGET);
  });

  test('forwards after a rule chose the target', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createOk(app, code, {
      url: TARGET, forward_query: 'true', rules: rules([{ if: { device: 'mobile' }, to: 'https://m.example/app?src=short#top' }]),
    });
    assert.equal(await locationOf(app, `/${short}?u=1`, { 'user-agent': IPHONE }), 'https://m.example/app?src=short&u=1#top');
    assert.equal(await locationOf(app, `/${short}?u=1`, { 'user-agent': WINDOWS }), `${TARGET}?u=1`);
  });
});

describe('rules: conditions', () => {
  test('device and os, the first matching rule wins, none matching is PointsTo', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createOk(app, code, {
      url: TARGET,
      rules: rules([
        { if: { device: 'tablet' }, to: 'https://tablet.example/' },
        { if: { os: 'ios' }, to: 'https://apps.apple.example/' },
        { if: { os: ['android'] }, to: 'https://play.example/' },
        { if: { device: 'mobile' }, to: 'https://never-reached-for-ios-or-android.example/' },
        { if: { os: ['macos', 'linux'] }, to: 'https://desktop-unix.example/' },
      ]),
    });
    assert.equal(await locationOf(app, `/${short}`, { 'user-agent': IPAD }), 'https://tablet.example/', 'tablet before ios');
    assert.equal(await locationOf(app, `/${short}`, { 'user-agent': IPHONE }), 'https://apps.apple.example/');
    assert.equal(await locationOf(app, `/${short}`, { 'user-agent': PIXEL }), 'https://play.example/');
    assert.equal(await locationOf(app, `/${short}`, { 'user-agent': MAC }), 'https://desktop-unix.example/');
    assert.equal(await locationOf(app, `/${short}`, { 'user-agent': LINUX }), 'https://desktop-unix.example/');
    assert.equal(await locationOf(app, `/${short}`, { 'user-agent': WINDOWS }), TARGET);
    assert.equal(await locationOf(app, `/${short}`), TARGET, 'no User-Agent');
    assert.equal((await details(app, code, short)).Accesses, 7, 'each redirect counted once');
  });

  test('device desktop and os windows, and every condition of a rule must hold', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createOk(app, code, {
      url: TARGET,
      rules: rules([
        { if: { device: 'desktop', os: 'windows' }, to: 'https://windows.example/' },
        { if: { device: ['desktop'] }, to: 'https://desktop.example/' },
      ]),
    });
    assert.equal(await locationOf(app, `/${short}`, { 'user-agent': WINDOWS }), 'https://windows.example/');
    assert.equal(await locationOf(app, `/${short}`, { 'user-agent': MAC }), 'https://desktop.example/');
    assert.equal(await locationOf(app, `/${short}`, { 'user-agent': IPHONE }), TARGET);
  });

  test('country, from the offline database statistics use', async (t) => {
    const { app } = await appFor(t, { trustProxy: ['127.0.0.1'] });
    const { code } = await newAccount(app);
    const short = await createOk(app, code, {
      url: TARGET,
      rules: rules([
        { if: { country: ['gb', 'FR'] }, to: 'https://eu.example/' },
        { if: { country: 'US', device: 'mobile' }, to: 'https://us-mobile.example/' },
      ]),
    });
    const from = (address: string, ua = WINDOWS) => ({ 'x-forwarded-for': address, 'user-agent': ua });
    assert.equal(await locationOf(app, `/${short}`, from('81.2.69.160')), 'https://eu.example/', 'GB');
    assert.equal(await locationOf(app, `/${short}`, from('8.8.8.8')), TARGET, 'US on a desktop');
    assert.equal(await locationOf(app, `/${short}`, from('8.8.8.8', IPHONE)), 'https://us-mobile.example/');
    assert.equal(await locationOf(app, `/${short}`, from('10.1.2.3')), TARGET, 'unknown (ZZ)');
  });

  test('country works with statistics off too', async (t) => {
    const { app } = await appFor(t, { trustProxy: ['127.0.0.1'], stats: false });
    const { code } = await newAccount(app);
    const short = await createOk(app, code, { url: TARGET, rules: rules([{ if: { country: 'GB' }, to: 'https://uk.example/' }]) });
    assert.equal(await locationOf(app, `/${short}`, { 'x-forwarded-for': '81.2.69.160' }), 'https://uk.example/');
    assert.equal(await locationOf(app, `/${short}`, { 'x-forwarded-for': '8.8.8.8' }), TARGET);
  });

  test('language: any language of Accept-Language with q above 0, by primary subtag', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createOk(app, code, {
      url: TARGET, rules: rules([{ if: { language: ['de', 'AT'] }, to: 'https://de.example/' }, { if: { language: 'fr' }, to: 'https://fr.example/' }]),
    });
    const visit = (acceptLanguage: string) => locationOf(app, `/${short}`, { 'accept-language': acceptLanguage });
    assert.equal(await visit('de'), 'https://de.example/');
    assert.equal(await visit('de-CH'), 'https://de.example/');
    assert.equal(await visit('en-US,en;q=0.9,de;q=0.1'), 'https://de.example/', 'a later language still counts');
    assert.equal(await visit('fr-FR, en;q=0.8'), 'https://fr.example/');
    assert.equal(await visit('en-GB, fr;q=0.5, de;q=0.4'), 'https://de.example/', 'rule order, not the visitor\'s preference');
    assert.equal(await visit('en, de;q=0'), TARGET, 'q=0 is not accepted');
    assert.equal(await visit('en, de;q=0.000, fr;q=0'), TARGET);
    assert.equal(await visit('*'), TARGET);
    assert.equal(await locationOf(app, `/${short}`), TARGET, 'no Accept-Language');
  });

  test('query: each named parameter present with its value or one of its list', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createOk(app, code, {
      url: TARGET,
      rules: rules([
        { if: { query: { utm_source: ['qr', 'print'], v: '2' } }, to: 'https://offline.example/' },
        { if: { query: { 'name with space': 'café' } }, to: 'https://decoded.example/' },
      ]),
    });
    assert.equal(await locationOf(app, `/${short}?utm_source=print&v=2`), 'https://offline.example/');
    assert.equal(await locationOf(app, `/${short}?v=2&utm_source=qr&other=1`), 'https://offline.example/');
    assert.equal(await locationOf(app, `/${short}?utm_source=qr`), TARGET, 'v missing');
    assert.equal(await locationOf(app, `/${short}?utm_source=web&v=2`), TARGET, 'a value not in the list');
    assert.equal(await locationOf(app, `/${short}?utm_source=QR&v=2`), TARGET, 'values are case-sensitive');
    assert.equal(await locationOf(app, `/${short}?name+with%20space=caf%C3%A9`), 'https://decoded.example/');
  });
});

describe('rules: sending and showing them', () => {
  const RULES = [
    { if: { device: 'mobile', query: { src: 'qr' } }, to: 'https://m.example/' },
    { if: { os: ['ios', 'android'], country: 'de', language: ['EN', 'de'] }, to: 'https://app.example/' },
  ];
  const SHOWN = [
    { If: { device: ['mobile'], query: { src: ['qr'] } }, To: 'https://m.example/' },
    { If: { os: ['ios', 'android'], country: ['DE'], language: ['en', 'de'] }, To: 'https://app.example/' },
  ];

  test('LinkDetails shows Rules as [{If, To}], every condition\'s value as a list', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createOk(app, code, { url: TARGET, rules: rules(RULES) });
    const link = await details(app, code, short);
    assert.deepEqual(link.Rules, SHOWN);
    for (const rule of link.Rules) assert.deepEqual(Object.keys(rule), ['If', 'To']);
  });

  test('rules arrive as JSON text in the query or a form, and as an array or text in a JSON body', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const posts: [string, string | object][] = [
      ['application/x-www-form-urlencoded', new URLSearchParams({ url: TARGET, short: 'viaform', rules: rules(RULES) }).toString()],
      ['application/json', { url: TARGET, short: 'viajsonarray', rules: RULES }],
      ['application/json', { url: TARGET, short: 'viajsontext', rules: rules(RULES) }],
    ];
    for (const [type, payload] of posts) {
      const response = await app.inject({
        method: 'POST', url: '/v1/link', headers: { ...auth(code), 'content-type': type }, payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
      });
      assert.equal(response.statusCode, 200, `${type}: ${response.body}`);
    }
    await createOk(app, code, { url: TARGET, short: 'viaquery', rules: rules(RULES) });
    for (const short of ['viaform', 'viajsonarray', 'viajsontext', 'viaquery']) {
      assert.deepEqual((await details(app, code, short)).Rules, SHOWN, short);
    }
    // Edit takes them the same ways; a JSON array on edit too.
    const edited = await app.inject({
      method: 'PATCH', url: '/v1/link', headers: auth(code), payload: { short: 'viaquery', rules: [RULES[1]] },
    });
    assert.equal(edited.statusCode, 200, edited.body);
    assert.deepEqual((edited.json() as LinkDetails).Rules, [SHOWN[1]]);
  });

  test('an empty rules on edit clears them (empty text or []); JSON resolve answers the plain Link', async (t) => {
    const { app } = await appFor(t);
    const { code, uid } = await newAccount(app);
    const short = await createOk(app, code, { url: TARGET, rules: rules([{ if: { device: 'mobile' }, to: 'https://m.example/' }]) });

    const resolved = await app.inject({ method: 'GET', url: `/v1/get/${short}`, headers: { 'user-agent': IPHONE } });
    assert.equal(resolved.statusCode, 200);
    assert.deepEqual(Object.keys(resolved.json() as object), LINK_KEYS);
    assert.deepEqual(resolved.json(), { ShortCode: short, PointsTo: TARGET, CreatedBy: uid, Accesses: 1 });

    const cleared = await edit(app, code, { short, rules: '' });
    assert.equal(cleared.statusCode, 200, cleared.body);
    assert.deepEqual((cleared.json() as LinkDetails).Rules, []);
    assert.equal(await locationOf(app, `/${short}`, { 'user-agent': IPHONE }), TARGET);

    assert.equal((await edit(app, code, { short, rules: rules([{ if: { device: 'mobile' }, to: 'https://m.example/' }]) })).statusCode, 200);
    const byArray = await app.inject({ method: 'PATCH', url: '/v1/link', headers: auth(code), payload: { short, rules: [] } });
    assert.equal(byArray.statusCode, 200, byArray.body);
    assert.deepEqual((byArray.json() as LinkDetails).Rules, []);
    // Other edits leave rules alone.
    assert.equal((await edit(app, code, { short, rules: rules([{ if: { device: 'mobile' }, to: 'https://m.example/' }]) })).statusCode, 200);
    assert.equal((await edit(app, code, { short, title: 'Kept rules' })).statusCode, 200);
    assert.equal((await details(app, code, short)).Rules.length, 1);
  });

  test('refuses bad rules with a 400 that names the problem, and creates nothing', async (t) => {
    const { app } = await appFor(t, { blockedHosts: ['blocked.example'] });
    const { code } = await newAccount(app);
    const eleven = Array.from({ length: 11 }, (_, i) => ({ if: { device: 'mobile' }, to: `https://m${i}.example/` }));
    const ten = eleven.slice(0, 10);
    const cases: [unknown, RegExp][] = [
      [[{ if: { browser: 'chrome' }, to: 'https://x.example/' }], /unknown condition "browser"/],
      [[{ if: { device: 'watch' }, to: 'https://x.example/' }], /unknown device "watch"/],
      [[{ if: { device: ['mobile', 'smart-tv'] }, to: 'https://x.example/' }], /unknown device "smart-tv"/],
      [[{ if: { os: 'beos' }, to: 'https://x.example/' }], /unknown os "beos"/],
      [[{ if: {}, to: 'https://x.example/' }], /"if"/],
      [[{ to: 'https://x.example/' }], /"if"/],
      [eleven, /at most 10/],
      [[{ if: { device: 'mobile' }, to: 'https://blocked.example/x' }], /rule 1: links to blocked\.example are not allowed/],
      [[{ if: { device: 'mobile' }, to: `${TEST_BASE_URL}/abc12` }], /rule 1: "to" must not point back at this service/],
      [[{ if: { device: 'mobile' }, to: 'ftp://x.example/' }], /http or https/],
      [[{ if: { device: 'mobile' } }], /"to"/],
      [[{ if: { country: 'Germany' }, to: 'https://x.example/' }], /country "Germany"/],
      [[{ if: { language: 'en-US' }, to: 'https://x.example/' }], /language "en-US"/],
      [{ if: { device: 'mobile' }, to: 'https://x.example/' }, /list/],
    ];
    for (const [value, reason] of cases) {
      const response = await create(app, code, { url: TARGET, rules: rules(value) });
      assertError(response, 400, 'create link');
      assert.match(response.body, reason, JSON.stringify(value));
    }
    assertError(await create(app, code, { url: TARGET, rules: '[{"if": ' }), 400, 'create link');
    assert.equal((await app.inject({ method: 'GET', url: '/v1/links', headers: auth(code) })).json().length, 0);
    // Ten is the most, and fine.
    const short = await createOk(app, code, { url: TARGET, rules: rules(ten) });
    assert.equal((await details(app, code, short)).Rules.length, 10);
    const badEdit = await edit(app, code, { short, rules: rules([{ if: { os: 'beos' }, to: 'https://x.example/' }]) });
    assertError(badEdit, 400, 'update link');
    assert.match(badEdit.body, /unknown os "beos"/);
    assert.equal((await details(app, code, short)).Rules.length, 10, 'a refused edit changes nothing');
  });
});

describe('a routed or protected link is always 302', () => {
  test('with REDIRECT_STATUS=301: a plain link 301, one with rules, forwarding or a password 302', async (t) => {
    const { app } = await appFor(t, { redirectStatus: 301 });
    const { code } = await newAccount(app);
    const plain = await createOk(app, code, { url: TARGET });
    const routed = await createOk(app, code, { url: TARGET, rules: rules([{ if: { device: 'mobile' }, to: 'https://m.example/' }]) });
    const forwarding = await createOk(app, code, { url: TARGET, forward_query: 'true' });
    const locked = await createOk(app, code, { url: TARGET, password: 'correct horse' });

    assert.equal(await locationOf(app, `/${plain}`, {}, 301), TARGET);
    assert.equal(await locationOf(app, `/${routed}`, { 'user-agent': WINDOWS }), TARGET, 'no rule matched: still 302');
    assert.equal(await locationOf(app, `/${routed}`, { 'user-agent': IPHONE }), 'https://m.example/');
    assert.equal(await locationOf(app, `/${forwarding}`), TARGET, 'no query to forward: still 302');
    assert.equal(await locationOf(app, `/${forwarding}?a=1`), `${TARGET}?a=1`);
    const unlocked = await app.inject({
      method: 'POST', url: `/${locked}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'password=correct+horse',
    });
    assert.equal(unlocked.statusCode, 302, unlocked.body);
    assert.equal(unlocked.headers.location, TARGET);

    // Back to plain: back to REDIRECT_STATUS.
    assert.equal((await edit(app, code, { short: routed, rules: '' })).statusCode, 200);
    assert.equal((await edit(app, code, { short: forwarding, forward_query: 'false' })).statusCode, 200);
    assert.equal((await edit(app, code, { short: locked, password: '' })).statusCode, 200);
    for (const short of [routed, forwarding, locked]) assert.equal(await locationOf(app, `/${short}`, {}, 301), TARGET, short);
  });

  test('HEAD of a routed link answers 302 without counting', async (t) => {
    const { app } = await appFor(t, { redirectStatus: 308 });
    const { code } = await newAccount(app);
    const routed = await createOk(app, code, { url: TARGET, forward_query: 'true' });
    const head = await app.inject({ method: 'HEAD', url: `/${routed}?a=1` });
    assert.equal(head.statusCode, 302);
    assert.equal(head.headers.location, `${TARGET}?a=1`);
    assert.equal((await details(app, code, routed)).Accesses, 0);
  });
});
