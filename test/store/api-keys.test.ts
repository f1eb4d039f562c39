/**
 * The API-key calls of the store (CONTRACT §8.5), the same assertions on each engine: keys
 * stored and found by digest with their account, listed oldest first, the cap of 20 settled
 * by the database under racing creates, deleted only by their account, gone with the account,
 * LastUsed only ever moved forward.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { ApiKeyScope, NewApiKey } from '../../src/accounts/api-key-store.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import { openSqliteStore } from '../../src/store/sqlite/store.ts';
import type { AccountRecord, Store } from '../../src/store/store.ts';
import { tempDir } from '../helpers/app.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';

function apiKeyContract(name: string, open: () => Promise<{ store: Store; cleanup(): Promise<void> }>): void {
  describe(`API keys in the store: ${name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await open());
    });
    afterEach(() => cleanup());

    const account = (): Promise<AccountRecord> =>
      store.createAccount({ codeHash: randomBytes(32).toString('hex'), dateCreated: new Date().toISOString(), maxLinks: 20 });
    const newKey = (uid: number, scopes: ApiKeyScope[] = ['links:read'], name = 'k'): NewApiKey => ({
      id: `key_${randomBytes(12).toString('hex')}`, accountUid: uid, name, scopes, keyHash: randomBytes(32).toString('hex'), dateCreated: '2026-11-26T10:00:00.000Z',
    });

    test('createApiKey stores the key; findApiKeyByHash answers it with its account; listApiKeys oldest first', async () => {
      const owner = await account();
      const first = newKey(owner.uid, ['links:read', 'webhooks'], 'Déploiement');
      const second = newKey(owner.uid, ['stats:read']);
      const created = await store.apiKeys.createApiKey(first, 20);
      assert.deepEqual({ ...created as object }, {
        id: first.id, accountUid: owner.uid, name: 'Déploiement', scopes: ['links:read', 'webhooks'], dateCreated: first.dateCreated, lastUsed: null,
      });
      await store.apiKeys.createApiKey(second, 20);
      const found = await store.apiKeys.findApiKeyByHash(first.keyHash);
      assert.ok(found);
      assert.equal(found.key.id, first.id);
      assert.deepEqual({ ...found.account }, { ...owner });
      assert.equal(await store.apiKeys.findApiKeyByHash(randomBytes(32).toString('hex')), undefined);
      assert.deepEqual((await store.apiKeys.listApiKeys(owner.uid)).map((key) => key.id), [first.id, second.id]);
      assert.deepEqual(await store.apiKeys.listApiKeys((await account()).uid), []);
      assert.equal(await store.apiKeys.createApiKey(newKey(999_999_999), 20), undefined, 'no such account');
    });

    test('the cap holds however many creates race', async () => {
      const owner = await account();
      const results = await Promise.all(Array.from({ length: 30 }, () => store.apiKeys.createApiKey(newKey(owner.uid), 20)));
      assert.equal(results.filter((result) => result === 'cap_reached').length, 10);
      assert.equal((await store.apiKeys.listApiKeys(owner.uid)).length, 20);
    });

    test('deleteApiKey deletes only the account\'s own key', async () => {
      const owner = await account();
      const stranger = await account();
      const key = newKey(owner.uid);
      await store.apiKeys.createApiKey(key, 20);
      assert.equal(await store.apiKeys.deleteApiKey(stranger.uid, key.id), false);
      assert.ok(await store.apiKeys.findApiKeyByHash(key.keyHash));
      assert.equal(await store.apiKeys.deleteApiKey(owner.uid, key.id), true);
      assert.equal(await store.apiKeys.findApiKeyByHash(key.keyHash), undefined);
      assert.equal(await store.apiKeys.deleteApiKey(owner.uid, key.id), false);
    });

    test('the keys survive a rotation and go with the account', async () => {
      const codeHash = randomBytes(32).toString('hex');
      const owner = await store.createAccount({ codeHash, dateCreated: new Date().toISOString(), maxLinks: 20 });
      const key = newKey(owner.uid);
      await store.apiKeys.createApiKey(key, 20);
      await store.rotateAccessCode(owner.uid, codeHash, randomBytes(32).toString('hex'));
      assert.ok(await store.apiKeys.findApiKeyByHash(key.keyHash));
      assert.equal(await store.deleteAccount(owner.uid), true);
      assert.equal(await store.apiKeys.findApiKeyByHash(key.keyHash), undefined);
      assert.deepEqual(await store.apiKeys.listApiKeys(owner.uid), []);
    });

    test('recordApiKeyUses moves LastUsed forward only, for many keys in one call, skipping gone ones', async () => {
      const owner = await account();
      const a = newKey(owner.uid);
      const b = newKey(owner.uid);
      await store.apiKeys.createApiKey(a, 20);
      await store.apiKeys.createApiKey(b, 20);
      await store.apiKeys.recordApiKeyUses([{ id: a.id, lastUsed: '2026-11-26T10:05:00.000Z' }, { id: b.id, lastUsed: '2026-11-26T10:06:00.000Z' }, { id: 'key_gone', lastUsed: '2026-11-26T10:06:00.000Z' }]);
      await store.apiKeys.recordApiKeyUses([{ id: a.id, lastUsed: '2026-11-26T10:01:00.000Z' }]);
      assert.deepEqual((await store.apiKeys.listApiKeys(owner.uid)).map((key) => key.lastUsed), ['2026-11-26T10:05:00.000Z', '2026-11-26T10:06:00.000Z']);
      await store.apiKeys.recordApiKeyUses([]);
    });
  });
}

apiKeyContract('sqlite file', async () => {
  const dir = tempDir('shortlink-keys-');
  const store = await openSqliteStore({ path: join(dir.path, 'store.db') });
  return { store, async cleanup() { await store.close(); dir.remove(); } };
});

const gate = postgresGate();
describe('PostgreSQL', { skip: gate.skip }, () => {
  let database: { url: string; drop(): Promise<void> };
  before(async () => {
    database = await createPostgresDatabase(gate.value!);
  });
  after(async () => {
    await database?.drop();
  });
  apiKeyContract('postgres', async () => {
    const store = await openPostgresStore({ url: database.url, max: 4 });
    return { store, cleanup: () => store.close() };
  });
});
