// Visit statistics (CONTRACT §7.4) of one link or of the whole account: the totals, a chart of
// visits per interval with humans and bots stacked (SVG drawn here, no library), the same
// numbers as a table, the top referrers, countries, browsers, operating systems and devices,
// a period picker, and the series as a CSV download. Everything the view shows comes from one
// call, refresh(), which anything may call again (a live update, the Refresh button).
import { getStats, getStatsCsv, messageOf } from './api.js';
import { announce, busy, buttonOf, byId, clearErrors, clearInvalid, query, showError } from './dom.js';

/** @import { Statistics } from '../http/schemas.ts' */
/** @import { StatsQuery } from './api.js' */

const SVG = 'http://www.w3.org/2000/svg';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Which statistics are shown: a link (its code, and how to name it) or the account (null). */
let subject = /** @type {{ short: string | null, label: string }} */ ({ short: null, label: '' });
/** The button that opened the view: focus goes back to it on Close. @type {HTMLElement | null} */
let opener = null;
/** The statistics shown, or null before the first answer. @type {Statistics | null} */
let shown = null;
/** The request of the statistics shown: the CSV download asks for the same. @type {StatsQuery | null} */
let shownQuery = null;
/** Counts the requests, so that only the latest answer is shown (an older one may come later). */
let requests = 0;
/** The last CSV download's object URL, released when the next is made. @type {string | null} */
let csvUrl = null;
/** The chart's width when last drawn; it is drawn again when its box changes width. */
let drawnWidth = 0;

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

/** @param {number} n */
function count(n) {
  return n.toLocaleString();
}

