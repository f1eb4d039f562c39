/**
 * Reading statistics (CONTRACT §7.4): the parameters' rules, the owner check, and the answer
 * built from the store's sums: a zero-filled series per interval (UTC) and top lists of at
 * most 50 values per dimension, the rest summed as `(other)`.
 */
import { assertActive } from '../accounts/account-service.ts';
import { DomainError, ErrorCode, invalid } from '../errors.ts';
import type { AccountRecord } from '../accounts/account-store.ts';
import type { LinkStore } from '../links/link-store.ts';
import type { StatsRows, StatsStore } from './stats-store.ts';
import { couldBeShortcode } from '../links/shortcode.ts';
import { parseTimestamp } from './timestamp.ts';
import { Dimension, HOUR_MS, OTHER } from './visit.ts';
import { codeOf } from '../links/link-key.ts';

export const Interval = { Hour: 'hour', Day: 'day', Month: 'month' } as const;
export type Interval = (typeof Interval)[keyof typeof Interval];

/** The parameters as the request gave them (undefined when absent or empty). */
export interface StatsParameters {
  readonly short: string | undefined;
  readonly from: string | undefined;
  readonly to: string | undefined;
  readonly interval: string | undefined;
}

export interface NamedCount {
  readonly name: string;
  readonly visits: number;
}

export interface SeriesPoint {
  /** The interval's start. */
  readonly time: Date;
  readonly visits: number;
  readonly bots: number;
}

export interface Statistics {
  /** Null for the whole account. */
  readonly shortCode: string | null;
  readonly from: Date;
  readonly to: Date;
  readonly interval: Interval;
  readonly visits: number;
  readonly humans: number;
  readonly bots: number;
  readonly series: readonly SeriesPoint[];
  readonly referrers: readonly NamedCount[];
  readonly countries: readonly NamedCount[];
  readonly browsers: readonly NamedCount[];
  readonly operatingSystems: readonly NamedCount[];
  readonly devices: readonly NamedCount[];
}

export interface StatsService {
  /** The statistics of one of the account's links, or of all of them. */
  get(account: AccountRecord, parameters: StatsParameters): Promise<Statistics>;
}

/** Named values per list; the rest are summed as `(other)`. */
export const TOP_VALUES = 50;
/** The default period: the last 30 days. */
const DEFAULT_DAYS = 30;
/** More series entries than this is a mistake (10,000 hours is 13 months). */
export const MAX_SERIES = 10_000;

export function createStatsService({ store, clock }: { store: StatsStore & Pick<LinkStore, 'findLink'>; clock: () => Date }): StatsService {
  return {
    async get(account, parameters) {
      // 1. Parameters (400), before the link is looked up (404) or its owner checked (403).
      const interval = parseInterval(parameters.interval);
      const to = parameters.to === undefined ? clock() : parseTimestamp(parameters.to, 'to');
      const from = parameters.from === undefined ? new Date(to.getTime() - DEFAULT_DAYS * 24 * HOUR_MS) : parseTimestamp(parameters.from, 'from');
      if (from.getTime() >= to.getTime()) throw invalid('the parameter "from" must be before "to"');
      const starts = intervalStarts(from, to, interval);
      if (starts.length > MAX_SERIES) {
        throw invalid(`the period holds more than ${MAX_SERIES} ${interval}s; choose a shorter one or a longer interval`);
      }
      const short = parameters.short;
      if (short !== undefined) {
        const link = couldBeShortcode(codeOf(short)) ? await store.findLink(short) : undefined;
        if (link === undefined) throw new DomainError(ErrorCode.LinkNotFound, 'no link has this shortcode');
        if (link.createdBy !== account.uid) throw new DomainError(ErrorCode.NotOwner, 'the link belongs to another account');
      }
      // A disabled account reads nothing (CONTRACT §7.3), refused last as §7 orders.
      assertActive(account);
      // 2. Every hour the period touches.
      const fromHour = Math.floor(from.getTime() / HOUR_MS);
      const toHour = Math.ceil(to.getTime() / HOUR_MS);
      const rows = await store.readStats(short === undefined ? { accountUid: account.uid } : { shortCode: short }, fromHour, toHour);
      return present(rows, { shortCode: short ?? null, from, to, interval, starts });
    },
  };
}

function parseInterval(raw: string | undefined): Interval {
  if (raw === undefined) return Interval.Day;
  const interval = Object.values(Interval).find((name) => name === raw);
  if (interval === undefined) throw invalid('the parameter "interval" must be hour, day or month');
  return interval;
}

/** Start of the UTC interval holding `ms`. */
export function intervalStart(ms: number, interval: Interval): number {
  const date = new Date(ms);
  if (interval === Interval.Hour) return Math.floor(ms / HOUR_MS) * HOUR_MS;
  if (interval === Interval.Day) return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

function nextStart(ms: number, interval: Interval): number {
  if (interval === Interval.Hour) return ms + HOUR_MS;
  const date = new Date(ms);
  if (interval === Interval.Day) return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

/** The starts of every interval the period [from, to) touches, in order (stops past MAX_SERIES). */
export function intervalStarts(from: Date, to: Date, interval: Interval): number[] {
  const starts: number[] = [];
  for (let start = intervalStart(from.getTime(), interval); start < to.getTime(); start = nextStart(start, interval)) {
    starts.push(start);
    if (starts.length > MAX_SERIES) break;
  }
  return starts;
}

/** Builds the answer: the zero-filled series and the top lists. */
export function present(
  rows: StatsRows,
  { shortCode, from, to, interval, starts }: { shortCode: string | null; from: Date; to: Date; interval: Interval; starts: readonly number[] },
): Statistics {
  const index = new Map(starts.map((start, i) => [start, i]));
  const series = starts.map((start) => ({ time: new Date(start), visits: 0, bots: 0 }));
  let visits = 0;
  let bots = 0;
  for (const row of rows.series) {
    visits += row.visits;
    bots += row.bots;
    const i = index.get(intervalStart(row.hour * HOUR_MS, interval));
    // A folded day that starts before `from` lands in the first interval.
    const point = series[i ?? (row.hour * HOUR_MS < starts[0]! ? 0 : series.length - 1)];
    if (point === undefined) continue;
    point.visits += row.visits;
    point.bots += row.bots;
  }
  const lists = new Map<number, { name: string; visits: number }[]>();
  for (const { dimension, value, visits: count } of rows.values) {
    let list = lists.get(dimension);
    if (list === undefined) lists.set(dimension, (list = []));
    list.push({ name: value, visits: count });
  }
  const top = (dimension: number) => topValues(lists.get(dimension) ?? []);
  return {
    shortCode,
    from,
    to,
    interval,
    visits,
    humans: visits - bots,
    bots,
    series,
    referrers: top(Dimension.Referrer),
    countries: top(Dimension.Country),
    browsers: top(Dimension.Browser),
    operatingSystems: top(Dimension.OperatingSystem),
    devices: top(Dimension.Device),
  };
}

/** At most TOP_VALUES named values, most visits first (ties by name), then the rest as `(other)`. */
export function topValues(values: readonly NamedCount[]): NamedCount[] {
  let other = 0;
  const named: NamedCount[] = [];
  for (const value of values) {
    if (value.name === OTHER) other += value.visits;
    else if (value.visits > 0) named.push(value);
  }
  named.sort((a, b) => b.visits - a.visits || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const value of named.slice(TOP_VALUES)) other += value.visits;
  const kept = named.slice(0, TOP_VALUES);
  return other > 0 ? [...kept, { name: OTHER, visits: other }] : kept;
}
