/**
 * Domains on SQLite (the same name and calls as ../postgres/domains.ts). Writes run through
 * the caller's write path (the server's write batch, the CLI's own transaction), which
 * serialises them: a delete's check for links and the delete are one write.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { DomainStore } from '../../domains/domain-store.ts';
import { keyRange } from '../../links/link-key.ts';
import { countsOf, DOMAIN_COLUMNS, domainFromRow, type DomainCountRow, type DomainRow } from '../domains.ts';

export function prepareDomains(
  db: DatabaseSync,
  read: <R>(work: () => R) => Promise<R>,
  write: <R>(work: () => R) => Promise<R>,
): DomainStore {
  const statements = {
    put: db.prepare(
      `INSERT INTO domains (host, origin, not_found_url, root_url, expired_url, date_created) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (host) DO UPDATE SET origin = excluded.origin, not_found_url = excluded.not_found_url,
         root_url = excluded.root_url, expired_url = excluded.expired_url
       RETURNING ${DOMAIN_COLUMNS}`,
    ),
    list: db.prepare(`SELECT ${DOMAIN_COLUMNS} FROM domains ORDER BY host`),
    // A key's host is what comes before its '/'; a key without one is the default domain's.
    count: db.prepare(
      `SELECT CASE WHEN instr(short_code, '/') > 0 THEN substr(short_code, 1, instr(short_code, '/') - 1) ELSE '' END AS host,
              count(*) AS links
         FROM links GROUP BY 1`,
    ),
    // The links of a domain are the keys in [host/, host0): a range on the unique index.
    delete: db.prepare(
      'DELETE FROM domains WHERE host = ?1 AND NOT EXISTS (SELECT 1 FROM links WHERE short_code >= ?2 AND short_code < ?3)',
    ),
    exists: db.prepare('SELECT 1 AS found FROM domains WHERE host = ?'),
  };
  return {
    putDomain(domain) {
      return write(() => domainFromRow(statements.put.get(
        domain.host, domain.origin, domain.notFoundUrl, domain.rootUrl, domain.expiredUrl, domain.dateCreated,
      ) as unknown as DomainRow));
    },
    listDomains() {
      return read(() => (statements.list.all() as unknown as DomainRow[]).map(domainFromRow));
    },
    countLinksByDomain() {
      return read(() => countsOf(statements.count.all() as unknown as DomainCountRow[]));
    },
    deleteDomain(host) {
      const [from, to] = keyRange(host);
      return write(() => {
        if (statements.delete.run(host, from, to).changes > 0) return 'deleted' as const;
        // In the same write transaction: nothing changed in between.
        return statements.exists.get(host) === undefined ? 'not_found' as const : 'in_use' as const;
      });
    },
  };
}
