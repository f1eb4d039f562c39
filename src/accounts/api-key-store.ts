/**
 * What API keys need from storage (the keys port, CONTRACT §8.5). Each engine under src/store/
 * implements it; the domain never imports an engine.
 */
import type { AccountRecord } from './account-store.ts';

/** What a key may be used for. */
export type ApiKeyScope = 'links:read' | 'links:write' | 'stats:read' | 'webhooks';

export interface ApiKeyRecord {
  /** `key_` and 24 hex digits; not secret. */
  readonly id: string;
  readonly accountUid: number;
  readonly name: string;
  /** In the order of API_KEY_SCOPES, no repeats. */
  readonly scopes: readonly ApiKeyScope[];
  readonly dateCreated: string;
  /** When it last authenticated a request (at most a minute stale), or null. */
  readonly lastUsed: string | null;
}

export interface NewApiKey {
  readonly id: string;
  readonly accountUid: number;
  readonly name: string;
  readonly scopes: readonly ApiKeyScope[];
  /** SHA-256 hex digest of the key's exact text; the key itself is never stored. */
  readonly keyHash: string;
  readonly dateCreated: string;
}

/** A key found by its digest, with its account as it stands. */
export interface ApiKeyGrant {
  readonly key: ApiKeyRecord;
  readonly account: AccountRecord;
}

/** One key's latest use, for `recordApiKeyUses`. */
export interface ApiKeyUse {
  readonly id: string;
  readonly lastUsed: string;
}

/** The API key calls of a store. */
export interface ApiKeyStore {
  /**
   * Stores the key unless its account already holds `max` keys, in one atomic step (two
   * racing creates never make `max + 1`). Undefined when the account is gone.
   */
  createApiKey(key: NewApiKey, max: number): Promise<ApiKeyRecord | 'cap_reached' | undefined>;
  /** The account's keys, oldest first. */
  listApiKeys(accountUid: number): Promise<ApiKeyRecord[]>;
  /** Deletes the key if the account holds it; false when it does not. */
  deleteApiKey(accountUid: number, id: string): Promise<boolean>;
  /** The key with this digest and its account, or undefined. */
  findApiKeyByHash(keyHash: string): Promise<ApiKeyGrant | undefined>;
  /** Moves each key's LastUsed forward to the time given (never back); gone keys are skipped. */
  recordApiKeyUses(uses: readonly ApiKeyUse[]): Promise<void>;
}
