/**
 * The composition root of one HTTP application: each feature sets itself up (its services,
 * routes, hooks and closing) in the order of the module map (docs/architecture.md). What each
 * does lives in its own module; listening is the caller's business (start-server.ts).
 */
import type { FastifyInstance } from 'fastify';
import { createAdminService } from './admin/admin-service.ts';
import type { Config } from './config.ts';
import type { LiveEventsHub } from './events/live-events.ts';
import { setUpAccountsAndLinks } from './features/accounts-and-links.ts';
import { registerDomainsForOwners, setUpDomains } from './features/domains.ts';
import { createHttpShell } from './features/http-shell.ts';
import { setUpLiveEvents } from './features/live-events.ts';
import { setUpRateLimits } from './features/rate-limits.ts';
import { setUpStats } from './features/stats.ts';
import { setUpWebhooks, type WebhookOptions } from './features/webhooks.ts';
import { createShortUrlFastPath, type FastPathCounts } from './http/fast-path.ts';
import type { LogStream } from './http/log-stream.ts';
import { registerDocs } from './http/openapi.ts';
import { registerAdminRoutes } from './http/routes/admin.ts';
import { registerEventRoutes } from './http/routes/events.ts';
import { registerHealthRoutes, type ReadinessCheck } from './http/routes/health.ts';
import { registerMetricsRoute } from './http/routes/metrics.ts';
import { registerResolveRoutes } from './http/routes/resolve.ts';
import type { RateLimitCounters } from './rate-limit/create-counters.ts';
import type { Store } from './store/store.ts';
import { registerWebRoutes } from './web/routes.ts';

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
  readonly webhooks?: WebhookOptions;
  /**
   * Where events are published and streams listen (ADR 19), made and started by the caller,
   * who closes it. When omitted the app makes its own from the config and closes it.
   */
  readonly live?: LiveEventsHub;
  /**
   * Whether plain short-URL requests are answered before Fastify's lifecycle (fast-path.ts,
   * ADR 27); true unless false. Tests turn it off to compare the two ways byte for byte.
   */
  readonly fastPath?: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** What the short-URL fast path did (tests check that it is taken). */
    readonly shortUrlFastPath: FastPathCounts;
  }
}

/** Builds the HTTP application around an open store. */
export async function buildApp({
  config, store: rawStore, clock = () => new Date(), counters, logStream, readiness = [], draining = () => false, live: givenLive,
  webhooks: webhookOptions = {}, fastPath = true,
}: AppDeps): Promise<FastifyInstance> {
  const { app, metrics, store, storageHealth, requestDeadline, isClosing, requestLog, front } = await createHttpShell({ config, store: rawStore, logStream });
  const stopping = () => draining() || isClosing();
  const { live, events } = await setUpLiveEvents(app, { config, store, clock, live: givenLive });
  const limits = await setUpRateLimits(app, { config, counters });
  const { rateLimits } = limits;
  const domains = await setUpDomains(app, { config, store, clock });
  const { accounts, links, authenticate } = setUpAccountsAndLinks(app, { config, store, clock, events, rateLimits, domains: domains.registry });
  registerDomainsForOwners(app, { domains, authenticate });
  const { visitOf, classify } = setUpStats(app, { config, store, clock, authenticate, rateLimits, domains: domains.registry });
  const shortUrls = registerResolveRoutes(app, {
    links, rateLimits, redirectStatus: config.redirectStatus, domains: domains.registry, visitOf, classify, onVisit: (visit) => metrics.visitRecorded(visit.bot),
  });
  registerEventRoutes(app, {
    live,
    slots: store.streamSlots,
    onSlotError: (error) => app.log.warn({ err: error }, 'event streams: checking or renewing their slots failed; tried again shortly'),
    authenticate,
    untimed: (reply) => requestDeadline.finish(reply),
    isClosing: stopping,
  });
  if (config.adminToken !== undefined) {
    const admin = createAdminService({ store, accountChanged: (uid) => accounts.forget(uid), events: events.links, keyOf: links.keyOf });
    registerAdminRoutes(app, { admin, token: config.adminToken, rateLimits, baseUrl: config.baseUrl, domains: domains.service });
  }
  setUpWebhooks(app, { config, store, clock, authenticate, rateLimits, metrics, options: webhookOptions });
  registerHealthRoutes(app, {
    checks: [{ name: 'storage', check: () => storageHealth.check(store) }, ...limits.readiness, ...readiness],
    isClosing: stopping,
  });
  registerMetricsRoute(app, { metrics, token: config.metricsToken });
  registerWebRoutes(app, { baseUrl: config.baseUrl, domains: domains.registry });
  await registerDocs(app);
  const fast = createShortUrlFastPath({
    shortUrls, rateLimits, requestLog, log: app.log, fastify: front.fastify, isClosing,
    routes: () => app.registeredRoutes,
    resolveRoute: config.cors.origins.length === 0 && !config.cors.anyForPublic,
  });
  if (fastPath) front.use(fast.take);
  app.decorate('shortUrlFastPath', fast.counts);
  return app;
}
