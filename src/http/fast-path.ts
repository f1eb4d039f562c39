/**
 * The short-URL fast path (issue 27, ADR 27): the plain `GET /{code}` and `GET /v1/get/{code}`
 * answered on the raw Node response, before Fastify's generic request lifecycle (its request
 * and reply objects, child logger, hooks, routing, serialisation), which cost about as much
 * CPU as all the rest of a redirect.
 *
 * It takes only what it can recognise for certain with a few string checks: a GET of a path
 * that Fastify would route to one of those two routes with the same parameter (a code of
 * letters, digits, `-`, `_`, `~`; no query, no percent-encoding, no static route of that name),
 * with a Host and nothing the onRequest hooks would refuse or look at (no Expect, one Host, no
 * body, no X-Forwarded-For or Forwarded), no rate limit applying to the client, the app not
 * closing, and CORS off for `/v1/get/`. Everything else goes to Fastify untouched.
 *
 * A request it takes is counted through the routes' own code (routes/resolve.ts `ShortUrls`).
 * If the link turns out to need more than a plain answer (unknown, gone, protected, routed) or
 * the store fails, the request is handed to Fastify with the outcome attached (`handOver`):
 * the route answers it without resolving again, so nothing is counted twice or lost. Only the
 * plain answer is written here, with the headers in the order Fastify writes them, the same
 * request id, the same request log line and metrics (RequestLog.fastCompleted), after
 * 'finish' as Fastify does. test/http/fast-path.test.ts compares the raw bytes of both ways.
 *
 * No request deadline is kept for the requests it answers: they wait on nothing but the
 * store's resolve, whose own deadline (STORAGE_TIMEOUT) is shorter than the request's, and a
 * failure is handed to Fastify, which answers it as the route would.
 */
import type { IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { ResolvedLink } from '../store/store.ts';
import { hasSeveralHosts } from './hooks.ts';
import { linkBody } from './presenters.ts';
import type { RateLimitChecks } from './rate-limit-checks.ts';
import type { RegisteredRoute } from './registered-routes.ts';
import { REQUEST_BOUNDS } from './request-bounds.ts';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.ts';
import type { RequestLog } from './request-log.ts';
import {
  handOver, REDIRECT_EVENT, REDIRECT_ROUTE, RESOLVE_EVENT, RESOLVE_ROUTE, type CountedBefore, type ShortUrls,
} from './routes/resolve.ts';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** Answers a request and returns true, or returns false having touched nothing. */
export type FastHandler = (request: IncomingMessage, response: ServerResponse) => boolean;

export interface FastPathSlot {
  /** Fastify's own handler of the server's requests. */
  readonly fastify: Handler;
  /** Asks `handler` first about every request from now on. */
  use(handler: FastHandler): void;
}

/**
 * Puts a slot for the fast path in front of Fastify's request handler. Called before the
 * connection guard wraps the server's 'request' listeners, so the guard's bounds hold for every
 * request, whoever answers it.
 */
export function frontOfFastify(server: Server): FastPathSlot {
  const [fastify, ...others] = server.listeners('request') as Handler[];
  if (fastify === undefined || others.length > 0) throw new Error('expected Fastify\'s request handler alone');
  server.removeAllListeners('request');
  let front: FastHandler | undefined;
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (front === undefined || !front(request, response)) fastify(request, response);
  });
  return { fastify, use: (handler) => void (front = handler) };
}

/** How many requests the fast path answered, and how many it counted and handed to Fastify. */
export interface FastPathCounts {
  answered: number;
  handedOver: number;
}

export interface FastPathDeps {
  readonly shortUrls: ShortUrls;
  readonly rateLimits: RateLimitChecks;
  readonly requestLog: RequestLog;
  /** The logger Fastify makes request loggers from (`app.log`). */
  readonly log: FastifyBaseLogger;
  /** Where a request the fast path has counted but cannot answer goes. */
  readonly fastify: Handler;
  readonly isClosing: () => boolean;
  /** Every route as registered, read at the first request (all are registered by then). */
  readonly routes: () => readonly RegisteredRoute[];
  /** False when CORS is configured: its hooks add headers to `/v1/get/` answers. */
  readonly resolveRoute: boolean;
}

const RESOLVE_PREFIX = RESOLVE_ROUTE.slice(0, RESOLVE_ROUTE.indexOf(':'));
const JSON_TYPE = 'application/json; charset=utf-8';

/** True for a parameter the router passes on as it is: letters, digits, `-`, `_`, `~`, within the router's length. */
function isPlainCode(code: string): boolean {
  const length = code.length;
  if (length === 0 || length > REQUEST_BOUNDS.maxParamLength) return false;
  for (let i = 0; i < length; i++) {
    const c = code.charCodeAt(i);
    // 0-9, A-Z, a-z, '-', '_', '~'
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 95 || c === 126)) return false;
  }
  return true;
}

