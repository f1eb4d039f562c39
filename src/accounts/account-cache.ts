import type { AccountRecord } from '../store/store.ts';

/**
 * Remembers accounts found by access-code digest for a short time, so a client making many
 * calls with one access code costs one indexed lookup per `ttlMs` instead of one per call.
 *
 * Safe because an account never changes except its MaxLinks, and only `shortlink admin`
 * (another process) changes that: a running server shows the new value within `ttlMs`. The
 * cap itself is always enforced by the database, never from this copy. Accounts are never
 * deleted. Unknown codes are not remembered, so guessing cannot fill the memory; the size is
 * bounded and the oldest entry goes first.
 */
export interface AccountCache {
  get(codeHash: string): AccountRecord | undefined;
  set(codeHash: string, account: AccountRecord): void;
}

export function createAccountCache({
  ttlMs,
  maxEntries,
  now = () => performance.now(),
}: {
  ttlMs: number;
  maxEntries: number;
  now?: () => number;
}): AccountCache {
  const entries = new Map<string, { account: AccountRecord; expires: number }>();
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
  };
}
