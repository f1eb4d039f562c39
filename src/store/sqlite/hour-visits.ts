/**
 * The current hour's visits of a link in its own row, on SQLite (ADR 29). The count's
 * `UPDATE links` dirties the link's page anyway; keeping the hour's visitor classes in the same
 * row (`visits_hour`, and `hour_visits`: JSON, classes key → visits) records a visit's
 * statistics without touching another page. An upsert into `stats_tuples` per link and
 * classes dirtied a page of that B-tree per visit (it is keyed by hour and link, so visits
 * spread over many links land all over it), which doubled the pages a visit writes.
 *
 * The row's classes go to the tuples (`stats_tuples`, as every other visit) when:
 * - a visit of a later hour comes: the count's own UPDATE hands the old hour over;
 * - the row holds more than MAX_ROW_CLASSES distinct classes;
 * - the fold sweeps the rows of hours that are over (once per hour and process, resumable).
 * Readers add the rows' classes to the tuples and rollups, in the same read transaction, so a
 * resolution is in the statistics as soon as it is answered (guarantee 8); the row commits
 * with the count, so counts and statistics stay equal across `kill -9`.
 */
import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import type { StatsRows } from '../../stats/stats-store.ts';
import { Dimension, type VisitClasses } from '../../stats/visit.ts';
import type { VisitTally } from '../group-commit.ts';
import { ADD_TUPLE_SQL } from '../stats-sql.ts';

/** Distinct classes a row keeps before they go to the tuples at once: a row stays a few KB. */
export const MAX_ROW_CLASSES = 32;

/** Rows of hours that are over moved to the tuples per fold. */
export const SWEEP_CHUNK = 500;

/** A row's classes: classes key (classesKey) → visits. */
type HourVisits = Record<string, number>;

/** bot (0/1), referrer, country, browser, os and device, one line each. */
export function classesKey(visit: VisitClasses): string {
  return `${visit.bot ? 1 : 0}\n${visit.referrer}\n${visit.country}\n${visit.browser}\n${visit.os}\n${visit.device}`;
}

/** The SQL function the count's UPDATE calls (hourVisitsWriter). */
const ADD_FUNCTION = 'shortlink_add_hour_visits';

/**
 * What the count's UPDATE sets, its hour as parameter ?4 and the batch's tallies as a row's
 * classes as ?5 (NULL when they are too many): those alone in a row that has none waiting (no
 * call into JavaScript), else the function's sum (an earlier hour's classes handed over).
 */
export const SET_HOUR_VISITS = `visits_hour = ?4,
  hour_visits = CASE WHEN hour_visits IS NULL AND ?5 IS NOT NULL THEN ?5 ELSE ${ADD_FUNCTION}(visits_hour, hour_visits, id) END`;

/** Adds a row's classes (or tallies) of one link and hour to the tuples. */
function tuplesAdder(db: DatabaseSync): (linkId: number, hour: number, visits: HourVisits) => void {
  const addTuple = db.prepare(ADD_TUPLE_SQL);
  return (linkId, hour, visits) => {
    for (const key in visits) {
      const [bot, referrer, country, browser, os, device] = key.split('\n');
      addTuple.run(hour, linkId, Number(bot), referrer!, country!, browser!, os!, device!, visits[key]!);
    }
  };
}

export interface HourVisitsWriter {
  /**
   * Runs `update` (a statement that sets SET_HOUR_VISITS, given the tallies as a row's classes
   * for ?5) with `tallies` of hour `hour` as what it adds; then hands what it displaced to the
   * tuples. Inside the count transaction.
   */
  adding<R>(hour: number, tallies: readonly VisitTally[], update: (alone: string | null) => R): R;
  /** Adds tallies to the tuples directly (a link counted on the slow path, another hour). */
  toTuples(linkId: number, tallies: readonly VisitTally[]): void;
}

/** For the count transaction; registers the SQL function on `db` (one writer per connection). */
export function hourVisitsWriter(db: DatabaseSync): HourVisitsWriter {
  const addToTuples = tuplesAdder(db);
  let adding: { hour: number; tallies: readonly VisitTally[] } | undefined;
  /** Classes the function displaced (an earlier hour's, or too many), for the tuples. */
  const displaced: [linkId: number, hour: number, visits: HourVisits][] = [];

  db.function(ADD_FUNCTION, { deterministic: false, directOnly: true }, (oldHour: SQLInputValue, oldText: SQLInputValue, linkId: SQLInputValue) => {
    if (adding === undefined) throw new Error(`${ADD_FUNCTION} called outside a count`);
    const { hour, tallies } = adding;
    let visits: HourVisits = {};
    if (typeof oldText === 'string') {
      if (oldHour === hour) visits = JSON.parse(oldText) as HourVisits;
      else displaced.push([linkId as number, oldHour as number, JSON.parse(oldText) as HourVisits]);
    }
    let classes = Object.keys(visits).length;
    for (const { visit, count } of tallies) {
      const key = classesKey(visit);
      const before = visits[key];
      if (before === undefined) classes++;
      visits[key] = (before ?? 0) + count;
    }
    if (classes <= MAX_ROW_CLASSES) return JSON.stringify(visits);
    displaced.push([linkId as number, hour, visits]);
    return null;
  });

  return {
    adding(hour, tallies, update) {
      adding = { hour, tallies };
      displaced.length = 0;
      try {
        const alone: HourVisits = {};
        for (const { visit, count } of tallies) alone[classesKey(visit)] = count;
        const result = update(tallies.length <= MAX_ROW_CLASSES ? JSON.stringify(alone) : null);
        for (const [linkId, oldHour, visits] of displaced) addToTuples(linkId, oldHour, visits);
        return result;
      } finally {
        adding = undefined;
        displaced.length = 0;
      }
    },

    toTuples(linkId, tallies) {
      for (const { visit, count } of tallies) addToTuples(linkId, visit.hour, { [classesKey(visit)]: count });
    },
  };
}

