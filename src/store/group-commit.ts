/**
 * Group commit for access counting. Resolutions that arrive while the event loop is busy
 * are gathered per shortcode and written together: one transaction for the whole batch and
 * one `accesses = accesses + n` per distinct link. Each caller's promise settles only after
 * that transaction has committed, so nothing is answered before it is durable, and the n
 * callers of one link are handed n consecutive counts, never the same one twice.
 */

import { channel } from 'node:diagnostics_channel';

/** What `GROUP_COMMIT_CHANNEL` publishes after each batch (read by src/metrics/). */
export interface BatchEvent {
  /** Accesses the batch counted. */
  readonly accesses: number;
  readonly durationMs: number;
  readonly ok: boolean;
}

/** A diagnostics channel, so metrics can watch batches without this module knowing them. */
export const GROUP_COMMIT_CHANNEL = 'shortlink:group-commit';
const batches = channel(GROUP_COMMIT_CHANNEL);

export interface CountedLink<T> {
  /** The link row after the batch's increment. */
  readonly row: T;
  /** The count stored by this batch: the highest of the counts handed out. */
  readonly accesses: number;
}

/**
 * Applies `increments` (shortcode → how many accesses to add) in one durable step and
 * returns, for each shortcode that exists, the row with its new total. Must be atomic:
 * either every increment is committed or the call throws.
 */
export type ApplyIncrements<T> = (increments: ReadonlyMap<string, number>) => Promise<Map<string, CountedLink<T>>>;

interface Waiter<T> {
  resolve(value: T | undefined, accesses: number): void;
  reject(error: unknown): void;
}

export interface GroupCommit<T> {
  /** Counts one access to `shortCode`; settles with the row and this access's own count. */
  count(shortCode: string): Promise<{ row: T; accesses: number } | undefined>;
  /** Settles once every access counted so far has been written. */
  drain(): Promise<void>;
}

export function createGroupCommit<T>(apply: ApplyIncrements<T>): GroupCommit<T> {
  let pending = new Map<string, Waiter<T>[]>();
  let scheduled = false;
  let inFlight: Promise<void> | undefined;

  async function flush(batch: Map<string, Waiter<T>[]>): Promise<void> {
    const increments = new Map<string, number>();
    let accesses = 0;
    for (const [code, waiters] of batch) {
      increments.set(code, waiters.length);
      accesses += waiters.length;
    }
    const started = performance.now();
    let results: Map<string, CountedLink<T>>;
    try {
      results = await apply(increments);
      if (batches.hasSubscribers) batches.publish({ accesses, durationMs: performance.now() - started, ok: true } satisfies BatchEvent);
    } catch (error) {
      if (batches.hasSubscribers) batches.publish({ accesses, durationMs: performance.now() - started, ok: false } satisfies BatchEvent);
      for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
      return;
    }
    for (const [code, waiters] of batch) {
      const result = results.get(code);
      if (result === undefined) {
        for (const waiter of waiters) waiter.resolve(undefined, 0);
        continue;
      }
      // The batch added waiters.length; hand them out in arrival order.
      let accesses = result.accesses - waiters.length;
      for (const waiter of waiters) waiter.resolve(result.row, ++accesses);
    }
  }

  // One batch at a time: while one is being written, new accesses gather into the next, so
  // under load a batch holds everything that arrived during the previous commit.
  function run(): void {
    scheduled = false;
    if (inFlight !== undefined || pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    inFlight = flush(batch).finally(() => {
      inFlight = undefined;
      if (pending.size > 0) run();
    });
  }

  return {
    count(shortCode) {
      return new Promise((resolve, reject) => {
        let waiters = pending.get(shortCode);
        if (waiters === undefined) {
          waiters = [];
          pending.set(shortCode, waiters);
        }
        waiters.push({
          resolve: (row, accesses) => resolve(row === undefined ? undefined : { row, accesses }),
          reject,
        });
        if (!scheduled && inFlight === undefined) {
          scheduled = true;
          setImmediate(run);
        }
      });
    },
    async drain() {
      while (inFlight !== undefined || pending.size > 0) {
        if (inFlight === undefined) run();
        await inFlight;
      }
    },
  };
}
