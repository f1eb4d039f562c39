import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAccountCache } from '../../src/accounts/account-cache.ts';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { openSqliteStore } from '../../src/store/sqlite/store.ts';
import type { Store } from '../../src/store/store.ts';

const account = (uid: number) => ({ uid, dateCreated: '2026-01-01T00:00:00.000Z', maxLinks: 20, disabled: false });

describe('createAccountCache', () => {
  test('answers a remembered account until its time is up, then forgets it', () => {
    let clock = 0;
    const cache = createAccountCache({ ttlMs: 1000, maxEntries: 10, now: () => clock });
    cache.set('h1', account(1));
    clock = 999;
    assert.deepEqual(cache.get('h1'), account(1));
    clock = 1000;
    assert.equal(cache.get('h1'), undefined);
  });

  test('drops the oldest entry when full', () => {
    const cache = createAccountCache({ ttlMs: 1000, maxEntries: 2, now: () => 0 });
    cache.set('a', account(1));
    cache.set('b', account(2));
    cache.set('a', account(1)); // refreshed: now the newest
    cache.set('c', account(3));
    assert.equal(cache.get('b'), undefined);
    assert.equal(cache.get('a')?.uid, 1);
    assert.equal(cache.get('c')?.uid, 3);
  });

  test('remembers nothing when the time is 0', () => {
    const cache = createAccountCache({ ttlMs: 0, maxEntries: 10, now: () => 0 });
    cache.set('a', account(1));
    assert.equal(cache.get('a'), undefined);
  });
});

describe('authentication through the cache', () => {
  /** A real SQLite store that counts account lookups. */
  async function countingStore(): Promise<{ store: Store; lookups: () => number }> {
    const store = await openSqliteStore({ path: ':memory:' });
    let lookups = 0;
    return {
      store: {
        ...store,
        findAccountByCodeHash(hash) {
          lookups++;
          return store.findAccountByCodeHash(hash);
        },
      },
      lookups: () => lookups,
    };
  }

  test('looks an access code up once per cache lifetime, whatever its letter case', async () => {
    const { store, lookups } = await countingStore();
    const accounts = createAccountService({ store, clock: () => new Date(), defaultMaxLinks: 20, accountCacheMs: 60_000 });
    const created = await accounts.create();
    for (let i = 0; i < 5; i++) {
      const found = await accounts.authenticate(i % 2 === 0 ? created.accessCode : created.accessCode.toUpperCase());
      assert.equal(found.uid, created.uid);
      assert.equal(found.accessCode, created.accessCode);
    }
    assert.equal(lookups(), 1);
    await store.close();
  });

  test('never remembers an unknown access code', async () => {
    const { store, lookups } = await countingStore();
    const accounts = createAccountService({ store, clock: () => new Date(), defaultMaxLinks: 20, accountCacheMs: 60_000 });
    const unknown = 'c0ffee00-1234-4abc-8def-0123456789ab';
    for (let i = 0; i < 3; i++) {
      await assert.rejects(accounts.authenticate(unknown), /not valid/);
    }
    assert.equal(lookups(), 3);
    await store.close();
  });

  test('with the cache off, every call reaches the store', async () => {
    const { store, lookups } = await countingStore();
    const accounts = createAccountService({ store, clock: () => new Date(), defaultMaxLinks: 20, accountCacheMs: 0 });
    const created = await accounts.create();
    await accounts.authenticate(created.accessCode);
    await accounts.authenticate(created.accessCode);
    assert.equal(lookups(), 2);
    await store.close();
  });
});

describe('account cache eviction', () => {
  test('evict forgets one access code at once, before its entry expires', () => {
    const cache = createAccountCache({ ttlMs: 1000, maxEntries: 10, now: () => 0 });
    cache.set('a', account(1));
    cache.set('b', account(2));
    cache.evict('a');
    assert.equal(cache.get('a'), undefined);
    assert.deepEqual(cache.get('b'), account(2));
  });

  test('evictAccount forgets every code of one account and keeps the others', () => {
    const cache = createAccountCache({ ttlMs: 1000, maxEntries: 10, now: () => 0 });
    cache.set('a', account(1));
    cache.set('a2', account(1));
    cache.set('b', account(2));
    cache.evictAccount(1);
    assert.equal(cache.get('a'), undefined);
    assert.equal(cache.get('a2'), undefined);
    assert.deepEqual(cache.get('b'), account(2));
  });
});
