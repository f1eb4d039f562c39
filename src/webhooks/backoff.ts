/**
 * When a failed delivery is tried again (CONTRACT §7.5): about 5 s, 30 s, 2 min, 10 min and
 * 1 h after the attempts 1 to 5, then hourly, each ±20 % (jitter, so that the retries of a
 * receiver that was down do not arrive together), until 24 h after the event: then it fails.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The delay after attempt 1, 2, …; hourly after the last. */
export const RETRY_DELAYS_MS: readonly number[] = [5 * SECOND, 30 * SECOND, 2 * MINUTE, 10 * MINUTE, HOUR];
export const RETRY_FOR_MS = 24 * HOUR;
export const JITTER = 0.2;

/** The delay after `attempts` attempts (1 or more) with `random` in [0, 1) for the jitter. */
export function retryDelay(attempts: number, random: number = Math.random()): number {
  const base = RETRY_DELAYS_MS[Math.max(0, attempts - 1)] ?? HOUR;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random));
}

/**
 * When to try again (ms since the epoch) after `attempts` failed attempts at `now`, or
 * undefined when that would be past 24 h after the event (`occurredAt`, ms): it has failed.
 */
export function nextAttemptAt(occurredAt: number, attempts: number, now: number, random: number = Math.random()): number | undefined {
  const at = now + retryDelay(attempts, random);
  return at > occurredAt + RETRY_FOR_MS ? undefined : at;
}
