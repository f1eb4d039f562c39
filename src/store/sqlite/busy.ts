/**
 * Waiting for SQLite's write lock without blocking the event loop. node:sqlite is
 * synchronous: with a busy timeout, a statement that finds the lock taken (an operator's
 * transaction, the CLI, another WORKERS process) sleeps inside the call, and every request of
 * the process waits with it. The server's connection therefore has a busy timeout of 0, and
 * the attempt is repeated from a timer instead, with a growing pause, until the storage
 * deadline; meanwhile the process serves everything else (/healthz included).
 */

// SQLITE_BUSY and SQLITE_LOCKED (primary codes; extended ones carry them in the low byte).
const BUSY_CODES = new Set([5, 6]);

/** True when `error` is SQLite saying another connection holds a lock this one needs. */
export function isBusy(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  return typeof errcode === 'number' && BUSY_CODES.has(errcode & 0xff);
}

const FIRST_PAUSE_MS = 1;
const LONGEST_PAUSE_MS = 50;

/**
 * Runs `attempt` at once and, while it throws SQLITE_BUSY, again after 1, 2, 4 … 50 ms, until
 * `timeoutMs` has passed or `signal` is aborted; then rejects with the last busy error (which
 * the store translates to storage-unavailable). `attempt` must leave nothing behind when it
 * throws (a transaction rolled back), so that running it again is safe. No timer is created
 * when the first attempt succeeds.
 */
export function retryWhileBusy<R>(attempt: () => R, timeoutMs: number, signal?: AbortSignal): Promise<R> {
  try {
    return Promise.resolve(attempt());
  } catch (error) {
    if (!isBusy(error)) return Promise.reject(error);
    const giveUpAt = performance.now() + timeoutMs;
    return new Promise<R>((resolve, reject) => {
      let pause = FIRST_PAUSE_MS;
      const again = (lastError: unknown) => {
        const left = giveUpAt - performance.now();
        if (signal?.aborted === true || left <= 0) {
          reject(lastError);
          return;
        }
        setTimeout(() => {
          // Aborted while waiting: the caller has been answered 503, so nothing may be applied now.
          if (signal?.aborted === true) {
            reject(lastError);
            return;
          }
          try {
            resolve(attempt());
          } catch (next) {
            if (!isBusy(next)) reject(next);
            else again(next);
          }
        }, Math.min(pause, left));
        pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
      };
      again(error);
    });
  }
}
