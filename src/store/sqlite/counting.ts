/**
 * Counting on SQLite: the group commit's transaction (group-commit.ts), one per batch of
 * resolutions. It adds each link's accesses (granting what a visit limit leaves, nothing to an
 * expired link or a disabled owner's), and in the same transaction the granted visits'
 * statistics to the tuples and, for watched links, to their webhooks (ADR 24).
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { LinkRecord } from '../../links/link-store.ts';
import { LINK_COLUMNS } from '../columns.ts';
import { createGroupCommit, grantedVisits, type CountedLink, type GroupCommit } from '../group-commit.ts';
import { refusalOf, ROUTING_COLUMNS, type LinkStateRow, type RoutingRow } from '../link-rows.ts';
import { UNLOCKED } from '../../links/link-key.ts';
import { ADD_TUPLE_SQL } from '../stats-sql.ts';
import { ANY_VISITED_WEBHOOK_SQL, VISITS_TO_WEBHOOKS_SQL, visitSecond } from '../webhooks.ts';
import { LINK_STATE_COLUMNS } from './links.ts';

/** A link row as the count batch returns it: with its id, which the tuples record, and its routing. */
export type CountedRow = LinkRecord & Partial<RoutingRow> & { readonly linkId?: number };

/** Runs `work` in one write transaction (the store's), retried while another connection writes. */
type Transaction = <R>(work: () => R, signal?: AbortSignal) => Promise<R>;

export function createCounter(db: DatabaseSync, transaction: Transaction, timeoutMs: number): GroupCommit<CountedRow> {
  const counting = {
    // The hot path: one statement per link and batch, as before the limits existed. It only
    // counts a link without a visit limit, unexpired, whose owner is not disabled; any other
    // link (or none) returns no row and is settled by linkState/grantAccesses below.
    addAccesses: db.prepare(
      `UPDATE links SET accesses = accesses + ?1
        WHERE short_code = ?2 AND max_visits IS NULL AND (expires_at IS NULL OR expires_at > ?3) AND password_hash IS NULL
          AND NOT EXISTS (SELECT 1 FROM accounts WHERE uid = links.created_by AND disabled <> 0)
        RETURNING id AS "linkId", ${LINK_COLUMNS}, ${ROUTING_COLUMNS}`,
    ),
    linkState: db.prepare(`SELECT ${LINK_STATE_COLUMNS} FROM links WHERE short_code = ?`),
    grantAccesses: db.prepare(
      `UPDATE links SET accesses = accesses + ? WHERE short_code = ? RETURNING id AS "linkId", ${LINK_COLUMNS}, ${ROUTING_COLUMNS}`,
    ),
    addTuple: db.prepare(ADD_TUPLE_SQL),
    anyVisitedWebhook: db.prepare(ANY_VISITED_WEBHOOK_SQL),
    addToWaitingVisits: db.prepare(VISITS_TO_WEBHOOKS_SQL[0]),
    newWaitingVisits: db.prepare(VISITS_TO_WEBHOOKS_SQL[1]),
  } satisfies Record<string, StatementSync>;

  return createGroupCommit<CountedRow>((increments, signal, now, visits) =>
    transaction(() => {
      const results = new Map<string, CountedLink<CountedRow>>();
      for (const [code, count] of increments) {
        // An unlocked key (a protected link whose password was checked) takes the slow path.
        const unlocked = code.startsWith(UNLOCKED);
        const key = unlocked ? code.slice(UNLOCKED.length) : code;
        const row = unlocked ? undefined : counting.addAccesses.get(count, key, now) as CountedRow | undefined;
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
      // The statistics of the accesses granted commit with their counts: added to the
      // tuples, one upsert per link and distinct classes (ADR 24). The visits of links whose
      // owner has a link.visited webhook are also written for it, with their shortcode, here:
      // one probe per batch finds whether any such webhook exists at all.
      if (visits.size > 0) {
        const watched = counting.anyVisitedWebhook.get() !== undefined;
        const second = visitSecond(now);
        for (const [code, result] of results) {
          const linkId = result.row.linkId;
          if (linkId === undefined) continue; // nothing granted
          for (const { visit, count } of grantedVisits(visits.get(code), result.granted ?? increments.get(code)!)) {
            const bot = visit.bot ? 1 : 0;
            counting.addTuple.run(visit.hour, linkId, bot, visit.referrer, visit.country, visit.browser, visit.os, visit.device, count);
            if (watched) {
              const row = [result.row.shortCode, second, bot, visit.referrer, visit.country, visit.browser, visit.os, visit.device, count, result.row.createdBy] as const;
              counting.addToWaitingVisits.run(...row);
              counting.newWaitingVisits.run(...row);
            }
          }
        }
      }
      return results;
    }, signal),
  { timeoutMs });
}
