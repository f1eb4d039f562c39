// Visit statistics (CONTRACT §7.4) as their own view: the account's (`#/stats`) or one
// link's (`#/stats/<shortcode>`). The totals, the chart (stats-chart.js) with a humans/bots
// switch, the same numbers as a table, the account's top links, a world map of the countries
// (stats-map.js), the top referrers, countries, browsers, operating systems and devices, a
// period picker, and the series as a CSV download. Everything shown comes from refresh(),
// which anything may call again (a live update, the Refresh button).
import { getStats, getStatsCsv, listLinks, messageOf } from './api.js';
import { announce, busy, buttonOf, byId, clearErrors, clearInvalid, query, showError } from './dom.js';
import { chartSummary, count, drawChart, periodText, plural } from './stats-chart.js';
import { linkKey, links, parseLinkKey, shortUrlOf } from './links-state.js';
import { renderMap } from './stats-map.js';
import { renderTable, renderTop, renderTopLinks, valueText } from './stats-tables.js';

export { axisScale, intervalText } from './stats-chart.js';

/** @import { LinkDetails, Statistics } from '../http/schemas.ts' */
/** @import { StatsQuery } from './api.js' */
/** @import { Who } from './stats-chart.js' */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Top links shown in the account's statistics. */
const TOP_LINKS = 10;
/** Links read to find the top ones (all of them, for most accounts). */
const TOP_LINKS_READ = 100;

/** What the view shows. */
const view = {
  /** The link whose statistics are open, null for the account's; undefined when the view is closed. @type {string | null | undefined} */
  subject: /** @type {string | null | undefined} */ (undefined),
  /** The statistics shown, or null before the first answer. @type {Statistics | null} */
  shown: /** @type {Statistics | null} */ (null),
  /** The request of the statistics shown: the CSV download asks for the same. @type {StatsQuery | null} */
  query: /** @type {StatsQuery | null} */ (null),
  /** Counts the requests, so that only the latest answer is shown (an older one may come later). */
  requests: 0,
  /** The last CSV download's object URL, released when the next is made. @type {string | null} */
  csvUrl: /** @type {string | null} */ (null),
  /** The chart's width when last drawn; it is drawn again when its box changes width. */
  drawnWidth: 0,
};

/**
 * The period the picker names, as the API's parameters. The presets are whole UTC intervals,
 * the last one the interval now is in (still running): 24 hours, 7 days, 30 days or 12
 * months of them, so every bar of the chart is one whole hour, day or month. (Ending at the
 * current interval's end rather than now keeps that interval when now is exactly its start.)
 * @param {string} range
 * @param {Date} now
 * @returns {{ from: string, to: string, interval: 'hour' | 'day' | 'month' }}
 */
export function presetPeriod(range, now) {
  const iso = (/** @type {number} */ ms) => new Date(ms).toISOString();
  const hour = Math.floor(now.getTime() / HOUR) * HOUR;
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  if (range === '24h') return { from: iso(hour - 23 * HOUR), to: iso(hour + HOUR), interval: 'hour' };
  if (range === '7d') return { from: iso(today - 6 * DAY), to: iso(today + DAY), interval: 'day' };
  if (range === '12m') {
    const year = now.getUTCFullYear();
    const month = now.getUTCMonth();
    return { from: iso(Date.UTC(year, month - 11, 1)), to: iso(Date.UTC(year, month + 1, 1)), interval: 'month' };
  }
  return { from: iso(today - 29 * DAY), to: iso(today + DAY), interval: 'day' };
}

/**
 * A custom period from two UTC dates (`YYYY-MM-DD`, both days included), or the reason it is
 * none. "Best fit" asks for hours up to 3 days, days up to about a year, months beyond.
 * @param {string} fromDate
 * @param {string} toDate
 * @param {string} interval 'auto', 'hour', 'day' or 'month'
 * @returns {{ from: string, to: string, interval: 'hour' | 'day' | 'month' } | string}
 */
