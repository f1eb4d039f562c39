/**
 * A clone's install on the machine's own Node (20 here, which the README says does not
 * matter): npm resolves the tree from package.json, the workspace and the lock file
 * (`--package-lock-only --offline`, a few seconds), leaves the lock file as it is, and warns
 * about no engine but the two of Fastify's dependencies that ask for Node 22 (ADR 16).
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { run, scratch, SYSTEM_NODE } from '../helpers/packing.ts';
import { REPO_ROOT } from '../helpers/working-tree.ts';

/** Third-party packages whose `engines` exclude Node 20; the Node 24 that runs the service satisfies them. */
const KNOWN = new Set(['cookie', 'content-disposition']);

test('npm install on the machine\'s Node keeps package-lock.json and warns about no engine of ours', { timeout: 600_000 }, async (t) => {
  const work = scratch('shortlink-install-');
  t.after(() => work.remove());
  mkdirSync(join(work.path, 'packages', 'client'), { recursive: true });
  for (const file of ['package.json', 'package-lock.json', join('packages', 'client', 'package.json')]) {
    copyFileSync(join(REPO_ROOT, file), join(work.path, file));
  }
  // The machine's npm under the machine's Node, as `npm install` in a fresh clone runs.
  const path = SYSTEM_NODE === undefined ? process.env.PATH : `/usr/bin:/bin`;
  const result = await run('npm', ['install', '--package-lock-only', '--offline', '--no-audit', '--no-fund'], {
    cwd: work.path,
    env: { ...process.env, PATH: path },
  });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(readFileSync(join(work.path, 'package-lock.json'), 'utf8'), readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8'));
  const warned = [...result.stderr.matchAll(/package: '((?:@[^/']+\/)?[^@']+)@/g)].map((match) => match[1]!);
  assert.deepEqual(warned.filter((name) => !KNOWN.has(name)), [], result.stderr);
});
