import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { newAccount } from '../helpers/app.ts';
import { assertError, createLinkOk, listen, listLinks, rawRequest, sharedApp } from './support.ts';
import type { Account } from '../../src/http/schemas.ts';

const CHALLENGE = 'Bearer realm="shortlink"';

// The tests share one app: each makes its own account (and picks shortcodes no other uses).
const shared = sharedApp();

/** GET /v1/get_account with the given query and headers. */
function whoAmI(app: FastifyInstance, query: Record<string, string>, headers: Record<string, string> = {}) {
  return app.inject({ method: 'GET', url: '/v1/get_account', query, headers });
}

describe('where the access code may come from', () => {
  const ways: Array<[string, (code: string) => { query: Record<string, string>; headers: Record<string, string> }]> = [
    ['the auth query parameter', (code) => ({ query: { auth: code }, headers: {} })],
    ['an Authorization: Bearer header', (code) => ({ query: {}, headers: { authorization: `Bearer ${code}` } })],
    ['a bare Authorization header', (code) => ({ query: {}, headers: { authorization: code } })],
    ['a Bearer scheme in any letter case', (code) => ({ query: {}, headers: { authorization: `bEaReR ${code}` } })],
    ['an upper-case code in the query', (code) => ({ query: { auth: code.toUpperCase() }, headers: {} })],
    ['an upper-case code in a Bearer header', (code) => ({ query: {}, headers: { authorization: `Bearer ${code.toUpperCase()}` } })],
    ['an empty auth parameter beside a valid header', (code) => ({ query: { auth: '' }, headers: { authorization: code } })],
    [
      'the same code in query and header, in different letter case',
      (code) => ({ query: { auth: code.toUpperCase() }, headers: { authorization: `Bearer ${code}` } }),
    ],
  ];
  for (const [name, place] of ways) {
    test(`accepts the code from ${name}`, async () => {
      const { app } = shared();
      await newAccount(app);
      const { code, uid } = await newAccount(app);
      const { query, headers } = place(code);
      const response = await whoAmI(app, query, headers);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal((response.json() as Account).Uid, uid);
    });
  }

  test('accepts the auth parameter with a percent-encoded name', async () => {
    const { app } = shared();
    const { code, uid } = await newAccount(app);
    const response = await app.inject({ method: 'GET', url: `/v1/get_account?%61uth=${code}` });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal((response.json() as Account).Uid, uid);
  });

  test('treats an empty auth parameter as absent (401)', async () => {
    const { app } = shared();
    await newAccount(app);
    const response = await whoAmI(app, { auth: '' });
    assertError(response, 401, 'get account information');
    assert.equal(response.headers['www-authenticate'], CHALLENGE);
  });

  test('never reads the access code from a JSON body', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    const response = await app.inject({
      method: 'POST',
      url: '/v1/link',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ url: 'https://example.com/', auth: code }),
    });
    assertError(response, 401, 'create link');
    assert.deepEqual(await listLinks(app, code), []);
  });

  test('never reads the access code from a form body', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    const response = await app.inject({
      method: 'POST',
      url: '/v1/link',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ url: 'https://example.com/', auth: code }).toString(),
    });
    assertError(response, 401, 'create link');
    assert.deepEqual(await listLinks(app, code), []);
  });
});

describe('conflicting or foreign credentials', () => {
  test('refuses different codes in query and header with 400', async () => {
    const { app } = shared();
    const first = await newAccount(app);
    const second = await newAccount(app);
    const response = await whoAmI(app, { auth: first.code }, { authorization: `Bearer ${second.code}` });
    assertError(response, 400, 'get account information');
  });

  test('refuses a query code and a different, unknown header code with 400', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    const response = await whoAmI(app, { auth: code }, { authorization: randomUUID() });
    assertError(response, 400, 'get account information');
  });

  test('refuses an auth parameter repeated in the query with 400', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    const response = await app.inject({ method: 'GET', url: `/v1/get_account?auth=${code}&auth=${code}` });
    assertError(response, 400, 'get account information');
  });

  test('refuses two Authorization headers with 400 (over a real socket)', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    const target = await listen(app);
    const twice = await rawRequest(target, 'GET', '/v1/get_account', ['Authorization', code, 'Authorization', code]);
    assert.equal(twice.status, 400, twice.body);
    assert.equal(twice.headers['content-type'], 'text/plain; charset=utf-8');
    assert.match(twice.body, /^Unable to get account information: /);
    // The same request with one header is fine, so the 400 is about the repetition.
    const once = await rawRequest(target, 'GET', '/v1/get_account', ['Authorization', code]);
    assert.equal(once.status, 200, once.body);
  });

  test('refuses two Authorization headers with 400 (through inject)', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    const response = await app.inject({
      method: 'GET',
      url: '/v1/links',
      headers: { authorization: [`Bearer ${code}`, `Bearer ${code}`] as unknown as string },
    });
    assertError(response, 400, 'list links');
  });

  for (const scheme of ['Basic', 'Token', 'Digest']) {
    test(`refuses the ${scheme} scheme with 401 even around a valid code`, async () => {
      const { app } = shared();
      const { code } = await newAccount(app);
      const response = await whoAmI(app, {}, { authorization: `${scheme} ${code}` });
      assertError(response, 401, 'get account information');
      assert.equal(response.headers['www-authenticate'], CHALLENGE);
    });
  }

  test('refuses a foreign scheme with 401 even when the query carries the valid code', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    const response = await whoAmI(app, { auth: code }, { authorization: `Basic ${code}` });
    assertError(response, 401, 'get account information');
  });

  test('refuses a Bearer header with no code with 401', async () => {
    const { app } = shared();
    await newAccount(app);
    for (const authorization of ['Bearer', 'Bearer ', 'bearer    ']) {
      const response = await whoAmI(app, {}, { authorization });
      assertError(response, 401, 'get account information');
      assert.equal(response.headers['www-authenticate'], CHALLENGE);
    }
  });

  test('refuses a code with surrounding junk with 401', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    for (const auth of [`${code}x`, `{${code}}`, code.replaceAll('-', '')]) {
      assertError(await whoAmI(app, { auth }), 401, 'get account information');
    }
  });
});