export function customPeriod(fromDate, toDate, interval) {
  if (fromDate === '' || toDate === '') return 'Choose both dates of the period.';
  const start = Date.parse(`${fromDate}T00:00:00Z`);
  const end = Date.parse(`${toDate}T00:00:00Z`) + DAY;
  if (Number.isNaN(start) || Number.isNaN(end)) return 'Choose both dates of the period.';
  if (start >= end) return 'The first date must not be after the second.';
  const days = (end - start) / DAY;
  const chosen = interval === 'hour' || interval === 'day' || interval === 'month' ? interval
    : days <= 3 ? 'hour' : days <= 370 ? 'day' : 'month';
  return { from: new Date(start).toISOString(), to: new Date(end).toISOString(), interval: chosen };
}

/** The period the picker names now, or the reason it names none. */
function pickedPeriod() {
  const range = byId('stats-range', HTMLSelectElement).value;
  if (range !== 'custom') return presetPeriod(range, new Date());
  return customPeriod(
    byId('stats-from', HTMLInputElement).value,
    byId('stats-to', HTMLInputElement).value,
    byId('stats-interval', HTMLSelectElement).value,
  );
}

/** Which visits the chart shows. @returns {Who} */
function who() {
  const checked = document.querySelector('input[name="who"]:checked');
  const value = checked instanceof HTMLInputElement ? checked.value : 'all';
  return value === 'humans' || value === 'bots' ? value : 'all';
}

/** @param {Statistics} stats @param {number} width */
function showChart(stats, width) {
  byId('stats-chart').replaceChildren(drawChart(stats, width, who()));
  view.drawnWidth = width;
  const chosen = who();
  byId('stats-chart-figure').dataset.who = chosen;
}

function redrawIfResized() {
  const width = Math.floor(byId('stats-chart').clientWidth);
  if (view.shown !== null && width > 0 && width !== view.drawnWidth) showChart(view.shown, width);
}

/**
 * @param {Statistics} stats
 * @param {StatsQuery} wanted the request they answer
 */
function render(stats, wanted) {
  view.shown = stats;
  view.query = wanted;
  // Shown before the chart is drawn, so that it is drawn once, for the width it has.
  byId('stats-body').hidden = false;
  byId('stats-visits').textContent = count(stats.Visits);
  byId('stats-humans').textContent = count(stats.Humans);
  byId('stats-bots').textContent = count(stats.Bots);
  byId('stats-chart-caption').textContent = chartSummary(stats);
  const width = Math.floor(byId('stats-chart').clientWidth);
  showChart(stats, width > 0 ? width : 640);
  renderTable(stats);
  renderTop('referrers', stats.Referrers, stats.Visits);
  renderTop('countries', stats.Countries, stats.Visits);
  renderTop('browsers', stats.Browsers, stats.Visits);
  renderTop('os', stats.OperatingSystems, stats.Visits);
  renderTop('devices', stats.Devices, stats.Visits);
  renderMap(byId('stats-map'), stats.Countries, (code) => valueText('countries', code));
}

/** The statistics' request for the subject and the period picked, or the reason there is none. */
function statsQuery() {
  const period = pickedPeriod();
  if (typeof period === 'string') return period;
  /** @type {StatsQuery} */
  const wanted = { ...period };
  if (typeof view.subject === 'string') {
    const link = parseLinkKey(view.subject);
    wanted.short = link.ShortCode;
    wanted.domain = link.Domain;
  }
  return wanted;
}

/**
 * Loads the statistics of the subject over the period picked and shows them; any failure is
 * shown in the view (the numbers shown before stay). Safe to call at any time and as often
 * as wanted: only the latest answer is shown, and nothing happens while the view is closed.
 * @returns {Promise<boolean>} whether the statistics shown are now the ones asked for
 */
