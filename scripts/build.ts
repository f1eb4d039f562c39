/**
 * Compiles the server and the CLI to JavaScript in dist/ for the published package (`npm pack`
 * runs it as `prepack`). Development never uses dist/: `npm start`, `npm test` and
 * bin/shortlink.js in a clone run the TypeScript in src/ directly. Node refuses to strip types
 * under node_modules, which is where an installed package lives, hence the build.
 *
 * dist/ mirrors the repository: dist/src/… and dist/packages/client/src/… (the CLI's client),
 * plus every file of src/ that is not TypeScript (the web UI's modules, stylesheet, page and
 * icon, served as they are) and package.json (read for the version).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');

function copyNonTypeScript(directory: string): number {
  let copied = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      copied += copyNonTypeScript(path);
    } else if (entry.isFile() && !entry.name.endsWith('.ts')) {
      const target = join(dist, relative(root, path));
      mkdirSync(dirname(target), { recursive: true });
      copyFileSync(path, target);
      copied += 1;
    }
  }
  return copied;
}

rmSync(dist, { recursive: true, force: true });
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
const assets = copyNonTypeScript(join(root, 'src'));
copyFileSync(join(root, 'package.json'), join(dist, 'package.json'));
process.stdout.write(`built ${relative(process.cwd(), dist) || '.'}/ (${assets} assets copied)\n`);
