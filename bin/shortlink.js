#!/usr/bin/env node
// The `shortlink` command. The CLI is TypeScript run by Node 24's type stripping
// (src/cli/main.ts). Under `npx shortlink` or an npm script, node_modules/.bin comes first on
// PATH, so `node` above is the project's own Node 24 (the `node` devDependency). Started by an
// older Node (the system's, through a global link), this file re-runs itself under the
// project's Node 24 instead of failing on a `.ts` import. Plain JavaScript that Node 18+ parses.
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MINIMUM_MAJOR = 24;
const major = Number(process.versions.node.split('.')[0]);

if (major >= MINIMUM_MAJOR) {
  await import('../src/cli/main.ts');
} else {
  const root = dirname(dirname(realpathSync(fileURLToPath(import.meta.url))));
  const candidates = [join(root, 'node_modules', 'node', 'bin', 'node'), join(root, 'node_modules', '.bin', 'node')];
  const node = candidates.find((path) => existsSync(path));
  if (node === undefined || process.env.SHORTLINK_REEXEC === '1') {
    process.stderr.write(
      `shortlink: needs Node ${MINIMUM_MAJOR} or newer, and this is Node ${process.versions.node}; ` +
        `run "npm install" in ${root} (it brings Node ${MINIMUM_MAJOR}) or use "npx shortlink" there\n`,
    );
    process.exit(1);
  }
  const child = spawn(node, [join(root, 'src', 'cli', 'main.ts'), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, SHORTLINK_REEXEC: '1' },
  });
  // Signals go to the child (which may be a server finishing its requests); this process
  // just mirrors how it ended.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal !== null) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else {
      process.exit(code ?? 1);
    }
  });
}
