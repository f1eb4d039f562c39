/**
 * The current hour's visits of a link in its own row, on SQLite (ADR 29). The count's
 * `UPDATE links` dirties the link's page anyway; keeping the hour's visitor classes in the same
 * row (`tallies_hour`, and `hour_tallies`: tallies, see below) records a visit's statistics
 * without touching another page. An upsert into `stats_tuples` per link and classes dirtied a
 * page of that B-tree per visit (it is keyed by hour and link, so visits spread over many links
 * land all over it), which doubled the pages a visit writes.
 *
 * `hour_tallies` is text the count's UPDATE only appends to, in SQL: each batch adds
 * `classes<TAB>visits<RS>` per tally, or `classes<RS>` for one visit, the classes by number
 * (visit-classes.ts: a few characters), so the hot path parses nothing. When the row would
 * pass MAX_ROW_TEXT characters, or a visit of a later hour comes, a SQL function (JavaScript,
 * hourVisitsWriter) sums the row's tallies: an earlier hour goes to the tuples; the same hour
 * stays in the row summed, or goes to the tuples when even summed it is long (many kinds of
 * visitor). The fold sweeps the rows of hours that are over into the tuples (once per hour and
 * process, resumable). Readers add the rows' tallies to the tuples and rollups in the same read
 * transaction, so a resolution is in the statistics as soon as it is answered (guarantee 8);
 * the row commits with the count, so counts and statistics stay equal across `kill -9`.
 *
 * The release before named classes in full (classesKey, about 45 characters) in `visits_hour`
 * and `hour_visits`. Those columns are still read, summed and swept alike (a key with a line
 * break is classes in full), so rows written before the upgrade, or by an instance of that
 * release on the same file, are counted; nothing writes them any more.
 */
import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import type { StatsRows } from '../../stats/stats-store.ts';
import { Dimension, dimensionValues, type VisitClasses } from '../../stats/visit.ts';
import type { VisitTally } from '../group-commit.ts';
import { ADD_TUPLE_SQL } from '../stats-sql.ts';
import { classesKey, visitClassIds, type VisitClassIds } from './visit-classes.ts';

/**
 * Characters of tallies a row holds before they are summed: 100–300 tallies, so a link's row
 * stays well inside its page (a longer one would spill into overflow pages, each one more
 * page to write).
 */
export const MAX_ROW_TEXT = 600;

/** Rows of hours that are over moved to the tuples per fold. */
export const SWEEP_CHUNK = 500;

/** Tallies summed: classes (a number, or in full in the previous release's columns) → visits. */
type Tallies = Map<string, number>;

/** One tally as a row holds it: a single visit without its count. */
const tallyText = (key: string, visits: number): string => visits === 1 ? `${key}\u001e` : `${key}\t${visits}\u001e`;

/** Tallies as a row holds them. */
function talliesText(tallies: Iterable<readonly [string, number]>): string {
  let text = '';
  for (const [key, visits] of tallies) text += tallyText(key, visits);
  return text;
}

/** Adds the tallies of a row's text to `into` (summed per classes). */
function sumTallies(text: string, into: Tallies = new Map()): Tallies {
  for (const entry of text.split('\u001e')) {
    if (entry === '') continue; // after the last separator
    const tab = entry.lastIndexOf('\t');
    const key = tab < 0 ? entry : entry.slice(0, tab);
    into.set(key, (into.get(key) ?? 0) + (tab < 0 ? 1 : Number(entry.slice(tab + 1))));
  }
  return into;
}

/** The SQL function the count's UPDATE calls when a row's text must be summed (hourVisitsWriter). */
const SUM_FUNCTION = 'shortlink_sum_hour_visits';

/**
 * What the count's UPDATE sets, its hour as parameter ?4 and the batch's tallies (talliesText)
 * as ?5: appended in SQL while the row holds the same hour and stays short, else summed by
 * the function (an earlier hour handed over to the tuples).
 */
export const SET_HOUR_VISITS = `tallies_hour = ?4,
  hour_tallies = CASE
    WHEN hour_tallies IS NULL THEN ?5
    WHEN tallies_hour = ?4 AND length(hour_tallies) + length(?5) <= ${MAX_ROW_TEXT} THEN hour_tallies || ?5
    ELSE ${SUM_FUNCTION}(tallies_hour, hour_tallies, id, ?5) END`;

