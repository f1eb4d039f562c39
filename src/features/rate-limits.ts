/**
 * Rate limits (ADR 6): the checks the routes call, over counters in memory or in Redis. The
 * caller's counters are used as given; otherwise the app makes, connects and closes its own.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { createRateLimitChecks, type RateLimitChecks } from '../http/rate-limit-checks.ts';
import type { ReadinessCheck } from '../http/routes/health.ts';
import { createCounters, type RateLimitCounters } from '../rate-limit/create-counters.ts';

export interface RateLimitsSetup {
  readonly rateLimits: RateLimitChecks;
  /** What `/readyz` asks of the counters (Redis, when they live there). */
  readonly readiness: readonly ReadinessCheck[];
}

export async function setUpRateLimits(
  app: FastifyInstance,
  { config, counters }: { config: Config; counters: RateLimitCounters | undefined },
): Promise<RateLimitsSetup> {
  let own = counters;
  if (own === undefined) {
    const made = createCounters(config);
    app.addHook('onClose', () => made.close());
    await made.connect(app.log);
    own = made;
  }
  const rateLimits = createRateLimitChecks({
    enabled: config.rateLimit,
    policies: config.rateLimitPolicies,
    exempt: config.rateLimitExempt,
    ipv6Prefix: config.rateLimitIpv6Prefix,
    counters: own.counters,
  });
  return { rateLimits, readiness: own.readiness };
}
