/**
 * Bounds on what one TCP connection may hold, and the connection side of shutdown.
 *
 * Node's HTTP server parses every pipelined request it reads and hands each to the app at
 * once; it stops reading only when answers pile up unsent, and resumes as soon as any queued
 * answer moves. A client that writes thousands of requests and never reads the answers
 * therefore had them all processed concurrently (memory, event loop) and was held open
 * forever. Here each connection runs at most `maxActive` requests at a time; later ones wait
 * (cheap: no routing, no storage) and reading stops until they run. A connection with more
 * than `maxWaiting` requests waiting, or whose answers make no progress for `stallMs`, is
 * closed. And at shutdown, connections with no request in flight (idle keep-alive, a
 * preconnect that sent nothing, half a request) are closed at once.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionBounds {
  /** Connections held at once (`MAX_CONNECTIONS`); further ones are refused by the kernel accept. */
  readonly maxConnections: number;
  /** Requests of one connection processed at a time. */
  readonly maxActive: number;
  /** Requests of one connection read and waiting their turn before it is closed. */
  readonly maxWaiting: number;
  /** Milliseconds an answer may sit unsent (the client reads nothing) before the connection is closed. */
  readonly stallMs: number;
}

/** Why the guard closed a connection: its answers went unread, or it queued too many requests. */
export const ConnectionClosedReason = { Stalled: 'stalled', QueueFull: 'queue_full' } as const;
export type ConnectionClosedReason = (typeof ConnectionClosedReason)[keyof typeof ConnectionClosedReason];

export interface ConnectionGuard {
  /** Closes every connection with no request in flight or waiting; from now on, each as its last answer is sent. */
  closeIdle(): void;
  /** Stops the stall timer. */
  stop(): void;
}

/**
 * The socket as Node's HTTP server handles it: `_paused` is its flag for "reading stopped"
 * (it honours it when something else would resume the socket), `parser` its parser.
 */
interface HttpSocket extends Socket {
  _paused?: boolean;
  parser?: { resume(): void } | null;
}

