/**
 * The domains this instance serves (CONTRACT §8.1), held in memory for the hot path: the
 * redirect reads its `Host` here, the link calls their `domain` parameter, the loop rule
 * every registered host. The table is small and read whole: at start, after each change made
 * here, and in the background when a request names a host other than the default one, at
 * most every `refreshMs` (so a domain registered or removed on another instance is served
 * within about that long by the requests that name it).
 */
import { invalid } from '../errors.ts';
import { codeOf, domainOf } from '../links/link-key.ts';
import { DEFAULT_DOMAIN_ROW, type DomainRecord, type DomainStore } from './domain-store.ts';

/** A domain as requests see it. */
export interface Domain extends DomainRecord {
  /** True for the default domain (BASE_URL's): its links' keys carry no host. */
  readonly isDefault: boolean;
}

export interface DomainRegistry {
  readonly defaultDomain: Domain;
  /** The domain a request's `Host` header names (port ignored, any case); the default domain for any other. */
  forHost(hostHeader: string | undefined): Domain;
  /**
   * The domain a `domain` parameter names: omitted, empty or the default host is the default
   * domain; a registered host is that domain; any other throws a 400.
   */
  named(host: string | undefined): Domain;
  /** The domain a registered host names (the default domain's host included), or undefined. */
  find(host: string): Domain | undefined;
  /** Every domain, the default first, then by host. */
  all(): readonly Domain[];
  /** Registered hosts (not the default one): targets there are refused as loops. */
  registeredHosts(): readonly string[];
  /** The short URL of the link `key` names (link-key.ts): its domain's origin, '/', its code. */
  shortUrl(key: string): string;
  /** Reads the table again now. */
  refresh(): Promise<void>;
}

export interface DomainRegistryOptions {
  readonly store: Pick<DomainStore, 'listDomains'>;
  /** BASE_URL: the default domain's origin. */
  readonly baseUrl: string;
  /** A lookup of another host reads the table again at most this often. */
  readonly refreshMs?: number;
  /** Told when a periodic refresh fails (the previous table is kept). */
  readonly onError?: (error: unknown) => void;
}

/** A `Host` header's host: lower case, without its port, without a trailing dot. */
export function hostOfHeader(header: string): string {
  let host = header;
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    host = end < 0 ? host : host.slice(0, end + 1);
  } else {
    const colon = host.indexOf(':');
    if (colon >= 0) host = host.slice(0, colon);
  }
  host = host.toLowerCase();
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/** After a failed background read, lookups read nothing for this long. */
const FAILURE_PAUSE_MS = 10_000;

/** BASE_URL's domain, with no fallbacks. */
function defaultDomainOf(baseUrl: string): Domain {
  return {
    host: new URL(baseUrl).hostname.toLowerCase(), origin: baseUrl.replace(/\/+$/, ''),
    notFoundUrl: null, rootUrl: null, expiredUrl: null, dateCreated: null, isDefault: true,
  };
}

export async function createDomainRegistry({
  store, baseUrl, refreshMs = 500, onError,
}: DomainRegistryOptions): Promise<DomainRegistry> {
  const base = new URL(baseUrl);
  const plainDefault = defaultDomainOf(baseUrl);
  const defaultHost = plainDefault.host;
  let defaultDomain = plainDefault;
  let byHost = new Map<string, Domain>();
  let hosts: readonly string[] = [];
  let everything: readonly Domain[] = [defaultDomain];
  let lastRefresh = Date.now();
  let failedAt = -Infinity;
  let refreshing: Promise<void> | undefined;

  function install(rows: readonly DomainRecord[]): void {
    const next = new Map<string, Domain>();
    let nextDefault = plainDefault;
    for (const row of rows) {
      if (row.host === DEFAULT_DOMAIN_ROW) {
        nextDefault = { ...plainDefault, notFoundUrl: row.notFoundUrl, rootUrl: row.rootUrl, expiredUrl: row.expiredUrl };
      } else if (row.host !== defaultHost) {
        next.set(row.host, { ...row, isDefault: false });
      }
    }
    next.set(defaultHost, nextDefault);
    defaultDomain = nextDefault;
    byHost = next;
    const registered = [...next.values()].filter((domain) => !domain.isDefault).sort((a, b) => (a.host < b.host ? -1 : 1));
    hosts = Object.freeze(registered.map((domain) => domain.host));
    everything = Object.freeze([nextDefault, ...registered]);
  }

  let queued: Promise<void> | undefined;

  function refresh(): Promise<void> {
    if (refreshing === undefined) {
      refreshing = store.listDomains().then(install).finally(() => (refreshing = undefined));
      return refreshing;
    }
    // The read in flight may have begun before the caller's change (a domain just put here):
    // one more read after it, shared by every caller meanwhile, is sure to see it.
    queued ??= refreshing.catch(() => {}).then(() => {
      queued = undefined;
      return refresh();
    });
    return queued;
  }

  await refresh();

  /**
   * A lookup of a host other than the default one: the table is read again in the background,
   * at most every `refreshMs`, so a domain registered, changed or removed on another instance
   * is seen here within about that long by the requests that name it. Requests on the default
   * domain never read it: no timer reads the database while it is away (a read every 500 ms
   * through a reconnecting pool kept servers answering 503 long after PostgreSQL came back).
   */
  function lookedUp(host: string): void {
    if (host === '' || host === defaultHost) return;
    const now = Date.now();
    // After a failed read, the database is left alone for a while: it is away, and the
    // requests of a busy alias must not keep queueing reads on a reconnecting pool.
    if (now - lastRefresh < refreshMs || now - failedAt < FAILURE_PAUSE_MS) return;
    lastRefresh = now;
    refresh().catch((error: unknown) => {
      failedAt = Date.now();
      onError?.(error);
    });
  }

  function find(host: string): Domain | undefined {
    lookedUp(host);
    return byHost.get(host);
  }

  return {
    get defaultDomain() {
      return defaultDomain;
    },
    forHost(hostHeader) {
      if (hostHeader === undefined) return defaultDomain;
      const host = hostOfHeader(hostHeader);
      if (host === defaultHost) return defaultDomain;
      return find(host) ?? defaultDomain;
    },
    named(host) {
      if (host === undefined || host === '') return defaultDomain;
      const domain = find(host.toLowerCase());
      if (domain === undefined) throw invalid(`the domain "${host}" is not registered`);
      return domain;
    },
    find: (host) => byHost.get(host.toLowerCase()),
    shortUrl(key) {
      const host = domainOf(key);
      const origin = host === null ? defaultDomain.origin : (byHost.get(host)?.origin ?? `${base.protocol}//${host}`);
      return `${origin}/${codeOf(key)}`;
    },
    all: () => everything,
    registeredHosts: () => hosts,
    refresh,
  };
}

/**
 * The default domain alone, from BASE_URL, with nothing registered and no fallbacks: for the
 * callers that serve no other domain (unit tests, tools).
 */
export function fixedDomainRegistry(baseUrl: string): DomainRegistry {
  const domain = defaultDomainOf(baseUrl);
  const all = Object.freeze([domain]);
  const none = Object.freeze([]) as readonly string[];
  return {
    defaultDomain: domain,
    forHost: () => domain,
    named(host) {
      if (host === undefined || host === '' || host.toLowerCase() === domain.host) return domain;
      throw invalid(`the domain "${host}" is not registered`);
    },
    find: (host) => (host.toLowerCase() === domain.host ? domain : undefined),
    shortUrl: (key) => `${domain.origin}/${codeOf(key)}`,
    all: () => all,
    registeredHosts: () => none,
    refresh: async () => {},
  };
}
