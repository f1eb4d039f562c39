/**
 * The statistics SQL both engines share (CONTRACT §7.4, ADR 20, ADR 24). The count
 * transaction adds each batch's visits to `stats_tuples` itself (one row per hour, link and
 * combination of visitor classes: one upsert per link and distinct classes in a batch), so
 * counts and statistics commit together and no per-visit row is written and read again.
 * Once an hour is over, a fold moves its tuples into `stats_rollups` (one row per link, hour,
 * dimension and value: six upserts per tuple, so per visitor class rather than per visit).
 * Readers sum both, so a resolution is in the statistics as soon as it is answered.
 *
 * Placeholders differ (`?N` in SQLite, `$N` in PostgreSQL): each statement is written once
 * over a function that spells parameter N.
 */
import { OTHER } from '../stats/visit.ts';
import type { StatsScope } from './store.ts';

export type Placeholder = (n: number) => string;

/**
 * Values kept by name per link, hour (or folded day) and dimension; the rest are summed as
 * `(other)`. The answer shows at most 50 per dimension, so keeping 50 per hour keeps every
 * value that can be shown for an hour, and the storage per link-hour bounded.
 */
export const STATS_KEPT_VALUES = 50;

/** The scope as a condition on `link_id`, its parameter taken as parameter 1. */
export function scopeCondition(scope: StatsScope, p: Placeholder): { sql: string; parameter: string | number } {
  return 'shortCode' in scope
    ? { sql: `link_id IN (SELECT id FROM links WHERE short_code = ${p(1)})`, parameter: scope.shortCode }
    : { sql: `link_id IN (SELECT id FROM links WHERE created_by = ${p(1)})`, parameter: scope.accountUid };
}

/** The visits not yet in the rollups: the tuples. */
const UNFOLDED = 'stats_tuples unfolded';

/** Visits and bots per hour; parameters: scope, from hour, to hour. */
export function seriesSql(scope: StatsScope, p: Placeholder): string {
  const { sql: inScope } = scopeCondition(scope, p);
  return `
    SELECT hour, sum(visits) AS visits, sum(CASE WHEN value = 'bot' THEN visits ELSE 0 END) AS bots FROM (
      SELECT hour, value, visits FROM stats_rollups WHERE ${inScope} AND dim = 0 AND hour >= ${p(2)} AND hour < ${p(3)}
      UNION ALL
      SELECT hour, CASE WHEN bot = 1 THEN 'bot' ELSE 'human' END AS value, visits FROM ${UNFOLDED}
       WHERE ${inScope} AND hour >= ${p(2)} AND hour < ${p(3)}
    ) v GROUP BY hour ORDER BY hour`;
}

/** Visits per dimension and value; parameters: scope, from hour, to hour. */
export function valuesSql(scope: StatsScope, p: Placeholder): string {
  const { sql: inScope } = scopeCondition(scope, p);
  const unfolded = (dimension: number, column: string) =>
    `SELECT ${dimension} AS dim, ${column} AS value, visits FROM ${UNFOLDED} WHERE ${inScope} AND hour >= ${p(2)} AND hour < ${p(3)}`;
  return `
    SELECT dim AS dimension, value, sum(visits) AS visits FROM (
      SELECT dim, value, visits FROM stats_rollups WHERE ${inScope} AND dim > 0 AND hour >= ${p(2)} AND hour < ${p(3)}
      UNION ALL ${unfolded(1, 'referrer')}
      UNION ALL ${unfolded(2, 'country')}
      UNION ALL ${unfolded(3, 'browser')}
      UNION ALL ${unfolded(4, 'os')}
      UNION ALL ${unfolded(5, 'device')}
    ) v GROUP BY dim, value`;
}

/**
 * The named values of one link and hour beyond the kept ones, per dimension; parameters: link,
 * hour. Ties go to the alphabetically first, so every engine drops the same ones.
 */
export function excessValuesSql(p: Placeholder): string {
  return `
    SELECT dim, value, visits FROM (
      SELECT dim, value, visits, row_number() OVER (PARTITION BY dim ORDER BY visits DESC, value) AS position
        FROM stats_rollups WHERE link_id = ${p(1)} AND hour = ${p(2)} AND value <> '${OTHER}'
    ) ranked WHERE position > ${STATS_KEPT_VALUES}`;
}

