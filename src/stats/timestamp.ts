/**
 * RFC 3339 timestamps as parameters (CONTRACT §7): a date and a time with `Z` or a numeric
 * offset. One without an offset, or a bare date, is refused: its instant would depend on a
 * time zone nobody named.
 */
import { invalid } from '../errors.ts';

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** The instant `raw` names; a 400 naming `parameter` when it is not an RFC 3339 timestamp. */
export function parseTimestamp(raw: string, parameter: string): Date {
  // An unescaped "+" in a query string arrives as a space: "…T10:00:00 02:00" meant +02:00.
  const text = /^\S+ \d{2}:\d{2}$/.test(raw) ? raw.replace(' ', '+') : raw;
  const match = RFC3339.exec(text);
  if (match === null) throw invalid(`the parameter "${parameter}" must be an RFC 3339 timestamp with an offset, such as 2026-11-01T00:00:00Z`);
  const [, year, month, day, hour, minute, second, fraction = '', zone, sign, offsetHours, offsetMinutes] = match;
  const fields = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  const [y, mo, d, h, mi, s] = fields;
  const local = Date.UTC(y, mo - 1, d, h, mi, s);
  const check = new Date(local);
  // Date.UTC rolls 2026-02-30 over to March: such a date does not exist. (A leap second, 60, is refused too.)
  if (y < 1 || check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) {
    throw invalid(`the parameter "${parameter}" is not a valid date and time`);
  }
  let offset = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const oh = Number(offsetHours);
    const om = Number(offsetMinutes);
    if (oh > 23 || om > 59) throw invalid(`the parameter "${parameter}" has an invalid offset`);
    offset = (sign === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  const ms = local - offset + Math.floor(Number(`0${fraction || '.0'}`) * 1000);
  return new Date(ms);
}
