/**
 * CONTRACT §7.2: rotating the access code, deleting the account, closed registration; and
 * §7.3's disabled accounts as their owners see them (403 after the 401 and 400 checks).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Account as AccountJson } from '../../src/http/schemas.ts';
import { newAccount } from '../helpers/app.ts';
import { ACCOUNT_KEYS, appFor, assertError, createLink, createLinkOk, deleteLink, JSON_TYPE, listLinks, resolve, TEXT } from './support.ts';

const ADMIN_TOKEN = 'a'.repeat(24) + '-admin-token-for-tests';

function rotate(app: FastifyInstance, code: string) {
  return app.inject({ method: 'POST', url: '/v1/rotate_access_code', headers: { authorization: `Bearer ${code}` } });
}

function deleteAccount(app: FastifyInstance, code: string) {
  return app.inject({ method: 'DELETE', url: '/v1/account', query: { auth: code } });
}

function getAccount(app: FastifyInstance, code: string) {
  return app.inject({ method: 'GET', url: '/v1/get_account', query: { auth: code } });
}

function disable(app: FastifyInstance, uid: number, disabled: boolean) {
  return app.inject({
    method: 'PATCH', url: '/v1/admin/account', query: { uid: String(uid), disabled: String(disabled) },
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
}

describe('POST /v1/rotate_access_code', () => {
  test('answers the account with a new lower-case code, no-store, keys in contract order', async (t) => {
    const { app } = await appFor(t);
    const { code, uid } = await newAccount(app);
    const response = await rotate(app, code);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['content-type'], JSON_TYPE);
    assert.equal(response.headers['cache-control'], 'no-store');
    const body = response.json() as AccountJson;
    assert.deepEqual(Object.keys(body), ACCOUNT_KEYS);
    assert.equal(body.Uid, uid);
    assert.notEqual(body.AccessCode, code);
    assert.match(body.AccessCode, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  test('the old code is refused at once, also by calls that use the account cache; the new one works', async (t) => {
    const { app } = await appFor(t);
    const { code, uid } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: 'https://example.com/' });
    // Warm the cache with the old code (list uses it).
    await listLinks(app, code);
    const rotated = (await rotate(app, code)).json() as AccountJson;
    assertError(await app.inject({ method: 'GET', url: '/v1/links', query: { auth: code } }), 401, 'list links');
    assertError(await createLink(app, code, { url: 'https://example.com/2' }), 401, 'create link');
    assertError(await getAccount(app, code), 401, 'get account information');
    assertError(await rotate(app, code), 401, 'rotate access code');
    const links = await listLinks(app, rotated.AccessCode);
    assert.deepEqual(links.map((link) => [link.ShortCode, link.CreatedBy]), [[short, uid]]);
    assert.equal(((await getAccount(app, rotated.AccessCode.toUpperCase())).json() as AccountJson).AccessCode, rotated.AccessCode);
  });

  test('refuses a missing or wrong code with 401 and WWW-Authenticate', async (t) => {
    const { app } = await appFor(t);
    const missing = await app.inject({ method: 'POST', url: '/v1/rotate_access_code' });
    assertError(missing, 401, 'rotate access code');
    assert.equal(missing.headers['www-authenticate'], 'Bearer realm="shortlink"');
    assertError(await rotate(app, crypto.randomUUID()), 401, 'rotate access code');
  });

  test('other methods answer 405 with Allow: POST and change nothing', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    for (const method of ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'] as const) {
      const response = await app.inject({ method, url: '/v1/rotate_access_code', query: { auth: code } });
      assert.equal(response.statusCode, 405, method);
      assert.equal(response.headers.allow, 'POST');
      if (method !== 'HEAD') assertError(response, 405, 'rotate access code');
    }
    assert.equal((await getAccount(app, code)).statusCode, 200, 'the code still works');
  });

  test('two rotations racing with one code: one succeeds, the other is 401', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const statuses = (await Promise.all([rotate(app, code), rotate(app, code)])).map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [200, 401]);
  });
});

describe('DELETE /v1/account', () => {
  test('deletes the account and all its links; shortcodes are free, the code is 401', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const other = await newAccount(app);
    await createLinkOk(app, code, { url: 'https://example.com/1', short: 'mine-one' });
    await createLinkOk(app, code, { url: 'https://example.com/2', short: 'mine-two' });
    await listLinks(app, code); // cached
    const response = await deleteAccount(app, code);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['content-type'], TEXT);
    assert.equal(response.body, 'Success');
    assert.equal((await resolve(app, 'mine-one')).statusCode, 404);
    assertError(await getAccount(app, code), 401, 'get account information');
    assertError(await app.inject({ method: 'GET', url: '/v1/links', query: { auth: code } }), 401, 'list links');
    assertError(await deleteAccount(app, code), 401, 'delete account');
    assert.equal(await createLinkOk(app, other.code, { url: 'https://example.com/3', short: 'mine-one' }), 'mine-one');
  });

  test('other methods answer 405 with Allow: DELETE', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    for (const method of ['GET', 'POST', 'PUT', 'PATCH'] as const) {
      const response = await app.inject({ method, url: '/v1/account', query: { auth: code } });
      assertError(response, 405, 'delete account');
      assert.equal(response.headers.allow, 'DELETE');
    }
    assert.equal((await getAccount(app, code)).statusCode, 200);
  });
});

describe('REGISTRATION', () => {
  test('closed: new_account answers 403 "registration is closed" on GET and POST; existing accounts work', async (t) => {
    const { app, store } = await appFor(t, { registrationOpen: false });
    for (const method of ['GET', 'POST'] as const) {
      const response = await app.inject({ method, url: '/v1/new_account' });
      assertError(response, 403, 'create account');
      assert.equal(response.body, 'Unable to create account: registration is closed');
    }
    // An account made by an operator (as `shortlink account create` does) still works.
    const { hashAccessCode } = await import('../../src/accounts/access-code.ts');
    const code = crypto.randomUUID();
    await store.createAccount({ codeHash: hashAccessCode(code), dateCreated: new Date().toISOString(), maxLinks: 2 });
    assert.equal((await getAccount(app, code)).statusCode, 200);
  });
});

describe('disabled accounts, as their owners see them', () => {
  test('every protected call answers 403 "the account is disabled", after 401 and 400; enabling restores them', async (t) => {
    const { app } = await appFor(t, { adminToken: ADMIN_TOKEN });
    const { code, uid } = await newAccount(app);
    const other = await newAccount(app);
    const short = await createLinkOk(app, code, { url: 'https://example.com/' });
    const foreign = await createLinkOk(app, other.code, { url: 'https://example.com/o' });
    const hook = await app.inject({ method: 'POST', url: '/v1/webhooks', query: { auth: code, url: 'https://93.184.215.14/', events: 'link.created' } });
    assert.equal(hook.statusCode, 200, hook.body);
    const hookId = (hook.json() as { Id: string }).Id;
    await listLinks(app, code); // cached: the admin change must still be seen at once here
    assert.equal((await disable(app, uid, true)).statusCode, 200);

    const refused = [
      ['list links', await app.inject({ method: 'GET', url: '/v1/links', query: { auth: code } })],
      ['create link', await createLink(app, code, { url: 'https://example.com/new' })],
      ['delete link', await deleteLink(app, code, short)],
      ['delete link', await deleteLink(app, code, foreign)],
      ['get account information', await getAccount(app, code)],
      ['rotate access code', await rotate(app, code)],
      ['delete account', await deleteAccount(app, code)],
      ['update link', await app.inject({ method: 'PATCH', url: '/v1/link', query: { auth: code, short, title: 'x' } })],
      ['get statistics', await app.inject({ method: 'GET', url: '/v1/stats', query: { auth: code } })],
      ['get statistics', await app.inject({ method: 'GET', url: '/v1/stats', query: { auth: code, short } })],
      ['get statistics', await app.inject({ method: 'GET', url: '/v1/stats', query: { auth: code, format: 'csv' } })],
      ['manage webhooks', await app.inject({ method: 'POST', url: '/v1/webhooks', query: { auth: code, url: 'https://93.184.215.14/', events: 'link.created' } })],
      ['manage webhooks', await app.inject({ method: 'GET', url: '/v1/webhooks', query: { auth: code } })],
      ['manage webhooks', await app.inject({ method: 'DELETE', url: '/v1/webhooks', query: { auth: code, id: hookId } })],
      ['manage webhooks', await app.inject({ method: 'GET', url: '/v1/webhooks/deliveries', query: { auth: code, id: hookId } })],
      ['handle request', await app.inject({ method: 'GET', url: '/v1/events', query: { auth: code } })],
    ] as const;
    for (const [operation, response] of refused) {
      assertError(response, 403, operation);
      assert.equal(response.body, `Unable to ${operation}: the account is disabled`);
    }
    // 401 and 400 come first; an unknown shortcode is still 404.
    assertError(await createLink(app, crypto.randomUUID(), { url: 'https://example.com/' }), 401, 'create link');
    assertError(await createLink(app, code, {}), 400, 'create link');
    assertError(await createLink(app, code, { url: 'ftp://example.com/' }), 400, 'create link');
    assertError(await app.inject({ method: 'DELETE', url: '/v1/link', query: { auth: code } }), 400, 'delete link');
    assertError(await deleteLink(app, code, 'no-such-link'), 404, 'delete link');
    assertError(await app.inject({ method: 'GET', url: '/v1/stats', query: { auth: code, interval: 'week' } }), 400, 'get statistics');
    assertError(await app.inject({ method: 'GET', url: '/v1/stats', query: { auth: code, short: 'no-such-link' } }), 404, 'get statistics');

    assert.equal((await disable(app, uid, false)).statusCode, 200);
    assert.equal((await listLinks(app, code)).length, 1);
    assert.equal((await deleteLink(app, code, short)).statusCode, 200);
  });
});