/** Folds the hourly rows before hour `p(1)` into their days (a day's first hour). Run with DELETE_FOLDED_HOURS. */
export function foldHoursIntoDaysSql(p: Placeholder): string {
  return `
    INSERT INTO stats_rollups (link_id, hour, dim, value, visits)
    SELECT link_id, hour - hour % 24, dim, value, sum(visits) FROM stats_rollups
     WHERE hour < ${p(1)} AND hour % 24 <> 0
     GROUP BY link_id, hour - hour % 24, dim, value
    ON CONFLICT (link_id, hour, dim, value) DO UPDATE SET visits = stats_rollups.visits + excluded.visits`;
}

export function deleteFoldedHoursSql(p: Placeholder): string {
  return `DELETE FROM stats_rollups WHERE hour < ${p(1)} AND hour % 24 <> 0`;
}

/** The statistics of links that no longer exist. */
export const DELETE_ORPHAN_ROLLUPS = 'DELETE FROM stats_rollups WHERE NOT EXISTS (SELECT 1 FROM links WHERE links.id = stats_rollups.link_id)';

/** The visitor classes of a visit, in the order of the tuples' key after hour and link. */
const CLASSES = 'bot, referrer, country, browser, os, device';

/**
 * SQLite: adds one tally (a batch's visits of one link, hour and classes) to the tuples, in
 * the count transaction; parameters hour, link id, bot (0/1), referrer, country, browser, os,
 * device, visits.
 */
export const ADD_TUPLE_SQL = `INSERT INTO stats_tuples (hour, link_id, ${CLASSES}, visits) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (hour, link_id, ${CLASSES}) DO UPDATE SET visits = stats_tuples.visits + excluded.visits`;

/**
 * The tuples of one chunk of the second stage: hours before p(1) (over), and up to the
 * (hour, link) pair p(2), p(3) in key order, so that a link-hour is never split; callers pass
 * a pair before p(1). The rows before a chunk are gone, so the pair must bound the index
 * range, or every chunk reads all the tuples left in the hours that are over (quadratic in an
 * hour's tuples: 500 visitor classes over 10,000 links made the hour's fold cost 70 µs per
 * visit). Each engine bounds it with another form: SQLite with the row value (`+` keeps it from
 * bounding by the hour alone); PostgreSQL 15 stops a scan on a row comparison's first column
 * only, so with two ranges, the earlier hours and the pair's hour up to its link.
 */
function tupleChunk(p: Placeholder, engine: 'sqlite' | 'postgres', alias = ''): string {
  const [hour, linkId] = [`${alias}hour`, `${alias}link_id`];
  return engine === 'sqlite'
    ? `(${hour}, ${linkId}) <= (${p(2)}, ${p(3)}) AND +${hour} < ${p(1)}`
    : `(${hour} < ${p(2)} OR (${hour} = ${p(2)} AND ${linkId} <= ${p(3)})) AND +${hour} < ${p(1)}`;
}

/**
 * Where a chunk of the second stage ends: the (hour, link) pair of the `size`th tuple of the
 * hours before p(1); none when fewer are left (then the chunk takes them all).
 */
export function tupleChunkEndSql(p: Placeholder, size: number): string {
  return `SELECT hour, link_id AS "linkId" FROM stats_tuples WHERE hour < ${p(1)} ORDER BY hour, link_id LIMIT 1 OFFSET ${size - 1}`;
}

/**
 * The second stage: a chunk of tuples (tupleChunk) added to the rollups, one row per link,
 * hour, dimension and value, summed, in key order. SQLite's upsert needs the SELECT's WHERE
 * to parse unambiguously.
 */
