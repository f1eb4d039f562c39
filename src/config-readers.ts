/**
 * Small typed readers for environment variables, used by the table in src/config.ts. Each
 * turns one raw (trimmed, non-empty) value into a typed value or a Refusal naming what is
 * wrong; none reads the environment itself, so they stay pure and testable.
 */
import { isIP } from 'node:net';

/** Why a value was refused: one or more problems, each a sentence ending in the quoted value. */
export class Refusal {
  readonly problems: readonly string[];
  constructor(...problems: string[]) {
    this.problems = problems;
  }
}

/** Reads one raw value; `name` is the variable's name, for the problem text. */
export type Reader<T> = (raw: string, name: string) => T | Refusal;

/** Quotes a raw value for a problem message, escaping line breaks so the message stays one line. */
export function quote(value: string): string {
  return JSON.stringify(value).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

const refuse = (name: string, rule: string, raw: string) => new Refusal(`${name} must be ${rule}, got ${quote(raw)}`);

/** A whole number in [min, max], digits only (no sign, exponent or fraction). */
export function parseInteger(raw: string, min: number, max: number): number | undefined {
  if (!/^\d+$/.test(raw)) return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) && value >= min && value <= max ? value : undefined;
}

/** Any text, kept as given. */
export const text = (): Reader<string> => (raw) => raw;

/** A whole number from `min` to `max`; `rule` replaces the default wording of the problem. */
export const int = (min: number, max: number, rule = `an integer from ${min} to ${max}`): Reader<number> =>
  (raw, name) => parseInteger(raw, min, max) ?? refuse(name, rule, raw);

const FLAG_WORDS: Readonly<Record<string, boolean>> = { on: true, true: true, yes: true, 1: true, off: false, false: false, no: false, 0: false };

/** The one vocabulary of every boolean: on/off, true/false, yes/no, 1/0, in any case. */
export const flag = (): Reader<boolean> => (raw, name) =>
  FLAG_WORDS[raw.toLowerCase()] ?? refuse(name, '"on" or "off" (also true/false, yes/no, 1/0)', raw);

/** The word for a boolean in the shared vocabulary, or undefined for anything else. */
export const flagWord = (raw: string): boolean | undefined => FLAG_WORDS[raw.toLowerCase()];

/** One of a fixed list of words, compared in lower case. */
export function oneOf<const T extends string>(values: readonly T[]): Reader<T> {
  const rule = values.length === 2 ? `"${values[0]}" or "${values[1]}"` : `one of ${values.join(', ')}`;
  return (raw, name) => values.find((value) => value === raw.toLowerCase()) ?? refuse(name, rule, raw.toLowerCase());
}

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Milliseconds from `1500ms`, `5s`, `1m` or `0`, from `minMs` to `maxMs`. A bare number other
 * than 0 is refused: `5` could mean either unit.
 */
export function duration(minMs: number, maxMs: number, rule: string): Reader<number> {
  return (raw, name) => {
    const match = /^(\d+)\s*(ms|s|m)?$/i.exec(raw);
    if (!match || (match[2] === undefined && Number(match[1]) !== 0)) return refuse(name, rule, raw);
    const unit = (match[2] ?? 'ms').toLowerCase();
    const value = Number(match[1]) * (unit === 'ms' ? 1 : UNIT_MS[unit]!);
    return Number.isSafeInteger(value) && value >= minMs && value <= maxMs ? value : refuse(name, rule, raw);
  };
}

/** A rate limit: at most `limit` events per `windowMs`. */
export interface RateLimitPolicy {
  readonly limit: number;
  readonly windowMs: number;
}

/** `count/window` such as `100/1m`, `5/30s`, `20/1h` (a window of 1 s at least). */
export const rate = (): Reader<RateLimitPolicy> => (raw, name) => {
  const match = /^(\d+)\s*\/\s*(\d*)\s*([smh])$/i.exec(raw);
  const limit = Number(match?.[1]);
  const windowMs = match ? Number(match[2] || '1') * UNIT_MS[match[3]!.toLowerCase()]! : 0;
  return match && limit >= 1 && windowMs >= 1000 && Number.isSafeInteger(limit)
    ? { limit, windowMs }
    : new Refusal(`${name} must look like 100/1m (a count per s, m or h), got ${quote(raw)}`);
};

/**
 * A secret of printable ASCII without spaces, `min` to `max` characters. The problem never
 * repeats the value, only its length.
 */
export const secret = (min: number, max: number, hint = ''): Reader<string> => (raw, name) =>
  new RegExp(`^[\\x21-\\x7e]{${min},${max}}$`).test(raw)
    ? raw
    : new Refusal(`${name} must be ${min} to ${max} printable ASCII characters without spaces (got ${raw.length} characters)${hint}`);

/**
 * A list split on `separator`, each item read by `item` (which returns the entry or a problem
 * about it); every bad item is its own problem.
 */
export function list<T>(item: (entry: string, name: string) => T | Refusal, separator: RegExp = /\s*,\s*/): Reader<T[]> {
  return (raw, name) => {
    const values: T[] = [];
    const problems: string[] = [];
    for (const entry of raw.split(separator)) {
      if (entry === '') continue;
      const value = item(entry, name);
      if (value instanceof Refusal) problems.push(...value.problems);
      else values.push(value);
    }
    return problems.length > 0 ? new Refusal(...problems) : values;
  };
}

/** True for an address or CIDR proxy-addr accepts (it would throw at start otherwise). */
export function isProxyEntry(entry: string, names: readonly string[]): boolean {
  if (names.includes(entry)) return true;
  const [host = '', bits, ...rest] = entry.split('/');
  const family = isIP(host);
  if (family === 0 || rest.length > 0) return false;
  return bits === undefined || parseInteger(bits, 0, family === 4 ? 32 : 128) !== undefined;
}
