/**
 * Clients that pipeline requests and never read the answers (issue 13, item 1): a few such
 * sockets once grew the heap until the process died, and were held open forever. The server
 * must stop reading from a connection whose answers are not being read, so memory stays
 * flat and `/healthz` keeps answering; and it must close such a connection once its answers
 * have made no progress for a while.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanup, startServer, type ServerProcess } from '../helpers/process.ts';
import { WAIT_BOUND_MS, waitFor } from '../helpers/wait-for.ts';

const SOCKETS = 8;
/** Per socket: about 1 MB of requests, far beyond what any buffer holds. */
const REQUESTS_PER_SOCKET = 20_000;
const FLOOD_MS = 6_000;
/**
 * Growth of the resident set allowed while the flood lasts. Live memory stays small; most of
 * the growth is garbage from the 40 KB listings that V8 collects lazily below its 256 MB heap
 * cap (80–122 MB measured on a loaded 2-core machine), so the bound leaves room for that but
 * stays far below the unbounded growth before the guard (the process died at the cap).
 */
const RSS_GROWTH_LIMIT = 180 * 1024 * 1024;
/** A liveness probe must stay prompt while the flood lasts (generous: CI machines are busy). */
const HEALTH_LIMIT_MS = 3_000;
/**
 * The connection guard's stall timeout (REQUEST_BOUNDS.sendStallMs) and a margin for a busy
 * machine: a bound on the wait, which ends when they are closed (a 5 s margin was missed at a
 * load average of 27 on two cores). Connections held for ever would still fail it.
 */
const STALL_CLOSE_MS = 10_000 + WAIT_BOUND_MS;

after(cleanup);

async function scrape(server: ServerProcess): Promise<string> {
  const response = await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(5_000) });
  return response.text();
}

function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

async function healthTime(server: ServerProcess): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
  assert.equal(response.status, 200);
  await response.text();
  return performance.now() - started;
}

/** A socket that writes `count` pipelined requests at once and never reads an answer. */
function flood(server: ServerProcess, request: string, count: number): Socket {
  const socket = connect(server.port, '127.0.0.1');
  // Nothing is ever read: what the server writes stays in the kernel's buffers.
  socket.pause();
  socket.on('error', () => undefined);
  socket.write(request.repeat(count));
  return socket;
}

test('pipelined requests that are never read keep memory flat and health prompt, and their connections are closed', { timeout: 600_000 }, async (t) => {
  // With a 256 MB heap the flood once killed the process within seconds.
  const server = await startServer({ env: { NODE_OPTIONS: '--max-old-space-size=256', DEFAULT_MAX_LINKS: '20' } });
  const account = (await (await fetch(`${server.url}/v1/new_account`)).json()) as { AccessCode: string };
  const auth = account.AccessCode;
  // Long targets make each listing large (about 40 KB), so unread answers fill the kernel's buffers quickly.
  for (let i = 0; i < 20; i++) {
    const url = `https://example.org/${String(i).padStart(2, '0')}/${'a'.repeat(1900)}`;
    const created = await fetch(`${server.url}/v1/link?${new URLSearchParams({ url, short: `piped${i}` })}`, { headers: { authorization: auth } });
    assert.equal(created.status, 200, await created.text());
  }
  for (let i = 0; i < 20; i++) await (await fetch(`${server.url}/v1/get/piped0`)).text();
  const baseline = metric(await scrape(server), 'process_resident_memory_bytes');

  const host = `Host: 127.0.0.1:${server.port}\r\n`;
  const resolve = `GET /v1/get/piped0 HTTP/1.1\r\n${host}\r\n`;
  const list = `GET /v1/links HTTP/1.1\r\n${host}Authorization: ${auth}\r\n\r\n`;
  const started = performance.now();
  const sockets = Array.from({ length: SOCKETS }, (_, i) => flood(server, i % 2 === 0 ? resolve : list, REQUESTS_PER_SOCKET));

  let peak = baseline;
  let slowest = 0;
  while (performance.now() - started < FLOOD_MS && server.isRunning()) {
    slowest = Math.max(slowest, await healthTime(server));
    peak = Math.max(peak, metric(await scrape(server), 'process_resident_memory_bytes'));
    await sleep(250);
  }
  t.diagnostic(`RSS ${Math.round(baseline / 2 ** 20)} MB → peak ${Math.round(peak / 2 ** 20)} MB; slowest /healthz ${Math.round(slowest)} ms`);
  assert.ok(server.isRunning(), 'the server survived');
  assert.ok(peak - baseline < RSS_GROWTH_LIMIT, `RSS grew by ${Math.round((peak - baseline) / 2 ** 20)} MB`);
  assert.ok(slowest < HEALTH_LIMIT_MS, `/healthz took ${Math.round(slowest)} ms`);

  // The listings fill the kernel's buffers at once; then their answers make no progress and
  // the server closes those connections rather than hold them forever.
  const stalled = 'shortlink_connections_closed_total{reason="stalled"}';
  let closed = 0;
  await waitFor(
    async () => (closed = metric(await scrape(server), stalled)) >= SOCKETS / 2,
    () => `the listings' connections to be closed (${closed} so far)`,
    { timeoutMs: STALL_CLOSE_MS - (performance.now() - started), intervalMs: 500 },
  );
  t.diagnostic(`${closed} stalled connections closed after ${Math.round((performance.now() - started) / 1000)} s`);
  for (const socket of sockets) socket.destroy();

  // Resolutions are counted as they are read and answered, whether or not the client reads the answer.
  const links = (await (await fetch(`${server.url}/v1/links`, { headers: { authorization: auth } })).json()) as { ShortCode: string; Accesses: number }[];
  const accesses = links.find((link) => link.ShortCode === 'piped0')!.Accesses;
  assert.ok(accesses >= 20 && accesses <= 20 + (SOCKETS / 2) * REQUESTS_PER_SOCKET, `Accesses ${accesses}`);
  assert.equal((await server.stop('SIGTERM')).code, 0);
});

test('MAX_CONNECTIONS: connections beyond the cap are closed at once, and accepted again once one ends', { timeout: 600_000 }, async () => {
  const server = await startServer({ env: { MAX_CONNECTIONS: '3' } });
  const held: Socket[] = [];
  for (let i = 0; i < 3; i++) {
    const socket = connect(server.port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    held.push(socket);
  }
  // Connections are refused rather than let to pile up.
  await assert.rejects(fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(5_000) }));
  held.pop()!.destroy();
  // The server learns of the close a moment later.
  await waitFor(
    () => fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(5_000) }).then((reply) => reply.status === 200, () => false),
    'a connection to be accepted again',
  );
  for (const socket of held) socket.destroy();
  assert.equal((await server.stop('SIGTERM')).code, 0);
});
