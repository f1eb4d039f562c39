/**
 * Readiness from what the storage really did (issue 13, item 8). A `SELECT 1` answers on a
 * full disk and on a database with damaged pages while every real call fails, so `/readyz`
 * also weighs the outcome of the latest writes: a write that failed for the storage marks it
 * not ready until a write succeeds (a real one, or the probe `/readyz` then commits), and
 * damaged data marks it not ready until the process restarts.
 */
import { isStorageDamaged, isStorageFailure, STORAGE_DAMAGED } from './errors.ts';
import type { Store } from './store.ts';

/** Why the storage is not ready; `retry` false when waiting will not cure it. */
export class StorageNotReady extends Error {
  readonly reason: string;
  readonly retry: boolean;

  constructor(reason: string, retry: boolean, cause?: unknown) {
    super(reason, cause === undefined ? undefined : { cause });
    this.name = 'StorageNotReady';
    this.reason = reason;
    this.retry = retry;
  }
}

export interface StorageHealth {
  /** `store` with every call's outcome recorded. */
  readonly store: Store;
  /** The readiness check: resolves when the storage can serve, rejects with StorageNotReady. */
  check(): Promise<void>;
}

export interface StorageHealthOptions {
  /** Called once, when a call first reports damaged data. */
  readonly onDamaged?: (error: Error) => void;
}

export function trackStorageHealth(store: Store, { onDamaged }: StorageHealthOptions = {}): StorageHealth {
  // Set by a write that failed for the storage, cleared by the next write that succeeds.
  let writeFailure: Error | undefined;
  let damaged: Error | undefined;

  function observe(error: unknown, isWrite: boolean): void {
    if (isStorageDamaged(error)) {
      if (damaged === undefined) {
        damaged = error;
        onDamaged?.(error);
      }
    } else if (isWrite && isStorageFailure(error)) {
      writeFailure = error;
    }
  }

  function tracked<A extends unknown[], R>(call: (...args: A) => Promise<R>, isWrite: boolean): (...args: A) => Promise<R> {
    return (...args) => call(...args).then(
      (result) => {
        if (isWrite) writeFailure = undefined;
        return result;
      },
      (error: unknown) => {
        observe(error, isWrite);
        throw error;
      },
    );
  }

  const trackedStore: Store = {
    engine: store.engine,
    createAccount: tracked((account) => store.createAccount(account), true),
    findAccountByCodeHash: tracked((hash) => store.findAccountByCodeHash(hash), false),
    createLink: tracked((link) => store.createLink(link), true),
    deleteLink: tracked((code, uid) => store.deleteLink(code, uid), true),
    listLinks: tracked((uid) => store.listLinks(uid), false),
    listLinkDetails: tracked((uid, query) => store.listLinkDetails(uid, query), false),
    updateLink: tracked((code, uid, changes) => store.updateLink(code, uid, changes), true),
    // Every resolution writes (it counts an access).
    resolveLink: tracked((code, now) => store.resolveLink(code, now), true),
    findLink: tracked((code, now) => store.findLink(code, now), false),
    ping: (options) => store.ping(options),
    close: () => store.close(),
  };

  return {
    store: trackedStore,
    async check() {
      if (damaged !== undefined) throw new StorageNotReady(STORAGE_DAMAGED, false, damaged);
      const failure = writeFailure;
      const probeWrite = failure !== undefined;
      try {
        await store.ping({ write: probeWrite });
      } catch (error) {
        observe(error, probeWrite);
        if (isStorageDamaged(error)) throw new StorageNotReady(STORAGE_DAMAGED, false, error);
        throw error;
      }
      // Unless a real write failed again while the probe ran.
      if (probeWrite && writeFailure === failure) writeFailure = undefined;
    },
  };
}
