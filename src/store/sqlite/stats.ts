/**
 * The statistics port (stats/stats-store.ts) on SQLite: reading (rollups and tuples summed) and
 * folding (the tuples of hours that are over into the per-hour rollups, old hours into days),
 * each fold one write of the write batch. A visit's classes wait in its link's row until their
 * hour is over (ADR 29): each fold first sweeps such rows into the tuples, and readers add what
 * still waits.
 */
import type { StatementSync } from 'node:sqlite';
import { hourOf, OTHER } from '../../stats/visit.ts';
import type { StatsRows, StatsScope, StatsStore } from '../../stats/stats-store.ts';
import {
  DELETE_ORPHAN_ROLLUPS, deleteFoldedHoursSql, deleteTupleChunkSql, excessValuesSql, FOLD_BATCH, foldHoursIntoDaysSql,
  journalLeftoversSql, ROLLUP_ROWS_SQL, seriesSql, STATS_KEPT_VALUES, tupleChunkEndSql, tupleChunkLinkHoursSql,
  tuplesToRollupsSql, valuesSql,
} from '../stats-sql.ts';
import type { SqliteEngine } from './engine.ts';
import { hourVisitsReader, type SweepStep } from './hour-visits.ts';

/** SQLite's spelling of parameter N. */
const sqlite = (n: number): string => `?${n}`;

export function statsCalls({ db, read, writes }: SqliteEngine): StatsStore {
  const statements = {
    tupleChunkEnd: db.prepare(tupleChunkEndSql(sqlite, FOLD_BATCH.sqlite)),
    tuplesToRollups: db.prepare(tuplesToRollupsSql(sqlite, 'sqlite')),
    tupleChunkLinkHours: db.prepare(tupleChunkLinkHoursSql(sqlite, 'sqlite')),
    deleteTupleChunk: db.prepare(deleteTupleChunkSql(sqlite, 'sqlite')),
    rollupRows: db.prepare(ROLLUP_ROWS_SQL),
    addToRollup: db.prepare(`INSERT INTO stats_rollups (link_id, hour, dim, value, visits) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (link_id, hour, dim, value) DO UPDATE SET visits = stats_rollups.visits + excluded.visits`),
    excessValues: db.prepare(excessValuesSql(sqlite)),
    deleteRollup: db.prepare('DELETE FROM stats_rollups WHERE link_id = ? AND hour = ? AND dim = ? AND value = ?'),
    hoursToFold: db.prepare('SELECT DISTINCT link_id AS "linkId", hour - hour % 24 AS hour FROM stats_rollups WHERE hour < ? AND hour % 24 <> 0'),
    foldHours: db.prepare(foldHoursIntoDaysSql(sqlite)),
    deleteFoldedHours: db.prepare(deleteFoldedHoursSql(sqlite)),
    deleteOrphanRollups: db.prepare(DELETE_ORPHAN_ROLLUPS),
  } satisfies Record<string, StatementSync>;
  const journalLeftovers = journalLeftoversSql('sqlite').map((text) => db.prepare(text));
  const hourVisits = hourVisitsReader(db);
  const byScope = {
    link: { series: db.prepare(seriesSql({ shortCode: '' }, sqlite)), values: db.prepare(valuesSql({ shortCode: '' }, sqlite)) },
    account: { series: db.prepare(seriesSql({ accountUid: 0 }, sqlite)), values: db.prepare(valuesSql({ accountUid: 0 }, sqlite)) },
  };

  /** Keeps the named values of each link-hour within the bound, the rest summed as (other). */
  function trimValues(pairs: readonly { linkId: number; hour: number }[]): void {
    for (const { linkId, hour } of pairs) {
      // Six dimensions of a few values each is the common case: a count by the key is enough.
      if ((statements.rollupRows.get(linkId, hour) as { n: number }).n <= STATS_KEPT_VALUES) continue;
      const excess = statements.excessValues.all(linkId, hour) as unknown as { dim: number; value: string; visits: number }[];
      for (const { dim, value, visits } of excess) {
        statements.deleteRollup.run(linkId, hour, dim, value);
        statements.addToRollup.run(linkId, hour, dim, OTHER, visits);
      }
    }
  }

  /**
   * One fold, in a write transaction: what the previous release still journals (a rolling
   * upgrade), a chunk of the tuples of hours that are over into the rollups, and
   * (`daysBeforeHour`) old hours into days. Answers how many link rows and tuples it moved.
   */
  function fold(hoursBefore: number, daysBeforeHour: number | undefined): { moved: number; sweep: SweepStep } {
    for (const statement of journalLeftovers) statement.run();
    // The links' rows of hours that are over hand their classes to the tuples first (ADR 29).
    const sweep = hourVisits.sweep(hoursBefore);
    let moved = sweep.moved;
    // Up to the chunk's last (hour, link), or all of them when fewer are left.
    const end = statements.tupleChunkEnd.get(hoursBefore) as { hour: number; linkId: number } | undefined;
    const chunk = [hoursBefore, end?.hour ?? hoursBefore - 1, end?.linkId ?? Number.MAX_SAFE_INTEGER] as const;
    const pairs = statements.tupleChunkLinkHours.all(...chunk) as unknown as { linkId: number; hour: number }[];
    if (pairs.length > 0) {
      statements.tuplesToRollups.run(...chunk);
      moved += Number(statements.deleteTupleChunk.run(...chunk).changes);
      trimValues(pairs);
    }
    if (daysBeforeHour !== undefined) {
      const days = statements.hoursToFold.all(daysBeforeHour) as unknown as { linkId: number; hour: number }[];
      if (days.length > 0) {
        statements.foldHours.run(daysBeforeHour);
        statements.deleteFoldedHours.run(daysBeforeHour);
        trimValues(days);
      }
      statements.deleteOrphanRollups.run();
    }
    return { moved, sweep };
  }

  return {
    readStats(scope: StatsScope, fromHour: number, toHour: number) {
      const { series, values } = 'shortCode' in scope ? byScope.link : byScope.account;
      const parameter = 'shortCode' in scope ? scope.shortCode : scope.accountUid;
      // The classes still in the links' rows, from the same snapshot as the tuples (ADR 29).
      return read((): StatsRows => hourVisits.addTo({
        series: series.all(parameter, fromHour, toHour) as unknown as StatsRows['series'],
        values: values.all(parameter, fromHour, toHour) as unknown as StatsRows['values'],
      }, scope, fromHour, toHour));
    },

    async foldStats(foldOptions = {}) {
      const hoursBefore = foldOptions.hoursBefore ?? hourOf(Date.now());
      const { moved, sweep } = await writes.run(() => fold(hoursBefore, foldOptions.daysBeforeHour));
      hourVisits.advance(sweep);
      return moved;
    },
  };
}
