/**
 * The statistics port (stats/stats-store.ts) on PostgreSQL: reading (rollups and tuples summed)
 * and folding (the tuples of hours that are over into the per-hour rollups, old hours into
 * days), one process at a time across instances. Visits reach the tuples with their counts
 * (ADR 24).
 */
import type postgres from 'postgres';
import type { FoldOptions, StatsRows, StatsScope, StatsStore } from '../../stats/stats-store.ts';
import { hourOf, OTHER } from '../../stats/visit.ts';
import { withDeadline } from '../deadline.ts';
import {
  DELETE_ORPHAN_ROLLUPS, deleteFoldedHoursSql, deleteTupleChunkSql, FOLD_BATCH, foldHoursIntoDaysSql, journalLeftoversSql,
  seriesSql, STATS_KEPT_VALUES, tupleChunkEndSql, tupleChunkLinkHoursSql, tuplesToRollupsSql, valuesSql,
} from '../stats-sql.ts';
import type { PostgresEngine } from './engine.ts';
import { guarded } from './errors.ts';

/** PostgreSQL's spelling of parameter N. */
const postgresParameter = (n: number): string => `$${n}`;

// One folding process at a time across instances (any key, the same in every instance; an int4).
const FOLD_LOCK = 0x5_7a_75_01;

// The second stage of a fold (stats-sql.ts): tuples of hours that are over, into the rollups.
const TUPLE_CHUNK_END = tupleChunkEndSql(postgresParameter, FOLD_BATCH.postgres);
const TUPLE_CHUNK_LINK_HOURS = tupleChunkLinkHoursSql(postgresParameter, 'postgres');
const TUPLES_TO_ROLLUPS = tuplesToRollupsSql(postgresParameter, 'postgres');
// What instances of the previous release still journal during a rolling upgrade (ADR 24).
const [JOURNAL_LEFTOVERS = ''] = journalLeftoversSql('postgres');
const DELETE_TUPLE_CHUNK = deleteTupleChunkSql(postgresParameter, 'postgres');

export function statsCalls({ sql, timeoutMs, timed }: PostgresEngine): StatsStore {
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
      const chunk = [hoursBefore, end?.hour ?? hoursBefore - 1, end?.linkId ?? String(Number.MAX_SAFE_INTEGER)];
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

  return {
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

  };
}
