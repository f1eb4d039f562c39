/**
 * Waiting in tests: poll for the observable event a test needs (a counter other tasks advance,
 * a store back after an outage, a port that stops accepting) instead of sleeping for a time
 * that is only long enough on a quiet machine.
 */
import { connect } from 'node:net';
import { setTimeout as pause } from 'node:timers/promises';

/**
 * How long a process may take to become ready (a server's "listening" line, a database that
 * answers) before a test gives up: two minutes. A wait ends as soon as the event happens, so
 * the bound costs nothing on an idle machine, and it outlasts the start-ups a loaded one has
 * been seen to take (20 s and more at a load average of 20 on two cores).
 */
export const READY_BOUND_MS = 120_000;

/** The default bound of waitFor() and the helpers' other waits for an event: one minute. */
export const WAIT_BOUND_MS = 60_000;

export interface WaitForOptions {
  /** Give up after this long. Default WAIT_BOUND_MS: generous, since a wait that passes costs nothing. */
  readonly timeoutMs?: number;
  /** Pause between checks. Default 10 ms. */
  readonly intervalMs?: number;
}

/**
 * Calls `check` until it returns something other than `undefined` or `false`, and resolves
 * with that value; the first check runs at once. Rejects after the timeout with
 * "timed out after N ms waiting for <what>" (`what` may be a function, so the message can show
 * the state at that moment). An error thrown by `check` rejects at once: a check that may
 * fail while waiting (a refused connection) catches its own errors.
 */
export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string | (() => string),
  { timeoutMs = WAIT_BOUND_MS, intervalMs = 10 }: WaitForOptions = {},
): Promise<T> {
  const started = performance.now();
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    const elapsed = performance.now() - started;
    if (elapsed >= timeoutMs) {
      const description = typeof what === 'function' ? what() : what;
      throw new Error(`timed out after ${Math.round(elapsed)} ms waiting for ${description}`);
    }
    await pause(Math.min(intervalMs, timeoutMs - elapsed));
  }
}

/** Whether a TCP connection to `host:port` is accepted right now (closed again at once). */
export function acceptsConnections(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.setTimeout(1000, () => socket.destroy());
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
}
