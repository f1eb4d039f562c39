/**
 * API keys on PostgreSQL (the same name and calls as ../sqlite/api-keys.ts). The cap is
 * settled under the account row's lock: two creates racing for the 20th slot run one after
 * the other, and the second counts the first's key.
 */
import type { ApiKeyStore } from '../../accounts/api-key-store.ts';
import { API_KEY_COLUMNS, API_KEY_GRANT_COLUMNS, apiKeyOf, grantOf, type ApiKeyGrantRow, type ApiKeyRow } from '../api-keys.ts';
import type { Sql } from './connection.ts';

export function prepareApiKeys(sql: Sql, timed: <R>(work: () => PromiseLike<R>) => Promise<Awaited<R>>): ApiKeyStore {
  return {
    async createApiKey(key, max) {
      return timed(() => sql.begin(async (tx) => {
        const [account] = await tx`SELECT uid FROM accounts WHERE uid = ${key.accountUid} FOR UPDATE`;
        if (account === undefined) return undefined;
        const [row] = await tx<ApiKeyRow[]>`
          INSERT INTO api_keys (id, account_uid, name, scopes, key_hash, date_created)
          SELECT ${key.id}, ${key.accountUid}, ${key.name}, ${key.scopes.join(',')}, ${key.keyHash}, ${key.dateCreated}
           WHERE (SELECT count(*) FROM api_keys WHERE account_uid = ${key.accountUid}) < ${max}
          RETURNING ${sql.unsafe(API_KEY_COLUMNS)}`;
        return row === undefined ? 'cap_reached' as const : apiKeyOf(row);
      }));
    },
    async listApiKeys(accountUid) {
      const rows = await timed(() => sql<ApiKeyRow[]>`
        SELECT ${sql.unsafe(API_KEY_COLUMNS)} FROM api_keys WHERE account_uid = ${accountUid} ORDER BY seq`);
      return rows.map(apiKeyOf);
    },
    async deleteApiKey(accountUid, id) {
      const rows = await timed(() => sql`DELETE FROM api_keys WHERE account_uid = ${accountUid} AND id = ${id} RETURNING id`);
      return rows.length > 0;
    },
    async findApiKeyByHash(keyHash) {
      const [row] = await timed(() => sql<ApiKeyGrantRow[]>`
        SELECT ${sql.unsafe(API_KEY_GRANT_COLUMNS)} FROM api_keys k JOIN accounts a ON a.uid = k.account_uid WHERE k.key_hash = ${keyHash}`);
      return row === undefined ? undefined : grantOf(row);
    },
    async recordApiKeyUses(uses) {
      if (uses.length === 0) return;
      // One statement for every key this process used since its last write.
      await timed(() => sql`
        UPDATE api_keys k SET last_used = u.last_used
          FROM unnest(${sql.array(uses.map((use) => use.id), 25)}::text[], ${sql.array(uses.map((use) => use.lastUsed), 25)}::text[]) AS u(id, last_used)
         WHERE k.id = u.id AND (k.last_used IS NULL OR k.last_used < u.last_used)`);
    },
  };
}
