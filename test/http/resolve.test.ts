import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { newAccount } from '../helpers/app.ts';
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

const TARGET = 'https://example.com/page?x=1';

// The first two suites share one app: each test makes its own account and links (the fixed
// shortcodes are each used once), and asks only about those.
const shared = sharedApp();

describe('GET /v1/get/{shortcode}', () => {
  test('answers the Link as JSON, counting this resolution: 1 first, then 2', async () => {
    const { app } = shared();
    const { code, uid } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: TARGET });

    const first = await app.inject({ method: 'GET', url: `/v1/get/${short}` });
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['content-type'], JSON_TYPE);
    assert.deepEqual(Object.keys(first.json() as object), LINK_KEYS);
    assert.equal(first.body, `{"ShortCode":"${short}","PointsTo":"${TARGET}","CreatedBy":${uid},"Accesses":1}`);

    const second = await app.inject({ method: 'GET', url: `/v1/get/${short}` });
    assert.equal((second.json() as LinkJson).Accesses, 2);
  });

  test('needs no credentials and ignores any that are sent', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: TARGET });
    const response = await app.inject({ method: 'GET', url: `/v1/get/${short}`, headers: { authorization: 'Basic nonsense' } });
    assert.equal(response.statusCode, 200);
  });

  test('counts resolutions per link', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    const a = await createLinkOk(app, code, { url: TARGET, short: 'link-a' });
    const b = await createLinkOk(app, code, { url: TARGET, short: 'link-b' });
    for (let i = 0; i < 3; i++) await resolve(app, a);
    assert.equal(((await resolve(app, b)).json() as LinkJson).Accesses, 1);
    assert.equal(((await resolve(app, a)).json() as LinkJson).Accesses, 4);
  });

  test('hands concurrent resolutions distinct counts', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: TARGET });
    const answers = await Promise.all(Array.from({ length: 20 }, () => resolve(app, short)));
    const counts = answers.map((r) => (r.json() as LinkJson).Accesses).sort((x, y) => x - y);
    assert.deepEqual(counts, Array.from({ length: 20 }, (_, i) => i + 1));
  });

  test('answers an unknown shortcode with 404 in plain text', async () => {
    const { app } = shared();
    for (const short of ['nosuchlink', 'ab', 'x'.repeat(2001), 'a%2Fb']) {
      assertError(await app.inject({ method: 'GET', url: `/v1/get/${short}` }), 404, 'resolve link');
    }
  });

  test('HEAD answers 200 like GET but does not count', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: TARGET });

    for (let i = 0; i < 3; i++) {
      const head = await app.inject({ method: 'HEAD', url: `/v1/get/${short}` });
      assert.equal(head.statusCode, 200);
      assert.equal(head.headers['content-type'], JSON_TYPE);
      assert.equal(head.body, '');
    }

    assert.equal(((await resolve(app, short)).json() as LinkJson).Accesses, 1);
  });

  test('HEAD on an unknown shortcode answers 404', async () => {
    const { app } = shared();
    const response = await app.inject({ method: 'HEAD', url: '/v1/get/nosuchlink' });
    assert.equal(response.statusCode, 404);
    assert.equal(response.headers['content-type'], TEXT);
  });

  test('finds a code whose unreserved characters are percent-encoded in the path', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: TARGET, short: 'a.b~c' });
    const response = await app.inject({ method: 'GET', url: '/v1/get/a%2Eb%7Ec' });
    assert.equal(response.statusCode, 200);
    assert.equal((response.json() as LinkJson).ShortCode, 'a.b~c');
  });

  const weirdPaths = [
    '/v1/get/%',
    '/v1/get/%zz',
    '/v1/get/%E0%A4%A',
    '/v1/get/%C0%AF',
    '/v1/get/%FF%FE',
    '/v1/get/%00',
    '/v1/get/%00abcdef',
    '/v1/get/..',
    '/v1/get/..%2F..%2Fetc%2Fpasswd',
    '/v1/get/abc%2Fdef',
    '/v1/get/%F0%9F%98%80%F0%9F%98%80',
    '/v1/get/',
    '/v1/get//',
    '/v1/get/abcdef/extra',
    '/v1/get/abcdef?%=%&&=',
    `/v1/get/${'a'.repeat(9000)}`,
    '/v1/get/%ED%A0%80abcde',
    '/v1/get/abc%0D%0ASet-Cookie:x=1',
  ];
  for (const path of weirdPaths) {
    test(`never fails with 5xx on the odd path ${JSON.stringify(path.slice(0, 40))}`, async () => {
      const { app } = shared();
      for (const method of ['GET', 'HEAD'] as const) {
        const response = await app.inject({ method, url: path });
        assert.ok(response.statusCode >= 400 && response.statusCode < 500, `${method} ${path} → ${response.statusCode}`);
        assert.equal(response.headers['content-type'], TEXT);
        if (method === 'GET') assert.match(response.body, /^Unable to (resolve link|handle request): [^\r\n]+$/);
      }
    });
  }
});

