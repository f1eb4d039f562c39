/**
 * PostgreSQL's failures as the store's errors. The same names and signatures as
 * ../sqlite/errors.ts, plus `refusedByServer`, which only a networked engine needs.
 */
import { storageUnavailable } from '../errors.ts';

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

/** Maps engine failures that a retry later could cure to the storage-unavailable error. */
export function translateError(error: unknown): unknown {
  return isUnavailable(error) ? storageUnavailable(error) : error;
}

/** Runs a database call and rejects with the translated error when it fails. */
export async function guarded<R>(work: () => R): Promise<Awaited<R>> {
  try {
    return await work();
  } catch (error) {
    throw translateError(error);
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
