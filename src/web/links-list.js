// The list of the account's links: a table on wide screens, cards on phones (the same rows,
// restyled by app.css). Search as you type, tag filter (a tag in a row filters by it), the
// API's order, paging with the API's cursor, and each row's actions; the selection's bulk
// actions and the CSV export are links-bulk.js's.
import { getAccount, listLinks, messageOf } from './api.js';
import {
  accessesText,
  announce,
  busy,
  buttonOf,
  byId,
  clearErrors,
  copyWithFeedback,
  linkOrText,
  query,
  setLink,
  setTime,
  showError,
} from './dom.js';
import { openDeleteDialog } from './link-delete.js';
import { wireLinksBulk } from './links-bulk.js';
import { openEditDialog } from './link-edit.js';
import {
  changed,
  filtered,
  linkKey,
  links,
  noteDisabled,
  onLinksChange,
  PAGE_SIZE,
  renderUsage,
  resetLinks,
  shortUrlOf,
  sortLinks,
  STATE_TEXT,
  stateOf,
} from './links-state.js';
import { openQrDialog } from './qr.js';
import { hashOf } from './router.js';
import { session } from './session.js';
import { forgetSparklines, observeSparkline } from './sparkline.js';

/** @import { LinkDetails } from '../http/schemas.ts' */
/** @import { Order } from './api.js' */

/** How long typing pauses before the search runs. */
const SEARCH_DELAY_MS = 300;

/** Loads of the list in flight: the newest alone is shown; visits heard meanwhile are kept. */
export const loads = {
  started: 0,
  running: 0,
  /** Visits per link (linkKey) heard from the live stream while a load was running. @type {Map<string, number>} */
  visitsDuring: new Map(),
};

/**
 * One link of the list.
 * @param {HTMLTableRowElement} prototype
 * @param {LinkDetails} link
 * @param {number} now
 */
export function renderItem(prototype, link, now) {
  const item = /** @type {HTMLTableRowElement} */ (prototype.cloneNode(true));
  const key = linkKey(link);
  item.dataset.code = link.ShortCode;
  if (typeof link.Domain === 'string') item.dataset.domain = link.Domain;
  item.dataset.key = key;
  const url = shortUrlOf(link);
  setLink(query(item, '.short-url', HTMLAnchorElement), url);
  query(item, '.target-slot', HTMLElement).replaceWith(linkOrText(link.PointsTo, 'target'));

  const select = query(item, '.select', HTMLInputElement);
  select.checked = links.selected.has(key);
  select.setAttribute('aria-label', `Select ${link.ShortCode}`);
  select.addEventListener('change', () => {
    if (select.checked) links.selected.add(key);
    else links.selected.delete(key);
    renderSelection();
  });

  const title = query(item, '.link-title', HTMLElement);
  title.textContent = link.Title ?? '';
  title.hidden = (link.Title ?? '') === '';
  const tags = query(item, '.tags', HTMLUListElement);
  const tagList = Array.isArray(link.Tags) ? link.Tags : [];
  tags.replaceChildren(...tagList.map((tag) => {
    const li = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'tag';
    const name = document.createElement('bdi');
    name.textContent = tag;
    const hidden = document.createElement('span');
    hidden.className = 'visually-hidden';
    hidden.textContent = ' (show the links with this tag)';
    button.append(name, hidden);
    button.addEventListener('click', () => void filterByTag(tag));
    li.append(button);
    return li;
  }));
  tags.hidden = tagList.length === 0;

  const state = stateOf(link, now);
  item.dataset.state = state;
  const badge = query(item, '.state', HTMLElement);
  badge.textContent = STATE_TEXT[state];
  badge.dataset.state = state;
  query(item, '.badge-protected', HTMLElement).hidden = link.Protected !== true;
  const routed = query(item, '.badge-routed', HTMLElement);
  routed.hidden = !isRouted(link);
  routed.title = routedText(link);
  query(item, '.accesses', HTMLElement).textContent = accessesText(link.Accesses);
  const limit = query(item, '.visit-limit', HTMLElement);
  limit.hidden = link.MaxVisits === null || link.MaxVisits === undefined;
  limit.textContent = limit.hidden ? '' : `of ${link.MaxVisits}`;
  if (typeof link.DateCreated === 'string') setTime(query(item, '.created time', HTMLTimeElement), link.DateCreated);
  else query(item, '.created', HTMLElement).hidden = true;
  const expires = query(item, '.expires', HTMLElement);
  if (typeof link.ExpiresAt === 'string') {
    expires.hidden = false;
    query(expires, '.expires-label', HTMLElement).textContent = Date.parse(link.ExpiresAt) <= now ? 'Expired' : 'Expires';
    setTime(query(expires, 'time', HTMLTimeElement), link.ExpiresAt);
  }

  for (const hidden of item.querySelectorAll('[data-action] .visually-hidden')) hidden.textContent = ` ${link.ShortCode}`;
  query(item, '[data-action="copy"]', HTMLButtonElement).addEventListener('click', (event) =>
    copyWithFeedback(buttonOf(event), url, 'short link'));
  query(item, '[data-action="qr"]', HTMLButtonElement).addEventListener('click', () => openQrDialog(url));
  query(item, '[data-action="stats"]', HTMLAnchorElement).href = hashOf('stats', key);
  const edit = query(item, '[data-action="edit"]', HTMLButtonElement);
  edit.disabled = links.accountDisabled;
  edit.addEventListener('click', () => openEditDialog(link));
  query(item, '[data-action="delete"]', HTMLButtonElement).addEventListener('click', () => openDeleteDialog([link]));
  observeSparkline(item, key);
  return item;
}