describe('GET /{shortcode}', () => {
  test('redirects with 302 to the target, uncached, and counts one access', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: TARGET });

    const response = await app.inject({ method: 'GET', url: `/${short}` });

    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, TARGET);
    assert.equal(response.headers['cache-control'], 'private, no-cache');
    assert.equal(await accessesOf(app, code, short), 1);
    assert.equal(((await resolve(app, short)).json() as LinkJson).Accesses, 2);
  });

  const targets: Array<[string, string, string]> = [
    ['an IDN host with non-ASCII path and query', 'https://bücher.example/ä?q=ü', 'https://xn--bcher-kva.example/%C3%A4?q=%C3%BC'],
    ['an emoji path', 'https://example.com/😀/x', 'https://example.com/%F0%9F%98%80/x'],
    ['a host without a trailing slash', 'http://example.com', 'http://example.com/'],
    ['upper-case scheme and host with a default port', 'HTTPS://Example.COM:443/A/../B', 'https://example.com/B'],
    ['a fragment', 'https://example.com/doc#Section-2', 'https://example.com/doc#Section-2'],
  ];
  for (const [name, pointsTo, location] of targets) {
    test(`sends an ASCII Location for ${name}`, async () => {
      const { app } = shared();
      const { code } = await newAccount(app);
      const short = await createLinkOk(app, code, { url: pointsTo });

      const response = await app.inject({ method: 'GET', url: `/${short}` });

      assert.equal(response.statusCode, 302);
      assert.equal(response.headers.location, new URL(pointsTo).href);
      assert.equal(response.headers.location, location);
      assert.match(String(response.headers.location), /^[\x21-\x7e]+$/);
      // The stored target stays exactly as given.
      assert.equal(((await resolve(app, short)).json() as LinkJson).PointsTo, pointsTo);
    });
  }

  test('sends the punycode Location over a real socket too', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: 'https://bücher.example/ä?q=ü' });
    const response = await rawRequest(await listen(app), 'GET', `/${short}`);
    assert.equal(response.status, 302);
    assert.equal(response.headers.location, 'https://xn--bcher-kva.example/%C3%A4?q=%C3%BC');
  });

  test('HEAD answers 302 with the same Location but does not count', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: TARGET });

    for (let i = 0; i < 3; i++) {
      const head = await app.inject({ method: 'HEAD', url: `/${short}` });
      assert.equal(head.statusCode, 302);
      assert.equal(head.headers.location, TARGET);
      assert.equal(head.headers['cache-control'], 'private, no-cache');
    }

    assert.equal(await accessesOf(app, code, short), 0);
    assert.equal(((await resolve(app, short)).json() as LinkJson).Accesses, 1);
  });

  test('answers an unknown shortcode with a 404 HTML page', async () => {
    const { app } = shared();
    for (const path of ['/nosuchlink', '/ab', '/%E0%A4%A', `/${'q'.repeat(9000)}`, '/a%20b']) {
      const response = await app.inject({ method: 'GET', url: path });
      assert.equal(response.statusCode, 404, path);
      assert.equal(response.headers['content-type'], HTML, path);
      assert.match(response.body, /^<!doctype html>/i);
      assert.match(response.body, /<\/html>\s*$/);
    }
  });

  test('HEAD on an unknown shortcode answers 404 without counting anything', async () => {
    const { app } = shared();
    const response = await app.inject({ method: 'HEAD', url: '/nosuchlink' });
    assert.equal(response.statusCode, 404);
  });

  test('is case-sensitive: a code in the wrong case is unknown', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: TARGET, short: 'MixedCase' });
    assert.equal((await app.inject({ method: 'GET', url: '/mixedcase' })).statusCode, 404);
    assert.equal((await app.inject({ method: 'GET', url: '/MixedCase' })).statusCode, 302);
  });

  test('keeps the query string of the short URL out of the lookup', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: TARGET });
    const response = await app.inject({ method: 'GET', url: `/${short}?utm_source=mail` });
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, TARGET);
  });
});

