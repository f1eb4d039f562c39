/**
 * A list of links as CSV: the form `GET /v1/links?format=csv` answers an owner and the form
 * `shortlink export --format csv` writes for an operator, so one file reads the same
 * whichever made it, and `shortlink import` takes either back whole.
 *
 * Columns in the LinkDetails order (the ones §8 added last, so a reader of the first nine
 * keeps working). Tags is one field of comma-separated tags (the API's own form; a tag holds
 * no comma); an absent Title, ExpiresAt or MaxVisits is an empty field, and so is the Domain
 * of a link on the default domain. ForwardQuery and Protected are `true` or `false`; Rules
 * is the JSON LinkDetails shows (`[{"If": {…}, "To": "…"}]`), empty when there are none. A
 * password never leaves the database: Protected only says there is one.
 * Fields are quoted as RFC 4180 says when they hold a comma, a quote or a line break.
 */
import { rulesData } from '../events/payloads.ts';
import { codeOf, domainOf } from '../links/link-key.ts';
import type { LinkDetailsRecord } from '../store/store.ts';

export const LINK_CSV_COLUMNS = [
  'ShortCode', 'PointsTo', 'CreatedBy', 'Accesses', 'DateCreated', 'Title', 'Tags', 'ExpiresAt', 'MaxVisits',
  'Domain', 'ForwardQuery', 'Protected', 'Rules',
] as const;

export const LINK_CSV_HEADER = `${LINK_CSV_COLUMNS.join(',')}\n`;

function field(value: string | number): string {
  const text = String(value);
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One link's record, with its line break. */
export function linkCsvRecord(link: LinkDetailsRecord): string {
  return `${[
    codeOf(link.shortCode), link.pointsTo, link.createdBy, link.accesses, link.dateCreated,
    link.title ?? '', link.tags.join(','), link.expiresAt ?? '', link.maxVisits ?? '',
    domainOf(link.shortCode) ?? '', String(link.forwardQuery), String(link.protected),
    link.rules === null ? '' : JSON.stringify(rulesData(link.rules)),
  ].map(field).join(',')}\n`;
}
