/**
 * API keys (CONTRACT §8.5): created with the access code only and shown once, listed without
 * the key, deleted; a key authenticates the three ways an access code does, exactly, and
 * allows only what its scopes name (401, then 403 for the scope, then the usual order);
 * at most 20; kept across a rotation and gone with the account; LastUsed recorded.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { newAccount } from '../helpers/app.ts';
import { ROUTE_SCOPES } from '../../src/http/key-scopes.ts';
import { appFor, assertError, createLinkOk, JSON_TYPE, listLinks } from './support.ts';

const KEY_SHAPE = /^slk_[A-Za-z0-9_-]{43}$/;
const CREATED_KEYS = ['Id', 'Name', 'Scopes', 'Key', 'DateCreated', 'LastUsed'];
const LISTED_KEYS = ['Id', 'Name', 'Scopes', 'DateCreated', 'LastUsed'];

interface CreatedKey { Id: string; Name: string; Scopes: string[]; Key: string; DateCreated: string; LastUsed: string | null }

async function createKey(app: FastifyInstance, code: string, name: string, scopes: string): Promise<CreatedKey> {
  const response = await app.inject({ method: 'POST', url: '/v1/keys', headers: { authorization: `Bearer ${code}` }, payload: { name, scopes } });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as CreatedKey;
}

function as(key: string) {
  return { authorization: `Bearer ${key}` };
}

describe('API keys', () => {
  test('POST /v1/keys answers the key once, in the contract\'s key order; GET lists it without the key; DELETE removes it', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const response = await app.inject({
      method: 'POST', url: '/v1/keys', headers: { authorization: `Bearer ${code}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'CI déploiement', scopes: 'webhooks,links:read,links:read' }),
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['content-type'], JSON_TYPE);
    assert.equal(response.headers['cache-control'], 'no-store');
    const created = response.json() as CreatedKey;
    assert.deepEqual(Object.keys(created), CREATED_KEYS);
    assert.match(created.Key, KEY_SHAPE);
    assert.equal(created.Name, 'CI déploiement');
    assert.deepEqual(created.Scopes, ['links:read', 'webhooks']);
    assert.equal(created.LastUsed, null);
    assert.match(created.DateCreated, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const second = await createKey(app, code, 'second', 'stats:read');
    const list = await app.inject({ method: 'GET', url: '/v1/keys', query: { auth: code } });
    assert.equal(list.statusCode, 200, list.body);
    const listed = list.json() as Record<string, unknown>[];
    assert.deepEqual(listed.map((key) => Object.keys(key)), [LISTED_KEYS, LISTED_KEYS]);
    assert.deepEqual(listed.map((key) => key.Id), [created.Id, second.Id]);
    assert.doesNotMatch(list.body, /slk_/);

    const deleted = await app.inject({ method: 'DELETE', url: '/v1/keys', query: { id: created.Id }, headers: { authorization: code } });
    assert.equal(deleted.statusCode, 200);
    assert.equal(deleted.body, 'Success');
    assertError(await app.inject({ method: 'GET', url: '/v1/links', headers: as(created.Key) }), 401, 'list links');
    assert.deepEqual((await app.inject({ method: 'GET', url: '/v1/keys', query: { auth: code } })).json().map((k: { Id: string }) => k.Id), [second.Id]);
    assertError(await app.inject({ method: 'DELETE', url: '/v1/keys', query: { id: created.Id, auth: code } }), 404, 'manage keys');
    assertError(await app.inject({ method: 'DELETE', url: '/v1/keys', query: { auth: code } }), 400, 'manage keys');
  });

  test('refuses a missing or long name and missing or unknown scopes with 400', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    for (const payload of [{ scopes: 'links:read' }, { name: 'x'.repeat(101), scopes: 'links:read' }, { name: 'n' }, { name: 'n', scopes: 'links:admin' }, { name: 'a\nb', scopes: 'webhooks' }]) {
      assertError(await app.inject({ method: 'POST', url: '/v1/keys', headers: as(code), payload }), 400, 'manage keys');
    }
    assert.equal((await createKey(app, code, 'é'.repeat(100), 'links:write')).Name.length, 100);
    const arrayScopes = await app.inject({ method: 'POST', url: '/v1/keys', headers: as(code), payload: { name: 'arr', scopes: ['stats:read', 'links:read'] } });
    assert.deepEqual((arrayScopes.json() as CreatedKey).Scopes, ['links:read', 'stats:read']);
  });

  test('a key authenticates the three ways an access code does, compared exactly', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://example.com/', short: 'keyed-link' });
    const { Key } = await createKey(app, code, 'reader', 'links:read');
    for (const options of [{ query: { auth: Key } }, { headers: { authorization: `Bearer ${Key}` } }, { headers: { authorization: `bearer ${Key}` } }, { headers: { authorization: Key } }]) {
      const response = await app.inject({ method: 'GET', url: '/v1/links', ...options });
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual((response.json() as { ShortCode: string }[]).map((l) => l.ShortCode), ['keyed-link']);
    }
    const flipped = Key.slice(0, 4) + [...Key.slice(4)].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
    const wrongCase = await app.inject({ method: 'GET', url: '/v1/links', headers: as(flipped) });
    assertError(wrongCase, 401, 'list links');
    assert.equal(wrongCase.headers['www-authenticate'], 'Bearer realm="shortlink"');
    assertError(await app.inject({ method: 'GET', url: '/v1/links', headers: as('slk_short') }), 401, 'list links');
    assertError(await app.inject({ method: 'GET', url: '/v1/links', headers: as(`slk_${'A'.repeat(43)}`) }), 401, 'list links');
    assertError(await app.inject({ method: 'GET', url: '/v1/links', query: { auth: flipped }, headers: as(Key) }), 400, 'list links');
    assertError(await app.inject({ method: 'GET', url: '/v1/links', headers: { authorization: `Basic ${Key}` } }), 401, 'list links');
  });

  test('a key allows what its scopes name and nothing else: 403 "the key does not allow this", after 401 and before 400', async (t) => {
    const { app } = await appFor(t, { webhookSecretKey: 'a-webhook-key-of-at-least-32-characters', webhookAllowPrivate: true });
    const { code } = await newAccount(app);
    const reader = (await createKey(app, code, 'r', 'links:read')).Key;
    const writer = (await createKey(app, code, 'w', 'links:write')).Key;
    const stats = (await createKey(app, code, 's', 'stats:read')).Key;
    const hooks = (await createKey(app, code, 'h', 'webhooks')).Key;
    const refused = async (key: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, operation: string, payload?: string | object) => {
      const response = await app.inject(payload === undefined ? { method, url, headers: as(key) } : { method, url, headers: as(key), payload });
      assertError(response, 403, operation);
      assert.equal(response.body, `Unable to ${operation}: the key does not allow this`);
    };
    // links:write creates, edits, deletes, bulk-creates; cannot list.
    const created = await app.inject({ method: 'POST', url: '/v1/link', headers: as(writer), payload: { url: 'https://example.com/', short: 'by-key' } });
    assert.equal(created.statusCode, 200, created.body);
    assert.equal((await app.inject({ method: 'PATCH', url: '/v1/link', headers: as(writer), payload: { short: 'by-key', title: 'T' } })).statusCode, 200);
    assert.equal((await app.inject({ method: 'POST', url: '/v1/links', headers: as(writer), payload: [{ url: 'https://example.com/2' }] })).statusCode, 200);
    await refused(writer, 'GET', '/v1/links', 'list links');
    await refused(writer, 'GET', '/v1/stats', 'get statistics');
    // The scope comes before the parameters: a bad request with the wrong key is 403.
    await refused(reader, 'POST', '/v1/link', 'create link', { url: 'not a url' });
    await refused(reader, 'POST', '/v1/links', 'create links', 'not an array');
    await refused(reader, 'DELETE', '/v1/link', 'delete link');
    await refused(reader, 'PATCH', '/v1/link', 'update link');
    assert.equal((await app.inject({ method: 'GET', url: '/v1/stats', headers: as(stats) })).statusCode, 200);
    await refused(stats, 'GET', '/v1/webhooks', 'manage webhooks');
    assert.equal((await app.inject({ method: 'GET', url: '/v1/webhooks', headers: as(hooks) })).statusCode, 200);
    await refused(hooks, 'GET', '/v1/links', 'list links');
    // The account's own calls and the keys take the access code only, whatever the scopes.
    const all = (await createKey(app, code, 'all', 'links:read,links:write,stats:read,webhooks')).Key;
    await refused(all, 'GET', '/v1/get_account', 'get account information');
    await refused(all, 'GET', '/v1/user_info', 'get account information');
    await refused(all, 'POST', '/v1/rotate_access_code', 'rotate access code');
    await refused(all, 'DELETE', '/v1/account', 'delete account');
    await refused(all, 'POST', '/v1/keys', 'manage keys', { name: 'x', scopes: 'links:read' });
    await refused(all, 'GET', '/v1/keys', 'manage keys');
    await refused(all, 'DELETE', '/v1/keys?id=nope', 'manage keys');
    assert.equal((await app.inject({ method: 'GET', url: '/v1/get_account', headers: as(code) })).statusCode, 200, 'the account is still there');
    // A parameter error with the right key is 400, as with the access code.
    assertError(await app.inject({ method: 'POST', url: '/v1/link', headers: as(writer), payload: { url: 'not a url' } }), 400, 'create link');
  });

  test('every route in the scope table is registered', async (t) => {
    const { app } = await appFor(t);
    const routes = app.printRoutes({ commonPrefix: false, method: undefined });
    for (const route of Object.keys(ROUTE_SCOPES)) {
      const [method, url] = route.split(' ') as [string, string];
      if (url === '/v1/domains') continue; // arrives with domains (CONTRACT §8.1)
      assert.ok(app.hasRoute({ method: method as 'GET', url }), `${route} is a route (${routes.length})`);
    }
  });

  test('at most 20 keys per account: the 21st is 403, and deleting one frees a slot', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const keys = await Promise.all(Array.from({ length: 20 }, (_, i) => createKey(app, code, `k${i}`, 'links:read')));
    const extra = await Promise.all(Array.from({ length: 3 }, () => app.inject({ method: 'POST', url: '/v1/keys', headers: as(code), payload: { name: 'x', scopes: 'links:read' } })));
    for (const response of extra) {
      assertError(response, 403, 'manage keys');
      assert.equal(response.body, 'Unable to manage keys: the account already holds its maximum of 20 API keys');
    }
    await app.inject({ method: 'DELETE', url: '/v1/keys', query: { id: keys[0]!.Id }, headers: as(code) });
    await createKey(app, code, 'again', 'links:read');
  });

  test('keys survive a rotation of the access code and go with the account', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const { Key } = await createKey(app, code, 'k', 'links:read');
    const rotated = await app.inject({ method: 'POST', url: '/v1/rotate_access_code', headers: as(code) });
    assert.equal(rotated.statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/v1/links', headers: as(Key) })).statusCode, 200);
    const newCode = (rotated.json() as { AccessCode: string }).AccessCode;
    assert.equal((await app.inject({ method: 'DELETE', url: '/v1/account', headers: as(newCode) })).statusCode, 200);
    assertError(await app.inject({ method: 'GET', url: '/v1/links', headers: as(Key) }), 401, 'list links');
  });

  test('LastUsed is null until the key is used, then the time of its latest use', async (t) => {
    let now = new Date('2026-11-26T10:00:00.000Z');
    const { app } = await appFor(t, {}, { clock: () => now });
    const { code } = await newAccount(app);
    const { Id, Key } = await createKey(app, code, 'k', 'links:read');
    const lastUsed = async () => ((await app.inject({ method: 'GET', url: '/v1/keys', headers: as(code) })).json() as CreatedKey[]).find((k) => k.Id === Id)!.LastUsed;
    assert.equal(await lastUsed(), null);
    now = new Date('2026-11-26T10:05:00.000Z');
    await listLinks(app, Key);
    assert.equal(await lastUsed(), '2026-11-26T10:05:00.000Z');
    now = new Date('2026-11-26T10:07:00.000Z');
    await listLinks(app, Key);
    await listLinks(app, Key);
    assert.equal(await lastUsed(), '2026-11-26T10:07:00.000Z');
  });

  test('a disabled account\'s key is refused with 403 like its access code, after the parameters', async (t) => {
    const testApp = await appFor(t);
    const { code, uid } = await newAccount(testApp.app);
    const { Key } = await createKey(testApp.app, code, 'k', 'links:read,links:write');
    await testApp.store.updateAccount(uid, { disabled: true });
    const response = await testApp.app.inject({ method: 'GET', url: '/v1/links', headers: as(Key) });
    assertError(response, 403, 'list links');
    assert.equal(response.body, 'Unable to list links: the account is disabled');
  });
});
