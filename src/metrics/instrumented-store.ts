import type { Store } from '../store/store.ts';
import type { Metrics } from './metrics.ts';

/** Told how every call settled: its operation (the Store method's name), and its error if it failed. */
export type ObserveOutcome = (operation: string, error?: unknown) => void;

/**
 * A Store that times every database call into `metrics`, tells `observe` how it settled
 * (storage health, src/store/storage-health.ts) and otherwise behaves exactly like `store`
 * (same results, same errors). A decorator, so no backend needs to know about metrics; a
 * method added to Store fails to compile here until it is timed too. Both observers share
 * this one wrapper: a second decorator would cost every call, the resolution included,
 * another promise.
 */
export function instrumentStore(store: Store, metrics: Metrics, observe: ObserveOutcome = () => undefined): Store {
  function timed<A extends unknown[], R>(operation: string, call: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    const timer = metrics.storeTimer(operation);
    return (...args) => {
      const started = performance.now();
      return call(...args).then(
        (result) => {
          timer.observe((performance.now() - started) / 1000);
          observe(operation);
          return result;
        },
        (error: unknown) => {
          timer.observe((performance.now() - started) / 1000);
          timer.failed();
          observe(operation, error);
          throw error;
        },
      );
    };
  }

  return {
    engine: store.engine,
    // Off the request path but for the CRUD calls; the dispatcher keeps its own metrics.
    webhooks: store.webhooks,
    streamSlots: store.streamSlots,
    // Timed as one group: the lookup is on the path of every request made with a key.
    apiKeys: {
      createApiKey: timed('createApiKey', (key, max) => store.apiKeys.createApiKey(key, max)),
      listApiKeys: timed('listApiKeys', (uid) => store.apiKeys.listApiKeys(uid)),
      deleteApiKey: timed('deleteApiKey', (uid, id) => store.apiKeys.deleteApiKey(uid, id)),
      findApiKeyByHash: timed('findApiKeyByHash', (hash) => store.apiKeys.findApiKeyByHash(hash)),
      recordApiKeyUses: timed('recordApiKeyUses', (uses) => store.apiKeys.recordApiKeyUses(uses)),
    },
    // Administration and the registry's periodic read: off the request path, timed all the same.
    domains: {
      putDomain: timed('putDomain', (domain) => store.domains.putDomain(domain)),
      listDomains: timed('listDomains', () => store.domains.listDomains()),
      countLinksByDomain: timed('countLinksByDomain', () => store.domains.countLinksByDomain()),
      deleteDomain: timed('deleteDomain', (host) => store.domains.deleteDomain(host)),
    },
    createAccount: timed('createAccount', (account) => store.createAccount(account)),
    findAccountByCodeHash: timed('findAccountByCodeHash', (hash) => store.findAccountByCodeHash(hash)),
    createLink: timed('createLink', (link) => store.createLink(link)),
    deleteLink: timed('deleteLink', (code, uid, eventId) => store.deleteLink(code, uid, eventId)),
    listLinks: timed('listLinks', (uid) => store.listLinks(uid)),
    listLinkDetails: timed('listLinkDetails', (uid, query) => store.listLinkDetails(uid, query)),
    updateLink: timed('updateLink', (code, uid, changes, eventId) => store.updateLink(code, uid, changes, eventId)),
    resolveLink: timed('resolveLink', (code, now, visit) => store.resolveLink(code, now, visit)),
    findLink: timed('findLink', (code, now) => store.findLink(code, now)),
    readStats: timed('readStats', (scope, from, to) => store.readStats(scope, from, to)),
    foldStats: timed('foldStats', (options) => store.foldStats(options)),
    rotateAccessCode: timed('rotateAccessCode', (uid, hash, newHash, eventId) => store.rotateAccessCode(uid, hash, newHash, eventId)),
    deleteAccount: timed('deleteAccount', (uid) => store.deleteAccount(uid)),
    listAccounts: timed('listAccounts', (after, limit) => store.listAccounts(after, limit)),
    updateAccount: timed('updateAccount', (uid, changes) => store.updateAccount(uid, changes)),
    searchLinks: timed('searchLinks', (search) => store.searchLinks(search)),
    takeDownLink: timed('takeDownLink', (code, eventId) => store.takeDownLink(code, eventId)),
    // Not a database call: nothing to time.
    watchCounts: (listener) => store.watchCounts(listener),
    ping: timed('ping', (options) => store.ping(options)),
    close: () => store.close(),
  };
}
