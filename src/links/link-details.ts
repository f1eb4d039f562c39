/**
 * The rules for a link's details (CONTRACT §7.1) and for the list's filters, applied to the
 * raw parameter text; each returns the stored form or throws an invalid-parameter error.
 */
import { invalid } from '../errors.ts';
import type { LinkOrder, LinkPosition } from './link-store.ts';

export const TITLE_MAX = 200;
export const TAGS_MAX = 10;
export const TAG_MAX = 50;
export const TAG_PATTERN = '^[A-Za-z0-9._-]+$';
export const MAX_VISITS_MAX = 2_147_483_647;
export const LIST_LIMIT_MAX = 1000;
export const QUERY_MAX = 2000;

const TAG_SHAPE = new RegExp(TAG_PATTERN);
// C0 and C1 controls, DEL, and the line and paragraph separators.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;
// Bidirectional formatting: embeddings and overrides (U+202A-U+202E), isolates
// (U+2066-U+2069) and the marks (U+200E, U+200F, U+061C). An override makes
// "gnp.exe" preceded by U+202E display as "exe.png"; a title has no use for them.
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/u;
// RFC 3339 date-time (section 5.6): a T (either case), seconds, optional fraction, and an
// offset that is Z or numeric. No offset or a bare date is refused rather than guessed.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/;

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/**
 * A title: 0-200 code points of well-formed text, no control characters and no bidirectional
 * formatting; empty means none.
 */
export function parseTitle(value: string): string | null {
  // A JSON body may carry a lone surrogate (`"\ud800"`), which no encoding can store: it
  // would come back as U+FFFD.
  if (!value.isWellFormed()) throw invalid('title must be well-formed Unicode text');
  if (CONTROL.test(value)) throw invalid('title must not contain control characters');
  if (BIDI_CONTROL.test(value)) throw invalid('title must not contain bidirectional controls (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C)');
  if (codePoints(value) > TITLE_MAX) throw invalid(`title must be at most ${TITLE_MAX} characters long`);
  return value === '' ? null : value;
}

/**
 * Tags, comma-separated (spaces around each are ignored): at most 10, each 1-50 letters,
 * digits, '-', '_' or '.'; answered lower case, duplicates dropped. Empty means none.
 */
export function parseTags(value: string, name = 'tags'): string[] {
  if (value.trim() === '') return [];
  const tags: string[] = [];
  for (const raw of value.split(',')) {
    const tag = raw.trim();
    if (tag === '') throw invalid(`${name} must not contain an empty tag`);
    if (tag.length > TAG_MAX || !TAG_SHAPE.test(tag)) {
      throw invalid(`each tag must be 1 to ${TAG_MAX} characters from A-Z a-z 0-9 - _ .`);
    }
    const lower = tag.toLowerCase();
    if (!tags.includes(lower)) tags.push(lower);
  }
  if (tags.length > TAGS_MAX) throw invalid(`${name} may hold at most ${TAGS_MAX} tags`);
  return tags;
}

/**
 * An RFC 3339 time with an offset, answered in `toISOString()` form (UTC, milliseconds;
 * finer fractions are cut, not rounded, so a time never moves later).
 */
export function parseTimestamp(value: string, name: string): Date {
  const match = DATE_TIME.exec(value);
  if (match === null) {
    throw invalid(`${name} must be an RFC 3339 time with an offset, like 2030-01-31T12:00:00Z`);
  }
  const [, year, month, day, hour, minute, second, fraction = '', , sign, offsetHours = '0', offsetMinutes = '0'] = match;
  const fields = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  const [y, mo, d, h, mi, s] = fields;
  const millis = fraction === '' ? 0 : Number(fraction.slice(1, 4).padEnd(3, '0'));
  const local = Date.UTC(y, mo - 1, d, h, mi, s, millis);
  const check = new Date(local);
  const offHours = Number(offsetHours);
  const offMinutes = Number(offsetMinutes);
  if (
    check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d ||
    h > 23 || mi > 59 || s > 59 || offHours > 23 || offMinutes > 59 || y < 1
  ) {
    throw invalid(`${name} is not a valid date and time`);
  }
  const offset = (sign === '-' ? -1 : 1) * (offHours * 60 + offMinutes) * 60_000;
  return new Date(local - (sign === undefined ? 0 : offset));
}