/** Adds visits of one link, hour and classes to the tuples; and summed tallies (a row's). */
function tuplesAdder(db: DatabaseSync, ids: VisitClassIds): {
  one(linkId: number, hour: number, classes: VisitClasses, visits: number): void;
  summed(linkId: number, hour: number, tallies: Tallies): void;
} {
  const addTuple = db.prepare(ADD_TUPLE_SQL);
  const one = (linkId: number, hour: number, classes: VisitClasses, visits: number): void => {
    addTuple.run(hour, linkId, classes.bot ? 1 : 0, classes.referrer, classes.country, classes.browser, classes.os, classes.device, visits);
  };
  return {
    one,
    summed(linkId, hour, tallies) {
      for (const [key, visits] of tallies) one(linkId, hour, ids.classesOf(key), visits);
    },
  };
}

export interface HourVisitsWriter {
  /**
   * Runs `update` (a statement that sets SET_HOUR_VISITS, given the hour and its tallies as
   * text for ?4 and ?5) with the tallies of their latest hour (a batch may straddle two); once
   * it answers a link's row, what the row gave up and the other hour's tallies go to the
   * tuples. Inside the count transaction; answers what `update` answered.
   */
  adding<R extends { readonly linkId?: number }>(tallies: readonly VisitTally[], update: (hour: number, text: string) => R | undefined): R | undefined;
  /** Adds tallies to the tuples directly (a link counted on the slow path). */
  toTuples(linkId: number, tallies: readonly VisitTally[]): void;
}

