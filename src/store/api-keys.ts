/**
 * API keys (CONTRACT §8.5) as both engines store them: one `api_keys` row per key, its scopes
 * comma-joined, looked up by the digest of the key (unique index). The engines' files
 * (sqlite/api-keys.ts, postgres/api-keys.ts) hold the statements; this holds what they share.
 */
import type { ApiKeyRecord, ApiKeyScope } from '../accounts/api-key-store.ts';

/** A key's row as read (scopes comma-joined). */
export interface ApiKeyRow {
  readonly id: string;
  readonly accountUid: number;
  readonly name: string;
  readonly scopes: string;
  readonly dateCreated: string;
  readonly lastUsed: string | null;
}

export const API_KEY_COLUMNS =
  'id, account_uid AS "accountUid", name, scopes, date_created AS "dateCreated", last_used AS "lastUsed"';

/** The key's columns and its account's, in one row (the account's prefixed `a_`). */
export const API_KEY_GRANT_COLUMNS =
  `k.id, k.account_uid AS "accountUid", k.name, k.scopes, k.date_created AS "dateCreated", k.last_used AS "lastUsed",
   a.uid AS "a_uid", a.date_created AS "a_dateCreated", a.max_links AS "a_maxLinks", a.disabled AS "a_disabled"`;

export type ApiKeyGrantRow = ApiKeyRow & {
  readonly a_uid: number;
  readonly a_dateCreated: string;
  readonly a_maxLinks: number;
  readonly a_disabled: boolean | number;
};

export function apiKeyOf(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    accountUid: Number(row.accountUid),
    name: row.name,
    scopes: row.scopes.split(',') as ApiKeyScope[],
    dateCreated: row.dateCreated,
    lastUsed: row.lastUsed,
  };
}

export function grantOf(row: ApiKeyGrantRow) {
  return {
    key: apiKeyOf(row),
    account: { uid: Number(row.a_uid), dateCreated: row.a_dateCreated, maxLinks: Number(row.a_maxLinks), disabled: Boolean(row.a_disabled) },
  };
}
