/**
 * Domain administration (CONTRACT §8.1): registering a domain, its fallbacks, listing them with
 * their links, removing one. Parameters arrive as the strings the request carried and are
 * checked here (ADR 3); the store settles the rest (a delete refused while links use the
 * domain, in the same statement). Who may call it is the caller's business: the admin token
 * over HTTP, access to the database for the CLI.
 *
 * The default domain (BASE_URL's host) is never registered: a PUT of its host sets its three
 * fallbacks only, kept in the DEFAULT_DOMAIN_ROW row, and its origin stays BASE_URL's.
 *
 * The fallbacks are checked like a link's target (an absolute http(s) URL with a host, no
 * credentials, no whitespace or control characters, at most URL_MAX characters) but the loop
 * rule does not apply: pointing back at the service is what a fallback often does (RootUrl
 * to the web UI at `/ui` of the default domain, NotFoundUrl to a help page served by a short
 * link). The one certain loop is refused: a RootUrl that is the domain's own root.
 */
import { DomainError, ErrorCode, invalid } from '../errors.ts';
import { validateTargetUrl } from '../links/target-url.ts';
import { hostOfHeader } from './domain-registry.ts';
import { DEFAULT_DOMAIN_ROW, type DomainRecord, type DomainStore, type DomainWithLinks } from './domain-store.ts';

export interface PutDomainParameters {
  readonly origin?: string | undefined;
  readonly notFoundUrl?: string | undefined;
  readonly rootUrl?: string | undefined;
  readonly expiredUrl?: string | undefined;
}

export interface DomainService {
  /** Registers the domain or replaces its fallbacks (an omitted one is none); the default domain's host sets its fallbacks. */
  put(parameters: PutDomainParameters): Promise<DomainWithLinks>;
  /** Every domain with its links: the default first (its `dateCreated` null), then the registered ones by host. */
  list(): Promise<DomainWithLinks[]>;
  /** Removes a registered domain that no link uses. */
  delete(host: string | undefined): Promise<void>;
}

export interface DomainServiceDeps {
  readonly store: DomainStore;
  /** BASE_URL: the default domain's origin. */
  readonly baseUrl: string;
  readonly clock?: () => Date;
  /**
   * Awaited after every change, before it is answered: the server reads its registry again, so
   * this instance serves the change at once (others within their refresh period).
   */
  readonly changed?: () => Promise<void>;
}

/** Checks a URL as a link target without the loop rule; the reasons name `parameter`. */
function checkedUrl(parameter: string, raw: string): URL {
  try {
    // An origin that is no URL turns the loop rule off (host-rules.ts, pointsAtService).
    validateTargetUrl(raw, '');
  } catch (error) {
    if (error instanceof DomainError) throw invalid(error.message.replace(/^url\b/, `the parameter "${parameter}"`));
    throw error;
  }
  return new URL(raw);
}

/** The origin of a domain to register: scheme, host and port, nothing else. */
function parseOrigin(raw: string | undefined): URL {
  if (raw === undefined || raw === '') throw invalid('the parameter "origin" is required');
  const url = checkedUrl('origin', raw);
  if (url.pathname !== '/' || /[?#]/.test(raw)) {
    throw invalid('the parameter "origin" must be a scheme, a host and an optional port, like https://go.example.com (no path, query or fragment)');
  }
  if (url.hostname.endsWith('.')) throw invalid('the parameter "origin" must name its host without a trailing dot');
  return url;
}

export function createDomainService({ store, baseUrl, clock = () => new Date(), changed = async () => {} }: DomainServiceDeps): DomainService {
  const defaultOrigin = baseUrl.replace(/\/+$/, '');
  const defaultHost = new URL(baseUrl).hostname.toLowerCase();

  function fallback(parameter: string, raw: string | undefined, host: string): string | null {
    // An empty value clears, as an omitted one does: a PUT sets the domain as given.
    if (raw === undefined || raw === '') return null;
    const url = checkedUrl(parameter, raw);
    if (parameter === 'root_url' && url.pathname === '/' && hostOfHeader(url.host) === host) {
      throw invalid('the parameter "root_url" must not be the domain\'s own root: it would redirect to itself');
    }
    return raw;
  }

  /** The default domain as the API shows it, from its stored row (if any). */
  function defaultView(row: DomainRecord | undefined, links: number): DomainWithLinks {
    return {
      host: defaultHost, origin: defaultOrigin,
      notFoundUrl: row?.notFoundUrl ?? null, rootUrl: row?.rootUrl ?? null, expiredUrl: row?.expiredUrl ?? null,
      links, dateCreated: null,
    };
  }

  return {
    async put(parameters) {
      const origin = parseOrigin(parameters.origin);
      const host = origin.hostname;
      const isDefault = host === defaultHost;
      const record: DomainRecord = {
        host: isDefault ? DEFAULT_DOMAIN_ROW : host,
        // The default domain's origin is BASE_URL's whatever was sent; the row keeps it for reference only.
        origin: isDefault ? defaultOrigin : origin.origin,
        notFoundUrl: fallback('not_found_url', parameters.notFoundUrl, host),
        rootUrl: fallback('root_url', parameters.rootUrl, host),
        expiredUrl: fallback('expired_url', parameters.expiredUrl, host),
        dateCreated: isDefault ? null : clock().toISOString(),
      };
      const stored = await store.putDomain(record);
      await changed();
      const links = (await store.countLinksByDomain()).get(stored.host) ?? 0;
      return isDefault ? defaultView(stored, links) : { ...stored, links };
    },

    async list() {
      const [rows, counts] = await Promise.all([store.listDomains(), store.countLinksByDomain()]);
      const registered = rows
        // A row under the default host (BASE_URL changed since) is not served as a domain of its own.
        .filter((row) => row.host !== DEFAULT_DOMAIN_ROW && row.host !== defaultHost)
        .map((row) => ({ ...row, links: counts.get(row.host) ?? 0 }));
      const defaultRow = rows.find((row) => row.host === DEFAULT_DOMAIN_ROW);
      return [defaultView(defaultRow, counts.get(DEFAULT_DOMAIN_ROW) ?? 0), ...registered];
    },

    async delete(raw) {
      if (raw === undefined || raw === '') throw invalid('the parameter "host" is required');
      // As a Host header names it: any case, a port ignored.
      const host = hostOfHeader(raw);
      if (host === defaultHost) throw invalid('the default domain cannot be removed (it is BASE_URL\'s)');
      // A NUL is in no host (and PostgreSQL refuses it as a parameter).
      const outcome = host === '' || host.includes('\u0000') ? 'not_found' : await store.deleteDomain(host);
      if (outcome === 'not_found') throw new DomainError(ErrorCode.DomainNotFound, 'no domain has this host');
      if (outcome === 'in_use') throw new DomainError(ErrorCode.DomainInUse, 'the domain still has links; delete them first');
      await changed();
    },
  };
}
