/**
 * `npm pack` and `npm publish` of the server package: builds dist/ (scripts/build.ts) and
 * states the supported Node range in the packed package.json only.
 *
 * Why only there: npm checks the root project's `engines` on every `npm install`, and a clone
 * is installed by whatever Node the machine has (Node 20 here); that install is supported,
 * because it brings Node 24 itself (the `node` devDependency), so an `engines` of `>=24` in the
 * repository's package.json would warn (EBADENGINE) for nothing. An installed package, on the
 * other hand, runs on the Node that installs it, and must say which one it needs.
 * docs/adr/0016-packaging-and-integrations.md has the whole story.
 *
 *     node scripts/prepack.ts            build, then add `engines` (package.json.orig keeps the original)
 *     node scripts/prepack.ts --restore  put the original package.json back (npm's `postpack`)
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What the installed package runs on: the CLI's server commands (account, shorten, links, …)
 * from Node 20; the server and the database commands need Node 24 (node:sqlite unflagged, and
 * what the tests run) and say so when started on an older one (src/cli/run.ts).
 */
export const SUPPORTED_NODE = '>=20';

const root = fileURLToPath(new URL('..', import.meta.url));
const manifest = join(root, 'package.json');
const original = join(root, 'package.json.orig');

if (process.argv.includes('--restore')) {
  if (existsSync(original)) renameSync(original, manifest);
} else {
  // A pack that failed before its postpack leaves the original behind: start from it.
  if (existsSync(original)) renameSync(original, manifest);
  execFileSync(process.execPath, [join(root, 'scripts', 'build.ts')], { stdio: 'inherit' });
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text) as Record<string, unknown>;
  writeFileSync(original, text);
  writeFileSync(manifest, `${JSON.stringify({ ...pkg, engines: { node: SUPPORTED_NODE } }, null, 2)}\n`);
}
