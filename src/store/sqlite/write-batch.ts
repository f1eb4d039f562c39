import type { DatabaseSync } from 'node:sqlite';
import { createBatcher } from '../batcher.ts';

/**
 * Group commit for SQLite writes, on the shared batcher (src/store/batcher.ts): writes that
 * arrive together run in one transaction, each inside its own savepoint, so each still
 * succeeds, fails or is rolled back on its own; the batch then commits once and every caller
 * is answered after that COMMIT. A commit costs the same for one write as for fifty.
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

interface Write {
  work: () => unknown;
  keep: ((result: unknown) => boolean) | undefined;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * `transaction` is the store's: it runs its callback between BEGIN IMMEDIATE and COMMIT and
 * rejects with a domain error when either fails (busy past the deadline, disk full, I/O), in
 * which case nothing of the batch is kept and every write of it fails. `timeoutMs` is the
 * storage deadline of each write (src/store/batcher.ts).
 */
export function createWriteBatch(
  db: DatabaseSync,
  transaction: <R>(work: () => R, signal?: AbortSignal) => Promise<R>,
  translate: (error: unknown) => unknown,
  timeoutMs?: number,
): WriteBatch {
  const savepoint = db.prepare('SAVEPOINT write');
  const release = db.prepare('RELEASE write');
  const undo = db.prepare('ROLLBACK TO write');

  const batcher = createBatcher<Write, Outcome>((writes, signal) =>
    transaction(() =>
      writes.map(({ work, keep }): Outcome => {
        savepoint.run();
        try {
          const value = work();
          if (keep !== undefined && !keep(value)) undo.run();
          release.run();
          return { ok: true, value };
        } catch (error) {
          undo.run();
          release.run();
          return { ok: false, error: translate(error) };
        }
      }),
    signal),
  { timeoutMs });

  return {
    async run<R>(work: () => R, keep?: (result: R) => boolean): Promise<R> {
      const outcome = await batcher.run({ work, keep: keep as Write['keep'] });
      if (!outcome.ok) throw outcome.error;
      return outcome.value as R;
    },
    drain: () => batcher.drain(),
  };
}