export async function refresh() {
  if (view.subject === undefined) return false;
  const section = byId('stats');
  clearErrors('stats-error', 'stats-custom-error');
  clearInvalid(byId('stats-period', HTMLFormElement));
  const wanted = statsQuery();
  if (typeof wanted === 'string') {
    showError('stats-custom-error', wanted);
    for (const id of ['stats-from', 'stats-to']) {
      const field = byId(id, HTMLInputElement);
      if (field.value === '' || wanted.startsWith('The first')) field.setAttribute('aria-invalid', 'true');
    }
    return false;
  }
  const mine = ++view.requests;
  section.setAttribute('aria-busy', 'true');
  try {
    const stats = await getStats(wanted);
    if (mine !== view.requests || view.subject === undefined) return false;
    render(stats, wanted);
    return true;
  } catch (error) {
    if (mine === view.requests && view.subject !== undefined) {
      showError(byId('stats-range', HTMLSelectElement).value === 'custom' ? 'stats-custom-error' : 'stats-error', messageOf(error));
    }
    return false;
  } finally {
    if (mine === view.requests) section.removeAttribute('aria-busy');
  }
}

/** Loads and says what came of it. */
async function refreshAndSay() {
  const [ok] = await Promise.all([refresh(), view.subject === null ? loadTopLinks() : Promise.resolve()]);
  if (ok && view.shown !== null) {
    announce(`${view.subject ?? 'All links'}: ${plural(view.shown.Visits, 'visit', 'visits')}, ${periodText(view.shown)}.`);
  }
}

/**
 * The account's most visited links (all time, from their access counts), each opening its
 * own statistics.
 */
async function loadTopLinks() {
  const table = byId('stats-top-links', HTMLTableElement);
  /** @type {LinkDetails[]} */
  let top;
  try {
    const page = await listLinks({ order: 'visits', limit: TOP_LINKS_READ });
    // A complete list is ordered here too, so the answer is right from any server.
    top = (page.next === null ? [...page.links].sort((a, b) => b.Accesses - a.Accesses || (b.DateCreated ?? '').localeCompare(a.DateCreated ?? '')) : page.links)
      .slice(0, TOP_LINKS);
  } catch (error) {
    const row = document.createElement('tr');
    const cell = document.createElement('td');
    cell.className = 'error';
    cell.textContent = messageOf(error);
    row.append(cell);
    table.replaceChildren(row);
    return;
  }
  renderTopLinks(table, top);
}

/**
 * Opens the view on a link's statistics (or the account's, `short` null) and loads them.
 * @param {string | null} short the link's key (links-state.js linkKey: `host/code` off the default domain)
 */
export async function openStats(short) {
  view.subject = short;
  view.requests++;
  view.shown = null;
  view.query = null;
  view.drawnWidth = 0;
  byId('stats-body').hidden = true;
  clearErrors('stats-error', 'stats-custom-error');
  byId('stats-heading').textContent = short === null ? 'Statistics of all links' : `Statistics of ${short}`;
  byId('stats-subject').textContent = short === null ? 'Every link of this account, together.' : '';
  if (short !== null) void nameSubject(short);
  byId('stats-all').hidden = short === null;
  byId('stats-top-links-card').hidden = short !== null;
  await refreshAndSay();
}

/**
 * Names the link under the heading: its short URL and target, from the list loaded, else
 * from a search for its code (an address opened directly).
 * @param {string} short
 */
async function nameSubject(short) {
  let link = links.list.find((l) => linkKey(l) === short);
  if (link === undefined) {
    const wanted = parseLinkKey(short);
    try {
      link = (await listLinks({ q: wanted.ShortCode, domain: wanted.Domain ?? '', limit: 100 })).links.find((l) => linkKey(l) === short);
    } catch {
      link = undefined;
    }
  }
  if (link !== undefined && view.subject === short) byId('stats-subject').textContent = `${shortUrlOf(link)} → ${link.PointsTo}`;
}

/** The link whose statistics are open: its shortcode, null for the account's, undefined when closed. */
export function statsShowing() {
  return byId('view-stats').hidden ? undefined : view.subject;
}

