/**
 * CORS (CORS_ORIGINS): listed origins call every /v1/ endpoint with their preflights answered,
 * `*` opens the public read-only endpoints to any origin, and nothing else changes: no CORS at
 * all by default, never credentials by cookie. The same from a real browser on a second origin:
 * test/e2e/packages.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { newAccount, TEST_BASE_URL } from '../helpers/app.ts';
import { appFor, createLinkOk } from './support.ts';

const APP = 'https://app.example.com';
const OTHER = 'https://evil.example.net';

function preflight(method: string, headers = 'authorization, content-type', origin = APP) {
  return {
    method: 'OPTIONS' as const,
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  };
}

describe('CORS_ORIGINS unset (the default)', () => {
  test('sends no CORS header, and OPTIONS stays an unknown route', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: 'https://example.com/' });
    const resolved = await app.inject({ url: `/v1/get/${short}`, headers: { origin: APP } });
    assert.equal(resolved.statusCode, 200);
    assert.equal(resolved.headers['access-control-allow-origin'], undefined);
    const options = await app.inject({ url: '/v1/link', ...preflight('POST') });
    assert.equal(options.statusCode, 404);
    assert.equal(options.headers['access-control-allow-origin'], undefined);
  });
});

describe('CORS_ORIGINS with listed origins', () => {
  const cors = { origins: [APP], anyForPublic: false };

  test('answers the preflight of a protected call: the origin, the methods and the Authorization header', async (t) => {
    const { app } = await appFor(t, { cors });
    for (const [url, method] of [['/v1/link', 'POST'], ['/v1/link?short=abcde', 'DELETE'], ['/v1/links', 'GET'], ['/v1/new_account', 'POST']] as const) {
      const response = await app.inject({ url, ...preflight(method) });
      assert.equal(response.statusCode, 204, `${method} ${url}`);
      assert.equal(response.body, '');
      assert.equal(response.headers['access-control-allow-origin'], APP);
      assert.match(String(response.headers['access-control-allow-methods']), new RegExp(`\\b${method}\\b`));
      assert.match(String(response.headers['access-control-allow-headers']), /\bAuthorization\b/);
      assert.match(String(response.headers['access-control-allow-headers']), /\bContent-Type\b/);
      assert.equal(response.headers['access-control-max-age'], '600');
      assert.equal(response.headers['access-control-allow-credentials'], undefined);
      assert.match(String(response.headers.vary), /\bOrigin\b/);
    }
  });

  test('lets the listed origin read answers, errors included, with the headers a client needs', async (t) => {
    const { app } = await appFor(t, { cors });
    const created = await app.inject({ method: 'POST', url: '/v1/new_account', headers: { origin: APP } });
    assert.equal(created.statusCode, 200);
    assert.equal(created.headers['access-control-allow-origin'], APP);
    assert.match(String(created.headers['access-control-expose-headers']), /\bRetry-After\b.*\bX-Request-Id\b/);
    assert.equal(created.headers['access-control-allow-credentials'], undefined);
    assert.match(String(created.headers.vary), /\bOrigin\b/);
    const { AccessCode } = created.json<{ AccessCode: string }>();
    const link = await app.inject({
      method: 'POST', url: '/v1/link', headers: { origin: APP, authorization: `Bearer ${AccessCode}` }, payload: { url: 'https://example.com/x' },
    });
    assert.equal(link.statusCode, 200);
    assert.ok(link.body.startsWith(`${TEST_BASE_URL}/`));
    assert.equal(link.headers['access-control-allow-origin'], APP);
    const refused = await app.inject({ url: '/v1/links', headers: { origin: APP } });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.headers['access-control-allow-origin'], APP);
    assert.match(String(refused.headers['access-control-expose-headers']), /\bWWW-Authenticate\b/);
  });

  test('gives an origin that is not listed nothing: no CORS header on the preflight or the answer', async (t) => {
    const { app } = await appFor(t, { cors });
    const options = await app.inject({ url: '/v1/link', ...preflight('POST', 'authorization', OTHER) });
    assert.equal(options.statusCode, 204);
    assert.equal(options.headers['access-control-allow-origin'], undefined);
    assert.equal(options.headers['access-control-allow-methods'], undefined);
    const created = await app.inject({ method: 'POST', url: '/v1/new_account', headers: { origin: OTHER } });
    assert.equal(created.statusCode, 200);
    assert.equal(created.headers['access-control-allow-origin'], undefined);
    // An origin differing only in scheme or port is another origin.
    const http = await app.inject({ method: 'POST', url: '/v1/new_account', headers: { origin: 'http://app.example.com' } });
    assert.equal(http.headers['access-control-allow-origin'], undefined);
  });

  test('leaves the short URLs, the UI and the health checks alone', async (t) => {
    const { app } = await appFor(t, { cors });
    for (const url of ['/', '/healthz', '/abcdef']) {
      const response = await app.inject({ url, headers: { origin: APP } });
      assert.equal(response.headers['access-control-allow-origin'], undefined, url);
    }
  });
});

describe('CORS_ORIGINS=*', () => {
  const cors = { origins: [], anyForPublic: true };

  test('lets any origin resolve a link and read the OpenAPI document, and nothing else', async (t) => {
    const { app } = await appFor(t, { cors });
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: 'https://example.com/' });
    for (const method of ['GET', 'HEAD'] as const) {
      const resolved = await app.inject({ method, url: `/v1/get/${short}`, headers: { origin: OTHER } });
      assert.equal(resolved.statusCode, 200);
      assert.equal(resolved.headers['access-control-allow-origin'], '*');
    }
    const document = await app.inject({ url: '/openapi.json', headers: { origin: OTHER } });
    assert.equal(document.headers['access-control-allow-origin'], '*');
    const unknown = await app.inject({ url: '/v1/get/nosuchcode', headers: { origin: OTHER } });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.headers['access-control-allow-origin'], '*');

    const list = await app.inject({ url: '/v1/links', headers: { origin: OTHER, authorization: code } });
    assert.equal(list.statusCode, 200);
    assert.equal(list.headers['access-control-allow-origin'], undefined);
    const account = await app.inject({ method: 'POST', url: '/v1/new_account', headers: { origin: OTHER } });
    assert.equal(account.headers['access-control-allow-origin'], undefined);
    const protectedPreflight = await app.inject({ url: '/v1/links', ...preflight('GET', 'authorization', OTHER) });
    assert.equal(protectedPreflight.headers['access-control-allow-origin'], undefined);
    const publicPreflight = await app.inject({ url: `/v1/get/${short}`, ...preflight('GET', 'x-request-id', OTHER) });
    assert.equal(publicPreflight.headers['access-control-allow-origin'], '*');
    assert.equal(publicPreflight.headers['access-control-allow-methods'], 'GET, HEAD');
    assert.doesNotMatch(String(publicPreflight.headers['access-control-allow-headers']), /Authorization/i);
  });

  test('combined with listed origins, those still call everything', async (t) => {
    const { app } = await appFor(t, { cors: { origins: [APP], anyForPublic: true } });
    const account = await app.inject({ method: 'POST', url: '/v1/new_account', headers: { origin: APP } });
    assert.equal(account.headers['access-control-allow-origin'], APP);
    const other = await app.inject({ method: 'POST', url: '/v1/new_account', headers: { origin: OTHER } });
    assert.equal(other.headers['access-control-allow-origin'], undefined);
  });
});

describe('CORS_ORIGINS parsing', () => {
  test('normalises origins and keeps * apart', () => {
    const config = loadConfig({ CORS_ORIGINS: ' https://App.Example.com:443/ , http://localhost:5173,*, chrome-extension://ABCdef ' });
    assert.deepEqual(config.cors, { origins: ['https://app.example.com', 'http://localhost:5173', 'chrome-extension://abcdef'], anyForPublic: true });
    assert.deepEqual(loadConfig({}).cors, { origins: [], anyForPublic: false });
  });

  test('refuses an entry that is not an origin, naming it', () => {
    for (const bad of ['app.example.com', 'https://app.example.com/path', 'https://user@app.example.com', 'https://*.example.com']) {
      assert.throws(() => loadConfig({ CORS_ORIGINS: bad }), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /CORS_ORIGINS must list origins/);
        assert.ok(error.message.includes(JSON.stringify(bad)), error.message);
        return true;
      });
    }
  });
});
