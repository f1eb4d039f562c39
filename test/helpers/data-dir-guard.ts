/**
 * node --test global setup of the npm scripts that run tests. It turns on Node's module
 * compile cache for the test processes, and fails the run when the working tree's
 * `data/` was created, changed or removed while the tests ran, other than by a server that
 * holds its files open (a developer's `npm start`, which may go on serving meanwhile; see
 * watchDataDir()). A test failure would be better, but no single test can see what all the
 * others did; the spawning helpers already refuse to point a process there (working-tree.ts),
 * this catches whatever slips past them.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATA_DIR, watchDataDir, type DataDirWatch } from './working-tree.ts';

let watch: DataDirWatch | undefined;

export function globalSetup(): void {
  watch = watchDataDir();
  // Every test file is a process of its own that strips the types of, and compiles, much the
  // same modules again: with the cache they load in about half the CPU time. The test
  // processes inherit this environment; the folder is where Node's own default puts it.
  process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'node-compile-cache');
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
