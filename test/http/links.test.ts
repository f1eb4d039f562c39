import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { newAccount, TEST_BASE_URL } from '../helpers/app.ts';
import {
  accessesOf,
  appFor,
  assertError,
  createLink,
  createLinkOk,
  deleteLink,
  HTML,
  JSON_TYPE,
  LINK_KEYS,
  listen,
  listLinks,
  rawRequest,
  resolve,
  sharedApp,
  TEXT,
  type LinkJson,
} from './support.ts';

const TARGET = 'https://example.com/landing?x=1';

/** A link the account already holds, so "nothing was written" can be told from "list was empty". */
async function accountWithOneLink(app: FastifyInstance) {
  const account = await newAccount(app);
  await createLinkOk(app, account.code, { url: 'https://example.org/existing' });
  const before = await listLinks(app, account.code);
  return { ...account, before };
}

describe('creating a link', () => {
  const ways: Array<[string, (code: string) => InjectOptions]> = [
    ['GET with query parameters', (code) => ({ method: 'GET', url: '/v1/link', query: { url: TARGET, auth: code } })],
    ['POST with query parameters', (code) => ({ method: 'POST', url: '/v1/link', query: { url: TARGET, auth: code } })],
    [
      'POST with a JSON body',
      (code) => ({
        method: 'POST',
        url: '/v1/link',
        headers: { authorization: `Bearer ${code}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ url: TARGET }),
      }),
    ],
    [
      'POST with a form body',
      (code) => ({
        method: 'POST',
        url: '/v1/link',
        headers: { authorization: code, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ url: TARGET }).toString(),
      }),
    ],
  ];
  for (const [name, build] of ways) {
    test(`${name} answers the short URL as plain text and stores the link`, async (t) => {
      const { app } = await appFor(t);
      const { code, uid } = await newAccount(app);

      const response = await app.inject(build(code));

      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['content-type'], TEXT);
      assert.match(response.body, /^http:\/\/sl\.test\/[A-Za-z0-9]{6}$/);
      const shortCode = response.body.slice(`${TEST_BASE_URL}/`.length);
      const listed = await listLinks(app, code);
      assert.deepEqual(listed, [{
        ShortCode: shortCode, PointsTo: TARGET, CreatedBy: uid, Accesses: 0, DateCreated: listed[0]!.DateCreated,
        Title: null, Tags: [], ExpiresAt: null, MaxVisits: null, Domain: null, ForwardQuery: false, Protected: false, Rules: [],
      }]);
    });
  }

  test('POST with a JSON body may take url and short from the body with a charset in the content type', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const response = await app.inject({
      method: 'POST',
      url: '/v1/link',
      headers: { authorization: `Bearer ${code}`, 'content-type': 'application/json; charset=utf-8' },
      payload: JSON.stringify({ url: TARGET, short: 'from-json' }),
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.body, 'http://sl.test/from-json');
  });

  test('generates distinct 6-character alphanumeric codes', async (t) => {
    const { app } = await appFor(t, { defaultMaxLinks: 50 });
    const { code } = await newAccount(app);
    const codes = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const shortCode = await createLinkOk(app, code, { url: `https://example.com/${i}` });
      assert.match(shortCode, /^[A-Za-z0-9]{6}$/);
      codes.add(shortCode);
    }
    assert.equal(codes.size, 40);
  });

  test('treats an empty short as omitted and generates a code', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    assert.match(await createLinkOk(app, code, { url: TARGET, short: '' }), /^[A-Za-z0-9]{6}$/);
    const json = await app.inject({
      method: 'POST',
      url: '/v1/link',
      headers: { authorization: code, 'content-type': 'application/json' },
      payload: JSON.stringify({ url: TARGET, short: '' }),
    });
    assert.match(json.body, /^http:\/\/sl\.test\/[A-Za-z0-9]{6}$/);
  });

  test('keeps a custom code exactly, with every unreserved punctuation character', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const response = await createLink(app, code, { url: TARGET, short: 'My-Code.x_y~Z' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.body, 'http://sl.test/My-Code.x_y~Z');
    assert.equal((await listLinks(app, code))[0]!.ShortCode, 'My-Code.x_y~Z');
  });

  test('treats custom codes as case-sensitive: AbCdE and abcde are two links', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://upper.example/', short: 'AbCdE' });
    await createLinkOk(app, code, { url: 'https://lower.example/', short: 'abcde' });
    assert.equal(((await resolve(app, 'AbCdE')).json() as LinkJson).PointsTo, 'https://upper.example/');
    assert.equal(((await resolve(app, 'abcde')).json() as LinkJson).PointsTo, 'https://lower.example/');
    assert.equal((await resolve(app, 'ABCDE')).statusCode, 404);
  });

  test('accepts custom codes of exactly 5 and exactly 2000 characters', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    assert.equal(await createLinkOk(app, code, { url: TARGET, short: 'five5' }), 'five5');
    const long = 'L'.repeat(2000);
    assert.equal(await createLinkOk(app, code, { url: TARGET, short: long }), long);
  });

  const oddButValid = [
    'https://bücher.example/ä?q=ü',
    'https://例え.jp/パス',
    'https://example.com/😀/x?y=🎉#frag',
    'HTTPS://Example.COM:443/A/../B?x=1#Frag',
    'http://example.com',
    'http://127.0.0.1:8080/path',
    'http://[::1]:3000/',
    'https://example.com/%7Euser?q=a+b&r=%20&s=%E2%82%AC',
    'https://example.com/a;b,c!d$e\'f(g)h*i',
    // Another port on the service's host is another service (issue 13 item 12 refuses only the
    // own and default ports, under either scheme).
    'https://sl.test:8443/other-port-same-host',
    'http://sl.test.example/lookalike',
  ];
  for (const url of oddButValid) {
    test(`stores the url ${JSON.stringify(url)} exactly as given`, async (t) => {
      const { app } = await appFor(t);
      const { code } = await newAccount(app);
      const viaQuery = await createLinkOk(app, code, { url });
      const viaJson = await app.inject({
        method: 'POST',
        url: '/v1/link',
        headers: { authorization: code, 'content-type': 'application/json' },
        payload: JSON.stringify({ url }),
      });
      assert.equal(viaJson.statusCode, 200, viaJson.body);
      const links = await listLinks(app, code);
      assert.deepEqual(links.map((l) => l.PointsTo), [url, url]);
      assert.equal(((await resolve(app, viaQuery)).json() as LinkJson).PointsTo, url);
    });
  }

  test('accepts a url of exactly 2000 characters', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const url = `https://e.example/${'a'.repeat(2000 - 'https://e.example/'.length)}`;
    assert.equal(url.length, 2000);
    const shortCode = await createLinkOk(app, code, { url });
    assert.equal(((await resolve(app, shortCode)).json() as LinkJson).PointsTo, url);
  });

  test('counts astral characters in a url as one each: 2000 emoji-laden code points are accepted', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const prefix = 'https://e.example/';
    const url = prefix + '😀'.repeat(2000 - prefix.length);
    assert.equal([...url].length, 2000);
    assert.ok(url.length > 2000, 'more than 2000 UTF-16 units');
    const response = await app.inject({
      method: 'POST',
      url: '/v1/link',
      headers: { authorization: code, 'content-type': 'application/json' },
      payload: JSON.stringify({ url }),
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal((await listLinks(app, code))[0]!.PointsTo, url);
  });
});

