/**
 * Counting on SQLite: the group commit's transaction (group-commit.ts), one per batch of
 * resolutions. It adds each link's accesses (granting what a visit limit leaves, nothing to an
 * expired link or a disabled owner's), and in the same transaction the granted visits'
 * statistics, in the link's row (ADR 29) or the tuples, and, for watched links, their
 * webhooks' visits (ADR 24).
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { LinkRecord } from '../../links/link-store.ts';
import { LINK_COLUMNS } from '../columns.ts';
import { createGroupCommit, grantedVisits, type CountedLink, type GroupCommit, type VisitTally } from '../group-commit.ts';
import { refusalOf, ROUTING_COLUMNS, type LinkStateRow, type RoutingRow } from '../link-rows.ts';
import { UNLOCKED } from '../../links/link-key.ts';
import { ANY_VISITED_WEBHOOK_SQL, VISITS_TO_WEBHOOKS_SQL, visitSecond } from '../webhooks.ts';
import { hourVisitsWriter, SET_HOUR_VISITS } from './hour-visits.ts';
import { LINK_STATE_COLUMNS } from './links.ts';
import { visitClassIds } from './visit-classes.ts';

/** A link row as the count batch returns it: with its id, which the tuples record, and its routing. */
export type CountedRow = LinkRecord & Partial<RoutingRow> & { readonly linkId?: number };

/** Runs `work` in one write transaction (the store's), retried while another connection writes. */
type Transaction = <R>(work: () => R, signal?: AbortSignal) => Promise<R>;

/**
 * The hot path's count: ?1 accesses to link ?2 at ?3, unless it has a limit, an expiry, a
 * password or a disabled owner. Its row comes back as an array (countedRowOf): node:sqlite
 * builds an object's properties one by one, which costs more than the literal below.
 */
function addAccessesSql(set: string): string {
  return `UPDATE links SET accesses = accesses + ?1${set}
    WHERE short_code = ?2 AND max_visits IS NULL AND (expires_at IS NULL OR expires_at > ?3) AND password_hash IS NULL
      AND NOT EXISTS (SELECT 1 FROM accounts WHERE uid = links.created_by AND disabled <> 0)
    RETURNING id, short_code, points_to, created_by, accesses, forward_query, rules, password_hash`;
}

/** A CountedRow from the hot path's RETURNING (addAccessesSql), by position. */
function countedRowOf(values: unknown[] | undefined): CountedRow | undefined {
  if (values === undefined) return undefined;
  const [linkId, shortCode, pointsTo, createdBy, accesses, forwardQuery, rules, passwordHash] = values as [
    number, string, string, number, number, number, string | null, string | null,
  ];
  return { linkId, shortCode, pointsTo, createdBy, accesses, forwardQuery, rules, passwordHash };
}

export function createCounter(db: DatabaseSync, transaction: Transaction, timeoutMs: number): GroupCommit<CountedRow> {
  // Registers the SQL function addAccessesAndVisits calls: before it is prepared.
  const hourVisits = hourVisitsWriter(db);
  const classIds = visitClassIds(db);
  const counting = {
    // The hot path: one statement per link and batch, as before the limits existed. It only
    // counts a link without a visit limit, unexpired, whose owner is not disabled; any other
    // link (or none) returns no row and is settled by linkState/grantAccesses below.
    addAccesses: db.prepare(addAccessesSql('')),
    // The same with the visits' classes of hour ?4 (?5: those alone) added to the row (ADR 29).
    addAccessesAndVisits: db.prepare(addAccessesSql(`, ${SET_HOUR_VISITS}`)),
    linkState: db.prepare(`SELECT ${LINK_STATE_COLUMNS} FROM links WHERE short_code = ?`),
    grantAccesses: db.prepare(
      `UPDATE links SET accesses = accesses + ? WHERE short_code = ? RETURNING id AS "linkId", ${LINK_COLUMNS}, ${ROUTING_COLUMNS}`,
    ),
    anyVisitedWebhook: db.prepare(ANY_VISITED_WEBHOOK_SQL),
    addToWaitingVisits: db.prepare(VISITS_TO_WEBHOOKS_SQL[0]),
    newWaitingVisits: db.prepare(VISITS_TO_WEBHOOKS_SQL[1]),
  } satisfies Record<string, StatementSync>;
  counting.addAccesses.setReturnArrays(true);
  counting.addAccessesAndVisits.setReturnArrays(true);

  return createGroupCommit<CountedRow>((increments, signal, now, visits) =>
    // The visitor classes' numbers it assigns are known to it alone until it has committed.
    transaction(() => classIds.assigning(() => {
      const results = new Map<string, CountedLink<CountedRow>>();
      // The tallies of the links counted on the hot path, whose latest hour's are in their row.
      const inRows = new Map<string, readonly VisitTally[]>();
      for (const [code, count] of increments) {
        // An unlocked key (a protected link whose password was checked) takes the slow path.
        const unlocked = code.startsWith(UNLOCKED);
        const key = unlocked ? code.slice(UNLOCKED.length) : code;
        let row: CountedRow | undefined;
        if (!unlocked) {
          // On the hot path every call is granted; the latest hour's tallies go to the row.
          const tallies = grantedVisits(visits.get(code), count);
          if (tallies.length === 0) {
            row = countedRowOf(counting.addAccesses.get(count, key, now) as unknown[] | undefined);
          } else {
            row = hourVisits.adding(tallies, (hour, text) => countedRowOf(counting.addAccessesAndVisits.get(count, key, now, hour, text) as unknown[] | undefined));
            if (row !== undefined) inRows.set(code, tallies);
          }
        }
        if (row !== undefined) {
          results.set(code, { row, accesses: row.accesses });
          continue;
        }
        // Unknown, or a link with a limit, an expiry, a password or a disabled owner. Inside
        // the write transaction, so nothing changes between this read and the grant.
        const state = counting.linkState.get(key) as LinkStateRow | undefined;
        if (state === undefined) continue;
        const refused = refusalOf(state, state.accesses, now, unlocked);
        const granted = refused !== undefined ? 0
          : state.maxVisits === null ? count : Math.min(count, state.maxVisits - state.accesses);
        const counted = granted > 0 ? counting.grantAccesses.get(granted, key) as unknown as CountedRow : state;
        results.set(code, { row: counted, accesses: counted.accesses, granted, refused: refused ?? 'visit_limit' });
      }
      // The statistics of the accesses granted commit with their counts: in the link's row
      // above (ADR 29), or else here in the tuples, one upsert per link and distinct classes
      // (ADR 24). The visits of links whose owner has a link.visited webhook are also written
      // for it, with their shortcode, here: one probe per batch finds whether any such
      // webhook exists at all.
      if (visits.size > 0) {
        const watched = counting.anyVisitedWebhook.get() !== undefined;
        const second = visitSecond(now);
        for (const [code, result] of results) {
          const linkId = result.row.linkId;
          if (linkId === undefined) continue; // nothing granted
          let tallies = inRows.get(code);
          if (tallies === undefined) {
            tallies = grantedVisits(visits.get(code), result.granted ?? increments.get(code)!);
            hourVisits.toTuples(linkId, tallies);
          }
          if (!watched) continue;
          for (const { visit, count } of tallies) {
            const bot = visit.bot ? 1 : 0;
            const row = [result.row.shortCode, second, bot, visit.referrer, visit.country, visit.browser, visit.os, visit.device, count, result.row.createdBy] as const;
            counting.addToWaitingVisits.run(...row);
            counting.newWaitingVisits.run(...row);
          }
        }
      }
      return results;
    }), signal),
  { timeoutMs });
}
