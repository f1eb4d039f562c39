/**
 * The spec's own operations: accounts (CONTRACT §4, §7.2) and links (§5, §7.1), their services
 * and routes, and the authentication every protected route shares.
 */
import type { FastifyInstance } from 'fastify';
import { createAccountService, type AccountService } from '../accounts/account-service.ts';
import type { Config } from '../config.ts';
import type { EventPublisher } from '../http/event-payloads.ts';
import type { RateLimitChecks } from '../http/rate-limit-checks.ts';
import { createAuthenticate, type Authenticate } from '../http/route-helpers.ts';
import { registerAccountRoutes } from '../http/routes/accounts.ts';
import { registerLinkRoutes } from '../http/routes/links.ts';
import { refuseDisabledAccounts, refusingStore } from '../links/disabled-accounts.ts';
import { createLinkService, type LinkService, type LinkServiceDeps } from '../links/link-service.ts';
import type { ScryptParameters } from '../links/password.ts';
import type { Store } from '../store/store.ts';
import type { DomainRegistry } from '../domains/domain-registry.ts';
import { createApiKeys, registerApiKeyRoutes } from './api-keys.ts';
import type { ApiKeyService } from '../accounts/api-keys.ts';

export interface AccountsAndLinks {
  readonly accounts: AccountService;
  readonly links: LinkService;
  /** Authentication for protected routes: cached account lookups (ADR 18), access codes or API keys. */
  readonly authenticate: Authenticate;
  readonly apiKeys: ApiKeyService;
}

export function setUpAccountsAndLinks(
  app: FastifyInstance,
  { config, store, clock, events, rateLimits, domains, passwordHashing }: {
    config: Config; store: Store; clock: () => Date; events: EventPublisher; rateLimits: RateLimitChecks; domains: DomainRegistry;
    passwordHashing?: ScryptParameters | undefined;
  },
): AccountsAndLinks {
  const apiKeys = createApiKeys(app, { store, clock });
  const accountService = createAccountService({
    store, clock, defaultMaxLinks: config.defaultMaxLinks, registrationOpen: config.registrationOpen, events: events.accounts,
  });
  // An account's keys are remembered apart from it: what forgets the account forgets them too.
  const accounts: AccountService = {
    ...accountService,
    async remove(account) {
      await accountService.remove(account);
      apiKeys.forget(account.uid);
    },
    forget(uid) {
      accountService.forget(uid);
      apiKeys.forget(uid);
    },
  };
  const linkDeps: LinkServiceDeps = {
    store,
    clock,
    ownOrigin: new URL(config.baseUrl).origin,
    blockedHosts: config.blockedHosts,
    selfHosts: config.selfHosts,
    events: events.links,
    domains,
    forwardQueryDefault: config.forwardQuery,
    ...(passwordHashing === undefined ? {} : { passwordHashing }),
  };
  // A disabled account's link calls are refused after their parameters are checked (§7).
  const links = refuseDisabledAccounts(createLinkService(linkDeps), createLinkService({ ...linkDeps, store: refusingStore(store) }));
  const authenticate = createAuthenticate(accounts, rateLimits, { apiKeys });
  // GET /v1/get_account shows the account itself: always read from the store, so MaxLinks is
  // current and a storage outage answers 503 like every other operation.
  registerAccountRoutes(app, { accounts, authenticate: createAuthenticate(accounts, rateLimits, { fresh: true, apiKeys }), rateLimits });
  registerLinkRoutes(app, { links, authenticate, rateLimits, baseUrl: config.baseUrl, domains });
  registerApiKeyRoutes(app, { apiKeys, authenticate });
  return { accounts, links, authenticate, apiKeys };
}
