/**
 * API keys on SQLite (the same name and calls as ../postgres/api-keys.ts). Writes run in the
 * store's write batch, which serialises them: the cap's count and the insert are one write.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { ApiKeyStore } from '../../accounts/api-key-store.ts';
import { API_KEY_COLUMNS, API_KEY_GRANT_COLUMNS, apiKeyOf, grantOf, type ApiKeyGrantRow, type ApiKeyRow } from '../api-keys.ts';
import type { WriteBatch } from './write-batch.ts';

export function prepareApiKeys(
  db: DatabaseSync,
  read: <R>(work: () => R) => Promise<R>,
  writes: WriteBatch,
): ApiKeyStore {
  const statements = {
    accountExists: db.prepare('SELECT 1 FROM accounts WHERE uid = ?'),
    insert: db.prepare(
      `INSERT INTO api_keys (id, account_uid, name, scopes, key_hash, date_created)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE (SELECT count(*) FROM api_keys WHERE account_uid = ?2) < ?7
       RETURNING ${API_KEY_COLUMNS}`,
    ),
    list: db.prepare(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE account_uid = ? ORDER BY seq`),
    delete: db.prepare('DELETE FROM api_keys WHERE account_uid = ? AND id = ?'),
    find: db.prepare(`SELECT ${API_KEY_GRANT_COLUMNS} FROM api_keys k JOIN accounts a ON a.uid = k.account_uid WHERE k.key_hash = ?`),
    use: db.prepare('UPDATE api_keys SET last_used = ?2 WHERE id = ?1 AND (last_used IS NULL OR last_used < ?2)'),
  };
  return {
    createApiKey(key, max) {
      return writes.run(() => {
        if (statements.accountExists.get(key.accountUid) === undefined) return undefined;
        const row = statements.insert.get(key.id, key.accountUid, key.name, key.scopes.join(','), key.keyHash, key.dateCreated, max) as ApiKeyRow | undefined;
        return row === undefined ? 'cap_reached' : apiKeyOf(row);
      });
    },
    listApiKeys(accountUid) {
      return read(() => (statements.list.all(accountUid) as unknown as ApiKeyRow[]).map(apiKeyOf));
    },
    deleteApiKey(accountUid, id) {
      return writes.run(() => statements.delete.run(accountUid, id).changes > 0);
    },
    findApiKeyByHash(keyHash) {
      return read(() => {
        const row = statements.find.get(keyHash) as ApiKeyGrantRow | undefined;
        return row === undefined ? undefined : grantOf(row);
      });
    },
    async recordApiKeyUses(uses) {
      await writes.run(() => {
        for (const use of uses) statements.use.run(use.id, use.lastUsed);
      });
    },
  };
}