/**
 * The one-segment paths Fastify routes elsewhere than `/{code}` (`/healthz`, `/ui`, …); undefined
 * when some one-segment route has a parameter or wildcard of its own, whose matches the fast path
 * cannot tell from a code (then it leaves `/{code}` to Fastify).
 */
export function staticPathsBesideCode(routes: readonly RegisteredRoute[]): ReadonlySet<string> | undefined {
  const paths = new Set<string>();
  for (const { method, url } of routes) {
    if (method !== 'GET' || url === REDIRECT_ROUTE || url.indexOf('/', 1) !== -1) continue;
    if (url.includes(':') || url.includes('*')) return undefined;
    paths.add(url);
  }
  return paths;
}

export function createShortUrlFastPath(deps: FastPathDeps): { take: FastHandler; counts: FastPathCounts } {
  const { shortUrls, rateLimits, requestLog, log, fastify, isClosing, resolveRoute } = deps;
  const counts: FastPathCounts = { answered: 0, handedOver: 0 };
  let staticPaths: ReadonlySet<string> | undefined | null = null;

  function take(request: IncomingMessage, response: ServerResponse): boolean {
    if (request.method !== 'GET') return false;
    const url = request.url!;
    let route: string;
    let code: string;
    if (url.startsWith(RESOLVE_PREFIX)) {
      if (!resolveRoute) return false;
      route = RESOLVE_ROUTE;
      code = url.slice(RESOLVE_PREFIX.length);
    } else {
      if (staticPaths === null) staticPaths = staticPathsBesideCode(deps.routes());
      if (staticPaths === undefined || staticPaths.has(url)) return false;
      route = REDIRECT_ROUTE;
      code = url.slice(1);
    }
    if (!isPlainCode(code)) return false;
    const headers = request.headers;
    if (headers.host === undefined || headers.expect !== undefined || headers['content-length'] !== undefined ||
        headers['transfer-encoding'] !== undefined || headers['x-forwarded-for'] !== undefined || headers.forwarded !== undefined ||
        hasSeveralHosts(request.rawHeaders)) {
      return false;
    }
    // Without X-Forwarded-For, the address Fastify's `request.ip` gives, TRUST_PROXY or not.
    const ip = request.socket.remoteAddress;
    if (ip === undefined || isClosing()) return false;
    const visitor = { headers, ip };
    if (rateLimits.applies(visitor)) return false;

    const started = performance.now();
    const { domain, key } = route === REDIRECT_ROUTE ? shortUrls.redirectKey(headers.host, code) : { domain: undefined, key: code };
    const counted: CountedBefore = { domain, key, found: shortUrls.count(visitor, key) };
    void answer(request, response, route, counted, ip, started);
    return true;
  }

  async function answer(
    request: IncomingMessage, response: ServerResponse, route: string, counted: CountedBefore, ip: string, started: number,
  ): Promise<void> {
    let link: ResolvedLink | undefined;
    try {
      [link] = await counted.found;
    } catch {
      // Handed over below: the route answers the error as it would have.
    }
    const redirect = link !== undefined && route === REDIRECT_ROUTE ? shortUrls.plainRedirect(link) : undefined;
    if (link === undefined || (route === REDIRECT_ROUTE && redirect === undefined)) {
      // Not a plain answer: the route answers the same outcome (the 404 or 410 page, the form, the routing, the error).
      counts.handedOver++;
      handOver(request, counted);
      fastify(request, response);
      return;
    }
    counts.answered++;
    const id = requestIdOf(request);
    // The headers in the order Fastify sends them: the onRequest hook's, the route's, the closing hook's, the length.
    let status: number;
    let head: OutgoingHttpHeaders;
    let body: string | undefined;
    if (redirect !== undefined) {
      status = redirect.status;
      head = { 'x-content-type-options': 'nosniff', [REQUEST_ID_HEADER]: id, location: redirect.location, 'cache-control': 'private, no-cache' };
    } else {
      status = 200;
      // What Fastify's serializer of LinkSchema writes for this object.
      body = JSON.stringify(linkBody(link));
      head = { 'x-content-type-options': 'nosniff', [REQUEST_ID_HEADER]: id, 'content-type': JSON_TYPE };
    }
    // As the closing hook (hooks.ts) does, for a request that arrived before close() began.
    if (isClosing()) head.connection = 'close';
    head['content-length'] = body === undefined ? '0' : String(Buffer.byteLength(body));
    response.on('finish', () => requestLog.fastCompleted({
      log, id, route, countedEvent: route === REDIRECT_ROUTE ? REDIRECT_EVENT : RESOLVE_EVENT, method: 'GET', url: request.url!,
      statusCode: status, elapsedMs: performance.now() - started, remoteAddress: ip, userAgent: request.headers['user-agent'],
    }));
    response.writeHead(status, head);
    response.end(body);
  }

  return { take, counts };
}
