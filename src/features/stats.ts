/**
 * Visit statistics (CONTRACT §7.4, ADR 20): each counted resolution's classes travel with its
 * count into the same transaction; folding runs off the hot path; `GET /v1/stats` reads them.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { clientAddress } from '../http/client-address.ts';
import type { RateLimitChecks } from '../http/rate-limit-checks.ts';
import type { Authenticate } from '../http/route-helpers.ts';
import { registerStatsRoutes } from '../http/routes/stats.ts';
import { createVisitClassifier, type VisitClassifier } from '../stats/classify.ts';
import { loadCountryDatabase } from '../stats/country-database.ts';
import { startStatsFolding } from '../stats/folding.ts';
import { createStatsService } from '../stats/stats-service.ts';
import { hourOf, type Visit } from '../stats/visit.ts';
import type { Store } from '../store/store.ts';
import type { DomainRegistry } from '../domains/domain-registry.ts';

/** How a request becomes a visit. */
export interface VisitReaders {
  /** The visit to record with a count; undefined with `STATS=off` (counts only). */
  readonly visitOf: ((request: FastifyRequest) => Visit) | undefined;
  /** The visit's classes without recording anything: what redirect rules are judged on. */
  readonly classify: (request: FastifyRequest) => Visit;
}

/**
 * Registers the statistics routes and, with `STATS` on, starts folding; answers how a request
 * becomes a visit. The classifier is made once for both: a routed visit is classified once.
 */
export function setUpStats(
  app: FastifyInstance,
  { config, store, clock, authenticate, rateLimits, domains }: {
    config: Config; store: Store; clock: () => Date; authenticate: Authenticate; rateLimits: RateLimitChecks; domains: DomainRegistry;
  },
): VisitReaders {
  registerStatsRoutes(app, { stats: createStatsService({ store, clock }), authenticate, rateLimits, domains });
  // The country database is read when a visit first needs it: with STATS=off, only a routed one does.
  let classifier: VisitClassifier | undefined;
  const classify = (request: FastifyRequest) => {
    classifier ??= createVisitClassifier({ countryDatabase: loadCountryDatabase() });
    return classifier.classify(
      { userAgent: request.headers['user-agent'], referer: request.headers.referer, address: clientAddress(request) },
      hourOf(clock().getTime()),
    );
  };
  if (!config.stats) return { visitOf: undefined, classify };
  const folding = startStatsFolding({
    store,
    clock,
    hourlyDays: config.statsHourlyDays,
    onError: (error) => app.log.warn({ err: error }, 'statistics fold failed; it is tried again later'),
  });
  // Before the store closes (start-server.ts closes it after the app): a fold in progress
  // ends first, and none starts after it.
  app.addHook('onClose', () => folding.stop());
  return {
    visitOf: (request) => {
      folding.recorded();
      return classify(request);
    },
    classify,
  };
}
