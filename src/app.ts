/**
 * The composition root of one HTTP application: services built around the store, and every
 * hook, handler and route registered in the order that matters. What each does lives in its
 * own module; listening is the caller's business (start-server.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createAccountService } from './accounts/account-service.ts';
import { createAdminService } from './admin/admin-service.ts';
import type { Config } from './config.ts';
import { createFastify } from './http/create-fastify.ts';
import { registerErrorHandlers } from './http/error-handlers.ts';
import { createEventPublisher } from './http/event-payloads.ts';
import { registerEventRoutes } from './http/routes/events.ts';
import { createLiveEventsFor } from './events/create-live-events.ts';
import type { LiveEventsHub } from './events/live-events.ts';
import { createForwardedWarning } from './http/forwarded-warning.ts';
import { registerCors } from './http/cors.ts';
import { registerClosingHooks, registerRequestHooks } from './http/hooks.ts';
import type { LogStream } from './http/log-stream.ts';
import { registerDocs, registerOpenApi } from './http/openapi.ts';
import { createRateLimitChecks } from './http/rate-limit-checks.ts';
import { trackRegisteredRoutes } from './http/registered-routes.ts';
import { REQUEST_BOUNDS } from './http/request-bounds.ts';
import { createRequestDeadline } from './http/request-deadline.ts';
import { RequestLog } from './http/request-log.ts';
import { createAuthenticate } from './http/route-helpers.ts';
import { registerAccountRoutes } from './http/routes/accounts.ts';
import { registerAdminRoutes } from './http/routes/admin.ts';
import { registerHealthRoutes, type ReadinessCheck } from './http/routes/health.ts';
import { registerLinkRoutes } from './http/routes/links.ts';
import { registerMetricsRoute } from './http/routes/metrics.ts';
import { registerResolveRoutes } from './http/routes/resolve.ts';
import { registerStatsRoutes } from './http/routes/stats.ts';
import { createVisitClassifier } from './stats/classify.ts';
import { loadCountryDatabase } from './stats/country-database.ts';
import { startStatsFolding } from './stats/folding.ts';
import { createStatsService } from './stats/stats-service.ts';
import { hourOf, type Visit } from './stats/visit.ts';
import { refuseDisabledAccounts, refusingStore } from './links/disabled-accounts.ts';
import { createLinkService, type LinkServiceDeps } from './links/link-service.ts';
import { instrumentStore } from './metrics/instrumented-store.ts';
import { trackStorageHealth } from './store/storage-health.ts';
import { createMetrics } from './metrics/metrics.ts';
import { createCounters, type RateLimitCounters } from './rate-limit/create-counters.ts';
import type { Store } from './store/store.ts';
import { registerWebRoutes } from './web/routes.ts';
import { registerWebhookRoutes } from './http/routes/webhooks.ts';
import { startDispatcher, type DispatcherOptions } from './webhooks/dispatcher.ts';
import { createSecretBox } from './webhooks/secret-box.ts';
import { createSpacedLog } from './http/spaced-log.ts';
import { createWebhookService } from './webhooks/webhook-service.ts';
import type { ResolveAll } from './webhooks/target-address.ts';

export interface AppDeps {
  readonly config: Config;
  readonly store: Store;
  /** Source of the current time; tests pass a fixed one. */
  readonly clock?: () => Date;
  /**
   * Where rate-limit windows are counted, made by the caller, who connects and closes them.
   * When omitted the app makes its own from the config (createCounters) and closes them.
   */
  readonly counters?: RateLimitCounters;
  /** Where JSON log lines go; standard output when omitted. */
  readonly logStream?: LogStream;
  /**
   * What `/readyz` asks besides the store (which it always pings) and the counters' own
   * checks. Each check resolves when its dependency answers.
   */
  readonly readiness?: readonly ReadinessCheck[];
  /**
   * True once the process has been told to stop but still serves (SHUTDOWN_DELAY): `/readyz`
   * answers 503 as it does once closing has begun.
   */
  readonly draining?: () => boolean;
  /**
   * Webhook delivery settings (tests shorten the poll or resolve names their own way); with
   * `dispatch: false` this app registers webhooks but delivers nothing.
   */
  readonly webhooks?: Partial<Omit<DispatcherOptions, 'store' | 'secrets' | 'allowPrivate'>> & { readonly dispatch?: boolean; readonly resolve?: ResolveAll };
  /**
   * Where events are published and streams listen (ADR 19), made and started by the caller,
   * who closes it. When omitted the app makes its own from the config and closes it.
   */
  readonly live?: LiveEventsHub;
}

