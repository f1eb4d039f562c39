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
import type { Visit } from '../stats/visit.ts';
import { createBatcher } from './batcher.ts';
import type { BatchCall, BatchListener, CountOutcome, LinkRefusal } from '../links/link-store.ts';

export type { BatchCall, BatchListener, CountOutcome } from '../links/link-store.ts';

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

/** Visits of one link with the same hour and classes, counted in one batch. */
export interface VisitTally {
  readonly visit: Visit;
  readonly count: number;
}

/**
 * Per shortcode, the visit of each of the batch's calls in arrival order (undefined for a
 * call without statistics). Only the calls that are granted a count have their visit
 * recorded: the first `granted` of them (`grantedVisits`).
 */
export type BatchVisits = ReadonlyMap<string, readonly (Visit | undefined)[]>;

/** The visits of a link's first `granted` calls, one tally per key (hour and classes). */
export function grantedVisits(visits: readonly (Visit | undefined)[] | undefined, granted: number): VisitTally[] {
  if (visits === undefined) return [];
  // The common case: one call, one visit.
  if (granted === 1 && visits.length === 1) return visits[0] === undefined ? [] : [{ visit: visits[0], count: 1 }];
  const tallies = new Map<string, { visit: Visit; count: number }>();
  for (let i = 0; i < granted && i < visits.length; i++) {
    const visit = visits[i];
    if (visit === undefined) continue;
    const tally = tallies.get(visit.key);
    if (tally === undefined) tallies.set(visit.key, { visit, count: 1 });
    else tally.count++;
  }
  return [...tallies.values()];
}

/**
 * Applies `increments` (shortcode → how many accesses to add) in one durable step and
 * returns, for each shortcode that exists, the row with its new total. Must be atomic:
 * either every increment is committed or the call throws. `signal` is aborted when one of
 * the batch's resolutions has passed the storage deadline: give up if nothing was sent yet.
 * `visits`: the statistics of the calls (empty when none carry any), to be written in the
 * same transaction as the counts for the accesses granted, so they always add up to them.
 */
export type ApplyIncrements<T> = (
  increments: ReadonlyMap<string, number>,
  signal: AbortSignal,
  /** The batch's time (ISO), the latest of its calls': what expiry is judged against. */
  now: string,
  visits: BatchVisits,
) => Promise<Map<string, CountedLink<T>>>;

export interface GroupCommit<T> {
  /**
   * Counts one access to `shortCode` at `now` (ISO, default the current time); settles with
   * the row and this access's own count, or with why it was refused. With `visit`, a counted
   * access's statistics are written with its count.
   */
  count(shortCode: string, now?: string, visit?: Visit): Promise<CountOutcome<T> | undefined>;
  /** Settles once every access counted so far has been written. */
  drain(): Promise<void>;
  /**
   * Tells `listener` about each batch once it has committed (the live events, ADR 19); the
   * answer stops telling it. Called with nothing new built: the batch's calls and outcomes.
   */
  watch(listener: BatchListener<T>): () => void;
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
  const listeners = new Set<BatchListener<T>>();
  const batcher = createBatcher<BatchCall, CountOutcome<T> | undefined>(async (calls, signal) => {
    const codes = calls.map((call) => call.code);
    let now = calls[0]!.now;
    const increments = new Map<string, number>();
    const visits = new Map<string, (Visit | undefined)[]>();
    for (const call of calls) {
      increments.set(call.code, (increments.get(call.code) ?? 0) + 1);
      if (call.now > now) now = call.now;
    }
    // Each link's visits in arrival order, when any call carries one (STATS is on).
    if (calls.some((call) => call.visit !== undefined)) {
      for (const call of calls) {
        let list = visits.get(call.code);
        if (list === undefined) visits.set(call.code, (list = []));
        list.push(call.visit);
      }
    }
    const started = performance.now();
    let results: Map<string, CountedLink<T>>;
    try {
      results = await apply(increments, signal, now, visits);
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
    const outcomes = codes.map((code): CountOutcome<T> | undefined => {
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
    // The batch has committed: whatever a listener does, its callers get their counts.
    for (const listener of listeners) {
      try {
        listener(calls, outcomes);
      } catch { /* a listener's own failure; it reports it itself */ }
    }
    return outcomes;
  }, { timeoutMs });

  return {
    count: (shortCode, now, visit) => batcher.run({ code: shortCode, now: now ?? new Date().toISOString(), visit }),
    drain: () => batcher.drain(),
    watch(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}

