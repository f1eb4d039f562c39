/**
 * node --test global setup (see the npm scripts): fails the run when the working tree's
 * `data/` was created, changed or removed while the tests ran. A test failure would be
 * better, but no single test can see what all the others did; the spawning helpers already
 * refuse to point a process there (working-tree.ts), this catches whatever slips past them.
 */
import { dataDirChanges, DATA_DIR, snapshotDataDir } from './working-tree.ts';

let before: ReadonlyMap<string, string> | undefined;

export function globalSetup(): void {
  before = snapshotDataDir();
}

export function globalTeardown(): void {
  if (before === undefined) return;
  const changes = dataDirChanges(before, snapshotDataDir());
  if (changes.length === 0) return;
  // A throw here would fail the run without a word; say what happened, then fail it.
  process.stderr.write(
    `\n✖ the test run touched ${DATA_DIR}, which tests must never use ` +
      '(or a server from this checkout wrote to it meanwhile):\n' +
      changes.map((change) => `  ${change}\n`).join(''),
  );
  process.exitCode = 1;
}
