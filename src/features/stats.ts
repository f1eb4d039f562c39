/**
 * Visit statistics (CONTRACT §7.4, ADR 20): each counted resolution's classes travel with its
 * count into the same transaction; folding runs off the hot path; `GET /v1/stats` reads them.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { RateLimitChecks } from '../http/rate-limit-checks.ts';
import type { Authenticate } from '../http/route-helpers.ts';
import { registerStatsRoutes } from '../http/routes/stats.ts';
import { createVisitClassifier } from '../stats/classify.ts';
import { loadCountryDatabase } from '../stats/country-database.ts';
import { startStatsFolding } from '../stats/folding.ts';
import { createStatsService } from '../stats/stats-service.ts';
import { hourOf, type Visit } from '../stats/visit.ts';
import type { Store } from '../store/store.ts';

/**
 * Registers the statistics routes and, with `STATS` on, starts folding; returns how a request
 * becomes a recorded visit (undefined with `STATS=off`: counts only).
 */
export function setUpStats(
  app: FastifyInstance,
  { config, store, clock, authenticate, rateLimits }: {
    config: Config; store: Store; clock: () => Date; authenticate: Authenticate; rateLimits: RateLimitChecks;
  },
): ((request: FastifyRequest) => Visit) | undefined {
  registerStatsRoutes(app, { stats: createStatsService({ store, clock }), authenticate, rateLimits });
  if (!config.stats) return undefined;
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
  return (request) => {
    folding.recorded();
    return classifier.classify(
      { userAgent: request.headers['user-agent'], referer: request.headers.referer, address: request.ip },
      hourOf(clock().getTime()),
    );
  };
}