/** @param {number} n @param {string} one @param {string} many */
function plural(n, one, many) {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/**
 * An interval's start as people read it, in UTC (the service's intervals are UTC).
 * @param {string} iso
 * @param {'hour' | 'day' | 'month'} interval
 * @param {'long' | 'short'} length the table's words, or the chart's axis
 */
export function intervalText(iso, interval, length) {
  const date = new Date(iso);
  /** @type {Intl.DateTimeFormatOptions} */
  const options = interval === 'hour'
    ? (length === 'long' ? { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' } : { hour: '2-digit', minute: '2-digit' })
    : interval === 'day'
      ? (length === 'long' ? { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' } : { day: 'numeric', month: 'short' })
      : (length === 'long' ? { month: 'long', year: 'numeric' } : { month: 'short', year: 'numeric' });
  return date.toLocaleString(undefined, { ...options, timeZone: 'UTC' });
}

/** How each interval is named in sentences. */
const INTERVAL_WORDS = /** @type {const} */ ({ hour: 'hour', day: 'day', month: 'month' });

/**
 * The period as a phrase: "25 Oct 2026 – 24 Nov 2026 (UTC)".
 * @param {Statistics} stats
 */
function periodText(stats) {
  const first = stats.Series[0];
  const last = stats.Series.at(-1);
  if (first === undefined || last === undefined) return '';
  const a = intervalText(first.Time, stats.Interval, 'long');
  const b = intervalText(last.Time, stats.Interval, 'long');
  return a === b ? `${a} (UTC)` : `${a} – ${b} (UTC)`;
}

/**
 * A value as the lists show it: a country's name beside its code, the others as given.
 * @param {'referrers' | 'countries' | 'browsers' | 'os' | 'devices'} list
 * @param {string} name
 */
function valueText(list, name) {
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
 * @param {string} tag
 * @param {Record<string, string | number>} [attributes]
 * @returns {SVGElement}
 */
function svg(tag, attributes = {}) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  return /** @type {SVGElement} */ (element);
}

/**
 * The top of the value axis and its step: a round number (1, 2 or 5 times a power of ten)
 * at or above the largest bar, in at most 4 steps.
 * @param {number} max
 */
export function axisScale(max) {
  if (max <= 0) return { top: 4, step: 1 };
  const rough = max / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power);
  return { top: Math.ceil(max / step) * step, step };
}

/**
 * The chart: one bar per interval, humans at the bottom and bots (hatched) on top, a value
 * axis with round steps and a few interval labels, drawn for the width it has. Each bar names
 * its numbers on hover; the table below holds all of them for every reader.
 * @param {Statistics} stats
 * @param {number} width
 */
function drawChart(stats, width) {
  const height = width < 480 ? 180 : 220;
  const series = stats.Series;
  const { top, step } = axisScale(Math.max(0, ...series.map((p) => p.Visits)));
  // Room on the left for the widest value label.
  const margin = { top: 12, right: 8, bottom: 26, left: Math.max(28, textWidth(count(top)) + 12) };
  const plotWidth = Math.max(10, width - margin.left - margin.right);
  const plotHeight = height - margin.top - margin.bottom;
  const y = (/** @type {number} */ v) => margin.top + plotHeight - (v / top) * plotHeight;

  const chart = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', class: 'chart' });
  chart.setAttribute('aria-label', `${chartSummary(stats)} Every number is in the table below.`);
  const defs = svg('defs');
  const hatch = svg('pattern', { id: 'stats-hatch', patternUnits: 'userSpaceOnUse', width: 6, height: 6, patternTransform: 'rotate(45)' });
  hatch.append(svg('rect', { class: 'hatch-bg', width: 6, height: 6 }), svg('line', { class: 'hatch-line', x1: 1.5, y1: 0, x2: 1.5, y2: 6 }));
  defs.append(hatch);
  chart.append(defs);

  for (let v = 0; v <= top; v += step) {
    chart.append(svg('line', { class: v === 0 ? 'axis' : 'grid', x1: margin.left, x2: width - margin.right, y1: y(v), y2: y(v) }));
    const label = svg('text', { class: 'chart-text', x: margin.left - 6, y: y(v), 'text-anchor': 'end', 'dominant-baseline': 'middle' });
    label.textContent = count(v);
    chart.append(label);
  }

  const band = plotWidth / Math.max(1, series.length);
  const barWidth = band >= 4 ? band * 0.8 : band;
  const bars = svg('g', { class: 'bars' });
  series.forEach((point, i) => {
    const x = margin.left + i * band + (band - barWidth) / 2;
    const humans = point.Visits - point.Bots;
    const g = svg('g');
    const title = svg('title');
    title.textContent = `${intervalText(point.Time, stats.Interval, 'long')} UTC: ${plural(point.Visits, 'visit', 'visits')} (${count(humans)} humans, ${count(point.Bots)} bots)`;
    g.append(title);
    // An invisible full-height rectangle, so the whole column (even an empty one) shows its numbers.
    g.append(svg('rect', { class: 'hit', x: margin.left + i * band, y: margin.top, width: band, height: plotHeight }));
    if (humans > 0) g.append(svg('rect', { class: 'bar-humans', x, y: y(humans), width: barWidth, height: y(0) - y(humans) }));
    if (point.Bots > 0) g.append(svg('rect', { class: 'bar-bots', fill: 'url(#stats-hatch)', x, y: y(point.Visits), width: barWidth, height: y(humans) - y(point.Visits) }));
    bars.append(g);
  });
  chart.append(bars);

  // An interval label under every so many columns: as many as fit with a gap between them,
  // each centred under its column but kept inside the chart.
  const labels = series.map((point) => intervalText(point.Time, stats.Interval, 'short'));
  const widest = Math.max(0, ...labels.map(textWidth));
  const every = Math.max(1, Math.ceil((widest + 16) / band));
  labels.forEach((text, i) => {
    if (i % every !== 0) return;
    const half = textWidth(text) / 2;
    const x = Math.min(Math.max(margin.left + i * band + band / 2, half), width - half);
    const label = svg('text', { class: 'chart-text', x, y: height - 8, 'text-anchor': 'middle' });
    label.textContent = text;
    chart.append(label);
  });

  if (stats.Visits === 0) {
    const none = svg('text', { class: 'chart-text chart-empty', x: margin.left + plotWidth / 2, y: margin.top + plotHeight / 2, 'text-anchor': 'middle' });
    none.textContent = 'No visits in this period';
    chart.append(none);
  }
  byId('stats-chart').replaceChildren(chart);
  drawnWidth = width;
}

/**
 * About how wide a label is at the chart's 12 px: enough to space and fit labels, without
 * measuring text (which would need it in the page first).
 * @param {string} text
 */
function textWidth(text) {
  return text.length * 7;
}

/** @param {Statistics} stats */
function chartSummary(stats) {
  return `Visits per ${INTERVAL_WORDS[stats.Interval]}, ${periodText(stats)}: ${plural(stats.Visits, 'visit', 'visits')}, ` +
    `${count(stats.Humans)} by humans and ${count(stats.Bots)} by bots.`;
}

function redrawIfResized() {
  const width = Math.floor(byId('stats-chart').clientWidth);
  if (shown !== null && width > 0 && width !== drawnWidth) drawChart(shown, width);
}

/**
 * The series as a table: one row per interval, and the totals.
 * @param {Statistics} stats
 */
function renderTable(stats) {
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
function renderTop(list, values, total) {
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
    const share = document.createElement('td');
    share.className = 'share';
    const percent = total === 0 ? 0 : (Visits / total) * 100;
    const bar = svg('svg', { class: 'share-bar', viewBox: '0 0 100 8', preserveAspectRatio: 'none', 'aria-hidden': 'true', focusable: 'false' });
    bar.append(svg('rect', { width: percent.toFixed(2), height: 8 }));
    const text = document.createElement('span');
    text.textContent = `${percent < 1 && percent > 0 ? '<1' : Math.round(percent)}%`;
    const cell = document.createElement('span');
    cell.className = 'share-cell';
    cell.append(bar, text);
    share.append(cell);
    row.append(name, visits, share);
    body.append(row);
  }
  table.replaceChildren(head, body);
}

/**
 * @param {Statistics} stats
 * @param {StatsQuery} wanted the request they answer
 */
function render(stats, wanted) {
  shown = stats;
  shownQuery = wanted;
  // Shown before the chart is drawn, so that it is drawn once, for the width it has.
  byId('stats-body').hidden = false;
  byId('stats-visits').textContent = count(stats.Visits);
  byId('stats-humans').textContent = count(stats.Humans);
  byId('stats-bots').textContent = count(stats.Bots);
  byId('stats-chart-caption').textContent = chartSummary(stats);
  const width = Math.floor(byId('stats-chart').clientWidth);
  drawChart(stats, width > 0 ? width : 640);
  renderTable(stats);
  renderTop('referrers', stats.Referrers, stats.Visits);
  renderTop('countries', stats.Countries, stats.Visits);
  renderTop('browsers', stats.Browsers, stats.Visits);
  renderTop('os', stats.OperatingSystems, stats.Visits);
  renderTop('devices', stats.Devices, stats.Visits);
}

/** The statistics' request for the subject and the period picked, or the reason there is none. */
function statsQuery() {
  const period = pickedPeriod();
  if (typeof period === 'string') return period;
  /** @type {StatsQuery} */
  const wanted = { ...period };
  if (subject.short !== null) wanted.short = subject.short;
  return wanted;
}

/**
 * Loads the statistics of the subject over the period picked and shows them; any failure is
 * shown in the view (the numbers shown before stay). Safe to call at any time and as often
 * as wanted: only the latest answer is shown, and nothing happens while the view is closed.
 * @returns {Promise<boolean>} whether the statistics shown are now the ones asked for
 */
export async function refresh() {
  const section = byId('stats');
  if (section.hidden) return false;
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
  const mine = ++requests;
  section.setAttribute('aria-busy', 'true');
  try {
    const stats = await getStats(wanted);
    if (mine !== requests || section.hidden) return false;
    render(stats, wanted);
    return true;
  } catch (error) {
    if (mine === requests && !section.hidden) showError(byId('stats-range', HTMLSelectElement).value === 'custom' ? 'stats-custom-error' : 'stats-error', messageOf(error));
    return false;
  } finally {
    if (mine === requests) section.removeAttribute('aria-busy');
  }
}

/** Loads and says what came of it. */
async function refreshAndSay() {
  if (await refresh() && shown !== null) {
    announce(`${subject.short === null ? 'All links' : subject.short}: ${plural(shown.Visits, 'visit', 'visits')}, ${periodText(shown)}.`);
  }
}

/**
 * Opens the view on a link's statistics (or the account's, `short` null) and loads them.
 * @param {string | null} short
 * @param {string} label how the subject is named under the heading
 * @param {HTMLElement | null} from the control that opened it, focused again on Close
 */
export async function openStats(short, label, from) {
  subject = { short, label };
  opener = from;
  shown = null;
  shownQuery = null;
  drawnWidth = 0;
  byId('stats-heading').textContent = short === null ? 'Statistics of all links' : `Statistics of ${short}`;
  byId('stats-subject').textContent = label;
  byId('stats-body').hidden = true;
  byId('stats').hidden = false;
  byId('stats-heading').focus();
  await refreshAndSay();
}

/** The link whose statistics are open: its shortcode, null for the account's, undefined when closed. */
export function statsShowing() {
  return byId('stats').hidden ? undefined : subject.short;
}

/** Closes the view; focus goes back where it was opened from. */
function closeStats() {
  forgetStats();
  if (opener !== null && opener.isConnected) opener.focus();
  else byId('links-heading').focus();
  opener = null;
}

/** On sign-out (and on Close): nothing of the statistics stays in the page. */
export function forgetStats() {
  requests++;
  shown = null;
  shownQuery = null;
  subject = { short: null, label: '' };
  byId('stats').hidden = true;
  byId('stats-chart').replaceChildren();
  query(byId('stats-table', HTMLTableElement), 'tbody', HTMLTableSectionElement).replaceChildren();
  for (const list of ['referrers', 'countries', 'browsers', 'os', 'devices']) byId(`stats-${list}`, HTMLTableElement).replaceChildren();
  clearErrors('stats-error', 'stats-custom-error');
  if (csvUrl !== null) URL.revokeObjectURL(csvUrl);
  csvUrl = null;
}

/** The period's dates as a file name's part: `2026-10-26_2026-11-25`. */
function fileDates() {
  if (shown === null) return 'statistics';
  const last = shown.Series.at(-1)?.Time ?? shown.To;
  return `${shown.From.slice(0, 10)}_${last.slice(0, 10)}`;
}

/**
 * Downloads the series shown as CSV (the same request, so the same intervals). The file is
 * fetched like every other call (the access code in a header, never in an address that could
 * be logged or kept in the history) and saved from a blob: URL of this page.
 * @param {MouseEvent} event
 */
async function downloadCsv(event) {
  const wanted = shownQuery;
  if (wanted === null) return;
  clearErrors('stats-error');
  let text;
  try {
    text = await busy(buttonOf(event), () => getStatsCsv(wanted));
  } catch (error) {
    showError('stats-error', messageOf(error));
    return;
  }
  if (csvUrl !== null) URL.revokeObjectURL(csvUrl);
  csvUrl = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const a = document.createElement('a');
  a.href = csvUrl;
  a.download = `shortlink-${subject.short ?? 'all-links'}-${fileDates()}.csv`;
  a.click();
  announce(`Downloading ${a.download}.`);
}

/** Listens to the statistics part of the page. */
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
      if (shown !== null && from.value === '' && to.value === '') {
        from.value = shown.From.slice(0, 10);
        to.value = new Date(Date.parse(shown.To) - 1).toISOString().slice(0, 10);
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
  byId('stats-refresh', HTMLButtonElement).addEventListener('click', (event) => busy(buttonOf(event), refreshAndSay));
  byId('stats-close', HTMLButtonElement).addEventListener('click', closeStats);
  byId('stats-csv', HTMLButtonElement).addEventListener('click', downloadCsv);
  byId('account-stats', HTMLButtonElement).addEventListener('click', (event) =>
    openStats(null, 'Every link of this account, together.', buttonOf(event)));
  new ResizeObserver(redrawIfResized).observe(byId('stats-chart'));
}
