/**
 * The connection guard on a bare node:http server: a pipelining client that reads gets every
 * answer, in order, with at most `maxActive` of its requests processed at once; one that
 * pipelines past `maxWaiting` is closed; at shutdown, connections owing nothing are closed.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { test } from 'node:test';
import { createConnectionGuard, type ConnectionClosedReason } from '../../src/http/connection-guard.ts';

async function serve(handler: Parameters<typeof createServer>[1], bounds: { maxActive: number; maxWaiting: number }) {
  const server: Server = createServer(handler);
  const closed: ConnectionClosedReason[] = [];
  const guard = createConnectionGuard(server, { maxConnections: 100, stallMs: 10_000, ...bounds }, (reason) => closed.push(reason));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    port,
    guard,
    closed,
    async close() {
      guard.stop();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

function pipelined(port: number, count: number): string {
  let text = '';
  for (let i = 0; i < count; i++) text += `GET /${i} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
  return text;
}

test('a reading pipeliner gets every answer in order, with at most maxActive processed at once', async () => {
  let active = 0;
  let peak = 0;
  const service = await serve(
    (request, response) => {
      active++;
      peak = Math.max(peak, active);
      setTimeout(() => {
        active--;
        response.end(`answer ${request.url}\n`);
      }, 2);
    },
    { maxActive: 4, maxWaiting: 1000 },
  );
  const socket = connect(service.port, '127.0.0.1');
  socket.setEncoding('utf8');
  let text = '';
  socket.on('data', (chunk: string) => (text += chunk));
  socket.write(pipelined(service.port, 200));
  while ((text.match(/answer \/\d+/g) ?? []).length < 200) await once(socket, 'data');
  const order = (text.match(/answer \/(\d+)/g) ?? []).map((answer) => Number(answer.slice('answer /'.length)));
  assert.deepEqual(order, Array.from({ length: 200 }, (_, i) => i));
  assert.equal(peak, 4);
  socket.destroy();
  await service.close();
});

test('a connection with more than maxWaiting requests waiting is closed', async () => {
  const service = await serve(() => undefined, { maxActive: 2, maxWaiting: 10 });
  const socket = connect(service.port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write(pipelined(service.port, 50));
  await once(socket, 'close');
  assert.deepEqual(service.closed, ['queue_full']);
  await service.close();
});

test('closeIdle closes connections owing nothing (even half a request) and spares those with a request in flight', async () => {
  let finish: (() => void) | undefined;
  const service = await serve(
    (_request, response) => {
      finish = () => response.end('done');
    },
    { maxActive: 16, maxWaiting: 100 },
  );
  const open = async (text: string) => {
    const socket = connect(service.port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.setEncoding('utf8');
    await once(socket, 'connect');
    if (text !== '') socket.write(text);
    return socket;
  };
  const silent = await open('');
  const half = await open('GET /half HTTP/1.1\r\nHost: x\r\n');
  const busy = await open('GET /busy HTTP/1.1\r\nHost: x\r\n\r\n');
  while (finish === undefined) await new Promise((resolve) => setTimeout(resolve, 5));

  service.guard.closeIdle();
  await Promise.all([once(silent, 'close'), once(half, 'close')]);
  assert.equal(busy.destroyed, false, 'the connection with a request in flight stays');
  let answer = '';
  busy.on('data', (chunk: string) => (answer += chunk));
  finish();
  await once(busy, 'close');
  assert.match(answer, /done$/, 'it gets its answer, then is closed');
  await service.close();
});

test("a connection sending one request at a time runs through the guard untouched: no listener, and Node's _paused stays a plain property", async () => {
  const sockets = new Set<Socket>();
  let closeListeners = -1;
  const service = await serve(
    (request, response) => {
      sockets.add(request.socket);
      closeListeners = response.listenerCount('close');
      response.end('ok');
    },
    { maxActive: 2, maxWaiting: 100 },
  );
  for (let i = 0; i < 3; i++) {
    const answer = await fetch(`http://127.0.0.1:${service.port}/${i}`);
    assert.equal(await answer.text(), 'ok');
  }
  assert.equal(closeListeners, 0, 'the guard added no listener to the response');
  for (const socket of sockets) {
    // An accessor would put the socket in V8's slow dictionary mode (ADR 16).
    assert.ok('value' in Object.getOwnPropertyDescriptor(socket, '_paused')!, '_paused is still a data property');
  }
  await service.close();
});

test('a pipeliner held by the guard gets the _paused accessor, and its requests are counted from the first one on', async () => {
  let socketSeen: Socket | undefined;
  let active = 0;
  let peak = 0;
  const service = await serve(
    (request, response) => {
      socketSeen = request.socket;
      active++;
      peak = Math.max(peak, active);
      setTimeout(() => {
        active--;
        response.end(`answer ${request.url}\n`);
      }, 5);
    },
    { maxActive: 1, maxWaiting: 100 },
  );
  const socket = connect(service.port, '127.0.0.1');
  socket.setEncoding('utf8');
  let text = '';
  socket.on('data', (chunk: string) => (text += chunk));
  socket.write(pipelined(service.port, 20));
  while ((text.match(/answer \/\d+/g) ?? []).length < 20) await once(socket, 'data');
  assert.equal(peak, 1, 'the first request (run before any other arrived) was counted too');
  assert.ok('get' in Object.getOwnPropertyDescriptor(socketSeen!, '_paused')!);
  socket.destroy();
  await service.close();
});

test('a pipeliner whose requests are answered at once leaves the event loop a turn between its batches (other clients stay served)', async () => {
  const count = 1000;
  let served = 0;
  let servedAtFirstTurn: number | undefined;
  const service = await serve(
    (_request, response) => {
      // Booked at the first request: runs at the event loop's next turn.
      if (served++ === 0) setImmediate(() => (servedAtFirstTurn = served));
      response.end('ok\n');
    },
    { maxActive: 4, maxWaiting: 4096 },
  );
  const socket = connect(service.port, '127.0.0.1');
  try {
    socket.setEncoding('utf8');
    let text = '';
    socket.on('data', (chunk: string) => (text += chunk));
    socket.write(pipelined(service.port, count));
    while ((text.match(/\r\n\r\nok\n/g) ?? []).length < count) await once(socket, 'data');
    assert.equal(served, count);
    // Before, every request of the chunk ran in one go, each started by the close of the one
    // before within the same tick: the turn came only after all of them.
    assert.ok(servedAtFirstTurn !== undefined && servedAtFirstTurn < count / 10, `requests served before the loop's next turn: ${servedAtFirstTurn}`);
  } finally {
    socket.destroy();
    await service.close();
  }
});
