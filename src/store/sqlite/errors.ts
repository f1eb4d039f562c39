/**
 * SQLite's failures as the store's errors. The same names and signatures as
 * ../postgres/errors.ts.
 */
import { storageUnavailable } from '../errors.ts';

// SQLite primary result codes that mean "the database cannot serve right now" rather than
// "this statement is wrong": busy or locked, read-only, I/O error, disk full, cannot open.
// Also "malformed" and "not a database": after an I/O error (a filesystem gone read-only)
// every later read reports SQLITE_CORRUPT although the file is sound; either way it is the
// storage that fails, not the request (test/e2e/storage-faults.test.ts).
const UNAVAILABLE_CODES = new Set([5, 6, 8, 10, 11, 13, 14, 26]);

/** True when a retry later could cure the failure. */
export function isUnavailable(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown }).errcode;
  return typeof errcode === 'number' && UNAVAILABLE_CODES.has(errcode & 0xff);
}

/** Maps engine failures that a retry later could cure to the storage-unavailable error. */
export function translateError(error: unknown): unknown {
  return isUnavailable(error) ? storageUnavailable(error) : error;
}

/**
 * Runs a database call and rejects with the translated error when it fails. SQLite calls
 * are synchronous, so `work` usually throws rather than rejects; both are handled.
 */
export function guarded<R>(work: () => R): Promise<Awaited<R>> {
  try {
    const result = work();
    return result instanceof Promise
      ? result.catch((error: unknown) => Promise.reject(translateError(error)))
      : Promise.resolve(result as Awaited<R>);
  } catch (error) {
    return Promise.reject(translateError(error));
  }
}
