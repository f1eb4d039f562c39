/**
 * Gathers calls into batches, so that one commit (and on PostgreSQL one round trip) serves
 * many: access counts (group-commit.ts), SQLite writes (sqlite/write-batch.ts) and
 * PostgreSQL creates. Calls made while no batch is running wait for the end of the current
 * event-loop turn; calls made while one is running form the next batch. So under load a
 * batch holds everything that arrived during the previous one, and a lone call waits for
 * nothing but its own turn.
 *
 * `runBatch` answers one result per item, in order, or throws. A failure fails every item
 * of the batch, unless `retryAlone(error)` says the batch certainly left nothing behind
 * (the database refused it and rolled it back: a deadlock, a constraint): then each item
 * of a batch of several runs again on its own, so one bad item costs only itself a
 * failure. Never retry an error that leaves the outcome unknown (a connection lost around
 * COMMIT): the batch may have been applied, and running it again would apply it twice.
 *
 * With `timeoutMs` (the storage deadline, src/store/deadline.ts), a call not answered within
 * it rejects with the storage-unavailable error. A call still waiting for its batch is taken
 * out of the queue first, so it is never applied. A call whose batch is already running is
 * answered all the same, and the batch's `signal` is aborted: an engine that has not sent
 * the batch yet (SQLite waiting for the write lock) gives up, one that has (PostgreSQL) lets
 * it finish, and its late outcome for that call is dropped (ADR 15).
 */
import { DeadlineList, type DeadlineEntry } from '../deadline-list.ts';
import { storageTimedOut } from './deadline.ts';

export interface Batcher<I, O> {
  run(item: I): Promise<O>;
  /**
   * Settles once every call made so far has been answered and the batches carrying them have
   * finished. With `timeoutMs`, a batch still running once all its calls have been answered
   * by their deadline is given up instead (its late outcome would be dropped anyway): a frozen
   * database would hold it, and the shutdown waiting for it, for ever.
   */
  drain(): Promise<void>;
}

export interface BatcherOptions {
  /** True when `error` certainly left nothing of the batch behind (see above). */
  readonly retryAlone?: (error: unknown) => boolean;
  /** The storage deadline of each call, in milliseconds; none when omitted. */
  readonly timeoutMs?: number | undefined;
}

interface Waiting<I, O> {
  readonly item: I;
  readonly resolve: (value: O) => void;
  readonly reject: (error: unknown) => void;
  /** performance.now() by which the call must be answered. */
  readonly deadline: number;
  /** Set once the call is part of a running batch: aborted when the call times out. */
  batch: AbortController | undefined;
  /** Its place among the unanswered calls (with a storage deadline). */
  entry: DeadlineEntry<Waiting<I, O>> | undefined;
  settled: boolean;
}

export function createBatcher<I, O>(
  runBatch: (items: readonly I[], signal: AbortSignal) => Promise<readonly O[]>,
  { retryAlone = () => false, timeoutMs }: BatcherOptions = {},
): Batcher<I, O> {
  let queue: Waiting<I, O>[] = [];
  let scheduled = false;
  let inFlight: Promise<void> | undefined;

  // Every unanswered call, oldest first: with one timeout for all, also earliest deadline
  // first. One timer, armed for the oldest call, stands for all of them: a timer per call
  // would cost more than the call on the hot path.
  // A linked list, not a Set: see src/deadline-list.ts.
  const unanswered = new DeadlineList<Waiting<I, O>>();
  let watchdog: NodeJS.Timeout | undefined;
  // Calls not answered yet, and drains waiting for that number to reach 0.
  let pending = 0;
  let allAnswered: Array<() => void> = [];

  function answer(waiting: Waiting<I, O>): boolean {
    if (waiting.settled) return false;
    waiting.settled = true;
    if (waiting.entry !== undefined) unanswered.remove(waiting.entry);
    if (--pending === 0) {
      for (const resolve of allAnswered) resolve();
      allAnswered = [];
    }
    return true;
  }
  const succeed = (waiting: Waiting<I, O>, value: O) => answer(waiting) && waiting.resolve(value);
  const fail = (waiting: Waiting<I, O>, error: unknown) => answer(waiting) && waiting.reject(error);

  function arm(): void {
    if (watchdog !== undefined || timeoutMs === undefined) return;
    const oldest = unanswered.oldest();
    if (oldest === undefined) return;
    watchdog = setTimeout(expire, Math.max(0, oldest.deadline - performance.now()));
    // A pending call does not keep the process alive by itself; neither should its deadline.
    watchdog.unref();
  }

  function expire(): void {
    watchdog = undefined;
    // Timers fire on whole milliseconds: a deadline a fraction ahead counts as reached.
    for (const waiting of unanswered.takeDue(performance.now() + 1)) {
      waiting.entry = undefined;
      if (waiting.batch === undefined) queue = queue.filter((queued) => queued !== waiting);
      else waiting.batch.abort();
      fail(waiting, storageTimedOut(timeoutMs!));
    }
    arm();
  }

  async function settle(batch: Waiting<I, O>[]): Promise<void> {
    const controller = new AbortController();
    for (const waiting of batch) waiting.batch = controller;
    try {
      const results = await runBatch(batch.map((waiting) => waiting.item), controller.signal);
      batch.forEach((waiting, i) => succeed(waiting, results[i]!));
    } catch (error) {
      if (batch.length === 1 || !retryAlone(error)) {
        for (const waiting of batch) fail(waiting, error);
        return;
      }
      // Calls already answered by the deadline are not run again: nothing of them was kept.
      await Promise.all(batch.filter((waiting) => !waiting.settled).map((waiting) => settle([waiting])));
    }
  }

  function start(): void {
    scheduled = false;
    if (inFlight !== undefined || queue.length === 0) return;
    const batch = queue;
    queue = [];
    inFlight = settle(batch).finally(() => {
      inFlight = undefined;
      start();
    });
  }

  return {
    run(item) {
      return new Promise<O>((resolve, reject) => {
        const waiting: Waiting<I, O> = {
          item, resolve, reject, batch: undefined, entry: undefined, settled: false,
          deadline: timeoutMs === undefined ? Infinity : performance.now() + timeoutMs,
        };
        queue.push(waiting);
        pending++;
        if (timeoutMs !== undefined) {
          waiting.entry = unanswered.add(waiting, waiting.deadline);
          arm();
        }
        if (!scheduled && inFlight === undefined) {
          scheduled = true;
          setImmediate(start);
        }
      });
    },
    async drain() {
      while (inFlight !== undefined || queue.length > 0) {
        if (inFlight === undefined) start();
        if (timeoutMs === undefined) {
          await inFlight;
          continue;
        }
        await Promise.race([inFlight, new Promise<void>((resolve) => (pending === 0 ? resolve() : allAnswered.push(resolve)))]);
        if (pending === 0) return;
      }
    },
  };
}
