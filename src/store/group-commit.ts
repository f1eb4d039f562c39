/**
 * Group commit for access counting. Resolutions that arrive while the previous batch is
 * being written are gathered and written together (src/store/batcher.ts): one transaction
 * for the whole batch and one `accesses = accesses + n` per distinct link. Each caller's
 * promise settles only after that transaction has committed, so nothing is answered before
 * it is durable, and the n callers of one link are handed n consecutive counts, never the
 * same one twice.
 *
 * A link with a visit limit is granted at most what it has left: `apply` reports how many of
 * a link's n accesses it granted (all of them unless said otherwise), the first callers in
 * arrival order get those, and the rest are answered refused without a count, so however
 * many resolutions race, exactly MaxVisits of them ever succeed (ADR 17).
 */

import { channel } from 'node:diagnostics_channel';
import { createBatcher } from './batcher.ts';
import type { LinkRefusal } from './store.ts';

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
  /** How many of the batch's accesses to this link were counted; all of them when omitted. */
  readonly granted?: number;
  /** Why the accesses not granted were refused. */
  readonly refused?: LinkRefusal;
}

/** One caller's outcome: its own count, or (nothing counted) the refusal and the count as it stands. */
export type CountOutcome<T> =
  | { readonly row: T; readonly accesses: number; readonly refused?: undefined }
  | { readonly row: T; readonly accesses: number; readonly refused: LinkRefusal };

/**
 * Applies `increments` (shortcode → how many accesses to add) in one durable step and
 * returns, for each shortcode that exists, the row with its new total. Must be atomic:
 * either every increment is committed or the call throws. `signal` is aborted when one of
 * the batch's resolutions has passed the storage deadline: give up if nothing was sent yet.
 */
export type ApplyIncrements<T> = (
  increments: ReadonlyMap<string, number>,
  signal: AbortSignal,
  /** The batch's time (ISO), the latest of its calls': what expiry is judged against. */
  now: string,
) => Promise<Map<string, CountedLink<T>>>;

export interface GroupCommit<T> {
  /**
   * Counts one access to `shortCode` at `now` (ISO, default the current time); settles with
   * the row and this access's own count, or with why it was refused.
   */
  count(shortCode: string, now?: string): Promise<CountOutcome<T> | undefined>;
  /** Settles once every access counted so far has been written. */
  drain(): Promise<void>;
}

/**
 * `timeoutMs`: the storage deadline. A resolution answered 503 by it before its batch was
 * sent is never counted; one whose batch was in flight may still be counted (ADR 15).
 */
export function createGroupCommit<T>(
  apply: ApplyIncrements<T>,
  { timeoutMs }: { timeoutMs?: number | undefined } = {},
): GroupCommit<T> {
  // A failed batch fails every access in it: the batch is atomic, so none of them was
  // counted. (Not retried one by one: a lost connection leaves a commit's outcome unknown.)
  const batcher = createBatcher<{ code: string; now: string }, CountOutcome<T> | undefined>(async (calls, signal) => {
    const codes = calls.map((call) => call.code);
    let now = calls[0]!.now;
    const increments = new Map<string, number>();
    for (const call of calls) {
      increments.set(call.code, (increments.get(call.code) ?? 0) + 1);
      if (call.now > now) now = call.now;
    }
    const started = performance.now();
    let results: Map<string, CountedLink<T>>;
    try {
      results = await apply(increments, signal, now);
    } catch (error) {
      if (batches.hasSubscribers) {
        batches.publish({ accesses: codes.length, durationMs: performance.now() - started, ok: false } satisfies BatchEvent);
      }
      throw error;
    }
    if (batches.hasSubscribers) {
      batches.publish({ accesses: codes.length, durationMs: performance.now() - started, ok: true } satisfies BatchEvent);
    }
    // The batch added `granted` (of increments.get(code)) to each link; hand those counts out
    // in arrival order, and refuse the callers after them.
    const last = new Map<string, number>();
    return codes.map((code): CountOutcome<T> | undefined => {
      const result = results.get(code);
      if (result === undefined) return undefined;
      const granted = result.granted ?? increments.get(code)!;
      const previous = last.get(code) ?? result.accesses - granted;
      if (previous >= result.accesses) {
        return { row: result.row, accesses: result.accesses, refused: result.refused ?? 'visit_limit' };
      }
      last.set(code, previous + 1);
      return { row: result.row, accesses: previous + 1 };
    });
  }, { timeoutMs });

  return {
    count: (shortCode, now) => batcher.run({ code: shortCode, now: now ?? new Date().toISOString() }),
    drain: () => batcher.drain(),
  };
}
