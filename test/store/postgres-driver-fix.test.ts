/**
 * The fix carried for postgres 3.4.9's connection code (src/store/postgres/driver.ts, ADR 23):
 * it applies to the installed driver (an upgrade that changes the text fails here, and must
 * revisit the ADR), the store's driver is the patched one, and the crash it prevents is gone:
 * a transaction whose backend dies used to kill the process from a `setImmediate`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { driverProblem, PATCH_TAG, PATCHED_VERSION, patchConnectionSource } from '../../src/store/postgres/driver.ts';
import { REPO_ROOT } from '../helpers/working-tree.ts';
import { postgresGate } from '../helpers/services.ts';

const driverRoot = join(dirname(fileURLToPath(import.meta.resolve('postgres'))), '..');

test('the installed driver is the version the fix was written for, and the fix applies to each copy of its connection code', () => {
  const { version } = createRequire(import.meta.url)(join(driverRoot, 'package.json')) as { version: string };
  assert.equal(version, PATCHED_VERSION, 'another driver version: check upstream for a fix and revisit ADR 23');
  for (const copy of ['src', 'cjs/src', 'cf/src']) {
    const patched = patchConnectionSource(readFileSync(join(driverRoot, copy, 'connection.js'), 'utf8'));
    assert.equal(patched.split(PATCH_TAG).length - 1, 6, `${copy}/connection.js: every replacement made`);
  }
});

test('the store\'s driver carries the fix', () => {
  assert.equal(driverProblem(), undefined);
});

const gate = postgresGate();

/**
 * Runs `rounds` transactions whose backend is terminated, each followed by a statement, in a
 * child process so that a crash shows as its exit (and a pool that never answers as a timeout).
 */
function terminatedTransaction(driver: string, { max = 2, rounds = 1 } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = `
    import postgres from ${JSON.stringify(driver)};
    const sql = postgres(process.env.TEST_DATABASE_URL, { max: ${max}, onnotice: () => {} });
    for (let round = 0; round < ${rounds}; round++) {
      try {
        await sql.begin(async (tx) => { await tx\`SELECT pg_terminate_backend(pg_backend_pid())\`; });
        console.log('committed');
      } catch (error) {
        console.log('rejected ' + error.code);
      }
      const rows = await sql\`SELECT 1 AS one\`;
      console.log('then ' + JSON.stringify(rows));
    }
    await sql.end();
    console.log('ended');
  `;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
  });
}

test('a transaction whose backend dies is rejected, the pool serves on and ends, and the process lives', { skip: gate.skip }, async () => {
  const driver = new URL('../../src/store/postgres/driver.ts', import.meta.url).href;
  const result = await terminatedTransaction(driver);
  assert.equal(result.stdout, 'rejected CONNECTION_CLOSED\nthen [{"one":1}]\nended\n', result.stderr);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, '');
});

test('with one connection, each such transaction leaves the pool serving, and the next statement its own answer', { skip: gate.skip }, async () => {
  // Before: the transaction's ROLLBACK, sent on the closed connection, parked it in the pool's
  // "full" queue for good (a pool of one then never answered again: here a timeout), and the
  // next connection's first statement got the dead backend's error and a stale row.
  const driver = new URL('../../src/store/postgres/driver.ts', import.meta.url).href;
  const result = await terminatedTransaction(driver, { max: 1, rounds: 3 });
  assert.equal(result.stdout, `${'rejected CONNECTION_CLOSED\nthen [{"one":1}]\n'.repeat(3)}ended\n`, result.stderr);
  assert.equal(result.code, 0, result.stderr);
});

test('unpatched, the same transaction kills the process (the defect the fix is for)', { skip: gate.skip }, async () => {
  const result = await terminatedTransaction('postgres');
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, /TypeError: Cannot read properties of null \(reading 'write'\)/);
});
