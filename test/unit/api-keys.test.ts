/**
 * The API-key rules on their own (accounts/api-keys.ts): the key's shape and digest, the
 * name and scope rules, the cache (a deleted key is forgotten here at once), and LastUsed
 * written in batches, never per request; and the scanning pattern docs/security.md gives.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ApiKeyRecord, ApiKeyStore, ApiKeyUse, NewApiKey } from '../../src/accounts/api-key-store.ts';
import { API_KEY_PATTERN, createApiKeyService, hashApiKey, newApiKey } from '../../src/accounts/api-keys.ts';
import { DomainError } from '../../src/errors.ts';
import { REPO_ROOT } from '../helpers/working-tree.ts';

const ACCOUNT = { uid: 7, dateCreated: '2026-01-01T00:00:00.000Z', maxLinks: 20, disabled: false };

/** A store in memory that counts its calls. */
function memoryStore() {
  const keys = new Map<string, NewApiKey & { lastUsed: string | null }>();
  const calls = { find: 0, uses: [] as ApiKeyUse[][] };
  const record = (key: NewApiKey & { lastUsed: string | null }): ApiKeyRecord => ({
    id: key.id, accountUid: key.accountUid, name: key.name, scopes: key.scopes, dateCreated: key.dateCreated, lastUsed: key.lastUsed,
  });
  const store: ApiKeyStore = {
    async createApiKey(key) {
      keys.set(key.id, { ...key, lastUsed: null });
      return record(keys.get(key.id)!);
    },
    async listApiKeys(uid) {
      return [...keys.values()].filter((key) => key.accountUid === uid).map(record);
    },
    async deleteApiKey(uid, id) {
      return keys.get(id)?.accountUid === uid && keys.delete(id);
    },
    async findApiKeyByHash(hash) {
      calls.find++;
      const key = [...keys.values()].find((k) => k.keyHash === hash);
      return key === undefined ? undefined : { key: record(key), account: ACCOUNT };
    },
    async recordApiKeyUses(uses) {
      calls.uses.push([...uses]);
      for (const use of uses) {
        const key = keys.get(use.id);
        if (key !== undefined && (key.lastUsed === null || key.lastUsed < use.lastUsed)) key.lastUsed = use.lastUsed;
      }
    },
  };
  return { store, calls };
}

test('a key is slk_ and 43 base64url characters, different each time; its digest is the SHA-256 of its exact text', () => {
  const a = newApiKey();
  assert.match(a, API_KEY_PATTERN);
  assert.notEqual(a, newApiKey());
  assert.equal(hashApiKey(a).length, 64);
  assert.notEqual(hashApiKey(a), hashApiKey(a.toUpperCase()));
});

test('the scanning pattern of docs/security.md matches every key and nothing longer', () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'security.md'), 'utf8');
  const bounded = /`(\(\?:\^\|[^`]+)`/.exec(doc.slice(doc.indexOf('Secret scanning')))?.[1];
  assert.ok(bounded, 'the bounded pattern is in the docs');
  const pattern = new RegExp(bounded);
  for (let i = 0; i < 50; i++) {
    const key = newApiKey();
    assert.equal(pattern.exec(`token: ${key}\n`)?.[1], key);
    assert.equal(pattern.exec(`${key}x`), null);
  }
});

test('create checks the name and scopes, answers the scopes in order without repeats, and never stores the key', async (t) => {
  const { store } = memoryStore();
  const service = createApiKeyService({ store, clock: () => new Date('2026-11-26T10:00:00.000Z') });
  t.after(() => service.close());
  for (const [name, scopes] of [[undefined, 'webhooks'], ['', 'webhooks'], ['x'.repeat(101), 'webhooks'], ['a\tb', 'webhooks'], ['n', undefined], ['n', ' '], ['n', 'links:read,admin']] as const) {
    await assert.rejects(service.create(ACCOUNT, { name, scopes }), (error: unknown) => error instanceof DomainError && error.code === 'invalid_parameter');
  }
  const created = await service.create(ACCOUNT, { name: '🔑'.repeat(100), scopes: 'webhooks, links:read,webhooks' });
  assert.deepEqual(created.scopes, ['links:read', 'webhooks']);
  assert.match(created.key, API_KEY_PATTERN);
  assert.doesNotMatch(JSON.stringify(await store.listApiKeys(ACCOUNT.uid)), /slk_/);
});

test('authenticate remembers a key; deleting it here forgets it at once; LastUsed is written in one batch, not per request', async (t) => {
  const { store, calls } = memoryStore();
  let now = new Date('2026-11-26T10:00:00.000Z');
  const service = createApiKeyService({ store, clock: () => now, cacheMs: 60_000, useFlushMs: 3_600_000 });
  t.after(() => service.close());
  const a = await service.create(ACCOUNT, { name: 'a', scopes: 'links:read' });
  const b = await service.create(ACCOUNT, { name: 'b', scopes: 'stats:read' });
  for (let i = 0; i < 50; i++) {
    now = new Date(Date.parse('2026-11-26T10:00:00.000Z') + i * 1000);
    const { account, credential } = await service.authenticate(i % 2 === 0 ? a.key : b.key);
    assert.equal(account.uid, ACCOUNT.uid);
    assert.deepEqual(credential.scopes, i % 2 === 0 ? ['links:read'] : ['stats:read']);
  }
  assert.equal(calls.find, 2, 'one lookup per key');
  assert.deepEqual(calls.uses, [], 'nothing written per request');
  await service.flushUses();
  assert.deepEqual(calls.uses, [[{ id: a.id, lastUsed: '2026-11-26T10:00:48.000Z' }, { id: b.id, lastUsed: '2026-11-26T10:00:49.000Z' }]]);
  await service.flushUses();
  assert.equal(calls.uses.length, 1, 'nothing pending, nothing written');

  await service.remove(ACCOUNT, a.id);
  await assert.rejects(service.authenticate(a.key), (error: unknown) => error instanceof DomainError && error.code === 'unauthenticated');
  await assert.rejects(service.remove(ACCOUNT, a.id), (error: unknown) => error instanceof DomainError && error.code === 'api_key_not_found');
  await assert.rejects(service.authenticate(`${b.key.slice(0, -1)}`), (error: unknown) => error instanceof DomainError && error.code === 'unauthenticated');
});

test('uses whose write failed are kept for the next one', async (t) => {
  const { store, calls } = memoryStore();
  let failing = true;
  const failures: unknown[] = [];
  const flaky: ApiKeyStore = {
    ...store,
    recordApiKeyUses: (uses) => (failing ? Promise.reject(new Error('down')) : store.recordApiKeyUses(uses)),
  };
  const service = createApiKeyService({ store: flaky, clock: () => new Date('2026-11-26T10:00:00.000Z'), useFlushMs: 3_600_000, onFlushError: (e) => failures.push(e) });
  t.after(() => service.close());
  const a = await service.create(ACCOUNT, { name: 'a', scopes: 'links:read' });
  await service.authenticate(a.key);
  await service.flushUses();
  assert.equal(failures.length, 1);
  failing = false;
  await service.flushUses();
  assert.deepEqual(calls.uses, [[{ id: a.id, lastUsed: '2026-11-26T10:00:00.000Z' }]]);
});