/**
 * Whether a visit may go elsewhere than the target: rules, or the query passed on.
 * @param {LinkDetails} link
 */
export function isRouted(link) {
  return link.ForwardQuery === true || (Array.isArray(link.Rules) && link.Rules.length > 0);
}

/**
 * What the Routed badge stands for, in words (its title).
 * @param {LinkDetails} link
 */
function routedText(link) {
  const n = Array.isArray(link.Rules) ? link.Rules.length : 0;
  const parts = [];
  if (n > 0) parts.push(`${n} redirect ${n === 1 ? 'rule' : 'rules'}`);
  if (link.ForwardQuery === true) parts.push('forwards the query string');
  return parts.join('; ');
}

/** The row template. */
export function rowPrototype() {
  const prototype = byId('link-item', HTMLTemplateElement).content.firstElementChild;
  if (!(prototype instanceof HTMLTableRowElement)) throw new Error('#link-item holds no <tr>');
  return prototype;
}

/**
 * The line under the list: how many links it shows, whether they are a search's, and
 * whether more remain to load.
 * @param {number} n
 * @param {boolean} isFiltered
 * @param {boolean} more
 */
function countText(n, isFiltered, more) {
  if (n === 0) return '';
  const noun = n === 1 ? 'link' : 'links';
  if (more) return `${n} ${isFiltered ? 'matching ' : ''}${noun} shown; more remain.`;
  if (isFiltered) return `${n} ${n === 1 ? 'link matches' : 'links match'}.`;
  return `${n} ${noun}.`;
}

/** Draws the list from the state. */
function renderLinks() {
  const prototype = rowPrototype();
  const now = Date.now();
  // Ticks of links no longer shown go.
  const shown = new Set(links.list.map(linkKey));
  for (const key of links.selected) if (!shown.has(key)) links.selected.delete(key);
  byId('links').replaceChildren(...links.list.map((link) => renderItem(prototype, link, now)));
  const isFiltered = filtered();
  byId('links-table').hidden = links.list.length === 0;
  byId('links-empty').hidden = links.list.length > 0 || isFiltered;
  byId('links-none').hidden = links.list.length > 0 || !isFiltered;
  byId('load-more').hidden = links.next === null;
  byId('filter-clear').hidden = !isFiltered;
  byId('links-count').textContent = countText(links.list.length, isFiltered, links.next !== null);
  byId('account-disabled').hidden = !links.accountDisabled;
  renderUsage();
  renderSelection();
}

/** The bulk bar and the "select all" box, from the selection. */
export function renderSelection() {
  const n = links.selected.size;
  byId('bulk-bar').hidden = n === 0;
  byId('bulk-count').textContent = `${n} selected`;
  const all = byId('select-all', HTMLInputElement);
  all.checked = n > 0 && n === links.list.length;
  all.indeterminate = n > 0 && n < links.list.length;
}

/**
 * Shows these links as the account's (a new account's: none).
 * @param {LinkDetails[]} list
 */
