/**
 * What every route runs inside: the Fastify instance with its bounds and request log, metrics,
 * the whole-request deadline, readiness from real storage outcomes, the closing, request,
 * error and CORS hooks, and the OpenAPI document that the routes registered later fill in.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { registerCors } from '../http/cors.ts';
import { createFastify } from '../http/create-fastify.ts';
import type { FastPathSlot } from '../http/fast-path.ts';
import { registerErrorHandlers } from '../http/error-handlers.ts';
import { createForwardedWarning } from '../http/forwarded-warning.ts';
import { registerClosingHooks, registerRequestHooks } from '../http/hooks.ts';
import type { LogStream } from '../http/log-stream.ts';
import { registerOpenApi } from '../http/openapi.ts';
import { trackRegisteredRoutes } from '../http/registered-routes.ts';
import { REQUEST_BOUNDS } from '../http/request-bounds.ts';
import { createRequestDeadline, type RequestDeadline } from '../http/request-deadline.ts';
import { RequestLog } from '../http/request-log.ts';
import { instrumentStore } from '../metrics/instrumented-store.ts';
import { createMetrics, type Metrics } from '../metrics/metrics.ts';
import { trackStorageHealth, type StorageHealth } from '../store/storage-health.ts';
import type { Store } from '../store/store.ts';

export interface HttpShell {
  readonly app: FastifyInstance;
  readonly metrics: Metrics;
  /** The store as the services see it: instrumented, its outcomes feeding readiness. */
  readonly store: Store;
  readonly storageHealth: StorageHealth;
  readonly requestDeadline: RequestDeadline;
  /** True once the app has begun closing. */
  readonly isClosing: () => boolean;
  readonly requestLog: RequestLog;
  /** Where the short-URL fast path goes, in front of Fastify. */
  readonly front: FastPathSlot;
}

export async function createHttpShell({ config, store: rawStore, logStream }: {
  config: Config; store: Store; logStream: LogStream | undefined;
}): Promise<HttpShell> {
  const metrics = createMetrics();
  // The whole-request deadline: STORAGE_TIMEOUT plus a margin, so storage calls answer first
  // with their own error (request-bounds.ts).
  const requestDeadline = createRequestDeadline(config.storageTimeoutMs + REQUEST_BOUNDS.handlerMarginMs);
  const requestLog = new RequestLog(metrics.observeRequest, requestDeadline);
  const { app, front } = await createFastify({ config, requestLog, logStream, onConnectionClosed: metrics.connectionClosed });
  // Readiness weighs what real calls did, not only a trivial query (src/store/storage-health.ts).
  const storageHealth = trackStorageHealth({
    onDamaged: (error) => app.log.error(`database damaged: ${describeCause(error)}; restore it or repair it, then restart`),
  });
  const store = instrumentStore(rawStore, metrics, storageHealth.observe);

  app.decorateRequest('account', null);
  app.decorateRequest('apiKey', null);
  trackRegisteredRoutes(app);
  // Before any route: the document is built from the routes as they are registered.
  await registerOpenApi(app, config);
  const isClosing = registerClosingHooks(app);
  app.addHook('onClose', (_instance, done) => {
    metrics.close();
    done();
  });
  registerRequestHooks(app, { inspectForwarded: config.trustProxy === false ? createForwardedWarning(app.log) : undefined });
  registerErrorHandlers(app);
  registerCors(app, config.cors);
  return { app, metrics, store, storageHealth, requestDeadline, isClosing, requestLog, front };
}

/** The engine's own words for a damaged database (the store's error wraps them as its cause). */
function describeCause(error: Error): string {
  const cause = error.cause instanceof Error ? error.cause : error;
  return cause.message.replace(/\s+/g, ' ');
}
