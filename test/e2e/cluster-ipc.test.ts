/**
 * WORKERS: the primary writes to a worker's IPC channel (a live message passed on, a metrics
 * collection) after the worker died but before the primary has read that it did. Node reports
 * the failed write ("write EPIPE") as an 'error' event on that worker; with nobody listening
 * it took the whole primary down, and every worker with it. Live messages in flight while a
 * worker stops (SIGTERM under load, kill -9) fall into that window, the wider the busier the
 * machine; the fixture holds it open (it stops the primary meanwhile).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

const FIXTURE = join(REPO_ROOT, 'test', 'e2e', 'fixtures', 'ipc-flood.ts');

test('a worker dead before the primary passes it live messages: the primary survives and replaces it', {
  skip: process.platform === 'linux' ? false : 'reads /proc',
  timeout: 300_000,
}, async (t) => {
  const child = spawn(process.execPath, [FIXTURE], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let exited = false;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const closed = new Promise((resolve) => child.once('close', resolve)).then(() => (exited = true));
  t.after(async () => {
    // The primary; its workers end with its channel.
    if (!exited) process.kill(child.pid!, 'SIGKILL');
    await closed;
  });

  await waitFor(() => stdout.includes('replacement hears the flood') || exited, 'a replacement worker to hear the messages, or the primary to exit', {
    timeoutMs: 120_000,
  });
  assert.equal(exited, false, `the primary exited:\n${stderr}`);
  assert.match(stdout, /"msg":"worker died; starting another"/);
  assert.equal(stderr, '');
});
