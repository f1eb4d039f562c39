import type { AccountRecord } from './account-store.ts';

/**
 * Remembers accounts found by access-code digest for a short time, so a client making many
 * calls with one access code costs one indexed lookup per `ttlMs` instead of one per call.
 *
 * An account changes in four ways, and each is seen within `ttlMs` everywhere (ADR 18):
 * its MaxLinks and its disabled flag (an administrator, through `/v1/admin/…` or the CLI), its
 * access code (rotation) and its existence (deletion). The process that makes the change
 * evicts at once (`evict`, `evictAccount`); every other process, worker or instance stops
 * using its copy when the entry expires, which is why the TTL stays well under the contract's
 * "within 1 s". The cap itself is always enforced by the database, never from this copy.
 * Unknown codes are not remembered, so guessing cannot fill the memory; the size is bounded
 * and the oldest entry goes first. API keys (api-keys.ts) use a cache of their own of the same
 * kind, keyed by the key's digest, whose entries carry the key's id and scopes.
 */
export interface AccountCache<T extends AccountRecord = AccountRecord> {
  get(codeHash: string): T | undefined;
  set(codeHash: string, account: T): void;
  /** Forgets one access code's entry (its account was rotated or deleted here). */
  evict(codeHash: string): void;
  /** Forgets every entry of the account (an administrator changed or deleted it here). */
  evictAccount(uid: number): void;
  /** Forgets every entry the predicate picks (a scan; for rare changes). */
  evictWhere(picked: (account: T) => boolean): void;
}

export function createAccountCache<T extends AccountRecord = AccountRecord>({
  ttlMs,
  maxEntries,
  now = () => performance.now(),
}: {
  ttlMs: number;
  maxEntries: number;
  now?: () => number;
}): AccountCache<T> {
  const entries = new Map<string, { account: T; expires: number }>();
  return {
    get(codeHash) {
      const entry = entries.get(codeHash);
      if (entry === undefined) return undefined;
      if (entry.expires <= now()) {
        entries.delete(codeHash);
        return undefined;
      }
      return entry.account;
    },
    set(codeHash, account) {
      if (ttlMs <= 0) return;
      entries.delete(codeHash); // re-inserted at the end: insertion order is age order
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
      entries.set(codeHash, { account, expires: now() + ttlMs });
    },
    evict(codeHash) {
      entries.delete(codeHash);
    },
    evictAccount(uid) {
      // A scan of at most maxEntries, for a rare administrator's action.
      for (const [codeHash, entry] of entries) if (entry.account.uid === uid) entries.delete(codeHash);
    },
    evictWhere(picked) {
      for (const [codeHash, entry] of entries) if (picked(entry.account)) entries.delete(codeHash);
    },
  };
}
