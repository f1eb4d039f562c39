/**
 * The errors a store raises, whatever the engine. Each engine's `errors.ts` decides which of
 * its driver's failures are which; this module owns what they become.
 */
import { DomainError, ErrorCode } from '../errors.ts';

/** The database cannot serve right now, and a retry later may succeed (HTTP 503). */
export function storageUnavailable(cause: unknown): DomainError {
  return new DomainError(ErrorCode.StorageUnavailable, 'storage unavailable', { retryAfter: 1, cause });
}

export class DatabaseMissingError extends Error {
  constructor(path: string) {
    super(`there is no database at ${path} (run "shortlink migrate" to create one, or check DATABASE_URL)`);
    this.name = 'DatabaseMissingError';
  }
}