interface ConnectionState {
  /** Requests counted as in progress: each holds a 'close' listener on its response. */
  active: number;
  /**
   * The one request in progress that is not counted: a connection's requests are counted
   * only once a second one arrives while one is in progress (see `request` below).
   */
  loose: ServerResponse | undefined;
  /** True while waiting requests hold reading stopped. */
  held: boolean;
  /** True once `_paused` is seen through the guard's property (the first time it held reading). */
  watched: boolean;
  /** Node's own value of `_paused`, once watched. */
  nodePaused: boolean;
  /** True while a turn of the event loop is booked to start waiting requests. */
  booked: boolean;
  readonly waiting: [IncomingMessage, ServerResponse][];
  /** Bytes the kernel has taken, when last looked at. */
  flushed: number;
  /** When its answers were last seen to make progress. */
  progressAt: number;
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

export function createConnectionGuard(
  server: Server,
  bounds: ConnectionBounds,
  onClosed: (reason: ConnectionClosedReason) => void = () => undefined,
): ConnectionGuard {
  const connections = new Map<Socket, ConnectionState>();
  let closing = false;

  server.maxConnections = bounds.maxConnections;
  server.on('connection', (socket: HttpSocket) => {
    const state: ConnectionState = {
      active: 0, loose: undefined, held: false, watched: false, nodePaused: false, booked: false, waiting: [], flushed: 0, progressAt: Date.now(),
    };
    connections.set(socket, state);
    socket.once('close', () => connections.delete(socket));
  });

  // The app's handler (Fastify's) runs through the guard.
  const handlers = server.listeners('request') as Handler[];
  server.removeAllListeners('request');
  const dispatch = (request: IncomingMessage, response: ServerResponse) => {
    for (const handler of handlers) handler(request, response);
  };

  // What every request pays is kept to a lookup and a few comparisons: most connections
  // send one request at a time, and neither a closure nor a listener per request is needed
  // to bound them. Node gives a response the socket at once only when no earlier answer of
  // the connection is pending; such a request runs uncounted, as `loose`. Only when another
  // request arrives while one is in progress does the guard start counting (that one
  // included), through one listener function shared by every response.
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const state = connections.get(request.socket);
    if (state === undefined) {
      dispatch(request, response);
      return;
    }
    if (!closing && state.active === 0 && state.waiting.length === 0 && response.socket !== null) {
      state.loose = response;
      dispatch(request, response);
      return;
    }
    count(state);
    if (state.active < bounds.maxActive && state.waiting.length === 0) {
      track(state, response);
      dispatch(request, response);
      return;
    }
    const socket = request.socket as HttpSocket;
    if (state.waiting.length >= bounds.maxWaiting) {
      // Requests parsed from the rest of the chunk arrive after the close: drop them quietly.
      if (!socket.destroyed) {
        socket.destroy();
        onClosed(ConnectionClosedReason.QueueFull);
      }
      return;
    }
    state.waiting.push([request, response]);
    if (!state.held) {
      // Node's parser stops after the chunk it is parsing (it reads the flag), and nothing
      // resumes reading until the flag clears.
      watchPaused(socket, state);
      state.held = true;
      socket.pause();
    }
  });

  /** Counts the connection's loose request, if it is still in progress. */
  function count(state: ConnectionState): void {
    const loose = state.loose;
    if (loose === undefined) return;
    state.loose = undefined;
    // `destroyed` is set when the response has closed (answered or aborted).
    if (!loose.destroyed) track(state, loose);
  }

  function track(state: ConnectionState, response: ServerResponse): void {
    state.active++;
    // Node emits a response's 'close' once.
    response.on('close', onTrackedClose);
  }

  function onTrackedClose(this: ServerResponse): void {
    const socket = this.req.socket as HttpSocket;
    const state = connections.get(socket);
    // A closed connection: whatever waited on it was aborted with it.
    if (state === undefined) return;
    state.active--;
    if (state.waiting.length === 0) {
      next(socket, state);
    } else if (!state.booked) {
      // Not now: a request that needs no I/O (a health check, a cached lookup) is answered
      // and closed within the same tick, and so would the next one it started, and the next:
      // thousands of pipelined requests run in one go while the event loop serves no one
      // else (a /healthz waited 5.7 s behind 8 such connections). From the next turn of
      // the loop instead, after what other connections brought meanwhile.
      state.booked = true;
      setImmediate(nextTurn, socket, state);
    }
  }

  function nextTurn(socket: HttpSocket, state: ConnectionState): void {
    state.booked = false;
    if (connections.has(socket)) next(socket, state);
  }

  /**
   * Node stops reading when answers pile up unsent, but resumes whenever a queued answer
   * moves, however many requests are still pending: every resume let it parse another 64 KB
   * of pipelined requests. Seen through this property, reading stays stopped while requests
   * wait here, whatever Node decides; Node's own decision is kept for when they are done.
   * Only on a connection the guard has had to hold: turning a data property into an accessor
   * puts the socket's properties in V8's slow dictionary mode, which every access Node's
   * HTTP and stream code makes to that socket then pays (ADR 22).
   */
  function watchPaused(socket: HttpSocket, state: ConnectionState): void {
    if (state.watched) return;
    state.watched = true;
    state.nodePaused = socket._paused === true;
    Object.defineProperty(socket, '_paused', {
      configurable: true,
      enumerable: true,
      get: () => state.nodePaused || state.held,
      set: (value: boolean) => {
        state.nodePaused = value;
      },
    });
  }

  function next(socket: HttpSocket, state: ConnectionState): void {
    while (state.active < bounds.maxActive && state.waiting.length > 0) {
      const [request, response] = state.waiting.shift()!;
      track(state, response);
      dispatch(request, response);
    }
    if (state.waiting.length === 0 && state.held) {
      state.held = false;
      // As Node resumes it; if Node itself wants reading stopped, it resumes later.
      if (!state.nodePaused && !socket.destroyed) {
        socket.parser?.resume();
        socket.resume();
      }
    }
    // Its last answer is on its way: close after it (an abrupt close could make the client's
    // kernel drop it).
    if (closing && state.active === 0 && state.waiting.length === 0 && !socket.destroyed) socket.end(() => socket.destroy());
  }

  // A write that makes no progress: answers pending (in this process) and nothing more taken
  // by the kernel since the last look. While shutting down, a client that does not read is
  // not waited for beyond a second: it would hold the exit up past its deadline.
  const sweep = setInterval(() => {
    const now = Date.now();
    const stallMs = closing ? Math.min(1000, bounds.stallMs) : bounds.stallMs;
    for (const [socket, state] of connections) {
      const flushed = socket.bytesWritten - socket.writableLength;
      if (socket.writableLength === 0 || flushed !== state.flushed) {
        state.flushed = flushed;
        state.progressAt = now;
      } else if (now - state.progressAt >= stallMs) {
        socket.destroy();
        onClosed(ConnectionClosedReason.Stalled);
      }
    }
  }, Math.min(1000, bounds.stallMs));
  sweep.unref();

  return {
    closeIdle() {
      closing = true;
      for (const [socket, state] of connections) {
        // A request in progress is counted from now on, so its connection closes after it.
        count(state);
        if (state.active !== 0 || state.waiting.length !== 0) continue;
        // Nothing owed to it: whatever it sent of a request is refused.
        if (socket.writableLength === 0) socket.destroy();
        else socket.end(() => socket.destroy());
      }
    },
    stop() {
      clearInterval(sweep);
    },
  };
}
