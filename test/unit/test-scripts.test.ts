/**
 * The npm scripts that run tests: `test:fast` and `test:e2e` split the suite without losing
 * or repeating a file (a new test file lands in one of them by its folder), `npm test` runs
 * it all, and every one of them fails a run that touched the working tree's data/.
 */
import assert from 'node:assert/strict';
import { globSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../helpers/working-tree.ts';

const { scripts } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

/** The test files a script's quoted patterns select, relative to the repository root. */
function filesOf(name: string): string[] {
  const command = scripts[name];
  assert.ok(command !== undefined, `there is an npm script "${name}"`);
  const patterns = [...command.matchAll(/'([^']+)'/g)].map((match) => match[1]!);
  assert.ok(patterns.length > 0, `${name} names its files: ${command}`);
  return patterns.flatMap((pattern) => globSync(pattern, { cwd: REPO_ROOT })).sort();
}

test('test:fast and test:e2e together run every test file exactly once, as npm test does', () => {
  const all = filesOf('test');
  const fast = filesOf('test:fast');
  const e2e = filesOf('test:e2e');
  assert.ok(all.length > 50, `npm test finds the suite (${all.length} files)`);
  assert.deepEqual(fast.filter((file) => e2e.includes(file)), [], 'no file in both');
  assert.deepEqual([...fast, ...e2e].sort(), all);
  for (const file of fast) assert.doesNotMatch(file, /^test\/(e2e|browser)\//, `${file} spawns a server or a browser`);
});

test('every npm script that runs tests checks that the run left data/ alone', () => {
  const running = Object.entries(scripts).filter(([, command]) => /\bnode --test\b/.test(command));
  assert.deepEqual(running.map(([name]) => name).sort(), ['test', 'test:e2e', 'test:fast']);
  for (const [name, command] of running) {
    assert.match(command, /--test-global-setup=test\/helpers\/data-dir-guard\.ts /, `npm run ${name}`);
  }
});