describe('refusing a bad create', () => {
  const prefix = 'https://e.example/';
  const cases: Array<[string, (code: string) => InjectOptions]> = [];
  const viaQuery = (name: string, params: Record<string, string>) =>
    cases.push([name, (code) => ({ method: 'GET', url: '/v1/link', query: { ...params, auth: code } })]);
  const viaRawQuery = (name: string, query: string) =>
    cases.push([name, (code) => ({ method: 'GET', url: `/v1/link?${query}`, headers: { authorization: code } })]);
  const viaJson = (name: string, body: string, query = '') =>
    cases.push([
      name,
      (code) => ({
        method: 'POST',
        url: `/v1/link${query}`,
        headers: { authorization: code, 'content-type': 'application/json' },
        payload: body,
      }),
    ]);

  viaQuery('a missing url', { short: 'abcdef' });
  viaQuery('an empty url', { url: '' });
  viaQuery('a url of 2001 characters', { url: prefix + 'a'.repeat(2001 - prefix.length) });
  viaJson('a url of 2001 code points made of astral characters', JSON.stringify({ url: prefix + '😀'.repeat(2001 - prefix.length) }));
  viaJson('a url with a lone surrogate (not well-formed Unicode)', JSON.stringify({ url: `${prefix}\ud800x` }));
  viaQuery('a relative url', { url: '/just/a/path' });
  viaQuery('a url without a scheme', { url: 'example.com/page' });
  viaQuery('a scheme-relative url', { url: '//example.com/page' });
  viaQuery('a javascript: url', { url: 'javascript:alert(1)' });
  viaQuery('a data: url', { url: 'data:text/html,<script>alert(1)</script>' });
  viaQuery('an ftp: url', { url: 'ftp://example.com/file' });
  viaQuery('a file: url', { url: 'file:///etc/passwd' });
  viaQuery('a mailto: url', { url: 'mailto:someone@example.com' });
  viaQuery('an http url without a host', { url: 'http://' });
  viaQuery('a url with a space inside', { url: 'https://example.com/a b' });
  viaQuery('a url with a leading space', { url: ' https://example.com/' });
  viaQuery('a url with a trailing space', { url: 'https://example.com/ ' });
  viaQuery('a url with a tab', { url: 'https://example.com/a\tb' });
  viaQuery('a url with a newline', { url: 'https://example.com/a\nb' });
  viaQuery('a url with a NUL character', { url: 'https://example.com/a\u0000b' });
  viaQuery('a url with a DEL character', { url: 'https://example.com/a\u007fb' });
  viaQuery('a url with a no-break space', { url: 'https://example.com/a\u00a0b' });
  viaQuery('a url with a line separator', { url: 'https://example.com/a\u2028b' });
  viaQuery('a url pointing at the service itself', { url: 'http://sl.test/abcdef' });
  viaQuery('a url pointing at the service root', { url: 'http://sl.test' });
  viaQuery('a url pointing at the service in another spelling', { url: 'HTTP://SL.TEST:80/x' });
  viaQuery('a url pointing at the service under the other scheme', { url: 'https://sl.test/other-scheme-same-host' });
  viaQuery('a url pointing at the service with a trailing dot', { url: 'http://sl.test./x' });
  viaQuery('a short of 4 characters', { url: TARGET, short: 'abcd' });
  viaQuery('a short with a slash', { url: TARGET, short: 'abc/def' });
  viaQuery('a short with a space', { url: TARGET, short: 'abc def' });
  viaQuery('a short with a percent sign', { url: TARGET, short: 'abc%20def' });
  viaQuery('a short with a question mark', { url: TARGET, short: 'abc?def' });
  viaQuery('a short with a non-ASCII letter', { url: TARGET, short: 'abcdé' });
  viaQuery('a short with an emoji', { url: TARGET, short: 'abc😀de' });
  viaQuery('a short of 2001 characters', { url: TARGET, short: 'a'.repeat(2001) });
  for (const reserved of ['healthz', 'HEALTHZ', 'favicon.ico', 'robots.txt', 'openapi.json', 'Metrics']) {
    viaQuery(`the reserved short ${reserved}`, { url: TARGET, short: reserved });
  }
  viaRawQuery('url given twice in the query', 'url=https%3A%2F%2Fa.example%2F&url=https%3A%2F%2Fb.example%2F');
  viaRawQuery('the same url given twice in the query', 'url=https%3A%2F%2Fa.example%2F&url=https%3A%2F%2Fa.example%2F');
  viaRawQuery('short given twice in the query', 'url=https%3A%2F%2Fa.example%2F&short=first&short=second');
  viaJson('url in both the query and a JSON body', JSON.stringify({ url: TARGET }), '?url=https%3A%2F%2Fa.example%2F');
  cases.push([
    'url in both the query and a form body',
    (code) => ({
      method: 'POST',
      url: '/v1/link?url=https%3A%2F%2Fa.example%2F',
      headers: { authorization: code, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'url=https%3A%2F%2Fb.example%2F',
    }),
  ]);
  cases.push([
    'url given twice in a form body',
    (code) => ({
      method: 'POST',
      url: '/v1/link',
      headers: { authorization: code, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'url=https%3A%2F%2Fa.example%2F&url=https%3A%2F%2Fb.example%2F',
    }),
  ]);
  viaJson('a JSON url that is a number', '{"url":42}');
  viaJson('a JSON url that is an object', '{"url":{"href":"https://example.com/"}}');
  viaJson('a JSON url that is an array', '{"url":["https://example.com/"]}');
  viaJson('a JSON url that is null', '{"url":null}');
  viaJson('a JSON short that is a number', `{"url":${JSON.stringify(TARGET)},"short":12345}`);
  viaJson('a JSON body that is an array', `[${JSON.stringify({ url: TARGET })}]`);
  viaJson('a JSON body that is a string', JSON.stringify(TARGET), '?url=https%3A%2F%2Fa.example%2F');
  viaJson('a malformed JSON body', '{"url": "https://example.com/"');

  // One app for all the cases: each makes its own account, and checks only that account.
  const shared = sharedApp({ defaultMaxLinks: 2 });
  for (const [name, build] of cases) {
    test(`refuses ${name} with 400 and writes nothing`, async () => {
      const { app } = shared();
      const { code, before } = await accountWithOneLink(app);

      const response = await app.inject(build(code));

      assertError(response, 400, 'create link');
      assert.deepEqual(await listLinks(app, code), before);
      // The refused request took no slot: the account can still fill its cap of 2.
      await createLinkOk(app, code, { url: TARGET });
    });
  }
});

describe('taken shortcodes and the link cap', () => {
  test('refuses a shortcode the same account already holds with 409', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://first.example/', short: 'taken' });
    const response = await createLink(app, code, { url: 'https://second.example/', short: 'taken' });
    assertError(response, 409, 'create link');
    assert.deepEqual((await listLinks(app, code)).map((l) => l.PointsTo), ['https://first.example/']);
  });

  test('refuses a shortcode held by another account with 409', async (t) => {
    const { app } = await appFor(t);
    const owner = await newAccount(app);
    const other = await newAccount(app);
    await createLinkOk(app, owner.code, { url: 'https://first.example/', short: 'taken' });
    assertError(await createLink(app, other.code, { url: 'https://second.example/', short: 'taken' }), 409, 'create link');
    assert.deepEqual(await listLinks(app, other.code), []);
    assert.equal(((await resolve(app, 'taken')).json() as LinkJson).PointsTo, 'https://first.example/');
  });

  test('a refused taken shortcode does not use up a slot', async (t) => {
    const { app } = await appFor(t, { defaultMaxLinks: 2 });
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: TARGET, short: 'taken' });
    for (let i = 0; i < 3; i++) assert.equal((await createLink(app, code, { url: TARGET, short: 'taken' })).statusCode, 409);
    await createLinkOk(app, code, { url: TARGET });
  });

  test('refuses a link beyond MaxLinks with 403 and keeps what is held', async (t) => {
    const { app } = await appFor(t, { defaultMaxLinks: 2 });
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://one.example/' });
    await createLinkOk(app, code, { url: 'https://two.example/', short: 'second' });
    assertError(await createLink(app, code, { url: 'https://three.example/' }), 403, 'create link');
    assertError(await createLink(app, code, { url: 'https://three.example/', short: 'third' }), 403, 'create link');
    assert.equal((await listLinks(app, code)).length, 2);
    assert.equal((await resolve(app, 'third')).statusCode, 404);
  });

  test('the cap is per account: another account can still create', async (t) => {
    const { app } = await appFor(t, { defaultMaxLinks: 1 });
    const full = await newAccount(app);
    const fresh = await newAccount(app);
    await createLinkOk(app, full.code, { url: TARGET });
    assert.equal((await createLink(app, full.code, { url: TARGET })).statusCode, 403);
    await createLinkOk(app, fresh.code, { url: TARGET });
  });

  test('deleting a link frees its slot', async (t) => {
    const { app } = await appFor(t, { defaultMaxLinks: 2 });
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: TARGET, short: 'first' });
    await createLinkOk(app, code, { url: TARGET, short: 'second' });
    assert.equal((await createLink(app, code, { url: TARGET })).statusCode, 403);
    assert.equal((await deleteLink(app, code, 'first')).statusCode, 200);
    await createLinkOk(app, code, { url: TARGET, short: 'third' });
    assert.equal((await createLink(app, code, { url: TARGET })).statusCode, 403);
  });

  test('checks the cap before uniqueness: an account at its cap asking for a taken code gets 403', async (t) => {
    const { app } = await appFor(t, { defaultMaxLinks: 2 });
    const full = await newAccount(app);
    const other = await newAccount(app);
    await createLinkOk(app, other.code, { url: TARGET, short: 'taken' });
    await createLinkOk(app, full.code, { url: TARGET });
    await createLinkOk(app, full.code, { url: TARGET });
    assertError(await createLink(app, full.code, { url: TARGET, short: 'taken' }), 403, 'create link');
  });

  test('checks parameters before the cap: an account at its cap sending a bad url gets 400', async (t) => {
    const { app } = await appFor(t, { defaultMaxLinks: 1 });
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: TARGET });
    assertError(await createLink(app, code, { url: 'ftp://example.com/' }), 400, 'create link');
  });

  test('MaxLinks 0 refuses every create with 403', async (t) => {
    const { app } = await appFor(t, { defaultMaxLinks: 0 });
    const { code } = await newAccount(app);
    assertError(await createLink(app, code, { url: TARGET }), 403, 'create link');
  });
});

