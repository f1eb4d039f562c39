import type postgres from 'postgres';
import { DEFAULT_STORAGE_TIMEOUT_MS, withDeadline } from '../deadline.ts';
import { createGroupCommit, type BatchVisits, type CountedLink } from '../group-commit.ts';
import {
  DELETE_ORPHAN_ROLLUPS, deleteFoldedHoursSql, deleteTupleChunkSql, FOLD_BATCH, foldHoursIntoDaysSql,
  seriesSql, STATS_KEPT_VALUES, tupleChunkEndSql, tupleChunkLinkHoursSql, tuplesToRollupsSql, valuesSql,
  journalLeftoversSql,
} from '../stats-sql.ts';
import { hourOf, OTHER, type Visit } from '../../stats/visit.ts';
import { refusalOf, type LinkStateRow } from '../link-rows.ts';
import type { FoldOptions, LinkRecord, PingOptions, StatsRows, StatsScope, Store } from '../store.ts';
import { administration } from './administration.ts';
import { connect } from './connection.ts';
import { guarded } from './errors.ts';
import { prepareWebhooks } from './webhooks.ts';
import { prepareStreamSlots } from './stream-slots.ts';
import { accountCalls } from './accounts.ts';
import type { PostgresEngine } from './engine.ts';
import { linkCalls } from './links.ts';
import { countingCalls } from '../counting-calls.ts';
import { visitSecond } from '../webhooks.ts';
import { prepareApiKeys } from './api-keys.ts';

export interface PostgresOptions {
  readonly url: string;
  /** Connections in the pool (10 when omitted). */
  readonly max?: number;
  /** Named prepared statements (true when omitted); false behind PgBouncer in transaction mode. */
  readonly prepare?: boolean;
  /**
   * The storage deadline (STORAGE_TIMEOUT), default 5 s: a call the database has not answered
   * by then fails as storage unavailable (a frozen server, a lost network, crash recovery).
   */
  readonly timeoutMs?: number;
}

/** PostgreSQL's spelling of parameter N. */
const postgresParameter = (n: number): string => `$${n}`;

// One folding process at a time across instances (any key, the same in every instance; an int4).
const FOLD_LOCK = 0x5_7a_75_01;

// The second stage of a fold (stats-sql.ts): tuples of hours that are over, into the rollups.
const TUPLE_CHUNK_END = tupleChunkEndSql(postgresParameter, FOLD_BATCH.postgres);
const TUPLE_CHUNK_LINK_HOURS = tupleChunkLinkHoursSql(postgresParameter);
const TUPLES_TO_ROLLUPS = tuplesToRollupsSql(postgresParameter);
// What instances of the previous release still journal during a rolling upgrade (ADR 24).
const [JOURNAL_LEFTOVERS = ''] = journalLeftoversSql('postgres');
const DELETE_TUPLE_CHUNK = deleteTupleChunkSql(postgresParameter);

