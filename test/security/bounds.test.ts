/**
 * The bounds of docs/api.md, "Limits and timeouts", over real sockets against a listening server:
 * a client dripping header lines is cut off soon after the 10 s header timeout (not after
 * Node's default 30 s check interval), an idle keep-alive connection is closed after 5 s,
 * and oversized bodies, URLs and headers get a plain-text 4xx, never a 5xx, and write nothing.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { REQUEST_BOUNDS } from '../../src/http/request-bounds.ts';
import {
  account, assertErrorBody, listenLocal, parseResponse, rawExchange, securityApp, snapshot, TEXT, type RawReply,
} from './support.ts';
import { waitFor } from '../helpers/wait-for.ts';

const END = 'Host: sl.test\r\nConnection: close\r\n\r\n';
const TARGET = 'https://example.org/bounded';

/** Asserts a plain-text contract error from the raw socket, with the given status. */
function assertRawError(reply: RawReply, status: number, operation: string): void {
  assert.equal(reply.status, status, `expected ${status}, got ${reply.status}: ${reply.body.slice(0, 200)}`);
  assert.equal(reply.headers['content-type'], TEXT);
  assert.equal(reply.headers['x-content-type-options'], 'nosniff');
  assertErrorBody(reply.body, operation, `${status}`);
}

interface Drip {
  /** Header lines sent after the request line so far. */
  linesSent(): number;
  /** Settles when the server closes the connection. */
  readonly closed: Promise<{ elapsedMs: number; reply: string; linesSent: number }>;
}

/**
 * Opens a connection and sends a request line, then one more header line every second,
 * never finishing the headers (slowloris).
 */
function dripHeaders(port: number): Drip {
  const socket: Socket = connect(port, '127.0.0.1');
  const started = performance.now();
  let received = '';
  let linesSent = 0;
  socket.setEncoding('latin1');
  socket.on('connect', () => socket.write('GET /v1/new_account HTTP/1.1\r\nHost: sl.test\r\n'));
  const timer = setInterval(() => {
    if (!socket.destroyed && socket.writable) {
      socket.write(`X-Drip-${linesSent}: still here\r\n`);
      linesSent++;
    }
  }, 1000);
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => {});
  const closed = new Promise<{ elapsedMs: number; reply: string; linesSent: number }>((resolve) => {
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ elapsedMs: performance.now() - started, reply: received, linesSent });
    });
  });
  return { linesSent: () => linesSent, closed };
}

describe('time bounds', { concurrency: true }, () => {
  test('clients dripping one header line per second are cut off within 12 s, and others are served meanwhile', { timeout: 120_000 }, async (t) => {
    const { app } = await securityApp(t);
    const port = await listenLocal(app);
    assert.equal(app.server.headersTimeout, REQUEST_BOUNDS.headersTimeoutMs);

    const drips = Array.from({ length: 20 }, () => dripHeaders(port));
    // While they hold their connections, a normal client is answered at once, repeatedly:
    // once after each round of header lines the dripping clients send.
    for (let i = 0; i < 5; i++) {
      await waitFor(() => drips.every((drip) => drip.linesSent() > i), `every dripping client to have sent ${i + 1} header lines`);
      const reply = await rawExchange(port, `GET /v1/get/nothing-here HTTP/1.1\r\n${END}`);
      assert.equal(reply.status, 404);
      assert.ok(reply.elapsedMs < 1000, `answered in ${Math.round(reply.elapsedMs)} ms while 20 clients drip`);
    }

    const results = await Promise.all(drips.map((drip) => drip.closed));
    const slowest = Math.max(...results.map((r) => r.elapsedMs));
    t.diagnostic(`20 dripping clients cut off after ${Math.round(Math.min(...results.map((r) => r.elapsedMs)))}–${Math.round(slowest)} ms`);
    for (const { elapsedMs, reply, linesSent } of results) {
      // The header timeout is 10 s; Node checks it every second (connectionsCheckingInterval).
      assert.ok(elapsedMs >= REQUEST_BOUNDS.headersTimeoutMs - 500, `not cut before the header timeout (${Math.round(elapsedMs)} ms)`);
      assert.ok(elapsedMs < 12_000, `cut off within 12 s, took ${Math.round(elapsedMs)} ms`);
      assert.ok(linesSent >= 8, `the client kept dripping (${linesSent} lines)`);
      // Either a 408 in the contract's form, or a plain close.
      if (reply !== '') {
        const parsed = parseResponse(reply);
        assert.equal(parsed.status, 408, reply);
        assert.equal(parsed.headers['content-type'], TEXT);
        assertErrorBody(parsed.body, 'handle request', '408');
      }
    }
  });

  test('an idle keep-alive connection is closed after about 5 s', { timeout: 120_000 }, async (t) => {
    const { app } = await securityApp(t);
    const port = await listenLocal(app);
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => {});
    const closed = new Promise<number>((resolve) => {
      let answeredAt = 0;
      socket.on('data', () => (answeredAt ||= performance.now()));
      socket.on('close', () => resolve(performance.now() - answeredAt));
    });
    socket.write('GET /v1/get/nothing-here HTTP/1.1\r\nHost: sl.test\r\n\r\n');
    const idleMs = await closed;
    assert.match(received, /^HTTP\/1\.1 404 /);
    t.diagnostic(`idle keep-alive connection closed ${Math.round(idleMs)} ms after the answer`);
    assert.ok(idleMs >= REQUEST_BOUNDS.keepAliveTimeoutMs - 500, `kept for the keep-alive timeout (${Math.round(idleMs)} ms)`);
    assert.ok(idleMs < REQUEST_BOUNDS.keepAliveTimeoutMs + 3000, `closed soon after it (${Math.round(idleMs)} ms)`);
  });
});

