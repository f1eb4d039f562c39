/**
 * node --test global setup (see the npm scripts): fails the run when the working tree's
 * `data/` was created, changed or removed while the tests ran, other than by a server that
 * holds its files open (a developer's `npm start`, which may go on serving meanwhile; see
 * watchDataDir()). A test failure would be better, but no single test can see what all the
 * others did; the spawning helpers already refuse to point a process there (working-tree.ts),
 * this catches whatever slips past them.
 */
import { DATA_DIR, watchDataDir, type DataDirWatch } from './working-tree.ts';

let watch: DataDirWatch | undefined;

export function globalSetup(): void {
  watch = watchDataDir();
}

export function globalTeardown(): void {
  if (watch === undefined) return;
  const { unexplained, explained } = watch.changes();
  if (unexplained.length === 0) return;
  // A throw here would fail the run without a word; say what happened, then fail it.
  process.stderr.write(
    `\n✖ the test run touched ${DATA_DIR}, which tests must never use:\n` +
      unexplained.map((change) => `  ${change}\n`).join('') +
      (explained.length === 0
        ? ''
        : '(changes to files a running server holds are not counted:\n' + explained.map((change) => `  ${change}\n`).join('') + ')\n'),
  );
  process.exitCode = 1;
}