describe('imported short codes (1-4 characters)', () => {
  // Codes other shorteners hand out (YOURLS `1`, `2a`, `ozh`; Shlink and Bitly 3-4
  // characters): only `shortlink import` writes them, so the test puts them in the store.
  const IMPORTED = ['1', 'a', '~', '2a', 'ozh', 'Ab-4'];

  async function withImported(t: TestContext) {
    const testApp = await appFor(t);
    const owner = await newAccount(testApp.app);
    for (const [i, shortCode] of IMPORTED.entries()) {
      const result = await testApp.store.createLink({
        shortCode, pointsTo: `${TARGET}&n=${i}`, createdBy: owner.uid, dateCreated: new Date().toISOString(),
      });
      assert.equal(result, 'created');
    }
    return { ...testApp, owner };
  }

  test('resolve through GET and HEAD /v1/get/{code}, counting only GET', async (t) => {
    const { app } = await withImported(t);
    for (const [i, short] of IMPORTED.entries()) {
      const head = await app.inject({ method: 'HEAD', url: `/v1/get/${short}` });
      assert.equal(head.statusCode, 200, short);
      const response = await resolve(app, short);
      assert.equal(response.statusCode, 200, short);
      assert.deepEqual(response.json(), { ...(response.json() as LinkJson), ShortCode: short, PointsTo: `${TARGET}&n=${i}`, Accesses: 1 });
    }
  });

  test('redirect from GET /{code} (HEAD without counting), while / stays the web UI', async (t) => {
    const { app, owner } = await withImported(t);
    for (const [i, short] of IMPORTED.entries()) {
      const head = await app.inject({ method: 'HEAD', url: `/${short}` });
      assert.equal(head.statusCode, 302, short);
      const response = await app.inject({ method: 'GET', url: `/${short}` });
      assert.equal(response.statusCode, 302, short);
      assert.equal(response.headers.location, `${TARGET}&n=${i}`);
      assert.equal(await accessesOf(app, owner.code, short), 1, short);
    }
    const home = await app.inject({ method: 'GET', url: '/' });
    assert.equal(home.statusCode, 200);
    assert.equal(home.headers['content-type'], HTML);
    assert.match(home.body, /<html/i);
    // Unknown codes of one character are still the HTML 404 page and the plain-text 404.
    const unknown = await app.inject({ method: 'GET', url: '/z' });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.headers['content-type'], HTML);
    assertError(await resolve(app, 'z'), 404, 'resolve link');
  });

  test('are listed and deleted by their owner only', async (t) => {
    const { app, owner } = await withImported(t);
    const intruder = await newAccount(app);
    assert.deepEqual((await listLinks(app, owner.code)).map((link) => link.ShortCode), IMPORTED);
    assertError(await deleteLink(app, intruder.code, '1'), 403, 'delete link');
    const deleted = await deleteLink(app, owner.code, '1');
    assert.equal(deleted.statusCode, 200);
    assert.equal(deleted.body, 'Success');
    assertError(await resolve(app, '1'), 404, 'resolve link');
    assert.equal((await listLinks(app, owner.code)).length, IMPORTED.length - 1);
  });

  test('cannot be chosen through the API: created codes stay 5 or more characters', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    for (const short of ['1', 'ozh', 'abcd']) {
      assertError(await createLink(app, code, { url: TARGET, short }), 400, 'create link');
    }
  });
});
