// The account's live events (live.js) as the links view shows them: visits raise the counts
// in place, with a brief mark, and reload open statistics they belong to (at most once a
// second); an edit redraws its link; a link created or deleted elsewhere joins or leaves the
// list when the whole list is shown.
import { accessesText, byId, query } from './dom.js';
import { loads, renderItem, rowPrototype } from './links-list.js';
import { changed, filtered, linkKey, links, stateOf } from './links-state.js';
import { session } from './session.js';
import { noteVisits } from './sparkline.js';
import { refresh as refreshStats, statsShowing } from './stats-view.js';

/** How long a count that just changed stays marked. */
const LIVE_MARK_MS = 2000;
/** The open statistics follow visits at most this often. */
const LIVE_STATS_MS = 1000;
const timers = { stats: /** @type {ReturnType<typeof setTimeout> | undefined} */ (undefined) };

/**
 * @param {import('./live.js').LiveEvent} event
 */
export function applyLiveEvent(event) {
  if (session.code === null) return;
  if (event.type === 'link.visited') {
    // Visits per link: a visit names its Domain only off the default domain, so a code alone
    // is the default domain's link, never another domain's of the same code.
    /** @type {Map<string, number>} */
    const counts = new Map();
    for (const visit of Array.isArray(event.data?.visits) ? event.data.visits : []) {
      if (typeof visit?.ShortCode !== 'string') continue;
      const key = linkKey({ ShortCode: visit.ShortCode, Domain: typeof visit.Domain === 'string' ? visit.Domain : null });
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    for (const [key, n] of counts) {
      if (loads.running > 0) loads.visitsDuring.set(key, (loads.visitsDuring.get(key) ?? 0) + n);
      noteVisits(key, n);
      const i = links.list.findIndex((link) => linkKey(link) === key);
      const link = links.list[i];
      if (link === undefined) continue;
      const counted = { ...link, Accesses: link.Accesses + n };
      links.list[i] = counted;
      redrawItem(counted, stateOf(counted) !== stateOf(link));
    }
    // The statistics view, when open on the account or on a link just visited, loads again.
    const open = statsShowing();
    if (open !== undefined && (open === null || counts.has(open)) && timers.stats === undefined) {
      timers.stats = setTimeout(() => {
        timers.stats = undefined;
        void refreshStats();
      }, LIVE_STATS_MS);
    }
  } else if (event.type === 'link.updated' && typeof event.data?.ShortCode === 'string') {
    const key = linkKey(event.data);
    const i = links.list.findIndex((link) => linkKey(link) === key);
    if (i === -1) return;
    links.list[i] = event.data;
    redrawItem(event.data, true);
  } else if (event.type === 'link.created' && typeof event.data?.ShortCode === 'string') {
    // Joins the list when the whole list is shown (no search, no page left to load).
    const key = linkKey(event.data);
    if (filtered() || links.next !== null || links.list.some((link) => linkKey(link) === key)) return;
    links.list = links.order === 'oldest' || links.order === 'visits' ? [...links.list, event.data] : [event.data, ...links.list];
    if (links.usage.exact) links.usage = { count: links.list.length, exact: true };
    changed();
  } else if (event.type === 'link.deleted' && typeof event.data?.ShortCode === 'string') {
    const key = linkKey(event.data);
    if (!links.list.some((link) => linkKey(link) === key)) return;
    links.list = links.list.filter((link) => linkKey(link) !== key);
    links.selected.delete(key);
    if (links.usage.exact && !filtered()) links.usage = { count: Math.max(0, links.usage.count - 1), exact: true };
    changed();
  }
}

/**
 * Shows a link's new count (and, when `whole`, everything else about it) where it is in the
 * list, marked for a moment. Redrawing keeps the focus on the same action.
 * @param {import('../http/schemas.ts').LinkDetails} link
 * @param {boolean} whole
 */
function redrawItem(link, whole) {
  const item = byId('links').querySelector(`tr[data-key="${CSS.escape(linkKey(link))}"]`);
  if (!(item instanceof HTMLTableRowElement)) return;
  let shown = item;
  if (whole) {
    const focused = document.activeElement instanceof HTMLElement && item.contains(document.activeElement)
      ? document.activeElement.dataset.action ?? null : null;
    shown = renderItem(rowPrototype(), link, Date.now());
    item.replaceWith(shown);
    const again = focused === null ? null : shown.querySelector(`[data-action="${focused}"]`);
    if (again instanceof HTMLElement) again.focus();
  } else {
    query(item, '.accesses', HTMLElement).textContent = accessesText(link.Accesses);
  }
  const accesses = query(shown, '.accesses', HTMLElement);
  accesses.dataset.live = 'updated';
  setTimeout(() => {
    if (accesses.textContent === accessesText(link.Accesses)) delete accesses.dataset.live;
  }, LIVE_MARK_MS);
}