/** For the count transaction; registers the SQL function on `db` (one writer per connection). */
export function hourVisitsWriter(db: DatabaseSync): HourVisitsWriter {
  const ids = visitClassIds(db);
  const tuples = tuplesAdder(db, ids);
  let hour: number | undefined;
  /** What rows gave up (an earlier hour's tallies, or too many), for the tuples. */
  const released: [linkId: number, hour: number, tallies: Tallies][] = [];

  db.function(SUM_FUNCTION, { deterministic: false, directOnly: true }, (oldHour: SQLInputValue, oldText: SQLInputValue, linkId: SQLInputValue, text: SQLInputValue) => {
    if (hour === undefined) throw new Error(`${SUM_FUNCTION} called outside a count`);
    const id = linkId as number;
    if (oldHour !== hour) {
      released.push([id, oldHour as number, sumTallies(oldText as string)]);
      if ((text as string).length <= MAX_ROW_TEXT) return text;
      released.push([id, hour, sumTallies(text as string)]);
      return null;
    }
    const summed = sumTallies(text as string, sumTallies(oldText as string));
    const compact = talliesText(summed);
    // Summed, it should leave room for more: else this link has many kinds of visitor this hour.
    if (compact.length <= MAX_ROW_TEXT / 2) return compact;
    released.push([id, hour, summed]);
    return null;
  });

  return {
    adding(tallies, update) {
      let latest = tallies[0]!.visit.hour;
      for (const { visit } of tallies) if (visit.hour > latest) latest = visit.hour;
      hour = latest;
      released.length = 0;
      try {
        let text = '';
        for (const { visit, count } of tallies) if (visit.hour === latest) text += tallyText(ids.idOf(classesKey(visit)), count);
        const row = update(latest, text);
        if (row !== undefined) {
          for (const [linkId, releasedHour, summed] of released) tuples.summed(linkId, releasedHour, summed);
          for (const { visit, count } of tallies) {
            if (visit.hour !== latest) tuples.one(row.linkId!, visit.hour, visit, count);
          }
        }
        return row;
      } finally {
        hour = undefined;
        released.length = 0;
      }
    },

    toTuples(linkId, tallies) {
      for (const { visit, count } of tallies) tuples.one(linkId, visit.hour, visit, count);
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

/** A row's waiting tallies: this release's pair of columns, then the previous release's (either may be null). */
type WaitingRow = [hour: number | null, text: string | null, legacyHour: number | null, legacyText: string | null];

/** The waiting columns, this release's first (WaitingRow). */
const WAITING = 'tallies_hour, hour_tallies, visits_hour, hour_visits';
const ANY_WAITING = '(hour_tallies IS NOT NULL OR hour_visits IS NOT NULL)';

/** The (hour, text) pairs of a WaitingRow that hold tallies of hours from ≤ h < to. */
function* waitingPairs([hour, text, legacyHour, legacyText]: WaitingRow, from: number, to: number): Generator<[number, string]> {
  if (text !== null && hour! >= from && hour! < to) yield [hour!, text];
  if (legacyText !== null && legacyHour! >= from && legacyHour! < to) yield [legacyHour!, legacyText];
}

export function hourVisitsReader(db: DatabaseSync): HourVisitsReader {
  const ids = visitClassIds(db);
  const tuples = tuplesAdder(db, ids);
  const statements = {
    ofLink: db.prepare(`SELECT ${WAITING} FROM links WHERE short_code = ? AND ${ANY_WAITING}`),
    ofAccount: db.prepare(`SELECT ${WAITING} FROM links WHERE created_by = ? AND ${ANY_WAITING}`),
    overFrom: db.prepare(`SELECT id, ${WAITING} FROM links
      WHERE id > ?1 AND (tallies_hour < ?2 AND hour_tallies IS NOT NULL OR visits_hour < ?2 AND hour_visits IS NOT NULL)
      ORDER BY id LIMIT ${SWEEP_CHUNK}`),
    // Clears the pairs of hours before ?2 (the SET's expressions all read the row as it was).
    clear: db.prepare(`UPDATE links SET
      tallies_hour = CASE WHEN tallies_hour < ?2 THEN NULL ELSE tallies_hour END,
      hour_tallies = CASE WHEN tallies_hour < ?2 THEN NULL ELSE hour_tallies END,
      visits_hour = CASE WHEN visits_hour < ?2 THEN NULL ELSE visits_hour END,
      hour_visits = CASE WHEN visits_hour < ?2 THEN NULL ELSE hour_visits END
      WHERE id = ?1`),
  };
  for (const statement of Object.values(statements)) statement.setReturnArrays(true);
  /** The hour whose sweep went through every row (this process), and the one under way with where it is. */
  let swept: number | undefined;
  let sweeping: { hoursBefore: number; cursor: number } | undefined;

  return {
    addTo(rows, scope, fromHour, toHour) {
      const waiting = ('shortCode' in scope ? statements.ofLink.all(scope.shortCode) : statements.ofAccount.all(scope.accountUid)) as unknown as WaitingRow[];
      if (waiting.length === 0) return rows;
      const series = new Map(rows.series.map((row) => [row.hour, { ...row }]));
      const values = new Map(rows.values.map((row) => [`${row.dimension}\n${row.value}`, { ...row }]));
      for (const row of waiting) {
        for (const [hour, text] of waitingPairs(row, fromHour, toHour)) {
          for (const [key, count] of sumTallies(text)) {
            const classes = ids.classesOf(key);
            const point = series.get(hour) ?? { hour, visits: 0, bots: 0 };
            series.set(hour, { hour, visits: point.visits + count, bots: point.bots + (classes.bot ? count : 0) });
            // The series carries the first dimension (human or bot); the values, the others.
            dimensionValues(classes).forEach((value, dimension) => {
              if (dimension === Dimension.Kind) return;
              const id = `${dimension}\n${value}`;
              values.set(id, { dimension, value, visits: (values.get(id)?.visits ?? 0) + count });
            });
          }
        }
      }
      return { series: [...series.values()].sort((a, b) => a.hour - b.hour), values: [...values.values()] };
    },

    sweep(hoursBefore) {
      if (swept === hoursBefore) return { hoursBefore, moved: 0, last: undefined };
      const from = sweeping?.hoursBefore === hoursBefore ? sweeping.cursor : 0;
      const rows = statements.overFrom.all(from, hoursBefore) as unknown as [number, ...WaitingRow][];
      for (const [linkId, ...row] of rows) {
        for (const [hour, text] of waitingPairs(row, Number.MIN_SAFE_INTEGER, hoursBefore)) tuples.summed(linkId, hour, sumTallies(text));
        statements.clear.run(linkId, hoursBefore);
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