export interface HourVisitsReader {
  /**
   * Adds the classes waiting in the rows in scope (hours from ≤ h < to) to `rows`, the
   * tuples' and rollups' sums read in the same transaction.
   */
  addTo(rows: StatsRows, scope: { shortCode: string } | { accountUid: number }, fromHour: number, toHour: number): StatsRows;
  /**
   * Inside a write transaction: moves the classes of a chunk of rows whose hour is before
   * `hoursBefore` to the tuples, from where the last chunk ended. Once every row was looked at
   * for an hour, nothing until the next. Answers how many rows it moved; `advance` it once the
   * transaction has committed, so a chunk rolled back is looked at again.
   */
  sweep(hoursBefore: number): SweepStep;
  advance(step: SweepStep): void;
}

export interface SweepStep {
  readonly hoursBefore: number;
  readonly moved: number;
  /** The last row looked at, or undefined when the chunk reached the end of the table. */
  readonly last: number | undefined;
}

export function hourVisitsReader(db: DatabaseSync): HourVisitsReader {
  const addToTuples = tuplesAdder(db);
  const statements = {
    ofLink: db.prepare('SELECT visits_hour, hour_visits FROM links WHERE short_code = ? AND hour_visits IS NOT NULL'),
    ofAccount: db.prepare('SELECT visits_hour, hour_visits FROM links WHERE created_by = ? AND hour_visits IS NOT NULL'),
    overFrom: db.prepare(`SELECT id, visits_hour, hour_visits FROM links WHERE id > ? AND visits_hour < ? AND hour_visits IS NOT NULL ORDER BY id LIMIT ${SWEEP_CHUNK}`),
    clear: db.prepare('UPDATE links SET visits_hour = NULL, hour_visits = NULL WHERE id = ?'),
  };
  for (const statement of Object.values(statements)) statement.setReturnArrays(true);
  /** The hour whose sweep went through every row (this process), and the one under way with where it is. */
  let swept: number | undefined;
  let sweeping: { hoursBefore: number; cursor: number } | undefined;

  return {
    addTo(rows, scope, fromHour, toHour) {
      const waiting = ('shortCode' in scope ? statements.ofLink.all(scope.shortCode) : statements.ofAccount.all(scope.accountUid)) as unknown as [number, string][];
      if (waiting.length === 0) return rows;
      const series = new Map(rows.series.map((row) => [row.hour, { ...row }]));
      const values = new Map(rows.values.map((row) => [`${row.dimension}\n${row.value}`, { ...row }]));
      for (const [hour, text] of waiting) {
        if (hour < fromHour || hour >= toHour) continue;
        const visits = JSON.parse(text) as HourVisits;
        for (const key in visits) {
          const count = visits[key]!;
          const [bot, ...named] = key.split('\n');
          const point = series.get(hour) ?? { hour, visits: 0, bots: 0 };
          series.set(hour, { hour, visits: point.visits + count, bots: point.bots + (bot === '1' ? count : 0) });
          named.forEach((value, i) => {
            const dimension = Dimension.Referrer + i;
            const id = `${dimension}\n${value}`;
            values.set(id, { dimension, value, visits: (values.get(id)?.visits ?? 0) + count });
          });
        }
      }
      return { series: [...series.values()].sort((a, b) => a.hour - b.hour), values: [...values.values()] };
    },

    sweep(hoursBefore) {
      if (swept === hoursBefore) return { hoursBefore, moved: 0, last: undefined };
      const from = sweeping?.hoursBefore === hoursBefore ? sweeping.cursor : 0;
      const rows = statements.overFrom.all(from, hoursBefore) as unknown as [number, number, string][];
      for (const [linkId, hour, text] of rows) {
        addToTuples(linkId, hour, JSON.parse(text) as HourVisits);
        statements.clear.run(linkId);
      }
      return { hoursBefore, moved: rows.length, last: rows.length < SWEEP_CHUNK ? undefined : rows[rows.length - 1]![0] };
    },

    advance({ hoursBefore, last }) {
      if (swept === hoursBefore) return;
      if (last === undefined) {
        swept = hoursBefore;
        sweeping = undefined;
      } else {
        sweeping = { hoursBefore, cursor: last };
      }
    },
  };
}
