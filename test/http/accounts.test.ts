import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Account as AccountJson } from '../../src/http/schemas.ts';
import { newAccount } from '../helpers/app.ts';
import { ACCOUNT_KEYS, appFor, assertError, JSON_TYPE } from './support.ts';

const UUID_V4_LOWER = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;


describe('new_account', () => {
  for (const method of ['GET', 'POST'] as const) {
    test(`${method} creates an account and answers it as JSON with keys in contract order`, async (t) => {
      const fixedDate = new Date('2026-11-22T04:12:49.123Z');
      const { app } = await appFor(t, { defaultMaxLinks: 3 }, { clock: () => fixedDate });

      const response = await app.inject({ method, url: '/v1/new_account' });

      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], JSON_TYPE);
      assert.equal(response.headers['cache-control'], 'no-store');
      const body = response.json() as AccountJson;
      assert.deepEqual(Object.keys(body), ACCOUNT_KEYS);
      assert.ok(Number.isSafeInteger(body.Uid) && body.Uid > 0);
      assert.match(body.AccessCode, UUID_V4_LOWER);
      assert.equal(body.DateCreated, fixedDate.toISOString());
      assert.equal(body.MaxLinks, 3);
      assert.equal(
        response.body,
        `{"Uid":${body.Uid},"AccessCode":"${body.AccessCode}","DateCreated":"2026-11-22T04:12:49.123Z","MaxLinks":3}`,
      );
      assert.equal(Object.hasOwn(body, 'uid'), false);
    });
  }

  test('gives MaxLinks 20 by default', async (t) => {
    const { app } = await appFor(t);
    const response = await app.inject({ method: 'GET', url: '/v1/new_account' });
    assert.equal((response.json() as AccountJson).MaxLinks, 20);
  });

  test('hands out increasing Uids and distinct access codes', async (t) => {
    const { app } = await appFor(t);
    const accounts: AccountJson[] = [];
    for (let i = 0; i < 5; i++) {
      const method = i % 2 === 0 ? 'GET' : 'POST';
      accounts.push((await app.inject({ method, url: '/v1/new_account' })).json() as AccountJson);
    }
    for (let i = 1; i < accounts.length; i++) assert.ok(accounts[i]!.Uid > accounts[i - 1]!.Uid);
    assert.equal(new Set(accounts.map((a) => a.AccessCode)).size, accounts.length);
  });

  test('POST with an empty JSON body creates an account', async (t) => {
    const { app } = await appFor(t);
    const response = await app.inject({
      method: 'POST',
      url: '/v1/new_account',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    assert.equal(response.statusCode, 200);
    assert.match((response.json() as AccountJson).AccessCode, UUID_V4_LOWER);
  });

  test('HEAD is refused with 405 and an Allow header, creating nothing', async (t) => {
    const { app } = await appFor(t);
    const response = await app.inject({ method: 'HEAD', url: '/v1/new_account' });
    assert.equal(response.statusCode, 405);
    assert.equal(response.headers['content-type'], 'text/plain; charset=utf-8');
    assert.match(String(response.headers.allow), /GET/);
    assert.match(String(response.headers.allow), /POST/);
    // The next account is the first one: HEAD made none.
    const first = (await app.inject({ method: 'GET', url: '/v1/new_account' })).json() as AccountJson;
    assert.equal(first.Uid, 1);
  });
});

for (const path of ['/v1/get_account', '/v1/user_info']) {
  describe(path, () => {
    test('answers the same Account that new_account created, with no-store', async (t) => {
      const fixedDate = new Date('2026-01-02T03:04:05.006Z');
      const { app } = await appFor(t, { defaultMaxLinks: 7 }, { clock: () => fixedDate });
      const created = await app.inject({ method: 'GET', url: '/v1/new_account' });

      const response = await app.inject({
        method: 'GET',
        url: path,
        headers: { authorization: `Bearer ${(created.json() as AccountJson).AccessCode}` },
      });

      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], JSON_TYPE);
      assert.equal(response.headers['cache-control'], 'no-store');
      assert.deepEqual(Object.keys(response.json() as object), ACCOUNT_KEYS);
      assert.equal(response.body, created.body);
    });

    test('returns the access code in lower case when it was sent in upper case', async (t) => {
      const { app } = await appFor(t);
      const { code, uid } = await newAccount(app);

      const response = await app.inject({ method: 'GET', url: path, query: { auth: code.toUpperCase() } });

      assert.equal(response.statusCode, 200);
      const body = response.json() as AccountJson;
      assert.equal(body.AccessCode, code);
      assert.equal(body.Uid, uid);
    });

    test('answers each account with its own data', async (t) => {
      const { app } = await appFor(t);
      const first = await newAccount(app);
      const second = await newAccount(app);
      const one = (await app.inject({ method: 'GET', url: path, query: { auth: first.code } })).json() as AccountJson;
      const two = (await app.inject({ method: 'GET', url: path, headers: { authorization: second.code } })).json() as AccountJson;
      assert.deepEqual([one.Uid, one.AccessCode], [first.uid, first.code]);
      assert.deepEqual([two.Uid, two.AccessCode], [second.uid, second.code]);
    });

    const refused: Array<[string, Record<string, string>]> = [
      ['without an access code', {}],
      ['with a malformed access code', { auth: 'not-a-uuid' }],
      ['with a UUID that is not version 4', { auth: '6ba7b810-9dad-11d1-80b4-00c04fd430c8' }],
      ['with an unknown access code', { auth: randomUUID() }],
    ];
    for (const [name, query] of refused) {
      test(`refuses a request ${name} with 401 and a Bearer challenge`, async (t) => {
        const { app } = await appFor(t);
        await newAccount(app);
        const response = await app.inject({ method: 'GET', url: path, query });
        assertError(response, 401, 'get account information');
        assert.equal(response.headers['www-authenticate'], 'Bearer realm="shortlink"');
      });
    }
  });
}
