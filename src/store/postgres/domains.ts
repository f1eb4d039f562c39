/**
 * Domains on PostgreSQL (the same name and calls as ../sqlite/domains.ts). A delete is one
 * statement: the row goes only while no link key lies in the domain's range, and the same
 * statement tells an unknown host from one still in use.
 */
import type { DomainStore } from '../../domains/domain-store.ts';
import { keyRange } from '../../links/link-key.ts';
import { countsOf, DOMAIN_COLUMNS, domainFromRow, type DomainCountRow, type DomainRow } from '../domains.ts';
import type { Sql } from './connection.ts';

export function prepareDomains(sql: Sql, timed: <R>(work: () => PromiseLike<R>) => Promise<Awaited<R>>): DomainStore {
  return {
    async putDomain(domain) {
      const [row] = await timed(() => sql<DomainRow[]>`
        INSERT INTO domains (host, origin, not_found_url, root_url, expired_url, date_created)
        VALUES (${domain.host}, ${domain.origin}, ${domain.notFoundUrl}, ${domain.rootUrl}, ${domain.expiredUrl}, ${domain.dateCreated})
        ON CONFLICT (host) DO UPDATE SET origin = excluded.origin, not_found_url = excluded.not_found_url,
          root_url = excluded.root_url, expired_url = excluded.expired_url
        RETURNING ${sql.unsafe(DOMAIN_COLUMNS)}`);
      return domainFromRow(row!);
    },
    async listDomains() {
      const rows = await timed(() => sql<DomainRow[]>`SELECT ${sql.unsafe(DOMAIN_COLUMNS)} FROM domains ORDER BY host`);
      return rows.map(domainFromRow);
    },
    async countLinksByDomain() {
      // A key's host is what comes before its '/'; a key without one is the default domain's.
      const rows = await timed(() => sql<DomainCountRow[]>`
        SELECT CASE WHEN strpos(short_code, '/') > 0 THEN split_part(short_code, '/', 1) ELSE '' END AS host,
               count(*)::bigint AS links
          FROM links GROUP BY 1`);
      return countsOf(rows);
    },
    async deleteDomain(host) {
      const [from, to] = keyRange(host);
      // Every part of one statement sees the same snapshot: `found` is the row as it was
      // before the DELETE, so a refusal can be told from an unknown host.
      const [row] = await timed(() => sql<{ deleted: boolean; found: boolean }[]>`
        WITH gone AS (
          DELETE FROM domains WHERE host = ${host}
             AND NOT EXISTS (SELECT 1 FROM links WHERE short_code >= ${from} AND short_code < ${to})
          RETURNING host
        )
        SELECT EXISTS (SELECT 1 FROM gone) AS deleted, EXISTS (SELECT 1 FROM domains WHERE host = ${host}) AS found`);
      if (row!.deleted) return 'deleted';
      return row!.found ? 'in_use' : 'not_found';
    },
  };
}
