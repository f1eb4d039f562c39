/**
 * The README's quick start and "Try it", run as written: every shell block of those two
 * sections, against a fresh server started by the README's own `npm start`, so the commands a
 * newcomer copies first cannot drift from what the service does.
 *
 * Two changes, both forced: the server listens on a free port instead of 8080 (PORT, and
 * `localhost:8080` in the blocks, rewritten to it: other tests may hold 8080), and in a scratch
 * folder (its ./data is the one the README names, never the working tree's). `npm install` is
 * not run (it would rewrite the node_modules every test shares; a clone's install is
 * `test/e2e/quiet-install.test.ts`'s), nor `npm test` (this suite itself): their text is
 * pinned instead, so a change to them is a change to this test too.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { freePort } from '../helpers/private-services.ts';
import { run } from '../helpers/packing.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { REPO_ROOT } from '../helpers/working-tree.ts';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

/** The fenced `sh` blocks between a heading and the next heading of the same level. */
function shellBlocks(heading: string, until: RegExp): string[] {
  const start = README.indexOf(heading);
  assert.notEqual(start, -1, `README has "${heading}"`);
  const rest = README.slice(start + heading.length);
  const end = rest.search(until);
  const section = end === -1 ? rest : rest.slice(0, end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!.trim());
}

const scratch = mkdtempSync(join(tmpdir(), 'shortlink-readme-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

test('the README quick start and "Try it" work as written against a fresh server', { timeout: 120_000 }, async (t) => {
  const quickStart = shellBlocks('## Quick start', /^## /m);
  const tryIt = shellBlocks('Try it:', /^## /m);
  // The quick start's blocks: the install and the test run are pinned, the start is run.
  assert.deepEqual(quickStart.slice(0, 2), ['npm install && npm start', 'npm test']);
  assert.equal(quickStart.length, 2 + tryIt.length, 'every block of the quick start is accounted for');
  assert.ok(tryIt.length > 0);

  // A clone as `npm install` leaves it, in a scratch folder.
  cpSync(join(REPO_ROOT, 'package.json'), join(scratch, 'package.json'));
  for (const entry of ['src', 'bin', 'packages', 'node_modules']) symlinkSync(join(REPO_ROOT, entry), join(scratch, entry));

  const port = await freePort();
  // `npm start`, the second half of the first block, in its own process group so that npm,
  // its shell and the server are stopped together.
  const server = spawn('npm', ['start'], {
    cwd: scratch,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  server.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  server.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => server.once('close', () => resolve()));
  t.after(async () => {
    try {
      process.kill(-server.pid!, 'SIGTERM');
    } catch {
      // Already gone.
    }
    await exited;
  });
  await waitFor(() => /Server listening at/.test(output) || undefined, () => `npm start did not listen:\n${output}`, {
    timeoutMs: 60_000, intervalMs: 50,
  });
  assert.ok(existsSync(join(scratch, 'data', 'shortlinks.db')), 'the data is in ./data/shortlinks.db, as the README says');

  // "Try it", block by block, in one shell (a later block may use an earlier one's variables).
  const script = tryIt.join('\n').replaceAll('localhost:8080', `localhost:${port}`);
  const result = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: scratch, env: { PATH: process.env.PATH } });
  assert.equal(result.code, 0, `${result.stderr}\n${output}`);
  const lines = result.stdout.split(/\r?\n/);
  // The short URL printed on a line of its own, then the redirect to the target.
  assert.match(lines[0]!, new RegExp(`^http://localhost:${port}/[A-Za-z0-9]{6}$`));
  assert.match(result.stdout, /^HTTP\/1\.1 302 Found\r?$/m);
  assert.match(result.stdout, /^location: https:\/\/example\.com\/a\/long\/path\r?$/im);
  // The comments say what the commands print.
  assert.match(tryIt.join('\n'), /# http:\/\/localhost:8080\/ and a new code/);
  assert.match(tryIt.join('\n'), /# 302, Location: https:\/\/example\.com\/a\/long\/path/);
});
