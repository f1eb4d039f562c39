/**
 * What one counted resolution tells (CONTRACT §7.4), already reduced to classes: no address
 * and no User-Agent string ever leave the classifier.
 */

/** Device classes, as the contract names them. */
export const DeviceClass = {
  Desktop: 'desktop',
  Mobile: 'mobile',
  Tablet: 'tablet',
  Bot: 'bot',
  Other: 'other',
} as const;
export type DeviceClass = (typeof DeviceClass)[keyof typeof DeviceClass];

/** Referrer host of a visit without a `Referer` header. */
export const DIRECT = '(direct)';
/** Country of an address the database does not place (private, reserved, unknown). */
export const UNKNOWN_COUNTRY = 'ZZ';
/** What a top list calls the sum of the values beyond its bound. */
export const OTHER = '(other)';

/** The classes of a visit, without its time. */
export interface VisitClasses {
  readonly bot: boolean;
  readonly referrer: string;
  readonly country: string;
  readonly browser: string;
  readonly os: string;
  readonly device: DeviceClass;
}

/** One counted resolution: its hour (UTC, hours since the Unix epoch) and its classes. */
export interface Visit extends VisitClasses {
  readonly hour: number;
  /** Equal for visits of the same hour and classes: the group commit tallies by it. */
  readonly key: string;
}

/** The dimensions statistics are kept in, as stored (a small integer per dimension). */
export const Dimension = {
  /** Values `human` and `bot`: the series and the Humans/Bots totals. */
  Kind: 0,
  Referrer: 1,
  Country: 2,
  Browser: 3,
  OperatingSystem: 4,
  Device: 5,
} as const;
export type Dimension = (typeof Dimension)[keyof typeof Dimension];

/** The value a visit has in each dimension, in `Dimension` order. */
export function dimensionValues(visit: VisitClasses): readonly [string, string, string, string, string, string] {
  return [visit.bot ? 'bot' : 'human', visit.referrer, visit.country, visit.browser, visit.os, visit.device];
}

export const HOUR_MS = 3_600_000;

/** Hours since the Unix epoch of an instant (UTC). */
export function hourOf(ms: number): number {
  return Math.floor(ms / HOUR_MS);
}
