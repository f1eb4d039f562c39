/**
 * Group commit for access counting. Resolutions that arrive while the previous batch is
 * being written are gathered and written together (src/store/batcher.ts): one transaction
 * for the whole batch and one `accesses = accesses + n` per distinct link. Each caller's
 * promise settles only after that transaction has committed, so nothing is answered before
 * it is durable, and the n callers of one link are handed n consecutive counts, never the
 * same one twice.
 */

import { channel } from 'node:diagnostics_channel';
import { createBatcher } from './batcher.ts';

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
 * either every increment is committed or the call throws. `signal` is aborted when one of
 * the batch's resolutions has passed the storage deadline: give up if nothing was sent yet.
 */
export type ApplyIncrements<T> = (
  increments: ReadonlyMap<string, number>,
  signal: AbortSignal,
) => Promise<Map<string, CountedLink<T>>>;

export interface GroupCommit<T> {
  /** Counts one access to `shortCode`; settles with the row and this access's own count. */
  count(shortCode: string): Promise<{ row: T; accesses: number } | undefined>;
  /** Settles once every access counted so far has been written. */
  drain(): Promise<void>;
}

/**
 * `timeoutMs`: the storage deadline. A resolution answered 503 by it before its batch was
 * sent is never counted; one whose batch was in flight may still be counted (ADR 15).
 */
export function createGroupCommit<T>(apply: ApplyIncrements<T>, { timeoutMs }: { timeoutMs?: number | undefined } = {}): GroupCommit<T> {
  // A failed batch fails every access in it: the batch is atomic, so none of them was
  // counted. (Not retried one by one: a lost connection leaves a commit's outcome unknown.)
  const batcher = createBatcher<string, CountedLink<T> | undefined>(async (codes, signal) => {
    const increments = new Map<string, number>();
    for (const code of codes) increments.set(code, (increments.get(code) ?? 0) + 1);
    const started = performance.now();
    let results: Map<string, CountedLink<T>>;
    try {
      results = await apply(increments, signal);
    } catch (error) {
      if (batches.hasSubscribers) {
        batches.publish({ accesses: codes.length, durationMs: performance.now() - started, ok: false } satisfies BatchEvent);
      }
      throw error;
    }
    if (batches.hasSubscribers) {
      batches.publish({ accesses: codes.length, durationMs: performance.now() - started, ok: true } satisfies BatchEvent);
    }
    // The batch added increments.get(code) to each link; hand the counts out in arrival order.
    const last = new Map<string, number>();
    return codes.map((code) => {
      const result = results.get(code);
      if (result === undefined) return undefined;
      const accesses = (last.get(code) ?? result.accesses - increments.get(code)!) + 1;
      last.set(code, accesses);
      return { row: result.row, accesses };
    });
  }, { timeoutMs });

  return {
    count: (shortCode) => batcher.run(shortCode),
    drain: () => batcher.drain(),
  };
}
