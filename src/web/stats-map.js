// The countries of the statistics on a world map: each country shaded by its share of the
// period's visits, in five steps (and named with its count on hover), drawn as SVG from the
// generated shapes of world-map.js (Natural Earth, through scripts/generate-world-map.ts). No
// library; the Countries table beside it holds every number for every reader.
import { COUNTRIES, MAP_HEIGHT, MAP_WIDTH } from './world-map.js';

const SVG = 'http://www.w3.org/2000/svg';

/**
 * The shade step of a share of the busiest country's visits: 0 (none) to 5.
 * @param {number} visits
 * @param {number} most
 */
export function shadeOf(visits, most) {
  if (visits <= 0 || most <= 0) return 0;
  return Math.min(5, Math.max(1, Math.ceil((visits / most) * 5)));
}

/**
 * Draws the map into `box`.
 * @param {HTMLElement} box
 * @param {{ Name: string, Visits: number }[]} countries the statistics' top countries
 * @param {(code: string) => string} nameOf a country's name, as the table shows it
 */
export function renderMap(box, countries, nameOf) {
  /** @type {Map<string, number>} */
  const visits = new Map(countries.filter((c) => /^[A-Z]{2}$/.test(c.Name) && c.Name !== 'ZZ').map((c) => [c.Name, c.Visits]));
  const most = Math.max(0, ...visits.values());
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${MAP_WIDTH} ${MAP_HEIGHT}`);
  svg.setAttribute('class', 'world-map');
  svg.setAttribute('role', 'img');
  const mapped = [...visits.keys()].filter((code) => COUNTRIES.some(([c]) => c === code)).length;
  svg.setAttribute('aria-label', visits.size === 0
    ? 'World map: no visits with a known country in this period.'
    : `World map of visits by country: ${mapped} ${mapped === 1 ? 'country' : 'countries'} shaded; the Countries table lists them.`);
  for (const [code, d] of COUNTRIES) {
    const path = document.createElementNS(SVG, 'path');
    path.setAttribute('d', d);
    const n = visits.get(code) ?? 0;
    path.setAttribute('class', `country shade-${shadeOf(n, most)}`);
    path.dataset.code = code;
    const title = document.createElementNS(SVG, 'title');
    title.textContent = `${nameOf(code)}: ${n.toLocaleString()} ${n === 1 ? 'visit' : 'visits'}`;
    path.append(title);
    svg.append(path);
  }
  box.replaceChildren(svg);
}