describe('every protected endpoint', () => {
  const endpoints: Array<[string, InjectOptions, string]> = [
    ['GET /v1/links', { method: 'GET', url: '/v1/links' }, 'list links'],
    ['GET /v1/link', { method: 'GET', url: '/v1/link?url=https://example.com/' }, 'create link'],
    ['POST /v1/link', { method: 'POST', url: '/v1/link?url=https://example.com/' }, 'create link'],
    ['DELETE /v1/link', { method: 'DELETE', url: '/v1/link?short=abcdef' }, 'delete link'],
    ['GET /v1/get_account', { method: 'GET', url: '/v1/get_account' }, 'get account information'],
    ['GET /v1/user_info', { method: 'GET', url: '/v1/user_info' }, 'get account information'],
  ];
  for (const [name, options, operation] of endpoints) {
    test(`${name} answers 401 naming its operation when no code is given`, async () => {
      const { app } = shared();
      const response = await app.inject(options);
      assertError(response, 401, operation);
      assert.equal(response.headers['www-authenticate'], CHALLENGE);
    });

    test(`${name} answers 401 for an unknown code`, async () => {
      const { app } = shared();
      const response = await app.inject({ ...options, headers: { authorization: `Bearer ${randomUUID()}` } });
      assertError(response, 401, operation);
      assert.equal(response.headers['www-authenticate'], CHALLENGE);
    });
  }
});

describe('authentication is checked before anything else', () => {
  const beforeParameters: Array<[string, InjectOptions, string]> = [
    ['a create with an invalid url and shortcode', { method: 'GET', url: '/v1/link?url=javascript:alert(1)&short=ab' }, 'create link'],
    ['a create with url given twice', { method: 'GET', url: '/v1/link?url=https://a.example/&url=https://b.example/' }, 'create link'],
    ['a create without url', { method: 'GET', url: '/v1/link' }, 'create link'],
    ['a delete without short', { method: 'DELETE', url: '/v1/link' }, 'delete link'],
    [
      'a create with a malformed JSON body',
      { method: 'POST', url: '/v1/link', headers: { 'content-type': 'application/json' }, payload: '{"url":' },
      'create link',
    ],
    [
      'a create with an unsupported content type',
      { method: 'POST', url: '/v1/link', headers: { 'content-type': 'text/plain' }, payload: 'url=https://a.example/' },
      'create link',
    ],
    [
      'a create with an oversized body',
      {
        method: 'POST',
        url: '/v1/link',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ url: `https://a.example/${'a'.repeat(70_000)}` }),
      },
      'create link',
    ],
  ];
  for (const [name, options, operation] of beforeParameters) {
    test(`answers 401, not a parameter error, for ${name} without credentials`, async () => {
      const { app } = shared();
      assertError(await app.inject(options), 401, operation);
    });
  }

  test('answers 401 for an unknown code even when the shortcode is taken', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://example.com/', short: 'taken-code' });
    const response = await app.inject({
      method: 'GET',
      url: '/v1/link',
      query: { url: 'https://example.com/', short: 'taken-code', auth: randomUUID() },
    });
    assertError(response, 401, 'create link');
  });

  test('answers 401 for an unknown code deleting another account\'s link, and the link stays', async () => {
    const { app } = shared();
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://example.com/', short: 'kept-link' });
    const response = await app.inject({ method: 'DELETE', url: '/v1/link', query: { short: 'kept-link', auth: randomUUID() } });
    assertError(response, 401, 'delete link');
    assert.equal((await listLinks(app, code)).length, 1);
  });
});
