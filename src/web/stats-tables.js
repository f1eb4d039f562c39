// The statistics' numbers as tables: the series (one row per interval, and the totals), the
// top lists (value, visits and a share bar) and the account's top links, each opening its own
// statistics. Values from the API reach the page as text only.
import { byId, query } from './dom.js';
import { count, intervalText, svg } from './stats-chart.js';

/** @import { LinkDetails, Statistics } from '../http/schemas.ts' */

/**
 * A value as the lists show it: a country's name beside its code, the others as given.
 * @param {'referrers' | 'countries' | 'browsers' | 'os' | 'devices'} list
 * @param {string} name
 */
export function valueText(list, name) {
  if (list !== 'countries' || name === '(other)') return name;
  if (name === 'ZZ') return 'Unknown (ZZ)';
  try {
    regions ??= new Intl.DisplayNames(undefined, { type: 'region' });
    const region = regions.of(name);
    return region === undefined || region === name ? name : `${region} (${name})`;
  } catch {
    return name;
  }
}

/** Country names in the browser's language, made on first use. @type {Intl.DisplayNames | undefined} */
let regions;


/** What a list's special values mean, said on hover and to screen readers. */
const SPECIAL = /** @type {Record<string, string>} */ ({
  '(other)': 'every value beyond the 50 with the most visits',
  '(direct)': 'no Referer: typed, bookmarked, or from an app',
});

/**
 * The series as a table: one row per interval, and the totals.
 * @param {Statistics} stats
 */
export function renderTable(stats) {
  const table = byId('stats-table', HTMLTableElement);
  const rows = stats.Series.map((point) => {
    const row = document.createElement('tr');
    const th = document.createElement('th');
    th.scope = 'row';
    const time = document.createElement('time');
    time.dateTime = point.Time;
    time.textContent = intervalText(point.Time, stats.Interval, 'long');
    th.append(time);
    row.append(th);
    for (const n of [point.Visits, point.Visits - point.Bots, point.Bots]) {
      const td = document.createElement('td');
      td.textContent = count(n);
      row.append(td);
    }
    return row;
  });
  query(table, 'tbody', HTMLTableSectionElement).replaceChildren(...rows);
  const totals = table.querySelectorAll('tfoot td');
  [stats.Visits, stats.Humans, stats.Bots].forEach((n, i) => {
    const cell = totals[i];
    if (cell !== undefined) cell.textContent = count(n);
  });
}

/**
 * One top list: value, visits and share of the period's visits (with a bar beside it).
 * @param {'referrers' | 'countries' | 'browsers' | 'os' | 'devices'} list
 * @param {{ Name: string, Visits: number }[]} values
 * @param {number} total
 */
export function renderTop(list, values, total) {
  const table = byId(`stats-${list}`, HTMLTableElement);
  const head = document.createElement('thead');
  const headRow = document.createElement('tr');
  for (const { text, className } of [{ text: 'Value', className: 'name' }, { text: 'Visits', className: 'num' }, { text: 'Share', className: 'share' }]) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.className = className;
    th.textContent = text;
    headRow.append(th);
  }
  head.append(headRow);
  const body = document.createElement('tbody');
  if (values.length === 0) {
    const row = document.createElement('tr');
    const cell = document.createElement('td');
    cell.colSpan = 3;
    cell.className = 'hint';
    cell.textContent = 'No visits in this period.';
    row.append(cell);
    body.append(row);
  }
  for (const { Name, Visits } of values) {
    const row = document.createElement('tr');
    row.dataset.name = Name;
    const name = document.createElement('th');
    name.scope = 'row';
    name.className = 'name wrap-anywhere';
    name.textContent = valueText(list, Name);
    const special = SPECIAL[Name];
    if (special !== undefined) {
      name.title = special;
      const why = document.createElement('span');
      why.className = 'visually-hidden';
      why.textContent = `: ${special}`;
      name.append(why);
    }
    const visits = document.createElement('td');
    visits.className = 'num';
    visits.textContent = count(Visits);
    row.append(name, visits, shareCell(Visits, total));
    body.append(row);
  }
  table.replaceChildren(head, body);
}

/**
 * A share of the total: a bar and the percentage.
 * @param {number} part
 * @param {number} total
 */
function shareCell(part, total) {
  const share = document.createElement('td');
  share.className = 'share';
  const percent = total === 0 ? 0 : (part / total) * 100;
  const bar = svg('svg', { class: 'share-bar', viewBox: '0 0 100 8', preserveAspectRatio: 'none', 'aria-hidden': 'true', focusable: 'false' });
  bar.append(svg('rect', { width: percent.toFixed(2), height: 8 }));
  const text = document.createElement('span');
  text.textContent = `${percent < 1 && percent > 0 ? '<1' : Math.round(percent)}%`;
  const cell = document.createElement('span');
  cell.className = 'share-cell';
  cell.append(bar, text);
  share.append(cell);
  return share;
}



/**
 * The account's most visited links.
 * @param {HTMLTableElement} table
 * @param {LinkDetails[]} top
 */
export function renderTopLinks(table, top) {
  const total = top.reduce((sum, link) => sum + link.Accesses, 0);
  const head = document.createElement('thead');
  const headRow = document.createElement('tr');
  for (const [text, className] of [['Link', 'name'], ['Accesses', 'num'], ['Share', 'share']]) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.className = className ?? '';
    th.textContent = text ?? '';
    headRow.append(th);
  }
  head.append(headRow);
  const tbody = document.createElement('tbody');
  if (top.length === 0) {
    const row = document.createElement('tr');
    const cell = document.createElement('td');
    cell.colSpan = 3;
    cell.className = 'hint';
    cell.textContent = 'No links yet.';
    row.append(cell);
    tbody.append(row);
  }
  for (const link of top) {
    const row = document.createElement('tr');
    row.dataset.name = link.ShortCode;
    const name = document.createElement('th');
    name.scope = 'row';
    name.className = 'name wrap-anywhere';
    // A link off the default domain is named with its host (links-state.js linkKey).
    const key = typeof link.Domain === 'string' && link.Domain !== '' ? `${link.Domain}/${link.ShortCode}` : link.ShortCode;
    const a = document.createElement('a');
    a.href = `#/stats/${encodeURIComponent(key)}`;
    a.textContent = key;
    name.append(a);
    if (link.Title !== null && link.Title !== undefined && link.Title !== '') {
      const title = document.createElement('bdi');
      title.className = 'top-title';
      title.textContent = link.Title;
      name.append(' ', title);
    }
    const visits = document.createElement('td');
    visits.className = 'num';
    visits.textContent = count(link.Accesses);
    row.append(name, visits, shareCell(link.Accesses, total));
    tbody.append(row);
  }
  table.replaceChildren(head, tbody);
}
