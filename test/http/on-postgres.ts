/**
 * The HTTP suite again, on PostgreSQL: every other test/http file runs in a child
 * `node --test` with SHORTLINK_TEST_ENGINE=postgres, so that each test's app
 * (test/helpers/app.ts) stands on a fresh schema of the server named by TEST_DATABASE_URL.
 * The contract is the same for both engines, so the same assertions must hold. Skipped
 * without TEST_DATABASE_URL; under CI=true a missing server fails instead.
 *
 * The files are shared between on-postgres-1.test.ts and on-postgres-2.test.ts (every other
 * one each), so the runner can run the two halves side by side, like any two test files.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TEST_ENGINE } from '../helpers/app.ts';
import { REPO_ROOT } from '../helpers/working-tree.ts';
import { postgresGate } from '../helpers/services.ts';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const gate = postgresGate();
const skip = gate.skip || (TEST_ENGINE === 'postgres' ? 'this run is already on PostgreSQL' : false);

/** Registers the test that runs half `part` (0 or 1) of the HTTP files on PostgreSQL. */
export function httpSuiteOnPostgres(part: 0 | 1): void {
  test(`every HTTP test passes on PostgreSQL too (half ${part + 1} of 2)`, { skip, timeout: 900_000 }, async (t) => {
    const all = readdirSync(HERE).filter((name) => name.endsWith('.test.ts') && !name.startsWith('on-postgres')).sort();
    assert.ok(all.length > 10, `found the HTTP test files: ${all.length}`);
    const files = all.filter((_, i) => i % 2 === part).map((name) => join(HERE, name));

    const env: NodeJS.ProcessEnv = { ...process.env, SHORTLINK_TEST_ENGINE: 'postgres', TEST_DATABASE_URL: gate.value };
    // Set by the runner in its test processes; inherited, it would make the child report to
    // the parent's runner in its binary protocol instead of running as a runner of its own.
    delete env.NODE_TEST_CONTEXT;
    const child = spawn(process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=spec', ...files], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal])));

    const summary = output.split('\n').filter((line) => /^ℹ (tests|pass|fail|cancelled|skipped) /.test(line));
    t.diagnostic(`on PostgreSQL: ${summary.map((line) => line.slice(2)).join(', ')}`);
    // On failure the runner's own list of failures (with their assertion messages) is the part worth reading.
    const failures = output.includes('failing tests:') ? output.slice(output.indexOf('failing tests:')) : output.slice(-20_000);
    assert.equal(code, 0, `the HTTP suite on PostgreSQL failed (exit ${code ?? signal}):\n${failures}`);
    assert.ok(summary.some((line) => /^ℹ pass [1-9]/.test(line)), `tests ran:\n${summary.join('\n')}`);
    assert.ok(summary.includes('ℹ skipped 0'), `nothing skipped on PostgreSQL:\n${summary.join('\n')}`);
  });
}