/** On sign-out: nothing of the statistics stays in the page. */
export function forgetStats() {
  view.requests++;
  view.shown = null;
  view.query = null;
  view.subject = undefined;
  byId('stats-body').hidden = true;
  byId('stats-chart').replaceChildren();
  byId('stats-map').replaceChildren();
  query(byId('stats-table', HTMLTableElement), 'tbody', HTMLTableSectionElement).replaceChildren();
  for (const list of ['referrers', 'countries', 'browsers', 'os', 'devices', 'top-links']) byId(`stats-${list}`, HTMLTableElement).replaceChildren();
  clearErrors('stats-error', 'stats-custom-error');
  if (view.csvUrl !== null) URL.revokeObjectURL(view.csvUrl);
  view.csvUrl = null;
}

/** The period's dates as a file name's part: `2026-10-26_2026-11-25`. */
function fileDates() {
  if (view.shown === null) return 'statistics';
  const last = view.shown.Series.at(-1)?.Time ?? view.shown.To;
  return `${view.shown.From.slice(0, 10)}_${last.slice(0, 10)}`;
}

/**
 * Downloads the series shown as CSV (the same request, so the same intervals). The file is
 * fetched like every other call (the access code in a header, never in an address that could
 * be logged or kept in the history) and saved from a blob: URL of this page.
 * @param {MouseEvent} event
 */
async function downloadCsv(event) {
  const wanted = view.query;
  if (wanted === null) return;
  clearErrors('stats-error');
  let text;
  try {
    text = await busy(buttonOf(event), () => getStatsCsv(wanted));
  } catch (error) {
    showError('stats-error', messageOf(error));
    return;
  }
  if (view.csvUrl !== null) URL.revokeObjectURL(view.csvUrl);
  view.csvUrl = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const a = document.createElement('a');
  a.href = view.csvUrl;
  a.download = `shortlink-${(view.subject ?? 'all-links').replace(/\//g, '_')}-${fileDates()}.csv`;
  a.click();
  announce(`Downloading ${a.download}.`);
}


/** Listens to the statistics view. */
export function wireStatsView() {
  const range = byId('stats-range', HTMLSelectElement);
  range.addEventListener('change', () => {
    const custom = range.value === 'custom';
    byId('stats-custom').hidden = !custom;
    clearErrors('stats-custom-error');
    if (custom) {
      // Start from the period shown, so that Show alone asks for the same again.
      const from = byId('stats-from', HTMLInputElement);
      const to = byId('stats-to', HTMLInputElement);
      if (view.shown !== null && from.value === '' && to.value === '') {
        from.value = view.shown.From.slice(0, 10);
        to.value = new Date(Date.parse(view.shown.To) - 1).toISOString().slice(0, 10);
      }
      from.focus();
      return;
    }
    void refreshAndSay();
  });
  byId('stats-period', HTMLFormElement).addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(byId('stats-apply', HTMLButtonElement), refreshAndSay);
  });
  for (const id of ['stats-from', 'stats-to']) {
    byId(id, HTMLInputElement).addEventListener('input', (e) => {
      if (e.currentTarget instanceof HTMLInputElement) e.currentTarget.removeAttribute('aria-invalid');
    });
  }
  for (const radio of document.querySelectorAll('input[name="who"]')) {
    radio.addEventListener('change', () => {
      if (view.shown === null) return;
      const width = Math.floor(byId('stats-chart').clientWidth);
      showChart(view.shown, width > 0 ? width : 640);
      announce(`The chart shows ${who() === 'all' ? 'every visit' : `${who()} only`}.`);
    });
  }
  byId('stats-refresh', HTMLButtonElement).addEventListener('click', (event) => busy(buttonOf(event), refreshAndSay));
  byId('stats-csv', HTMLButtonElement).addEventListener('click', downloadCsv);
  new ResizeObserver(redrawIfResized).observe(byId('stats-chart'));
}
