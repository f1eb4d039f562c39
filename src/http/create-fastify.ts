import formBody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { decorateClientAddress } from './client-address.ts';
import { clientErrorHandler } from './client-error.ts';
import { createConnectionGuard, type ConnectionClosedReason } from './connection-guard.ts';
import { createFrameworkErrorHandler } from './error-handlers.ts';
import { createBufferedStdout, type LogStream } from './log-stream.ts';
import { REQUEST_BOUNDS } from './request-bounds.ts';
import { requestIdOf } from './request-id.ts';
import type { RequestLog } from './request-log.ts';
import { buildSharedSerializer } from './serializers.ts';

export interface FastifyDeps {
  readonly config: Pick<Config, 'logLevel' | 'trustProxy' | 'maxConnections'>;
  /** Writes the request lines, and counts requests for metrics. */
  readonly requestLog: RequestLog;
  /** Where JSON log lines go; standard output when omitted. */
  readonly logStream?: LogStream | undefined;
  /** Told of every connection closed for misbehaving (metrics count them). */
  readonly onConnectionClosed?: (reason: ConnectionClosedReason) => void;
}

/**
 * A Fastify instance with the service's options: logging, request ids, bounds on requests,
 * proxies, and the body formats accepted. No hooks and no routes yet.
 */
export async function createFastify({ config, requestLog, logStream, onConnectionClosed }: FastifyDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: config.logLevel, stream: logStream ?? createBufferedStdout() },
    logController: requestLog,
    // The id is bound to request.log, so every line of a request carries it (as `reqId`).
    genReqId: requestIdOf,
    // Read in genReqId instead, where an insane value can be replaced.
    requestIdHeader: false,
    // HEAD is routed explicitly: an automatic HEAD route would run GET and count an access.
    exposeHeadRoutes: false,
    // While closing, requests on open connections are still served (with Connection: close).
    return503OnClosing: false,
    routerOptions: { maxParamLength: REQUEST_BOUNDS.maxParamLength },
    // A mutable copy: Fastify's typings want string[], the config holds a frozen list. Never
    // `true`: Fastify's would take the left-most X-Forwarded-For entry, which the client wrote.
    trustProxy: config.trustProxy === false ? false : [...config.trustProxy],
    bodyLimit: REQUEST_BOUNDS.bodyBytes,
    requestTimeout: REQUEST_BOUNDS.requestTimeoutMs,
    // The whole-request deadline (requestTimeout only bounds receiving the request) is not
    // Fastify's handlerTimeout, which costs a timer and an AbortController per request: the
    // RequestLog runs it (request-deadline.ts).
    keepAliveTimeout: REQUEST_BOUNDS.keepAliveTimeoutMs,
    clientErrorHandler,
    // Node would answer a Host-less HTTP/1.1 request with a bare 400; the onRequest hook
    // (hooks.ts) words it.
    // Node checks headersTimeout and requestTimeout only every connectionsCheckingInterval
    // (30 s by default): a client dripping header lines would be cut after 30 s, not 10.
    http: { requireHostHeader: false, connectionsCheckingInterval: 1000 },
    frameworkErrors: createFrameworkErrorHandler(requestLog),
    // The same response schemas compile once per process, not once per app (serializers.ts).
    schemaController: { compilersFactory: { buildSerializer: buildSharedSerializer } },
  });
  app.server.headersTimeout = REQUEST_BOUNDS.headersTimeoutMs;
  const connections = createConnectionGuard(app.server, {
    maxConnections: config.maxConnections,
    maxActive: REQUEST_BOUNDS.maxActivePerConnection,
    maxWaiting: REQUEST_BOUNDS.maxWaitingPerConnection,
    stallMs: REQUEST_BOUNDS.sendStallMs,
  }, onConnectionClosed);
  // Fastify closes only the connections Node calls idle (between two requests): one that
  // never sent a whole request would hold shutdown up until the deadline.
  app.addHook('preClose', (done) => {
    connections.closeIdle();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    connections.stop();
    done();
  });

  // Requests are checked by the domain, which words errors as the contract requires and
  // checks credentials before parameters. Schemas document them and type the responses.
  app.setValidatorCompiler(() => () => true);
  decorateClientAddress(app);
  app.removeContentTypeParser('text/plain');
  await app.register(formBody, { bodyLimit: REQUEST_BOUNDS.bodyBytes });
  return app;
}