describe('a 2000-character custom shortcode', () => {
  test('can be created, resolved, followed and deleted through inject', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const long = `${'Ab9-._~'.repeat(285)}xxxxx`;
    assert.equal(long.length, 2000);
    assert.equal(await createLinkOk(app, code, { url: TARGET, short: long }), long);

    const resolved = await app.inject({ method: 'GET', url: `/v1/get/${long}` });
    assert.equal(resolved.statusCode, 200, resolved.body);
    assert.equal((resolved.json() as LinkJson).ShortCode, long);

    const followed = await app.inject({ method: 'GET', url: `/${long}` });
    assert.equal(followed.statusCode, 302);
    assert.equal(followed.headers.location, new URL(TARGET).href);

    assert.equal((await deleteLink(app, code, long)).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: `/v1/get/${long}` })).statusCode, 404);
  });

  test('can be created, resolved, followed and deleted over a real socket (no 414)', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const long = 'z'.repeat(2000);
    const target = await listen(app);
    const auth = ['Authorization', `Bearer ${code}`];

    const created = await rawRequest(target, 'GET', `/v1/link?url=${encodeURIComponent(TARGET)}&short=${long}`, auth);
    assert.equal(created.status, 200, created.body);
    assert.equal(created.body, `http://sl.test/${long}`);
    const resolved = await rawRequest(target, 'GET', `/v1/get/${long}`);
    assert.equal(resolved.status, 200);
    assert.equal((JSON.parse(resolved.body) as LinkJson).Accesses, 1);
    const followed = await rawRequest(target, 'GET', `/${long}`);
    assert.equal(followed.status, 302);
    assert.equal(followed.headers.location, new URL(TARGET).href);
    const deleted = await rawRequest(target, 'DELETE', `/v1/link?short=${long}`, auth);
    assert.equal(deleted.status, 200, deleted.body);
    assert.equal(deleted.body, 'Success');
    assert.equal((await rawRequest(target, 'GET', `/v1/get/${long}`)).status, 404);
  });
});

