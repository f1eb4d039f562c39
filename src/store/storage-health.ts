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
  /**
   * Records how one store call settled (`error` undefined: it succeeded). The metrics
   * decorator (src/metrics/instrumented-store.ts) calls it from the callbacks it already
   * has on every call, so health costs no promise or closure of its own per call (ADR 22).
   */
  observe(operation: string, error?: unknown): void;
  /** The readiness check, probing through `store`: resolves when the storage can serve, rejects with StorageNotReady. */
  check(store: Pick<Store, 'ping'>): Promise<void>;
}

export interface StorageHealthOptions {
  /** Called once, when a call first reports damaged data. */
  readonly onDamaged?: (error: Error) => void;
}

/**
 * Which store calls write. Every resolution writes (it counts an access). A call added to
 * Store fails to compile here until it is classified. The statistics fold is not counted:
 * most folds find nothing to move and commit an empty transaction, which a full disk still
 * allows, so its success would clear a real write's failure without proving anything (seen
 * as `/readyz` answering 200 on a full disk when a fold ran in between); the resolutions
 * that feed it are writes of their own.
 */
const WRITES: Readonly<Record<Exclude<keyof Store, 'engine' | 'webhooks' | 'streamSlots' | 'apiKeys' | 'domains' | 'ping' | 'close' | 'watchCounts'>, boolean>> = {
  createAccount: true,
  findAccountByCodeHash: false,
  createLink: true,
  deleteLink: true,
  listLinks: false,
  listLinkDetails: false,
  updateLink: true,
  resolveLink: true,
  findLink: false,
  readStats: false,
  foldStats: false,
  rotateAccessCode: true,
  deleteAccount: true,
  listAccounts: false,
  updateAccount: true,
  searchLinks: false,
  takeDownLink: true,
};

export function trackStorageHealth({ onDamaged }: StorageHealthOptions = {}): StorageHealth {
  // Set by a write that failed for the storage, cleared by the next write that succeeds.
  let writeFailure: Error | undefined;
  let damaged: Error | undefined;

  function observeFailure(error: unknown, isWrite: boolean): void {
    if (isStorageDamaged(error)) {
      if (damaged === undefined) {
        damaged = error;
        onDamaged?.(error);
      }
    } else if (isWrite && isStorageFailure(error)) {
      writeFailure = error;
    }
  }

  return {
    observe(operation, error) {
      const isWrite = WRITES[operation as keyof typeof WRITES] === true;
      if (error === undefined) {
        if (isWrite) writeFailure = undefined;
      } else {
        observeFailure(error, isWrite);
      }
    },
    async check(store) {
      if (damaged !== undefined) throw new StorageNotReady(STORAGE_DAMAGED, false, damaged);
      const failure = writeFailure;
      const probeWrite = failure !== undefined;
      try {
        await store.ping({ write: probeWrite });
      } catch (error) {
        observeFailure(error, probeWrite);
        if (isStorageDamaged(error)) throw new StorageNotReady(STORAGE_DAMAGED, false, error);
        throw error;
      }
      // Unless a real write failed again while the probe ran.
      if (probeWrite && writeFailure === failure) writeFailure = undefined;
    },
  };
}
