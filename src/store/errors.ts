/**
 * The errors a store raises, whatever the engine. Each engine's `errors.ts` decides which of
 * its driver's failures are which; this module owns what they become.
 */
import { DomainError, ErrorCode } from '../errors.ts';

/** The database cannot serve right now, and a retry later may succeed (HTTP 503). */
export function storageUnavailable(cause: unknown): DomainError {
  return new DomainError(ErrorCode.StorageUnavailable, 'storage unavailable', { retryAfter: 1, cause });
}

/** The reason a damaged database gives, on the wire and in `/readyz`. */
export const STORAGE_DAMAGED = 'storage damaged';

/**
 * The database reports damaged data (PostgreSQL's data-corruption class XX001/XX002): a
 * retry will not cure it, an operator must repair or restore it. Still 503 (the service
 * cannot serve, the request was fine) but without Retry-After, so clients are not told to
 * try again in a second, forever.
 */
export function storageDamaged(cause: unknown): DomainError {
  return new DomainError(ErrorCode.StorageUnavailable, STORAGE_DAMAGED, { cause });
}

/** True for the error storageDamaged makes. */
export function isStorageDamaged(error: unknown): error is DomainError {
  return error instanceof DomainError && error.code === ErrorCode.StorageUnavailable && error.message === STORAGE_DAMAGED;
}

/** True for the errors storageUnavailable and storageDamaged make. */
export function isStorageFailure(error: unknown): error is DomainError {
  return error instanceof DomainError && error.code === ErrorCode.StorageUnavailable;
}

export class DatabaseMissingError extends Error {
  constructor(path: string) {
    super(`there is no database at ${path} (run "shortlink migrate" to create one, or check DATABASE_URL)`);
    this.name = 'DatabaseMissingError';
  }
}

/** The database file is damaged: the server refuses to start on it. */
export class DatabaseDamagedError extends Error {
  constructor(place: string, problem: string) {
    super(`database damaged: ${place}: ${problem.replace(/\s+/g, ' ')}; restore it from a backup, or recover it with sqlite3's .recover`);
    this.name = 'DatabaseDamagedError';
  }
}
