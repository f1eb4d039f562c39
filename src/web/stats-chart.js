// The statistics' chart: one bar per interval, humans at the bottom and bots (hatched) on
// top, a value axis with round steps and a few interval labels, drawn as SVG for the width
// it has (no library). "Humans" or "Bots" alone draws only those. With the number and date
// words the statistics view shares.

/** @import { Statistics } from '../http/schemas.ts' */

const SVG = 'http://www.w3.org/2000/svg';

/** Which visits the chart shows. @typedef {'all' | 'humans' | 'bots'} Who */

/** @param {number} n */
export function count(n) {
  return n.toLocaleString();
}

/** @param {number} n @param {string} one @param {string} many */
export function plural(n, one, many) {
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
export function periodText(stats) {
  const first = stats.Series[0];
  const last = stats.Series.at(-1);
  if (first === undefined || last === undefined) return '';
  const a = intervalText(first.Time, stats.Interval, 'long');
  const b = intervalText(last.Time, stats.Interval, 'long');
  return a === b ? `${a} (UTC)` : `${a} – ${b} (UTC)`;
}

/**
 * @param {string} tag
 * @param {Record<string, string | number>} [attributes]
 * @returns {SVGElement}
 */
export function svg(tag, attributes = {}) {
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
 * The chart for the width it has. Each bar names its numbers on hover; the table beside it
 * holds all of them for every reader.
 * @param {Statistics} stats
 * @param {number} width
 * @param {Who} [who] which visits to draw
 * @returns {SVGElement}
 */
export function drawChart(stats, width, who = 'all') {
  const height = width < 480 ? 180 : 220;
  const series = stats.Series;
  const drawn = (/** @type {{ Visits: number, Bots: number }} */ p) => (who === 'humans' ? p.Visits - p.Bots : who === 'bots' ? p.Bots : p.Visits);
  const { top, step } = axisScale(Math.max(0, ...series.map(drawn)));
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
    const humans = who === 'bots' ? 0 : point.Visits - point.Bots;
    const bots = who === 'humans' ? 0 : point.Bots;
    const g = svg('g');
    const title = svg('title');
    title.textContent = `${intervalText(point.Time, stats.Interval, 'long')} UTC: ${plural(point.Visits, 'visit', 'visits')} (${count(point.Visits - point.Bots)} humans, ${count(point.Bots)} bots)`;
    g.append(title);
    // An invisible full-height rectangle, so the whole column (even an empty one) shows its numbers.
    g.append(svg('rect', { class: 'hit', x: margin.left + i * band, y: margin.top, width: band, height: plotHeight }));
    if (humans > 0) g.append(svg('rect', { class: 'bar-humans', x, y: y(humans), width: barWidth, height: y(0) - y(humans) }));
    if (bots > 0) g.append(svg('rect', { class: 'bar-bots', fill: 'url(#stats-hatch)', x, y: y(humans + bots), width: barWidth, height: y(humans) - y(humans + bots) }));
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

  const total = who === 'humans' ? stats.Humans : who === 'bots' ? stats.Bots : stats.Visits;
  if (total === 0) {
    const none = svg('text', { class: 'chart-text chart-empty', x: margin.left + plotWidth / 2, y: margin.top + plotHeight / 2, 'text-anchor': 'middle' });
    none.textContent = who === 'all' ? 'No visits in this period' : `No visits by ${who} in this period`;
    chart.append(none);
  }
  return chart;
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
export function chartSummary(stats) {
  return `Visits per ${INTERVAL_WORDS[stats.Interval]}, ${periodText(stats)}: ${plural(stats.Visits, 'visit', 'visits')}, ` +
    `${count(stats.Humans)} by humans and ${count(stats.Bots)} by bots.`;
}

