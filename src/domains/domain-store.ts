/**
 * What domains need from storage (the domains port, CONTRACT §8.1): the registered domains
 * and the default domain's own fallbacks. Each engine implements it; the domain layer never
 * imports an engine.
 */

/** The host the default domain's row is stored under: it follows BASE_URL, whatever its name. */
export const DEFAULT_DOMAIN_ROW = '';

/** A domain as stored. */
export interface DomainRecord {
  /** Lower-case host name without a port; DEFAULT_DOMAIN_ROW for the default domain's fallbacks. */
  readonly host: string;
  /** Scheme, host and port as short URLs use them, without a trailing slash. */
  readonly origin: string;
  readonly notFoundUrl: string | null;
  readonly rootUrl: string | null;
  readonly expiredUrl: string | null;
  /** `toISOString()` form; null for the default domain. */
  readonly dateCreated: string | null;
}

/** A domain with the number of links it holds right now. */
export interface DomainWithLinks extends DomainRecord {
  readonly links: number;
}

export type DeleteDomainResult = 'deleted' | 'not_found' | 'in_use';

export interface DomainStore {
  /** Inserts the domain, or replaces every field of the one with its host but `dateCreated`; answers it as stored. */
  putDomain(domain: DomainRecord): Promise<DomainRecord>;
  /** Every stored domain (the default domain's row included, when it has one), by host. */
  listDomains(): Promise<DomainRecord[]>;
  /** How many links each host holds (hosts without links are absent; '' is the default domain). */
  countLinksByDomain(): Promise<Map<string, number>>;
  /** Deletes the domain unless a link uses it, in one atomic step. */
  deleteDomain(host: string): Promise<DeleteDomainResult>;
}