describe('size bounds', () => {
  test('a body over 64 KiB is refused with 413 in plain text, whether its length is declared or chunked', async (t) => {
    const { app, databasePath } = await securityApp(t);
    const { code } = await account(app);
    const port = await listenLocal(app);
    const before = snapshot(databasePath);
    const body = JSON.stringify({ url: TARGET, padding: 'x'.repeat(REQUEST_BOUNDS.bodyBytes) });
    const head = `POST /v1/link HTTP/1.1\r\nAuthorization: Bearer ${code}\r\nContent-Type: application/json\r\n`;

    assertRawError(await rawExchange(port, `${head}Content-Length: ${body.length}\r\n${END}${body}`), 413, 'create link');
    // Declared but never sent: refused on the header alone, without waiting for the bytes.
    const declared = await rawExchange(port, `${head}Content-Length: 1000000000\r\n${END}`);
    assertRawError(declared, 413, 'create link');
    assert.ok(declared.elapsedMs < 2000, `refused at once (${Math.round(declared.elapsedMs)} ms)`);
    const chunks = [`${head}Transfer-Encoding: chunked\r\n${END}`];
    for (let sent = 0; sent < body.length; sent += 8192) {
      const piece = body.slice(sent, sent + 8192);
      chunks.push(`${piece.length.toString(16)}\r\n${piece}\r\n`);
    }
    chunks.push('0\r\n\r\n');
    assertRawError(await rawExchange(port, chunks), 413, 'create link');
    assert.equal(snapshot(databasePath), before, 'nothing was written');

    // Just under the limit is fine (the padding is an unknown field, ignored).
    const fits = JSON.stringify({ url: TARGET, padding: 'x'.repeat(REQUEST_BOUNDS.bodyBytes - 100) });
    const accepted = await rawExchange(port, `${head}Content-Length: ${fits.length}\r\n${END}${fits}`);
    assert.equal(accepted.status, 200, accepted.body);
  });

  test('a 20 KB URL is a plain-text 4xx, never a 5xx, whether path, query or short URL', async (t) => {
    const { app, databasePath } = await securityApp(t);
    const { code } = await account(app);
    const port = await listenLocal(app);
    const before = snapshot(databasePath);
    const big = 'a'.repeat(20 * 1024);
    for (const path of [
      `/v1/get/${big}`,
      `/${big}`,
      `/v1/links?auth=${code}&x=${big}`,
      `/v1/link?url=${encodeURIComponent(`${TARGET}/${big}`)}&auth=${code}`,
    ]) {
      const reply = await rawExchange(port, `GET ${path} HTTP/1.1\r\n${END}`);
      assert.ok([400, 414, 431].includes(reply.status), `${path.slice(0, 30)}…: ${reply.status} ${reply.body}`);
      assertRawError(reply, reply.status, 'handle request');
    }
    assert.equal(snapshot(databasePath), before, 'nothing was written');

    // Below the header limit, a path longer than the router accepts is a 414 in plain text.
    const routerLimit = await rawExchange(port, `GET /v1/get/${'a'.repeat(REQUEST_BOUNDS.maxParamLength + 1)} HTTP/1.1\r\n${END}`);
    assertRawError(routerLimit, 414, 'handle request');
  });

  test('headers over 16 KiB are refused with 431 in plain text; just under is fine', async (t) => {
    const { app, databasePath } = await securityApp(t);
    const { code } = await account(app);
    const port = await listenLocal(app);
    const before = snapshot(databasePath);
    const request = (headers: string) => `GET /v1/links HTTP/1.1\r\nAuthorization: ${code}\r\n${headers}${END}`;

    assertRawError(await rawExchange(port, request(`X-Big: ${'a'.repeat(17 * 1024)}\r\n`)), 431, 'handle request');
    const many = Array.from({ length: 17 }, (_, i) => `X-Pad-${i}: ${'b'.repeat(1020)}\r\n`).join('');
    assertRawError(await rawExchange(port, request(many)), 431, 'handle request');
    const countless = Array.from({ length: 3000 }, (_, i) => `X${i}: c\r\n`).join('');
    assertRawError(await rawExchange(port, request(countless)), 431, 'handle request');
    assert.equal(snapshot(databasePath), before, 'nothing was written');

    const fits = await rawExchange(port, request(`X-Big: ${'a'.repeat(15 * 1024)}\r\n`));
    assert.equal(fits.status, 200, fits.body);
  });
});
