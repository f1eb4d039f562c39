/**
 * API keys (CONTRACT §8.5): the service, its routes, and the last writes of LastUsed at close.
 * Set up by accounts-and-links.ts, whose authentication accepts keys.
 */
import type { FastifyInstance } from 'fastify';
import { createApiKeyService, type ApiKeyService } from '../accounts/api-keys.ts';
import type { Authenticate } from '../http/route-helpers.ts';
import { registerKeyRoutes } from '../http/routes/keys.ts';
import type { Store } from '../store/store.ts';

export function createApiKeys(app: FastifyInstance, { store, clock }: { store: Store; clock: () => Date }): ApiKeyService {
  const apiKeys = createApiKeyService({
    store: store.apiKeys,
    clock,
    onFlushError: (error) => app.log.warn({ err: error }, 'could not record when API keys were last used; will retry'),
  });
  // Before the store closes (its own onClose hook was added earlier, and hooks run in order).
  app.addHook('preClose', async () => {
    await apiKeys.close();
  });
  return apiKeys;
}

export function registerApiKeyRoutes(app: FastifyInstance, deps: { apiKeys: ApiKeyService; authenticate: Authenticate }): void {
  registerKeyRoutes(app, deps);
}
