/**
 * Shutdown with connections that are not idle in Node's sense (issue 13, items 4 and 5): a
 * client that connected and sent nothing (a browser's preconnect, a load balancer's TCP
 * check) or half a request must not hold SIGTERM up; a cluster primary reports a worker's
 * failed shutdown; and SHUTDOWN_DELAY keeps serving, unready, before closing.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanup, openConnection, startServer, type ExitResult, type ServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** Guarantee 6 allows 10 s; these have nothing to wait for, so they must be much quicker. */
const PROMPT_EXIT_MS = 3_000;

after(cleanup);

/** The connections that used to hold shutdown up until its deadline. */
async function stuckConnections(server: ServerProcess): Promise<Socket[]> {
  return [
    await openConnection(server, ''),
    await openConnection(server, 'GET /v1/get/abcde HTTP/1.1\r\nHost: 127.0.0.1\r\n'),
    await openConnection(server, 'POST /v1/new_account HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n{'),
  ];
}

/** The pids of the workers that listen so far. */
function listeningWorkers(server: ServerProcess): Set<number> {
  return new Set(server.logs().filter((line) => String(line.msg).startsWith('Server listening at ')).map((line) => line.pid as number));
}

/** Signals the process started (the primary under WORKERS) and waits for its exit. */
async function signal(server: ServerProcess, name: NodeJS.Signals): Promise<ExitResult & { elapsedMs: number }> {
  const started = performance.now();
  process.kill(server.child.pid!, name);
  const result = await server.exited;
  return { ...result, elapsedMs: performance.now() - started };
}

describe('shutdown with connections that never sent a whole request', { timeout: 600_000 }, () => {
  test('one process exits 0 at once, having closed storage', async () => {
    const server = await startServer();
    const sockets = await stuckConnections(server);
    const result = await signal(server, 'SIGTERM');
    for (const socket of sockets) socket.destroy();
    assert.deepEqual({ code: result.code, signal: result.signal }, { code: 0, signal: null });
    assert.ok(result.elapsedMs < PROMPT_EXIT_MS, `exited after ${Math.round(result.elapsedMs)} ms`);
    assert.ok(server.logs().some((line) => line.msg === 'stopped'), 'logs that it stopped');
  });

  test('WORKERS=2: the primary exits 0 at once once both workers have', async () => {
    const server = await startServer({ env: { WORKERS: '2' } });
    await waitFor(() => listeningWorkers(server).size === 2, 'both workers to listen');
    // Connections spread over both workers.
    const sockets = [...(await stuckConnections(server)), ...(await stuckConnections(server))];
    const result = await signal(server, 'SIGTERM');
    for (const socket of sockets) socket.destroy();
    assert.deepEqual({ code: result.code, signal: result.signal }, { code: 0, signal: null });
    assert.ok(result.elapsedMs < PROMPT_EXIT_MS, `exited after ${Math.round(result.elapsedMs)} ms`);
    assert.equal(server.logs().filter((line) => line.msg === 'stopped').length, 2, 'both workers stopped');
  });

  test('WORKERS=2: the primary exits 1 when a worker fails during shutdown', async () => {
    const server = await startServer({ env: { WORKERS: '2', SHUTDOWN_DELAY: '2s' } });
    await waitFor(() => listeningWorkers(server).size === 2, 'both workers to listen');
    const victim = [...listeningWorkers(server)][0]!;
    const exited = signal(server, 'SIGTERM');
    await server.waitForLog((line) => line.msg === 'shutting down' && line.pid === victim);
    process.kill(victim, 'SIGKILL');
    const result = await exited;
    assert.deepEqual({ code: result.code, signal: result.signal }, { code: 1, signal: null });
    assert.ok(server.logs().some((line) => line.msg === 'worker failed during shutdown'), 'the primary says why');
  });
});

describe('SHUTDOWN_DELAY', { timeout: 600_000 }, () => {
  test('readiness fails at once while requests are still served, then the process exits 0', async () => {
    const server = await startServer({ env: { SHUTDOWN_DELAY: '2s' } });
    assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
    const started = performance.now();
    const exited = signal(server, 'SIGTERM');
    await server.waitForLog((line) => line.msg === 'shutting down');

    const ready = await fetch(`${server.url}/readyz`);
    assert.equal(ready.status, 503);
    assert.equal(await ready.text(), 'Unable to handle request: shutting down');
    // New connections are still accepted and served during the delay.
    await sleep(1000);
    const created = await fetch(`${server.url}/v1/new_account`);
    assert.equal(created.status, 200);
    assert.ok(performance.now() - started < 2000, 'served within the delay');

    const result = await exited;
    assert.deepEqual({ code: result.code, signal: result.signal }, { code: 0, signal: null });
    assert.ok(result.elapsedMs >= 2000, `the listener stayed open for the delay (${Math.round(result.elapsedMs)} ms)`);
    assert.ok(result.elapsedMs < 2000 + PROMPT_EXIT_MS, `exited after ${Math.round(result.elapsedMs)} ms`);
    await assert.rejects(fetch(`${server.url}/healthz`), 'the listener is closed');
  });
});