export function showLinks(list) {
  links.list = list;
  links.next = null;
  links.usage = { count: list.length, exact: true };
  changed();
}

/**
 * What a load of the whole list (no search) says of the account's count: all of it when
 * complete; else at least the links seen, unless an exact count already known is as high
 * (a first page in another order knows less than the pages loaded before it).
 * @param {number} seen
 * @param {boolean} complete
 */
function knownUsage(seen, complete) {
  if (complete) return { count: seen, exact: true };
  if (links.usage.exact && links.usage.count >= seen) return links.usage;
  return { count: Math.max(seen, links.usage.count), exact: false };
}

/**
 * A page in the list's order: the API's, and on a complete list the same order worked out
 * here, so the list reads right even from a server that predates `order`.
 * @param {LinkDetails[]} list
 * @param {string | null} next
 */
function inOrder(list, next) {
  return next === null ? sortLinks(list, links.order) : list;
}

/**
 * Fetches and shows the first page of the account's links (those matching the search, if
 * one is set); throws the API's error, leaving the list as it was.
 */
export async function loadLinks() {
  const list = byId('links');
  list.setAttribute('aria-busy', 'true');
  const mine = ++loads.started;
  loads.running++;
  try {
    const page = await listLinks({ ...links.filter, order: links.order, limit: PAGE_SIZE });
    // Two loads can overlap (a create's, then Refresh): the newest alone is shown, so an
    // older answer arriving last cannot put back counts from before.
    if (mine !== loads.started) return;
    let fresh = page.links;
    // Visits heard while this load ran may predate its answer: counted again rather than
    // lost (at worst one too high until the next load, never a state shown too early).
    for (const [key, n] of loads.visitsDuring) {
      fresh = fresh.map((link) => (linkKey(link) === key ? { ...link, Accesses: link.Accesses + n } : link));
    }
    loads.visitsDuring.clear();
    links.list = inOrder(fresh, page.next);
    links.next = page.next;
    if (!filtered()) links.usage = knownUsage(links.list.length, links.next === null);
    clearErrors('links-error');
    changed();
  } finally {
    loads.running--;
    if (loads.running === 0) {
      list.removeAttribute('aria-busy');
      loads.visitsDuring.clear();
    }
  }
}

/** Loads the list again, showing a failure above it. */
export async function reloadLinks() {
  try {
    await loadLinks();
  } catch (error) {
    if (!noteDisabled(error)) showError('links-error', messageOf(error));
  }
}

/** "Load more": the next page, after those shown; focus moves to the first new link. */
async function loadMore() {
  const cursor = links.next;
  if (cursor === null) return;
  const button = byId('load-more', HTMLButtonElement);
  clearErrors('links-error');
  let page;
  try {
    page = await busy(button, () => listLinks({ ...links.filter, order: links.order, limit: PAGE_SIZE, cursor }));
  } catch (error) {
    if (!noteDisabled(error)) showError('links-error', messageOf(error));
    return;
  }
  const known = new Set(links.list.map(linkKey));
  const added = page.links.filter((link) => !known.has(linkKey(link)));
  links.list = inOrder([...links.list, ...added], page.next);
  links.next = page.next;
  if (!filtered()) links.usage = knownUsage(links.list.length, links.next === null);
  changed();
  const first = added[0];
  const item = first === undefined ? null : byId('links').querySelector(`tr[data-key="${CSS.escape(linkKey(first))}"] .short-url`);
  // The button may be gone (the last page): focus never falls back to the page's start.
  if (item instanceof HTMLElement) item.focus();
  else if (button.hidden) byId('links-heading').focus();
  announce(`Loaded ${added.length} more ${added.length === 1 ? 'link' : 'links'}${links.next === null ? '; that is all of them' : ''}.`);
}

/** On sign-out: no trace of the account's links or the search is left. */
export function forgetLinks() {
  resetLinks();
  forgetSparklines();
  byId('links').replaceChildren();
  const form = byId('links-filter', HTMLFormElement);
  form.reset();
  byId('filter-sort', HTMLSelectElement).value = links.order;
  byId('bulk-tags', HTMLInputElement).value = '';
  clearErrors('links-error', 'bulk-error');
  byId('account-disabled').hidden = true;
  byId('links-count').textContent = '';
  byId('load-more').hidden = true;
  byId('bulk-bar').hidden = true;
}

