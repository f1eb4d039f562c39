import type { DatabaseSync } from 'node:sqlite';

/**
 * Group commit for SQLite writes. Writes queued during one turn of the event loop run in one
 * transaction, each inside its own savepoint, so each still succeeds, fails or is rolled
 * back on its own; the batch then commits once and every caller is answered after that
 * COMMIT. A commit costs the same for one write as for fifty.
 */
export interface WriteBatch {
  /**
   * Runs `work` in the next batch. When `keep` says no, the work's changes are undone (its
   * savepoint is rolled back) and its result is still returned.
   */
  run<R>(work: () => R, keep?: (result: R) => boolean): Promise<R>;
  /** Settles once everything queued so far is committed. */
  drain(): Promise<void>;
}

interface Queued {
  work: () => unknown;
  keep: ((result: unknown) => boolean) | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * `beforeBegin` runs right before each batch's BEGIN: the store ends its shared read
 * transaction there (a connection holds one transaction at a time).
 */
export function createWriteBatch(
  db: DatabaseSync,
  translate: (error: unknown) => unknown,
  beforeBegin: () => void = () => {},
): WriteBatch {
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const savepoint = db.prepare('SAVEPOINT write');
  const release = db.prepare('RELEASE write');
  const undo = db.prepare('ROLLBACK TO write');
  let queue: Queued[] = [];
  let scheduled = false;
  let idle: (() => void)[] = [];

  function flush(): void {
    scheduled = false;
    const batch = queue;
    queue = [];
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      beforeBegin();
      begin.run();
      for (const item of batch) {
        savepoint.run();
        try {
          const value = item.work();
          if (item.keep !== undefined && !item.keep(value)) undo.run();
          release.run();
          outcomes.push({ ok: true, value });
        } catch (error) {
          undo.run();
          release.run();
          outcomes.push({ ok: false, value: translate(error) });
        }
      }
      commit.run();
    } catch (error) {
      // BEGIN or COMMIT failed (busy, disk full, I/O): nothing of the batch is kept.
      try {
        db.exec('ROLLBACK');
      } catch {
        // no transaction was open
      }
      const failure = translate(error);
      for (const item of batch) item.reject(failure);
      settleIdle();
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.value);
    });
    settleIdle();
  }

  function settleIdle(): void {
    if (queue.length > 0) return;
    const waiting = idle;
    idle = [];
    for (const resolve of waiting) resolve();
  }

  return {
    run<R>(work: () => R, keep?: (result: R) => boolean): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        queue.push({
          work,
          keep: keep as ((result: unknown) => boolean) | undefined,
          resolve: resolve as (value: unknown) => void,
          reject,
        });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    drain() {
      if (queue.length === 0) return Promise.resolve();
      return new Promise((resolve) => idle.push(resolve));
    },
  };
}