/** Connects to PostgreSQL, runs migrations, and returns it as a Store. */
export async function openPostgresStore(options: PostgresOptions): Promise<Store> {
  const sql = await connect({
    url: options.url, max: options.max ?? 10, prepare: options.prepare ?? true, applicationName: 'shortlink',
  });
  const timeoutMs = options.timeoutMs ?? DEFAULT_STORAGE_TIMEOUT_MS;
  // Single queries race the deadline; batched ones get it from their batcher, which also
  // knows whether the batch was sent. A timed-out query stays queued in the driver and runs
  // when the server answers again: withdrawing it (query.cancel()) would, for one already
  // sent, open a cancel connection whose failure nothing could catch.
  const timed = <R>(work: () => PromiseLike<R>): Promise<Awaited<R>> => withDeadline(guarded(work), timeoutMs);

  const counter = createGroupCommit<LinkRecord>(async (increments, _signal, now, visits) => {
    const codes = [...increments.keys()];
    const counts = codes.map((code) => increments.get(code)!);
    // Rows are locked in id order so that batches of different instances cannot deadlock.
    // The locked rows are read as they stand after any wait for the lock, so each link is
    // granted what its limit leaves (least(n, max_visits - accesses)), or nothing when it
    // has expired or its owner is disabled, in the same statement that counts it.
    const rows = await guarded(() => sql<(LinkStateRow & { granted: number })[]>`
      WITH batch AS (
        SELECT l.id, b.n, l.short_code, l.points_to, l.created_by, l.accesses, l.expires_at, l.max_visits, a.disabled
          FROM links l
          JOIN unnest(${sql.array(codes, 25)}::text[], ${sql.array(counts, 23)}::int[]) AS b(code, n) ON l.short_code = b.code
          JOIN accounts a ON a.uid = l.created_by
         ORDER BY l.id
           FOR UPDATE OF l
      ), granted AS (
        SELECT batch.*,
               CASE WHEN disabled OR expires_at <= ${now} THEN 0
                    WHEN max_visits IS NULL THEN n
                    ELSE least(n, greatest(max_visits - accesses, 0)) END AS granted
          FROM batch
      ), counted AS (
        UPDATE links l SET accesses = l.accesses + granted.granted
          FROM granted WHERE l.id = granted.id AND granted.granted > 0
      )${visits.size === 0 ? sql`` : sql`, visits AS (
        SELECT g.id, g.short_code, g.created_by, v.hour, v.bot, v.referrer, v.country, v.browser, v.os, v.device
          FROM unnest(${visitColumns(visits)}) AS v(code, position, hour, bot, referrer, country, browser, os, device)
          JOIN granted g ON g.short_code = v.code
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
      SELECT short_code AS "shortCode", points_to AS "pointsTo", created_by AS "createdBy",
             accesses + granted AS accesses, granted, expires_at AS "expiresAt", max_visits AS "maxVisits", disabled
        FROM granted`);
    const results = new Map<string, CountedLink<LinkRecord>>();
    for (const state of rows) {
      const row = { shortCode: state.shortCode, pointsTo: state.pointsTo, createdBy: state.createdBy, accesses: Number(state.accesses) };
      const before = row.accesses - state.granted;
      results.set(row.shortCode, {
        row, accesses: row.accesses, granted: state.granted, refused: refusalOf(state, before, now) ?? 'visit_limit',
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

  const statsQueries = {
    link: { series: seriesSql({ shortCode: '' }, postgresParameter), values: valuesSql({ shortCode: '' }, postgresParameter) },
    account: { series: seriesSql({ accountUid: 0 }, postgresParameter), values: valuesSql({ accountUid: 0 }, postgresParameter) },
  };

  /** One fold in one transaction; only one process folds at a time (the others skip). */
  async function fold({ daysBeforeHour, hoursBefore = hourOf(Date.now()) }: FoldOptions): Promise<number> {
    return guarded(() => sql.begin(async (tx) => {
      // Per schema: instances sharing one schema fold in turn; databases holding several
      // (tests, hosting) do not wait for each other.
      const [lock] = await tx<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(${FOLD_LOCK}, hashtext(current_schema())) AS locked`;
      if (lock?.locked !== true) return 0;
      let moved = 0;
      await tx.unsafe(JOURNAL_LEFTOVERS);
      // The tuples of hours that are over go on to the rollups, a chunk per fold, whole link-hours.
      const [end] = await tx.unsafe<{ hour: number; linkId: string }[]>(TUPLE_CHUNK_END, [hoursBefore]);
      const chunk = [hoursBefore, end?.hour ?? hoursBefore, end?.linkId ?? String(Number.MAX_SAFE_INTEGER)];
      const pairs = (await tx.unsafe<{ linkId: string; hour: number }[]>(TUPLE_CHUNK_LINK_HOURS, chunk))
        .map((pair) => ({ linkId: Number(pair.linkId), hour: pair.hour }));
      if (pairs.length > 0) {
        await tx.unsafe(TUPLES_TO_ROLLUPS, chunk);
        moved += (await tx.unsafe(DELETE_TUPLE_CHUNK, chunk)).count;
        await trimValues(tx, pairs);
      }
      if (daysBeforeHour !== undefined) {
        const days = await tx<{ linkId: number; hour: number }[]>`
          SELECT DISTINCT link_id::int AS "linkId", hour - hour % 24 AS hour FROM stats_rollups WHERE hour < ${daysBeforeHour} AND hour % 24 <> 0`;
        if (days.length > 0) {
          await tx.unsafe(foldHoursIntoDaysSql(postgresParameter), [daysBeforeHour]);
          await tx.unsafe(deleteFoldedHoursSql(postgresParameter), [daysBeforeHour]);
          await trimValues(tx, days);
        }
        await tx.unsafe(DELETE_ORPHAN_ROLLUPS);
      }
      return moved;
    }));
  }

  /** Keeps the named values of each link-hour within the bound, the rest summed as (other). */
  async function trimValues(tx: postgres.TransactionSql, pairs: readonly { linkId: number; hour: number }[]): Promise<void> {
    if (pairs.length === 0) return;
    await tx`
      WITH crowded AS (
        SELECT r.link_id, r.hour FROM stats_rollups r
          JOIN unnest(${tx.array(pairs.map((p) => p.linkId), 20)}::bigint[], ${tx.array(pairs.map((p) => p.hour), 23)}::int[]) AS t(link_id, hour)
            ON r.link_id = t.link_id AND r.hour = t.hour
         GROUP BY r.link_id, r.hour HAVING count(*) > ${STATS_KEPT_VALUES}
      ), ranked AS (
        SELECT r.link_id, r.hour, r.dim, r.value, r.visits,
               row_number() OVER (PARTITION BY r.link_id, r.hour, r.dim ORDER BY r.visits DESC, r.value) AS position
          FROM stats_rollups r JOIN crowded c ON r.link_id = c.link_id AND r.hour = c.hour
         WHERE r.value <> ${OTHER}
      ), removed AS (
        DELETE FROM stats_rollups s USING ranked
         WHERE ranked.position > ${STATS_KEPT_VALUES}
           AND s.link_id = ranked.link_id AND s.hour = ranked.hour AND s.dim = ranked.dim AND s.value = ranked.value
        RETURNING s.link_id, s.hour, s.dim, s.visits
      )
      INSERT INTO stats_rollups (link_id, hour, dim, value, visits)
      SELECT link_id, hour, dim, ${OTHER}, sum(visits) FROM removed GROUP BY link_id, hour, dim
      ON CONFLICT (link_id, hour, dim, value) DO UPDATE SET visits = stats_rollups.visits + excluded.visits`;
  }

  const webhooks = prepareWebhooks(sql, timed);
  const engine: PostgresEngine = { sql, timeoutMs, timed, outbox: webhooks.outbox, administration: administration(sql) };
  const accounts = accountCalls(engine);
  const links = linkCalls(engine);
  const admin = engine.administration;
  let closed = false;

  return {
    engine: 'postgres',
    webhooks: webhooks.store,
    apiKeys: prepareApiKeys(sql, timed),
    streamSlots: prepareStreamSlots(sql, timed),
    ...accounts.calls,
    ...links.calls,
    ...countingCalls(counter),

    listAccounts(after, limit) {
      return timed(() => admin.listAccounts(after, limit));
    },

    updateAccount(uid, changes) {
      return timed(() => admin.updateAccount(uid, changes));
    },

    searchLinks(search) {
      return timed(() => admin.searchLinks(search));
    },

    takeDownLink(shortCode, eventId) {
      return timed(() => admin.takeDownLink(shortCode, eventId));
    },

    async readStats(scope: StatsScope, fromHour: number, toHour: number): Promise<StatsRows> {
      const queries = 'shortCode' in scope ? statsQueries.link : statsQueries.account;
      const parameter = 'shortCode' in scope ? scope.shortCode : scope.accountUid;
      // Sums arrive as bigint text: hours of a link never near 2^53 visits.
      const [series, values] = await timed(() => Promise.all([
        sql.unsafe<{ hour: number; visits: string; bots: string }[]>(queries.series, [parameter, fromHour, toHour]),
        sql.unsafe<{ dimension: number; value: string; visits: string }[]>(queries.values, [parameter, fromHour, toHour]),
      ]));
      return {
        series: series.map((r) => ({ hour: Number(r.hour), visits: Number(r.visits), bots: Number(r.bots) })),
        values: values.map((r) => ({ dimension: Number(r.dimension), value: r.value, visits: Number(r.visits) })),
      };
    },

    foldStats(options: FoldOptions = {}) {
      return withDeadline(fold(options), timeoutMs);
    },

    async ping(options?: PingOptions) {
      // txid_current() assigns a transaction id, so the commit writes to the WAL.
      await timed(() => (options?.write === true ? sql`SELECT txid_current()` : sql`SELECT 1`));
    },

    async close() {
      if (closed) return;
      closed = true;
      await counter.drain();
      await links.drain();
      await accounts.drain();
      // Every call has been answered by now (by its deadline at the latest). What still runs
      // is a batch given up on, or a statement stuck on a frozen server: a second's grace,
      // then the connections are destroyed, so that the shutdown ends in time (issue 23).
      await sql.end({ timeout: 1 });
    },
  };
}
