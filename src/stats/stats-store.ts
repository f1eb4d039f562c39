/**
 * What the statistics need from storage (the statistics port, ADR 20). Each engine under
 * src/store/ implements it; the domain never imports an engine.
 */

/** Whose statistics: one link, or every link an account holds. */
export type StatsScope = { readonly shortCode: string } | { readonly accountUid: number };

/** Statistics over a range of hours, summed over the scope's links. */
export interface StatsRows {
  /** Visits per hour that has any, in hour order (a folded day sits at its first hour). */
  readonly series: readonly { readonly hour: number; readonly visits: number; readonly bots: number }[];
  /** Visits per value of each dimension but the first (`Dimension`), in no order. */
  readonly values: readonly { readonly dimension: number; readonly value: string; readonly visits: number }[];
}

export interface FoldOptions {
  /**
   * Move the tuples of the hours before this one (hours since the epoch) into the rollups
   * (ADR 20); default: the hour now, i.e. every hour that is over.
   */
  readonly hoursBefore?: number;
  /**
   * Fold hourly rows before this hour (hours since the epoch) into one row per day (at the
   * day's first hour), and forget the statistics of deleted links.
   */
  readonly daysBeforeHour?: number;
}

/** The statistics calls of a store. */
export interface StatsStore {
  /**
   * Statistics of hours `fromHour` (inclusive) to `toHour` (exclusive): everything counted
   * so far, folded into the rollups or still in the tuples.
   */
  readStats(scope: StatsScope, fromHour: number, toHour: number): Promise<StatsRows>;

  /**
   * Moves the recorded visits of hours that are over from the tuples into the per-hour
   * rollups (top values per link, hour and dimension kept by name, the rest summed as
   * `(other)`), and with `daysBeforeHour` folds old hours into days. Answers how many tuples
   * it moved.
   * Safe to run from several processes at once.
   */
  foldStats(options?: FoldOptions): Promise<number>;

}
