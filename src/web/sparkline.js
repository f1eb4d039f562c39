// The small chart of a link's last 30 days in the list. Asked for lazily: only for rows that
// come into view (IntersectionObserver), a few requests at a time, once per link (visits
// heard live are added to the last day), from the existing statistics call (GET /v1/stats
// with `short`); a row never seen costs nothing.
import { getStats } from './api.js';
import { parseLinkKey } from './links-state.js';
import { presetPeriod } from './stats-view.js';

const SVG = 'http://www.w3.org/2000/svg';
/** Requests at once. */
const PARALLEL = 3;
const WIDTH = 64;
const HEIGHT = 18;

/** Each link's daily visits, once known; null while asked for. @type {Map<string, number[] | null>} */
const series = new Map();
/** Links (their linkKey) waiting for a request, in the order their rows came into view. @type {string[]} */
const queue = [];
const running = { count: 0, generation: 0 };

/** @type {IntersectionObserver | null} */
let observer = null;

/**
 * The polyline's points for a series, scaled to the box (the top is the highest day).
 * @param {number[]} values
 * @param {number} width
 * @param {number} height
 */
export function sparkPoints(values, width, height) {
  const top = Math.max(1, ...values);
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  return values.map((v, i) => `${(i * step).toFixed(1)},${(height - 1 - (v / top) * (height - 2)).toFixed(1)}`).join(' ');
}

/** @param {string} code */
function rowsOf(code) {
  return document.querySelectorAll(`#links tr[data-key="${CSS.escape(code)}"] .spark`);
}

/** @param {string} code */
function draw(code) {
  const values = series.get(code);
  if (values === undefined || values === null) return;
  for (const slot of rowsOf(code)) {
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', `0 0 ${WIDTH} ${HEIGHT}`);
    svg.setAttribute('width', String(WIDTH));
    svg.setAttribute('height', String(HEIGHT));
    svg.setAttribute('class', 'sparkline');
    svg.setAttribute('focusable', 'false');
    const line = document.createElementNS(SVG, 'polyline');
    line.setAttribute('points', sparkPoints(values, WIDTH, HEIGHT));
    svg.append(line);
    slot.replaceChildren(svg);
    if (slot instanceof HTMLElement) slot.title = `${values.reduce((a, b) => a + b, 0)} visits in the last 30 days`;
  }
}

function pump() {
  while (running.count < PARALLEL && queue.length > 0) {
    const code = /** @type {string} */ (queue.shift());
    running.count++;
    const generation = running.generation;
    const link = parseLinkKey(code);
    void getStats({ short: link.ShortCode, domain: link.Domain, ...presetPeriod('30d', new Date()) })
      .then((stats) => {
        if (generation !== running.generation) return;
        series.set(code, stats.Series.map((point) => point.Visits));
        draw(code);
      })
      .catch(() => {
        // No sparkline for it (deleted meanwhile, an outage): the count beside it stays.
        if (generation === running.generation) series.delete(code);
      })
      .finally(() => {
        if (generation === running.generation) running.count--;
        pump();
      });
  }
}

/**
 * Draws a row's sparkline now if known, else asks for it when the row comes into view.
 * @param {HTMLElement} row
 * @param {string} code the link's key (links-state.js linkKey)
 */
export function observeSparkline(row, code) {
  if (series.get(code)) {
    queueMicrotask(() => draw(code));
    return;
  }
  if (typeof IntersectionObserver === 'undefined') return;
  observer ??= new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting || !(entry.target instanceof HTMLElement)) continue;
      observer?.unobserve(entry.target);
      const seen = entry.target.dataset.key;
      if (seen === undefined || series.has(seen)) continue;
      series.set(seen, null);
      queue.push(seen);
    }
    pump();
  }, { rootMargin: '200px 0px' });
  observer.observe(row);
}

/**
 * Visits heard live: added to today's point of a known series.
 * @param {string} code the link's key (links-state.js linkKey)
 * @param {number} n
 */
export function noteVisits(code, n) {
  const values = series.get(code);
  if (values === undefined || values === null || values.length === 0) return;
  values[values.length - 1] = (values.at(-1) ?? 0) + n;
  draw(code);
}

/** On sign-out: nothing of the account's statistics stays. */
export function forgetSparklines() {
  running.generation++;
  running.count = 0;
  series.clear();
  queue.length = 0;
  observer?.disconnect();
  observer = null;
}
