/**
 * The storage deadline (`STORAGE_TIMEOUT`, CONTRACT §2): a store call that has not settled
 * within it rejects with the storage-unavailable error (503 with Retry-After), so a frozen or
 * locked database costs a client at most that long instead of as long as it stays frozen.
 * Batched calls get theirs from the batcher (src/store/batcher.ts), which knows whether a
 * call was already sent; single calls use `withDeadline`. ADR 15 says what a late outcome means.
 */
import { storageUnavailable } from './errors.ts';

export const DEFAULT_STORAGE_TIMEOUT_MS = 5000;

/** The cause of a storage-unavailable error raised by the deadline, for the log. */
export class StorageTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`storage did not answer within ${timeoutMs} ms`);
    this.name = 'StorageTimeoutError';
  }
}

export function storageTimedOut(timeoutMs: number): Error {
  return storageUnavailable(new StorageTimeoutError(timeoutMs));
}

/**
 * Settles like `work`, or rejects with the storage-unavailable error once `timeoutMs` has
 * passed; then `onTimeout` runs (to withdraw a query not sent yet). `work` goes on: its
 * late outcome is ignored.
 */
export function withDeadline<R>(work: PromiseLike<R>, timeoutMs: number, onTimeout?: () => void): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(storageTimedOut(timeoutMs));
      onTimeout?.();
    }, timeoutMs);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