describe('methods and bodies the create endpoint refuses', () => {
  test('HEAD /v1/link is 405 with an Allow header and creates nothing', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const response = await app.inject({ method: 'HEAD', url: '/v1/link', query: { url: TARGET, auth: code } });
    assert.equal(response.statusCode, 405);
    assert.equal(response.headers['content-type'], TEXT);
    assert.match(String(response.headers.allow), /GET/);
    assert.doesNotMatch(String(response.headers.allow), /HEAD/);
    assert.deepEqual(await listLinks(app, code), []);
  });

  for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x']) {
    test(`refuses a ${type} body with 415 in plain text`, async (t) => {
      const { app } = await appFor(t);
      const { code } = await newAccount(app);
      const response = await app.inject({
        method: 'POST',
        url: '/v1/link',
        headers: { authorization: code, 'content-type': type },
        payload: type === 'application/xml' ? `<url>${TARGET}</url>` : `url=${TARGET}`,
      });
      assertError(response, 415, 'create link');
      assert.deepEqual(await listLinks(app, code), []);
    });
  }

  test('refuses a body over the limit with 413 in plain text', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const response = await app.inject({
      method: 'POST',
      url: '/v1/link',
      headers: { authorization: code, 'content-type': 'application/json' },
      payload: JSON.stringify({ url: TARGET, padding: 'x'.repeat(100 * 1024) }),
    });
    assertError(response, 413, 'create link');
    assert.deepEqual(await listLinks(app, code), []);
  });

  test('refuses a form body over the limit with 413 in plain text', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const response = await app.inject({
      method: 'POST',
      url: '/v1/link',
      headers: { authorization: code, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `url=${encodeURIComponent(TARGET)}&padding=${'x'.repeat(100 * 1024)}`,
    });
    assertError(response, 413, 'create link');
  });
});

