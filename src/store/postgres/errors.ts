/**
 * PostgreSQL's failures as the store's errors. The same names and signatures as
 * ../sqlite/errors.ts, plus `refusedByServer`, which only a networked engine needs.
 */
import { storageDamaged, storageUnavailable } from '../errors.ts';

// Connection-level failures (client side, and SQLSTATE classes 08 connection exception,
// 53 insufficient resources, 57P admin shutdown / cannot connect now) mean "try later".
const UNAVAILABLE_CLIENT_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN',
  'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT',
]);

/** True when a retry later could cure the failure. */
export function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  return UNAVAILABLE_CLIENT_CODES.has(code) || code.startsWith('08') || code.startsWith('53') || code.startsWith('57P');
}

/** True when PostgreSQL reports damaged data: SQLSTATE XX001 data_corrupted, XX002 index_corrupted. */
export function isDamaged(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'XX001' || code === 'XX002';
}

/**
 * Maps engine failures that a retry later could cure to the storage-unavailable error, and
 * damaged data to the storage-damaged one.
 */
export function translateError(error: unknown): unknown {
  if (isDamaged(error)) return storageDamaged(error);
  return isUnavailable(error) ? storageUnavailable(error) : error;
}

/**
 * True when the server refused a new connection because its (or the role's, or the
 * database's) connection limit is reached: SQLSTATE 53300, which PostgreSQL raises only
 * while a connection starts, before any statement ran.
 */
export function refusedConnection(error: unknown): boolean {
  return (error as { code?: unknown }).code === '53300';
}

// How long a call keeps retrying a refused connection before it answers 503. Other
// instances release their connections within milliseconds under load; a pool that has
// connections of its own hands the retry to one of them as soon as it is idle.
const REFUSED_CONNECTION_RETRY_MS = 1000;

/**
 * Runs a database call and rejects with the translated error when it fails. A call that
 * failed only because a new connection was refused (the pool grew past a connection limit)
 * is run again after a short wait, so a full server queues requests instead of failing them:
 * nothing of it reached the database, so it cannot apply twice.
 */
export async function guarded<R>(work: () => R): Promise<Awaited<R>> {
  const started = performance.now();
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    try {
      return await work();
    } catch (error) {
      if (!refusedConnection(error) || performance.now() - started + wait > REFUSED_CONNECTION_RETRY_MS) throw translateError(error);
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/**
 * True when PostgreSQL itself refused a statement (an SQLSTATE outside the "unavailable"
 * classes): its transaction was rolled back, so running the work again cannot apply it twice.
 */
export function refusedByServer(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !isUnavailable(error);
}
