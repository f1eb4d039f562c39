import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import formBody from '@fastify/formbody';
import { pino } from 'pino';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { createAccountService } from './accounts/account-service.ts';
import type { Config } from './config.ts';
import { createLinkService } from './links/link-service.ts';
import { instrumentStore } from './metrics/instrumented-store.ts';
import { createMetrics } from './metrics/metrics.ts';
import type { Store } from './store/store.ts';
import { describeError } from './http/error-table.ts';
import { registerDocs, registerOpenApi } from './http/openapi.ts';
import { Operation } from './http/operations.ts';
import { REQUEST_ID_HEADER, requestIdOf } from './http/request-id.ts';
import { RequestLog } from './http/request-log.ts';
import { createRateLimitChecks } from './http/rate-limit-checks.ts';
import { createAuthenticate } from './http/route-helpers.ts';
import { createMemoryCounters, type Counters } from './rate-limit/counters.ts';
import { registerAccountRoutes } from './http/routes/accounts.ts';
import { registerHealthRoutes, type ReadinessCheck } from './http/routes/health.ts';
import { registerLinkRoutes } from './http/routes/links.ts';
import { registerMetricsRoute } from './http/routes/metrics.ts';
import { registerResolveRoutes, sendNotFoundPage } from './http/routes/resolve.ts';
import { registerWebRoutes } from './web/routes.ts';

export interface AppDeps {
  readonly config: Config;
  readonly store: Store;
  /** Source of the current time; tests pass a fixed one. */
  readonly clock?: () => Date;
  /** Counters for rate limits; this process's memory when omitted. */
  readonly limiter?: Counters;
  /** Where JSON log lines go; standard output when omitted. */
  readonly logStream?: { write(line: string): void };
  /**
   * What `/readyz` asks besides the store (which it always pings), e.g. Redis. Each check
   * resolves when its dependency answers.
   */
  readonly readiness?: readonly ReadinessCheck[];
}

/** A route as registered: one method and its URL pattern. */
export interface RegisteredRoute {
  readonly method: string;
  readonly url: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route the app serves, one entry per method, in registration order. */
    readonly registeredRoutes: readonly RegisteredRoute[];
  }
}

const TEXT = 'text/plain; charset=utf-8';

/** Bounds on what one client may hold or send; see README "Limits". */
export const LIMITS = {
  bodyBytes: 64 * 1024,
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  // A 2000-character shortcode must reach the router intact (its default cap is 100).
  maxParamLength: 8 * 1024,
} as const;

function operationOf(request: FastifyRequest): string {
  return request.routeOptions.config.operation ?? Operation.Other;
}

/** Writes the contract's error form: one plain-text line, `Unable to <operation>: <reason>`. */
function sendError(reply: FastifyReply, operation: string, status: number, reason: string, retryAfter?: number) {
  if (status === 401) reply.header('www-authenticate', 'Bearer realm="shortlink"');
  if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
  return reply.code(status).type(TEXT).send(`Unable to ${operation}: ${reason}`);
}

/** True for `/{one-segment}`: the short-URL space, where browsers get the HTML 404 page. */
function isShortUrlPath(url: string): boolean {
  const path = url.split('?', 1)[0]!;
  return path.length > 1 && path.lastIndexOf('/') === 0;
}

/** Answers malformed HTTP (bad request line, oversized headers, timeouts) in plain text. */
function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) return;
  const status =
    error.code === 'HPE_HEADER_OVERFLOW' ? 431
    : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408
    : error.code === 'HPE_URI_TOO_LONG' ? 414
    : 400;
  const body = `Unable to handle request: ${STATUS_CODES[status]!.toLowerCase()}`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${TEXT}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Standard output with writes gathered into 4 KiB chunks: under load, one write(2) per ~20
 * request lines instead of one each (measured: about a fifth more resolutions per second).
 * A timer flushes at least every 100 ms, so a quiet server's lines are never held longer;
 * pino flushes the rest when the process exits. Only a `kill -9` can lose the last lines.
 */
function bufferedStdout() {
  const stream = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => {
    try {
      stream.flush(); // no callback: a callback would add a listener per call
    } catch {
      // destroyed at exit; nothing left to flush
    }
  }, 100).unref();
  return stream;
}

