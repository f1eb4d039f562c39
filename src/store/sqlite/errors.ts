/**
 * SQLite's failures as the store's errors. The same names and signatures as
 * ../postgres/errors.ts, plus the database's path, which tells damage from a failing disk.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { storageDamaged, storageUnavailable } from '../errors.ts';

// SQLite primary result codes that mean "the database cannot serve right now" rather than
// "this statement is wrong": busy or locked, read-only, I/O error, disk full, cannot open.
const UNAVAILABLE_CODES = new Set([5, 6, 8, 10, 13, 14]);
// SQLITE_CORRUPT "database disk image is malformed" and SQLITE_NOTADB.
const DAMAGED_CODES = new Set([11, 26]);

function primaryCode(error: unknown): number | undefined {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  return typeof errcode === 'number' ? errcode & 0xff : undefined;
}

/** True when a retry later could cure the failure. */
export function isUnavailable(error: unknown): boolean {
  const code = primaryCode(error);
  return code !== undefined && UNAVAILABLE_CODES.has(code);
}

/** True when SQLite reports damaged data: SQLITE_CORRUPT or SQLITE_NOTADB. */
export function isDamaged(error: unknown): boolean {
  const code = primaryCode(error);
  return code !== undefined && DAMAGED_CODES.has(code);
}

/**
 * True when the file at `path` can be opened and read. After an I/O error (a filesystem the
 * kernel shut down or remounted read-only) SQLite reports every later read as SQLITE_CORRUPT
 * although the file is sound (test/e2e/storage-faults.test.ts); the filesystem then refuses
 * this read too (EIO), which tells a failing disk, that may come back, from damaged data.
 */
function fileAnswers(path: string): boolean {
  if (path === ':memory:') return true;
  try {
    const fd = openSync(path, 'r');
    try {
      readSync(fd, Buffer.alloc(100), 0, 100, 0);
    } finally {
      closeSync(fd);
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * Maps engine failures that a retry later could cure to the storage-unavailable error, and
 * damaged data to the storage-damaged one: SQLITE_CORRUPT or SQLITE_NOTADB while the file
 * itself reads fine. `path` is the database's file (`:memory:` for none).
 */
export function translateError(error: unknown, path: string): unknown {
  if (isDamaged(error)) return fileAnswers(path) ? storageDamaged(error) : storageUnavailable(error);
  return isUnavailable(error) ? storageUnavailable(error) : error;
}

/**
 * Runs a database call and rejects with the translated error when it fails. SQLite calls
 * are synchronous, so `work` usually throws rather than rejects; both are handled.
 */
export function guarded<R>(work: () => R, path: string): Promise<Awaited<R>> {
  try {
    const result = work();
    return result instanceof Promise
      ? result.catch((error: unknown) => Promise.reject(translateError(error, path)))
      : Promise.resolve(result as Awaited<R>);
  } catch (error) {
    return Promise.reject(translateError(error, path));
  }
}