/** Builds the HTTP application around an open store. */
export async function buildApp({
  config, store: rawStore, clock = () => new Date(), counters, logStream, readiness = [], draining = () => false, live: givenLive,
  webhooks: webhookOptions = {},
}: AppDeps): Promise<FastifyInstance> {
  const metrics = createMetrics();
  // The whole-request deadline: STORAGE_TIMEOUT plus a margin, so storage calls answer first
  // with their own error (request-bounds.ts).
  const requestDeadline = createRequestDeadline(config.storageTimeoutMs + REQUEST_BOUNDS.handlerMarginMs);
  const requestLog = new RequestLog(metrics.observeRequest, requestDeadline);
  const app = await createFastify({ config, requestLog, logStream, onConnectionClosed: metrics.connectionClosed });
  // Readiness weighs what real calls did, not only a trivial query (src/store/storage-health.ts).
  const storageHealth = trackStorageHealth({
    onDamaged: (error) => app.log.error(`database damaged: ${describeCause(error)}; restore it or repair it, then restart`),
  });
  const store = instrumentStore(rawStore, metrics, storageHealth.observe);

  app.decorateRequest('account', null);
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

  // Live events (CONTRACT §7.5, ADR 19): published by the services once a change has
  // committed, and by the count batch once it has; heard by GET /v1/events on every process.
  let live = givenLive;
  if (live === undefined) {
    // A transport that is away fails on every reconnect: say so at most every 10 s.
    let warnedAt = -Infinity;
    const own = createLiveEventsFor(config, (error) => {
      if (performance.now() - warnedAt < 10_000) return;
      warnedAt = performance.now();
      app.log.warn({ err: error }, 'live events: transport failed; streams see this process\'s events only until it is back');
    });
    app.addHook('onClose', () => own.close());
    await own.start();
    live = own;
  }
  const events = createEventPublisher(live, clock);
  const unwatchCounts = store.watchCounts(events.countsCommitted);
  app.addHook('onClose', (_instance, done) => {
    unwatchCounts();
    done();
  });

  const accounts = createAccountService({
    store, clock, defaultMaxLinks: config.defaultMaxLinks, registrationOpen: config.registrationOpen, events: events.accounts,
  });
  const linkDeps: LinkServiceDeps = {
    store,
    clock,
    ownOrigin: new URL(config.baseUrl).origin,
    blockedHosts: config.blockedHosts,
    selfHosts: config.selfHosts,
    events: events.links,
  };
  // A disabled account's link calls are refused after their parameters are checked (§7).
  const links = refuseDisabledAccounts(createLinkService(linkDeps), createLinkService({ ...linkDeps, store: refusingStore(store) }));
  let rateLimitCounters = counters;
  if (rateLimitCounters === undefined) {
    const own = createCounters(config);
    app.addHook('onClose', () => own.close());
    await own.connect(app.log);
    rateLimitCounters = own;
  }
  const rateLimits = createRateLimitChecks({
    enabled: config.rateLimit,
    policies: config.rateLimitPolicies,
    exempt: config.rateLimitExempt,
    ipv6Prefix: config.rateLimitIpv6Prefix,
    counters: rateLimitCounters.counters,
  });
  const authenticate = createAuthenticate(accounts, rateLimits);

  // GET /v1/get_account shows the account itself: always read from the store, so MaxLinks is
  // current and a storage outage answers 503 like every other operation.
  registerAccountRoutes(app, { accounts, authenticate: createAuthenticate(accounts, rateLimits, { fresh: true }), rateLimits });
  registerLinkRoutes(app, { links, authenticate, rateLimits, baseUrl: config.baseUrl });
  // Statistics (CONTRACT §7.4, ADR 20): each counted resolution's classes travel with its
  // count into the same transaction; folding runs off the hot path.
  let visitOf: ((request: FastifyRequest) => Visit) | undefined;
  if (config.stats) {
    const classifier = createVisitClassifier({ countryDatabase: loadCountryDatabase() });
    const folding = startStatsFolding({
      store,
      clock,
      hourlyDays: config.statsHourlyDays,
      onError: (error) => app.log.warn({ err: error }, 'statistics fold failed; it is tried again later'),
    });
    // Before the store closes (start-server.ts closes it after the app): a fold in progress
    // ends first, and none starts after it.
    app.addHook('onClose', () => folding.stop());
    visitOf = (request) => {
      folding.recorded();
      return classifier.classify(
        { userAgent: request.headers['user-agent'], referer: request.headers.referer, address: request.ip },
        hourOf(clock().getTime()),
      );
    };
  }
  registerResolveRoutes(app, {
    links, rateLimits, redirectStatus: config.redirectStatus, visitOf, onVisit: (visit) => metrics.visitRecorded(visit.bot),
  });
  registerStatsRoutes(app, { stats: createStatsService({ store, clock }), authenticate, rateLimits });
  registerEventRoutes(app, {
    live,
    slots: store.streamSlots,
    onSlotError: (error) => app.log.warn({ err: error }, 'event streams: checking or renewing their slots failed; tried again shortly'),
    authenticate,
    untimed: (reply) => requestDeadline.finish(reply),
    isClosing: () => draining() || isClosing(),
  });
  if (config.adminToken !== undefined) {
    const admin = createAdminService({ store, accountChanged: (uid) => accounts.forget(uid), events: events.links });
    registerAdminRoutes(app, { admin, token: config.adminToken, rateLimits, baseUrl: config.baseUrl });
  }
  // Webhooks (CONTRACT §7.5, ADR 21): secrets sealed under WEBHOOK_SECRET_KEY when it is set.
  const secrets = createSecretBox(config.webhookSecretKey);
  const { dispatch = true, resolve, ...dispatchOptions } = webhookOptions;
  const webhooks = createWebhookService({
    store: store.webhooks, secrets, clock, allowPrivate: config.webhookAllowPrivate, ...(resolve === undefined ? {} : { resolve }),
  });
  registerWebhookRoutes(app, { webhooks, authenticate, rateLimits });
  if (dispatch) {
    const dispatcherLog = createSpacedLog();
    const dispatcher = startDispatcher({
      store: store.webhooks,
      secrets,
      allowPrivate: config.webhookAllowPrivate,
      observer: metrics.webhooks,
      // One line per cause per 10 s, as for 503s: an outage must not write a line a second.
      onError: (error, what) => dispatcherLog.report(what, (suppressed) => app.log.warn(
        { err: error, ...(suppressed > 0 ? { suppressed } : {}) }, `webhooks: ${what} failed; tried again later`,
      )),
      ...(resolve === undefined ? {} : { resolve }),
      ...dispatchOptions,
    });
    metrics.watchWebhooks(() => store.webhooks.pending());
    app.log.debug({ dispatcher: dispatcher.owner }, 'webhook dispatcher started');
    // Before the store closes (start-server.ts closes it after the app): attempts in flight
    // are cut and their events released, due again at once here or on another instance.
    app.addHook('onClose', () => dispatcher.stop());
  }
  registerHealthRoutes(app, {
    checks: [{ name: 'storage', check: () => storageHealth.check(store) }, ...rateLimitCounters.readiness, ...readiness],
    isClosing: () => draining() || isClosing(),
  });
  registerMetricsRoute(app, { metrics, token: config.metricsToken });
  registerWebRoutes(app, { baseUrl: config.baseUrl });
  await registerDocs(app);

  return app;
}

/** The engine's own words for a damaged database (the store's error wraps them as its cause). */
function describeCause(error: Error): string {
  const cause = error.cause instanceof Error ? error.cause : error;
  return cause.message.replace(/\s+/g, ' ');
}