/** `expires`: a time in the future (after `now`), stored in `toISOString()` form. */
export function parseExpires(value: string, now: Date): string {
  const time = parseTimestamp(value, 'expires');
  if (time.getTime() <= now.getTime()) throw invalid('expires must be in the future');
  if (time.getUTCFullYear() > 9999) throw invalid('expires must be before the year 10000');
  return time.toISOString();
}

function parsePositiveInteger(value: string, name: string, max: number): number {
  if (!/^[0-9]{1,10}$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw invalid(`${name} must be a whole number from 1 to ${max.toLocaleString('en-US')}`);
  }
  return Number(value);
}

/** `max_visits`: 1 to 2,147,483,647. */
export function parseMaxVisits(value: string): number {
  return parsePositiveInteger(value, 'max_visits', MAX_VISITS_MAX);
}

/** The list's `limit`: 1 to 1000. */
export function parseLimit(value: string): number {
  return parsePositiveInteger(value, 'limit', LIST_LIMIT_MAX);
}

/** The list's `q`, lower-cased for a case-insensitive match. */
export function parseQuery(value: string): string {
  if (CONTROL.test(value)) throw invalid('q must not contain control characters');
  if (codePoints(value) > QUERY_MAX) throw invalid(`q must be at most ${QUERY_MAX} characters long`);
  return foldCase(value);
}

/**
 * How search ignores case, the same on every engine: A–Z only. SQLite's LIKE and lower() fold
 * ASCII letters only, and PostgreSQL's lower() follows the database's locale (ASCII only under
 * C, every script under most others), so both engines fold as `lower(… COLLATE "C")` does and
 * the query is folded the same way here: `CAFÉ` finds `café`'s `caf` but not its `é`.
 */
export function foldCase(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

export const LINK_ORDERS: readonly LinkOrder[] = ['oldest', 'newest', 'visits'];

/** `order` of a list: oldest (the default), newest or visits. */
export function parseOrder(value: string): LinkOrder {
  const order = LINK_ORDERS.find((known) => known === value);
  if (order === undefined) throw invalid(`order must be one of ${LINK_ORDERS.join(', ')}`);
  return order;
}

/** A cursor's order letter: `c` (oldest, the form cursors had before orders), `n`, `v`. */
const ORDER_LETTER: Readonly<Record<LinkOrder, string>> = { oldest: 'c', newest: 'n', visits: 'v' };

/**
 * The list cursor: opaque to clients (the order's letter and the position, in base64url), so
 * its form can change without breaking them. A cursor holds its order (CONTRACT §7.1): the
 * last link's row id, and for `visits` the count it had, so that the next page starts right
 * after it whatever was created meanwhile.
 */
export function encodeCursor(order: LinkOrder, position: LinkPosition): string {
  const count = order === 'visits' ? `.${position.accesses ?? 0}` : '';
  return Buffer.from(`${ORDER_LETTER[order]}${position.id}${count}`).toString('base64url');
}

export function decodeCursor(value: string): { order: LinkOrder; after: LinkPosition } {
  const text = /^[A-Za-z0-9_-]{1,48}$/.test(value) ? Buffer.from(value, 'base64url').toString('latin1') : '';
  const match = /^([cnv])([0-9]{1,16})(?:\.([0-9]{1,16}))?$/.exec(text);
  const order = LINK_ORDERS.find((known) => ORDER_LETTER[known] === match?.[1]);
  const id = Number(match?.[2]);
  const accesses = match?.[3] === undefined ? undefined : Number(match[3]);
  if (match === null || order === undefined || !Number.isSafeInteger(id) || (order === 'visits') !== (accesses !== undefined)
    || (accesses !== undefined && !Number.isSafeInteger(accesses))) {
    throw invalid('cursor is not valid');
  }
  const after = accesses === undefined ? { id } : { id, accesses };
  if (encodeCursor(order, after) !== value) throw invalid('cursor is not valid');
  return { order, after };
}