describe('listing links', () => {
  test('answers [] for an account without links', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const response = await app.inject({ method: 'GET', url: '/v1/links', query: { auth: code } });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], JSON_TYPE);
    assert.equal(response.body, '[]');
  });

  test('lists the links oldest first with keys in contract order', async (t) => {
    const { app } = await appFor(t);
    const { code, uid } = await newAccount(app);
    for (const short of ['zzzzz', 'aaaaa', 'mmmmm']) await createLinkOk(app, code, { url: `https://${short}.example/`, short });
    const response = await app.inject({ method: 'GET', url: '/v1/links', headers: { authorization: code } });
    const links = response.json() as LinkJson[];
    assert.deepEqual(links.map((l) => l.ShortCode), ['zzzzz', 'aaaaa', 'mmmmm']);
    for (const link of links) {
      assert.deepEqual(Object.keys(link), [...LINK_KEYS, 'DateCreated', 'Title', 'Tags', 'ExpiresAt', 'MaxVisits', 'Domain', 'ForwardQuery', 'Protected', 'Rules']);
      assert.equal(link.CreatedBy, uid);
      assert.equal(link.PointsTo, `https://${link.ShortCode}.example/`);
    }
    assert.match(response.body, /^\[\{"ShortCode":"zzzzz","PointsTo":"https:\/\/zzzzz\.example\/","CreatedBy":\d+,"Accesses":0,"DateCreated":"[^"]+","Title":null,"Tags":\[\],"ExpiresAt":null,"MaxVisits":null,"Domain":null,"ForwardQuery":false,"Protected":false,"Rules":\[\]\},/);
  });

  test('keeps creation order after a delete and a re-create', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    for (const short of ['first', 'second', 'third']) await createLinkOk(app, code, { url: TARGET, short });
    await deleteLink(app, code, 'first');
    await createLinkOk(app, code, { url: TARGET, short: 'first' });
    assert.deepEqual((await listLinks(app, code)).map((l) => l.ShortCode), ['second', 'third', 'first']);
  });

  test('lists only the caller\'s own links', async (t) => {
    const { app } = await appFor(t);
    const alice = await newAccount(app);
    const bob = await newAccount(app);
    await createLinkOk(app, alice.code, { url: TARGET, short: 'alice-1' });
    await createLinkOk(app, bob.code, { url: TARGET, short: 'bob-1' });
    await createLinkOk(app, alice.code, { url: TARGET, short: 'alice-2' });
    assert.deepEqual((await listLinks(app, alice.code)).map((l) => l.ShortCode), ['alice-1', 'alice-2']);
    assert.deepEqual((await listLinks(app, bob.code)).map((l) => [l.ShortCode, l.CreatedBy]), [['bob-1', bob.uid]]);
  });

  test('shows current access counts and does not count an access itself', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: TARGET, short: 'counted' });
    await resolve(app, 'counted');
    await resolve(app, 'counted');
    await app.inject({ method: 'GET', url: '/counted' });
    assert.equal((await listLinks(app, code))[0]!.Accesses, 3);
    assert.equal((await listLinks(app, code))[0]!.Accesses, 3);
  });
});

