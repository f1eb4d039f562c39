/**
 * Counting on PostgreSQL: the group commit's statement (group-commit.ts), one per batch of
 * resolutions. It locks the batch's links in id order, grants each what its limit leaves
 * (nothing to an expired link or a disabled owner's), counts, and in the same statement adds
 * the granted visits' statistics to the tuples and, for watched links, to their webhooks
 * (ADR 24).
 */
import type { LinkRecord } from '../../links/link-store.ts';
import type { Visit } from '../../stats/visit.ts';
import { createGroupCommit, type BatchVisits, type CountedLink, type GroupCommit } from '../group-commit.ts';
import { refusalOf, ROUTING_COLUMNS, type LinkStateRow, type RoutingRow } from '../link-rows.ts';
import { UNLOCKED } from '../../links/link-key.ts';
import { visitSecond } from '../webhooks.ts';
import type { Sql } from './connection.ts';
import { guarded } from './errors.ts';

/** A link row as the count batch returns it, with its routing. */
type CountedRow = LinkRecord & RoutingRow;

export function createCounter(sql: Sql, timeoutMs: number): GroupCommit<CountedRow> {
  const counter = createGroupCommit<CountedRow>(async (increments, _signal, now, visits) => {
    const codes = [...increments.keys()];
    const counts = codes.map((code) => increments.get(code)!);
    // Rows are locked in id order so that batches of different instances cannot deadlock.
    // The locked rows are read as they stand after any wait for the lock, so each link is
    // granted what its limit leaves (least(n, max_visits - accesses)), or nothing when it
    // has expired or its owner is disabled, in the same statement that counts it.
    // A key led by UNLOCKED counts a protected link whose password was checked; any other
    // access to a protected link is granted nothing. (A batch never locks one link twice with
    // grants: its locked key is granted 0, so only the unlocked row updates it.)
    const rows = await guarded(() => sql<(LinkStateRow & RoutingRow & { granted: number; key: string })[]>`
      WITH batch AS (
        SELECT l.id, b.n, b.code AS key, l.short_code, l.points_to, l.created_by, l.accesses, l.expires_at, l.max_visits, a.disabled,
               l.forward_query, l.rules, l.password_hash
          FROM links l
          JOIN unnest(${sql.array(codes, 25)}::text[], ${sql.array(counts, 23)}::int[]) AS b(code, n)
            ON l.short_code = (CASE WHEN left(b.code, 1) = ${UNLOCKED} THEN substr(b.code, 2) ELSE b.code END)
          JOIN accounts a ON a.uid = l.created_by
         ORDER BY l.id
           FOR UPDATE OF l
      ), granted AS (
        SELECT batch.*,
               CASE WHEN disabled OR expires_at <= ${now} THEN 0
                    WHEN password_hash IS NOT NULL AND left(key, 1) <> ${UNLOCKED} THEN 0
                    WHEN max_visits IS NULL THEN n
                    ELSE least(n, greatest(max_visits - accesses, 0)) END AS granted
          FROM batch
      ), counted AS (
        UPDATE links l SET accesses = l.accesses + granted.granted
          FROM granted WHERE l.id = granted.id AND granted.granted > 0
      )${visits.size === 0 ? sql`` : sql`, visits AS (
        SELECT g.id, g.short_code, g.created_by, v.hour, v.bot, v.referrer, v.country, v.browser, v.os, v.device
          FROM unnest(${visitColumns(visits)}) AS v(code, position, hour, bot, referrer, country, browser, os, device)
          JOIN granted g ON g.key = v.code
         WHERE v.position <= g.granted
      ), tallies AS (
        SELECT id, short_code, created_by, hour, bot, referrer, country, browser, os, device, count(*) AS visits
          FROM visits GROUP BY id, short_code, created_by, hour, bot, referrer, country, browser, os, device
      ), tupled AS (
        -- The statistics of the accesses granted (a link's first calls, in arrival order),
        -- in the same statement as the counts: added to the tuples, one upsert per link and
        -- distinct classes (ADR 24). Only batches holding the link's row lock reach its
        -- tuples, so instances cannot deadlock on them.
        INSERT INTO stats_tuples (hour, link_id, bot, referrer, country, browser, os, device, visits)
        SELECT hour, id, bot, referrer, country, browser, os, device, visits FROM tallies
         ORDER BY hour, id, bot, referrer, country, browser, os, device
        ON CONFLICT (hour, link_id, bot, referrer, country, browser, os, device)
        DO UPDATE SET visits = stats_tuples.visits + excluded.visits
      ), hooked AS (
        -- The same tallies for each link.visited webhook of the link's owner, with the
        -- shortcode: delivered even when the link is deleted right after (ADR 24).
        INSERT INTO webhook_visits (webhook_id, short_code, time, bot, referrer, country, browser, os, device, visits)
        SELECT w.id, t.short_code, ${visitSecond(now)}, t.bot, t.referrer, t.country, t.browser, t.os, t.device, t.visits
          FROM tallies t JOIN webhooks w ON w.account_uid = t.created_by AND w.visited = 1
      )`}
      SELECT key, short_code AS "shortCode", points_to AS "pointsTo", created_by AS "createdBy",
             accesses + granted AS accesses, granted, expires_at AS "expiresAt", max_visits AS "maxVisits", disabled,
             ${sql.unsafe(ROUTING_COLUMNS)}
        FROM granted`);
    const results = new Map<string, CountedLink<CountedRow>>();
    for (const state of rows) {
      const row = {
        shortCode: state.shortCode, pointsTo: state.pointsTo, createdBy: state.createdBy, accesses: Number(state.accesses),
        forwardQuery: state.forwardQuery, rules: state.rules, passwordHash: state.passwordHash,
      };
      const before = row.accesses - state.granted;
      results.set(state.key, {
        row, accesses: row.accesses, granted: state.granted,
        refused: refusalOf(state, before, now, state.key.startsWith(UNLOCKED)) ?? 'visit_limit',
      });
    }
    return results;
  }, { timeoutMs });

  /** The calls' visits as the nine arrays the tuples' insert unnests: each with its link and position. */
  function visitColumns(batch: BatchVisits) {
    const calls: { code: string; position: number; visit: Visit }[] = [];
    for (const [code, list] of batch) {
      list.forEach((visit, i) => {
        if (visit !== undefined) calls.push({ code, position: i + 1, visit });
      });
    }
    const text = (pick: (visit: Visit) => string) => sql.array(calls.map(({ visit }) => pick(visit)), 25);
    return sql`${sql.array(calls.map((c) => c.code), 25)}::text[],
      ${sql.array(calls.map((c) => c.position), 23)}::int[],
      ${sql.array(calls.map((c) => c.visit.hour), 23)}::int[],
      ${sql.array(calls.map((c) => (c.visit.bot ? 1 : 0)), 21)}::smallint[],
      ${text((v) => v.referrer)}::text[], ${text((v) => v.country)}::text[], ${text((v) => v.browser)}::text[],
      ${text((v) => v.os)}::text[], ${text((v) => v.device)}::text[]`;
  }
  return counter;
}
