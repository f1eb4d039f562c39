// The list's CSV export as text: one row per link with its details. Pure, so it runs in
// Node too (test/web/dashboard-helpers.test.ts).

/** @import { LinkDetails } from '../http/schemas.ts' */

/**
 * One CSV field: quoted when it holds a comma, a quote or a line break; a leading = + - @
 * is defused so that a spreadsheet shows it as text rather than running it.
 * @param {string | number | null | undefined} value
 */
export function csvField(value) {
  let text = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The links as CSV, one row each, with a header.
 * @param {LinkDetails[]} list
 * @param {(link: LinkDetails) => string} urlOf its short URL (on its domain)
 * @param {(link: LinkDetails) => string} stateText
 */
export function linksCsv(list, urlOf, stateText) {
  const header = 'short_url,short_code,target,title,tags,created,expires,max_visits,visits,state';
  const rows = list.map((link) => [
    urlOf(link), link.ShortCode, link.PointsTo, link.Title ?? '', (link.Tags ?? []).join(' '),
    link.DateCreated ?? '', link.ExpiresAt ?? '', link.MaxVisits ?? '', link.Accesses, stateText(link),
  ].map(csvField).join(','));
  return `${[header, ...rows].join('\r\n')}\r\n`;
}