export function tuplesToRollupsSql(p: Placeholder, engine: 'sqlite' | 'postgres'): string {
  return `
  WITH dims(dim) AS (VALUES (0), (1), (2), (3), (4), (5))
  INSERT INTO stats_rollups (link_id, hour, dim, value, visits)
  SELECT t.link_id, t.hour, d.dim,
         CASE d.dim WHEN 0 THEN CASE WHEN t.bot = 1 THEN 'bot' ELSE 'human' END
                    WHEN 1 THEN t.referrer WHEN 2 THEN t.country WHEN 3 THEN t.browser WHEN 4 THEN t.os ELSE t.device END,
         sum(t.visits)
    FROM stats_tuples t CROSS JOIN dims d
   WHERE ${tupleChunk(p, engine, 't.')}
   GROUP BY 1, 2, 3, 4
   ORDER BY 1, 2, 3, 4
  ON CONFLICT (link_id, hour, dim, value) DO UPDATE SET visits = stats_rollups.visits + excluded.visits`;
}

/** The distinct link-hours of a chunk of tuples (tupleChunk), for the bound on named values. */
export function tupleChunkLinkHoursSql(p: Placeholder, engine: 'sqlite' | 'postgres'): string {
  return `SELECT DISTINCT link_id AS "linkId", hour FROM stats_tuples WHERE ${tupleChunk(p, engine)}`;
}

/** Removes a chunk of tuples (tupleChunk) once it is in the rollups. */
export function deleteTupleChunkSql(p: Placeholder, engine: 'sqlite' | 'postgres'): string {
  return `DELETE FROM stats_tuples WHERE ${tupleChunk(p, engine)}`;
}

/**
 * Tuples moved into the rollups per fold: bounded, so that one fold never holds the write
 * lock (and on SQLite the event loop: six upserts per tuple) for long. PostgreSQL does the
 * work in the server, so it takes more at once.
 */
export const FOLD_BATCH = { sqlite: 500, postgres: 5000 } as const;

/** Rows of one link and hour: more than the kept values can only be too many in some dimension past this. */
export const ROLLUP_ROWS_SQL = 'SELECT count(*) AS n FROM stats_rollups WHERE link_id = ? AND hour = ?';

/**
 * The journal left behind for a rolling upgrade (ADR 24, docs/deployment.md): instances of the
 * release before "visits without a journal" still append their visits to `stats_journal` while
 * they run beside this one, so the table is kept (expand, then contract: a later release drops
 * it) and every fold moves what they wrote where the count transaction now writes it: the
 * watched links' visits to `webhook_visits` (with the shortcode, the time their batch recorded),
 * all of them to `stats_tuples`, in one statement per engine on PostgreSQL (the journal's
 * DELETE … RETURNING is the source, so an old instance's fold cannot move the same rows) and
 * in the fold's write transaction on SQLite. An empty journal costs a probe of an empty table.
 */
export function journalLeftoversSql(engine: 'sqlite' | 'postgres'): readonly string[] {
  const now = engine === 'sqlite' ? "strftime('%Y-%m-%dT%H:%M:%S', 'now')" : `to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')`;
  const hooked = (source: string) => `INSERT INTO webhook_visits (webhook_id, short_code, time, ${CLASSES}, visits)
    SELECT w.id, l.short_code, substr(coalesce(j.time, ${now}), 1, 19) || '.000Z', j.bot, j.referrer, j.country, j.browser, j.os, j.device, j.visits
      FROM ${source} j JOIN links l ON l.id = j.link_id JOIN webhooks w ON w.account_uid = l.created_by AND w.visited = 1`;
  const added = (source: string) => `INSERT INTO stats_tuples (hour, link_id, ${CLASSES}, visits)
    SELECT hour, link_id, ${CLASSES}, sum(visits) FROM ${source} j WHERE true GROUP BY hour, link_id, ${CLASSES}
    ON CONFLICT (hour, link_id, ${CLASSES}) DO UPDATE SET visits = stats_tuples.visits + excluded.visits`;
  if (engine === 'sqlite') return [hooked('stats_journal'), added('stats_journal'), 'DELETE FROM stats_journal'];
  return [`WITH moved AS (DELETE FROM stats_journal RETURNING link_id, hour, ${CLASSES}, visits, time),
    hooked AS (${hooked('moved')}), added AS (${added('moved')})
    SELECT count(*)::int AS moved FROM moved`];
}
