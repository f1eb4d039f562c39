/**
 * Domains (CONTRACT §8.1): the registry every request reads its domain from, and the domain
 * administration. Set up before the links, which take the registry (the redirect's `Host`, the
 * `domain` parameter, the loop rule); its routes are registered once authentication exists.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { createDomainRegistry, type DomainRegistry } from '../domains/domain-registry.ts';
import { createDomainService, type DomainService } from '../domains/domain-service.ts';
import type { Authenticate } from '../http/route-helpers.ts';
import { registerDomainRoutes } from '../http/routes/domains.ts';
import { createSpacedLog } from '../http/spaced-log.ts';
import type { Store } from '../store/store.ts';

export interface Domains {
  /** The domains this instance serves: read at start, after each change made here, and at most every 500 ms while requests name other hosts (ADR 26). */
  readonly registry: DomainRegistry;
  /** Domain administration, for the admin routes. */
  readonly service: DomainService;
}

/** Reads the domains (the app does not start without them); nothing runs between requests, so nothing needs closing. */
export async function setUpDomains(
  app: FastifyInstance,
  { config, store, clock }: { config: Config; store: Store; clock: () => Date },
): Promise<Domains> {
  const log = createSpacedLog();
  const registry = await createDomainRegistry({
    store: store.domains,
    baseUrl: config.baseUrl,
    // One line per 10 s while the storage is away, however many requests find it so.
    onError: (error) => log.report('refresh', (suppressed) => app.log.warn(
      { err: error, ...(suppressed > 0 ? { suppressed } : {}) },
      'domains: reading the registered domains failed; the last ones read are served meanwhile',
    )),
  });
  const service = createDomainService({ store: store.domains, baseUrl: config.baseUrl, clock, changed: () => registry.refresh() });
  return { registry, service };
}

/** `GET /v1/domains`, for accounts (the admin routes are registered with the others, admin.ts). */
export function registerDomainsForOwners(app: FastifyInstance, { domains, authenticate }: { domains: Domains; authenticate: Authenticate }): void {
  registerDomainRoutes(app, { registry: domains.registry, authenticate });
}