/** The account's links as loaded so far. */
export function loadedLinks() {
  return links.list;
}

/**
 * Tags as typed ("News, launch ,2026") as the API takes them ("News,launch,2026").
 * @param {string} value
 */
export function tagsParameter(value) {
  return value.split(',').map((tag) => tag.trim()).filter((tag) => tag !== '').join(',');
}

async function refresh() {
  const button = byId('refresh-links', HTMLButtonElement);
  clearErrors('links-error');
  try {
    await busy(button, async () => {
      session.account = await getAccount();
      await loadLinks();
    });
    announce(`Links refreshed: ${links.usage.count}${links.usage.exact ? '' : ' or more'} of ${session.account?.MaxLinks}.`);
  } catch (error) {
    if (!noteDisabled(error)) showError('links-error', messageOf(error));
  }
}

/** The search the filter fields name now. */
function typedFilter() {
  return {
    q: byId('filter-q', HTMLInputElement).value.trim(),
    tag: tagsParameter(byId('filter-tag', HTMLInputElement).value),
    domain: byId('filter-domain-field').hidden ? '' : byId('filter-domain', HTMLSelectElement).value,
  };
}

/**
 * Loads the first page of the links matching `wanted`, and says how many were found.
 * @param {{ q: string, tag: string, domain: string }} wanted
 */
async function applyFilter(wanted) {
  clearErrors('links-error');
  const previous = links.filter;
  links.filter = wanted;
  try {
    await loadLinks();
  } catch (error) {
    links.filter = previous;
    if (!noteDisabled(error)) showError('links-error', messageOf(error));
    return;
  }
  // A later search replaced this one: it speaks for itself.
  if (links.filter !== wanted) return;
  const n = links.list.length;
  const more = links.next === null ? '' : ' or more';
  if (wanted.q === '' && wanted.tag === '' && wanted.domain === '') announce(`Showing all links: ${n}${more}.`);
  else announce(n === 0 ? 'No link matches this search.' : `${n}${more} ${n === 1 && more === '' ? 'link matches' : 'links match'}.`);
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let searchTimer;

/** Runs the typed search now, unless it is the one shown. */
function searchNow() {
  clearTimeout(searchTimer);
  searchTimer = undefined;
  const wanted = typedFilter();
  if (wanted.q === links.filter.q && wanted.tag === links.filter.tag && wanted.domain === links.filter.domain) return;
  void applyFilter(wanted);
}

/** Shows the links with this tag (a tag's button in a row). @param {string} tag */
async function filterByTag(tag) {
  byId('filter-tag', HTMLInputElement).value = tag;
  clearTimeout(searchTimer);
  await applyFilter(typedFilter());
  byId('filter-tag').focus();
}

async function clearFilter() {
  byId('filter-q', HTMLInputElement).value = '';
  byId('filter-tag', HTMLInputElement).value = '';
  byId('filter-domain', HTMLSelectElement).value = '';
  clearTimeout(searchTimer);
  await applyFilter({ q: '', tag: '', domain: '' });
  byId('filter-q').focus();
}

/** Listens to the list's controls. */
export function wireLinksList() {
  onLinksChange(renderLinks);
  byId('refresh-links', HTMLButtonElement).addEventListener('click', refresh);
  const filter = byId('links-filter', HTMLFormElement);
  filter.addEventListener('submit', (event) => {
    event.preventDefault();
    searchNow();
  });
  for (const id of ['filter-q', 'filter-tag']) {
    byId(id, HTMLInputElement).addEventListener('input', () => {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(searchNow, SEARCH_DELAY_MS);
    });
  }
  byId('filter-clear', HTMLButtonElement).addEventListener('click', clearFilter);
  byId('filter-domain', HTMLSelectElement).addEventListener('change', searchNow);
  const sort = byId('filter-sort', HTMLSelectElement);
  sort.value = links.order;
  sort.addEventListener('change', async () => {
    links.order = /** @type {Order} */ (sort.value);
    clearErrors('links-error');
    try {
      await loadLinks();
    } catch (error) {
      if (!noteDisabled(error)) showError('links-error', messageOf(error));
      return;
    }
    announce(`Sorted ${(sort.selectedOptions[0]?.textContent ?? '').toLowerCase()}.`);
  });
  byId('load-more', HTMLButtonElement).addEventListener('click', loadMore);
  wireLinksBulk();
}