describe('deleting a link', () => {
  test('answers 200 Success in plain text and removes the link', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: TARGET, short: 'doomed' });
    await createLinkOk(app, code, { url: TARGET, short: 'stays' });
    const response = await app.inject({ method: 'DELETE', url: `/v1/link?short=doomed&auth=${code}` });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], TEXT);
    assert.equal(response.body, 'Success');
    assert.deepEqual((await listLinks(app, code)).map((l) => l.ShortCode), ['stays']);
  });

  test('refuses a delete without short with 400', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    assertError(await app.inject({ method: 'DELETE', url: `/v1/link?auth=${code}` }), 400, 'delete link');
    assertError(await app.inject({ method: 'DELETE', url: `/v1/link?short=&auth=${code}` }), 400, 'delete link');
  });

  test('refuses short given twice with 400 and deletes nothing', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: TARGET, short: 'one-1' });
    await createLinkOk(app, code, { url: TARGET, short: 'two-2' });
    const response = await app.inject({ method: 'DELETE', url: `/v1/link?short=one-1&short=two-2&auth=${code}` });
    assertError(response, 400, 'delete link');
    assert.equal((await listLinks(app, code)).length, 2);
  });

  test('answers 404 for an unknown shortcode', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    assertError(await deleteLink(app, code, 'nosuchcode'), 404, 'delete link');
  });

  for (const [name, short] of [
    ['of one character, unknown', 'q'],
    ['3000 characters long', 'a'.repeat(3000)],
    ['full of forbidden characters', 'a/b c%d'],
    ['non-ASCII', 'abcdé'],
  ] as const) {
    test(`answers 404 for a shortcode that could never exist (${name})`, async (t) => {
      const { app } = await appFor(t);
      const { code } = await newAccount(app);
      assertError(await deleteLink(app, code, short), 404, 'delete link');
    });
  }

  test('refuses to delete another account\'s link with 403, and the link still resolves', async (t) => {
    const { app } = await appFor(t);
    const owner = await newAccount(app);
    const intruder = await newAccount(app);
    await createLinkOk(app, owner.code, { url: TARGET, short: 'owned' });

    assertError(await deleteLink(app, intruder.code, 'owned'), 403, 'delete link');

    const resolved = await resolve(app, 'owned');
    assert.equal(resolved.statusCode, 200);
    assert.equal((resolved.json() as LinkJson).CreatedBy, owner.uid);
    assert.equal((await listLinks(app, owner.code)).length, 1);
  });

  test('a deleted shortcode answers 404 on resolve and redirect, and can be created again', async (t) => {
    const { app } = await appFor(t);
    const first = await newAccount(app);
    const second = await newAccount(app);
    await createLinkOk(app, first.code, { url: 'https://old.example/', short: 'recycled' });
    await resolve(app, 'recycled');
    assert.equal((await deleteLink(app, first.code, 'recycled')).statusCode, 200);

    assertError(await resolve(app, 'recycled'), 404, 'resolve link');
    const redirect = await app.inject({ method: 'GET', url: '/recycled' });
    assert.equal(redirect.statusCode, 404);
    assert.equal(redirect.headers['content-type'], HTML);
    assertError(await deleteLink(app, first.code, 'recycled'), 404, 'delete link');

    await createLinkOk(app, second.code, { url: 'https://new.example/', short: 'recycled' });
    const link = (await resolve(app, 'recycled')).json() as LinkJson;
    assert.deepEqual(link, { ShortCode: 'recycled', PointsTo: 'https://new.example/', CreatedBy: second.uid, Accesses: 1 });
    assert.equal(await accessesOf(app, second.code, 'recycled'), 1);
  });
});
