/**
 * `X-Content-Type-Options: nosniff` on every answer the service gives, whatever produced it:
 * API JSON, plain-text successes and errors (from the domain, from Fastify's body parsing,
 * from the router, from rate limits, and from Node's HTTP parser before Fastify sees the
 * request), the HTML 404 page, the UI page and its assets, redirects, 304s, and the health,
 * metrics and API-documentation endpoints. Without it a
 * browser might sniff an error line or a JSON body carrying a hostile target as HTML.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { InjectOptions } from 'fastify';
import { DEFAULT_RATE_LIMIT_POLICIES } from '../../src/config.ts';
import { webAssets } from '../../src/web/assets.ts';
import { account, listenLocal, rawExchange, securityApp } from './support.ts';

const TARGET = 'https://example.org/headers';

test('every kind of answer carries X-Content-Type-Options: nosniff', async (t) => {
  const { app } = await securityApp(t);
  const { code } = await account(app);
  const auth = { authorization: `Bearer ${code}` };
  const created = await app.inject({ method: 'GET', url: '/v1/link', query: { url: TARGET, short: 'headers-link', auth: code } });
  assert.equal(created.statusCode, 200);
  const other = await account(app);
  await app.inject({ method: 'GET', url: '/v1/link', query: { url: TARGET, short: 'their-link', auth: other.code } });
  const page = await app.inject({ url: '/' });

  const kinds: [string, InjectOptions, number][] = [
    ['new account (JSON)', { method: 'POST', url: '/v1/new_account' }, 200],
    ['account (JSON)', { url: '/v1/get_account', headers: auth }, 200],
    ['list (JSON)', { url: '/v1/links', headers: auth }, 200],
    ['HEAD of the list', { method: 'HEAD', url: '/v1/links', headers: auth }, 200],
    ['resolve (JSON)', { url: '/v1/get/headers-link' }, 200],
    ['HEAD resolve', { method: 'HEAD', url: '/v1/get/headers-link' }, 200],
    ['create (text)', { url: '/v1/link', query: { url: TARGET, auth: code } }, 200],
    ['redirect (302)', { url: '/headers-link' }, 302],
    ['HEAD redirect', { method: 'HEAD', url: '/headers-link' }, 302],
    ['400 from the domain', { url: '/v1/link', query: { url: 'javascript:alert(1)', auth: code } }, 400],
    ['400 from the JSON parser', { method: 'POST', url: '/v1/link', headers: { ...auth, 'content-type': 'application/json' }, payload: '{' }, 400],
    ['400 from the router (bad escape)', { url: '/v1/get/%E0%A4%A' }, 400],
    ['401', { url: '/v1/links' }, 401],
    ['403', { method: 'DELETE', url: '/v1/link?short=their-link', headers: auth }, 403],
    ['404 unknown route (text)', { url: '/v1/nope' }, 404],
    ['404 unknown shortcode (text)', { url: '/v1/get/nothing-here' }, 404],
    ['404 short URL (HTML)', { url: '/nothing-here' }, 404],
    ['404 short URL with a bad escape (HTML)', { url: '/%E0%A4%A' }, 404],
    ['405', { method: 'HEAD', url: '/v1/new_account' }, 405],
    ['409', { url: '/v1/link', query: { url: TARGET, short: 'headers-link', auth: code } }, 409],
    ['413', { method: 'POST', url: '/v1/link', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ padding: 'x'.repeat(70_000) }) }, 413],
    ['414 (path past the router limit)', { url: `/v1/get/${'a'.repeat(9000)}` }, 414],
    ['415', { method: 'POST', url: '/v1/link', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'x' }, 415],
    ['UI page', { url: '/' }, 200],
    ['UI page revalidated (304)', { url: '/', headers: { 'if-none-match': String(page.headers.etag) } }, 304],
    ['stylesheet', { url: webAssets().href('app.css') }, 200],
    ['script', { url: webAssets().href('app.js') }, 200],
    ['favicon', { url: '/favicon.ico' }, 200],
    ['old asset version (404)', { url: '/assets/0000000000/app.css' }, 404],
    ['delete (text)', { method: 'DELETE', url: '/v1/link?short=headers-link', headers: auth }, 200],
  ];
  for (const [name, options, status] of kinds) {
    const response = await app.inject(options);
    assert.equal(response.statusCode, status, `${name}: ${response.body.slice(0, 200)}`);
    assert.equal(response.headers['x-content-type-options'], 'nosniff', name);
  }
  // The operational endpoints, whatever they answer here (served, protected or absent).
  for (const url of ['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs']) {
    const response = await app.inject({ url });
    assert.equal(response.headers['x-content-type-options'], 'nosniff', `${url} (${response.statusCode})`);
  }
});

test('rate-limited (429) answers carry nosniff', async (t) => {
  const { app } = await securityApp(t, {
    rateLimit: true,
    rateLimitExempt: [],
    rateLimitPolicies: { ...DEFAULT_RATE_LIMIT_POLICIES, newAccount: { limit: 1, windowMs: 60_000 } },
  });
  assert.equal((await app.inject({ url: '/v1/new_account' })).statusCode, 200);
  const limited = await app.inject({ url: '/v1/new_account' });
  assert.equal(limited.statusCode, 429);
  assert.equal(limited.headers['x-content-type-options'], 'nosniff');
});

test('answers written by the HTTP parser, before routing, carry nosniff too', async (t) => {
  const { app } = await securityApp(t);
  const port = await listenLocal(app);
  const end = 'Host: sl.test\r\nConnection: close\r\n\r\n';
  for (const [name, wire, status] of [
    ['malformed request line', `GET /a\u0000b HTTP/1.1\r\n${end}`, 400],
    ['headers over 16 KiB', `GET / HTTP/1.1\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n${end}`, 431],
    ['missing Host header', 'GET /v1/links HTTP/1.1\r\nConnection: close\r\n\r\n', 400],
    ['bad escape in the path', `GET /v1/get/%E0%A4%A HTTP/1.1\r\n${end}`, 400],
  ] as const) {
    const reply = await rawExchange(port, wire);
    assert.equal(reply.status, status, `${name}: ${reply.body}`);
    assert.equal(reply.headers['x-content-type-options'], 'nosniff', name);
  }
});
