/**
 * Domains (CONTRACT §8.1) as both engines store them: one `domains` row per registered host,
 * and the default domain's fallbacks under DEFAULT_DOMAIN_ROW. The engines' files
 * (sqlite/domains.ts, postgres/domains.ts) hold the statements; this holds what they share.
 */
import type { DomainRecord } from '../domains/domain-store.ts';

export const DOMAIN_COLUMNS =
  'host, origin, not_found_url AS "notFoundUrl", root_url AS "rootUrl", expired_url AS "expiredUrl", date_created AS "dateCreated"';

/** A domain's row as read with DOMAIN_COLUMNS: the record's own fields (drivers may answer null-prototype rows). */
export type DomainRow = DomainRecord;

export function domainFromRow(row: DomainRow): DomainRecord {
  return {
    host: row.host,
    origin: row.origin,
    notFoundUrl: row.notFoundUrl,
    rootUrl: row.rootUrl,
    expiredUrl: row.expiredUrl,
    dateCreated: row.dateCreated,
  };
}

/** One host's link count as read: '' for the default domain's links (keys without '/'). */
export interface DomainCountRow {
  readonly host: string;
  readonly links: number | bigint | string;
}

export function countsOf(rows: readonly DomainCountRow[]): Map<string, number> {
  return new Map(rows.map((row) => [row.host, Number(row.links)]));
}