/** Builds the HTTP application around an open store. Listening is the caller's business. */
export async function buildApp({
  config,
  store: rawStore,
  clock = () => new Date(),
  limiter,
  logStream,
  readiness = [],
}: AppDeps): Promise<FastifyInstance> {
  const metrics = createMetrics();
  const store = instrumentStore(rawStore, metrics);
  const requestLog = new RequestLog(metrics.observeRequest);
  const app = Fastify({
    logger: { level: config.logLevel, stream: logStream ?? bufferedStdout() },
    logController: requestLog,
    // The id is bound to request.log, so every line of a request carries it (as `reqId`).
    genReqId: requestIdOf,
    // Read in genReqId instead, where an insane value can be replaced.
    requestIdHeader: false,
    // HEAD is routed explicitly: an automatic HEAD route would run GET and count an access.
    exposeHeadRoutes: false,
    // While closing, requests on open connections are still served (with Connection: close).
    return503OnClosing: false,
    routerOptions: { maxParamLength: LIMITS.maxParamLength },
    // A mutable copy: Fastify's typings want string[], the config holds a frozen list.
    trustProxy: typeof config.trustProxy === 'boolean' ? config.trustProxy : [...config.trustProxy],
    bodyLimit: LIMITS.bodyBytes,
    requestTimeout: LIMITS.requestTimeoutMs,
    keepAliveTimeout: LIMITS.keepAliveTimeoutMs,
    clientErrorHandler,
    // Node would answer a Host-less HTTP/1.1 request with a bare 400; the hook below words it.
    // Node checks headersTimeout and requestTimeout only every connectionsCheckingInterval
    // (30 s by default): a client dripping header lines would be cut after 30 s, not 10.
    http: { requireHostHeader: false, connectionsCheckingInterval: 1000 },
    frameworkErrors: (error, request, reply) => {
      // Requests refused before routing get no completion listener from Fastify: log them here.
      reply.raw.once('finish', () => requestLog.requestCompleted(null, request, reply));
      // Refused before the onRequest hook that sets it on every other answer.
      reply.header('x-content-type-options', 'nosniff');
      reply.header(REQUEST_ID_HEADER, request.id);
      if (request.method === 'GET' && isShortUrlPath(request.url)) return sendNotFoundPage(reply);
      const { status, reason } = describeError(error);
      return sendError(reply, Operation.Other, status, reason);
    },
  });
  app.server.headersTimeout = LIMITS.headersTimeoutMs;

  // Requests are checked by the domain, which words errors as the contract requires and
  // checks credentials before parameters. Schemas document them and type the responses.
  app.setValidatorCompiler(() => () => true);
  app.removeContentTypeParser('text/plain');
  await app.register(formBody, { bodyLimit: LIMITS.bodyBytes });

  app.decorateRequest('account', null);

  const routes: RegisteredRoute[] = [];
  app.decorate('registeredRoutes', routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  });
  // Before any route: the document is built from the routes as they are registered.
  await registerOpenApi(app, config);

  // Fastify marks requests that *arrive* after close() began with `Connection: close`, but not
  // the ones already in flight: their connection would stay open after the answer, idle
  // until the keep-alive timeout, and hold shutdown up for that long (or, if the client keeps
  // using it, until the shutdown deadline). Close those connections after their answer too.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    metrics.close();
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });

  // Callback style on purpose: this runs on every request, and an async hook costs a promise.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header(REQUEST_ID_HEADER, request.id);
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      sendError(reply, Operation.Other, 400, 'the Host header is required');
      return;
    }
    done();
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const { status, reason, retryAfter } = describeError(error);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    return sendError(reply, operationOf(request), status, reason, retryAfter);
  });
  app.setNotFoundHandler((request, reply) => {
    if (request.method === 'GET' && isShortUrlPath(request.url)) return sendNotFoundPage(reply);
    return sendError(reply, Operation.Other, 404, 'no such route');
  });

  const accounts = createAccountService({ store, clock, defaultMaxLinks: config.defaultMaxLinks });
  const links = createLinkService({
    store,
    clock,
    ownOrigin: new URL(config.baseUrl).origin,
    blockedHosts: config.blockedHosts,
  });
  let counters = limiter;
  if (counters === undefined && config.rateLimit) {
    const own = createMemoryCounters();
    app.addHook('onClose', () => own.close());
    counters = own;
  }
  const limits = createRateLimitChecks({
    enabled: config.rateLimit,
    policies: config.rateLimitPolicies,
    exempt: config.rateLimitExempt,
    counters,
  });
  const authenticate = createAuthenticate(accounts, limits);

  // GET /v1/get_account shows the account itself: always read from the store, so MaxLinks is
  // current and a storage outage answers 503 like every other operation.
  registerAccountRoutes(app, accounts, createAuthenticate(accounts, limits, { fresh: true }), limits);
  registerLinkRoutes(app, links, authenticate, limits, config.baseUrl);
  registerResolveRoutes(app, links, limits, config.redirectStatus);
  registerHealthRoutes(app, [{ name: 'storage', check: () => store.ping() }, ...readiness], () => closing);
  registerMetricsRoute(app, metrics, config.metricsToken);
  registerWebRoutes(app);
  await registerDocs(app);

  return app;
}
