#!/usr/bin/env node
// The `shortlink` command. Plain JavaScript that any Node since 16 parses, so that an old Node
// gets one line naming the version it needs instead of a stack trace.
//
// In a clone (src/ is there) it runs the TypeScript in src/cli/main.ts through Node 24's type
// stripping. Under `npx shortlink` or an npm script, node_modules/.bin comes first on PATH, so
// `node` above is the project's own Node 24 (the `node` devDependency); started by an older Node
// (the system's, through `npm link`), it re-runs itself under that Node 24.
//
// From an installed package (no src/, since Node will not strip types under node_modules) it
// runs the JavaScript compiled into dist/ at `npm pack`, on the Node that runs it: 20 or newer.
// The commands that talk to a server (account, shorten, links, …) need nothing more; those
// that open a database or run the server need Node 24 and say so (src/cli/run.ts).
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const CLONE_MAJOR = 24;
const INSTALLED_MAJOR = 20;
const major = Number(process.versions.node.split('.')[0]);
const root = dirname(dirname(realpathSync(fileURLToPath(import.meta.url))));
const source = join(root, 'src', 'cli', 'main.ts');
const compiled = join(root, 'dist', 'src', 'cli', 'main.js');
const inClone = existsSync(source);

function tooOld(minimum, hint) {
  process.stderr.write(`shortlink: needs Node ${minimum} or newer, and this is Node ${process.versions.node}${hint}\n`);
  process.exit(1);
}

if (!inClone) {
  if (major < INSTALLED_MAJOR) tooOld(INSTALLED_MAJOR, '');
  await import(pathToFileURL(compiled).href);
} else if (major >= CLONE_MAJOR) {
  await import(pathToFileURL(source).href);
} else {
  const candidates = [join(root, 'node_modules', 'node', 'bin', 'node'), join(root, 'node_modules', '.bin', 'node')];
  const node = candidates.find((path) => existsSync(path));
  if (node === undefined || process.env.SHORTLINK_REEXEC === '1') {
    tooOld(CLONE_MAJOR, `; run "npm install" in ${root} (it brings Node ${CLONE_MAJOR}) or use "npx shortlink" there`);
  }
  const child = spawn(node, [source, ...process.argv.slice(2)], {
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
