// The signed-in account's links: the "Shorten a URL" form (with its optional title, tags,
// expiry and visit limit), the list with its search, tag filter, sort and "Load more", each
// link's state and dates, its copy, QR, statistics, edit and delete actions, the edit and delete dialogs,
// and the "Links used" count of the account card.
import { ApiError, createLink, deleteLink, getAccount, listLinks, messageOf, updateLink } from './api.js';
import {
  accessesText,
  announce,
  busy,
  buttonOf,
  byId,
  clearErrorOnEdit,
  clearErrors,
  clearInvalid,
  copyWithFeedback,
  isWebUrl,
  linkOrText,
  localToRfc3339,
  query,
  rfc3339ToLocal,
  setLink,
  setTime,
  showError,
  submitterOf,
  withScheme,
} from './dom.js';
import { openQrDialog, qrCode } from './qr.js';
import { session } from './session.js';
import { forgetStats, openStats, refresh as refreshStats, statsShowing } from './stats-view.js';

/** @import { LinkDetails } from '../http/schemas.ts' */
/** @import { LinkFields } from './api.js' */

/** Links asked for at once: one page of the list, and each "Load more". */
export const PAGE_SIZE = 50;

/** The loaded links, in the API's order (oldest first). @type {LinkDetails[]} */
let links = [];
/** The cursor of the next page, or null when every matching link is loaded. @type {string | null} */
let next = null;
/** The search the list shows (empty: every link). */
let filter = { q: '', tag: '' };
/** How many links the account holds, when known: `exact` false means at least `count`. */
let usage = { count: 0, exact: true };
/** Set once the API says the account is disabled: its links no longer resolve. */
let accountDisabled = false;
/** The link the delete dialog is asking about. @type {LinkDetails | null} */
let deleting = null;
/** The link the edit dialog is changing. @type {LinkDetails | null} */
let editing = null;

/**
 * Short URLs are BASE_URL + "/" + code. The page names BASE_URL (the server writes it in);
 * this origin is the fallback for a page that somehow lacks it.
 */
function baseUrl() {
  const meta = document.querySelector('meta[name="shortlink-base-url"]');
  const value = meta instanceof HTMLMetaElement ? meta.content : '';
  return isWebUrl(value) ? value.replace(/\/+$/, '') : location.origin;
}
const base = baseUrl();

/** @param {string} code */
export function shortUrlOf(code) {
  return `${base}/${code}`;
}

/**
 * Where a link stands: it resolves (`active`), or it answers 410 and why.
 * @param {LinkDetails} link
 * @param {number} [now]
 * @returns {'active' | 'expired' | 'limit' | 'disabled'}
 */
export function stateOf(link, now = Date.now()) {
  if (accountDisabled) return 'disabled';
  if (link.ExpiresAt !== null && link.ExpiresAt !== undefined && Date.parse(link.ExpiresAt) <= now) return 'expired';
  if (link.MaxVisits !== null && link.MaxVisits !== undefined && link.Accesses >= link.MaxVisits) return 'limit';
  return 'active';
}

/** The words for each state, as the list and the lookup show them. */
export const STATE_TEXT = /** @type {const} */ ({
  active: 'Active',
  expired: 'Expired',
  limit: 'Visit limit reached',
  disabled: 'Disabled',
});

function renderUsage() {
  const account = session.account;
  if (account === null) return;
  byId('account-usage').textContent = `${usage.count}${usage.exact ? '' : '+'} / ${account.MaxLinks}`;
}

/** The loaded links in the order the sort box asks for (the API's order is oldest first). */
function sorted() {
  const order = byId('filter-sort', HTMLSelectElement).value;
  if (order === 'newest') return [...links].reverse();
  if (order === 'visits') {
    return links.map((link, i) => ({ link, i })).sort((a, b) => b.link.Accesses - a.link.Accesses || a.i - b.i).map(({ link }) => link);
  }
  return links;
}

/**
 * One link of the list.
 * @param {HTMLLIElement} prototype
 * @param {LinkDetails} link
 * @param {number} now
 */
function renderItem(prototype, link, now) {
  const item = /** @type {HTMLLIElement} */ (prototype.cloneNode(true));
  item.dataset.code = link.ShortCode;
  const url = shortUrlOf(link.ShortCode);
  setLink(query(item, '.short-url', HTMLAnchorElement), url);
  query(item, '.target-slot', HTMLElement).replaceWith(linkOrText(link.PointsTo, 'target'));

  const title = query(item, '.link-title', HTMLElement);
  title.textContent = link.Title ?? '';
  title.hidden = (link.Title ?? '') === '';
  const tags = query(item, '.tags', HTMLUListElement);
  const tagList = Array.isArray(link.Tags) ? link.Tags : [];
  tags.replaceChildren(...tagList.map((tag) => {
    const li = document.createElement('li');
    li.className = 'tag';
    li.textContent = tag;
    return li;
  }));
  tags.hidden = tagList.length === 0;

  const state = stateOf(link, now);
  item.dataset.state = state;
  const badge = query(item, '.state', HTMLElement);
  badge.textContent = STATE_TEXT[state];
  badge.dataset.state = state;
  query(item, '.accesses', HTMLElement).textContent = accessesText(link.Accesses);
  const limit = query(item, '.visit-limit', HTMLElement);
  limit.hidden = link.MaxVisits === null || link.MaxVisits === undefined;
  limit.textContent = limit.hidden ? '' : `of ${link.MaxVisits} allowed`;
  if (typeof link.DateCreated === 'string') setTime(query(item, '.created time', HTMLTimeElement), link.DateCreated);
  else query(item, '.created', HTMLElement).hidden = true;
  const expires = query(item, '.expires', HTMLElement);
  if (typeof link.ExpiresAt === 'string') {
    expires.hidden = false;
    query(expires, '.expires-label', HTMLElement).textContent = Date.parse(link.ExpiresAt) <= now ? 'Expired' : 'Expires';
    setTime(query(expires, 'time', HTMLTimeElement), link.ExpiresAt);
  }

  for (const hidden of item.querySelectorAll('.actions .visually-hidden')) hidden.textContent = ` ${link.ShortCode}`;
  query(item, '[data-action="copy"]', HTMLButtonElement).addEventListener('click', (event) =>
    copyWithFeedback(buttonOf(event), url, 'short link'));
  query(item, '[data-action="qr"]', HTMLButtonElement).addEventListener('click', () => openQrDialog(url));
  query(item, '[data-action="stats"]', HTMLButtonElement).addEventListener('click', (event) =>
    openStats(link.ShortCode, `${url} → ${link.PointsTo}`, buttonOf(event)));
  const edit = query(item, '[data-action="edit"]', HTMLButtonElement);
  edit.disabled = accountDisabled;
  edit.addEventListener('click', () => openEditDialog(link));
  query(item, '[data-action="delete"]', HTMLButtonElement).addEventListener('click', () => openDeleteDialog(link));
  return item;
}

/**
 * The line under the list: how many links it shows, whether they are a search's, and
 * whether more remain to load.
 * @param {number} n
 * @param {boolean} filtered
 * @param {boolean} more
 */
function countText(n, filtered, more) {
  if (n === 0) return '';
  const links = n === 1 ? 'link' : 'links';
  if (more) return `${n} ${filtered ? 'matching ' : ''}${links} shown; more remain.`;
  if (filtered) return `${n} ${n === 1 ? 'link matches' : 'links match'}.`;
  return `${n} ${links}.`;
}

function renderLinks() {
  const prototype = byId('link-item', HTMLTemplateElement).content.firstElementChild;
  if (!(prototype instanceof HTMLLIElement)) throw new Error('#link-item holds no <li>');
  const now = Date.now();
  byId('links').replaceChildren(...sorted().map((link) => renderItem(prototype, link, now)));
  const filtered = filter.q !== '' || filter.tag !== '';
  byId('links-empty').hidden = links.length > 0 || filtered;
  byId('links-none').hidden = links.length > 0 || !filtered;
  byId('load-more').hidden = next === null;
  byId('filter-clear').hidden = !filtered;
  byId('filter-sort-hint').hidden = next === null || byId('filter-sort', HTMLSelectElement).value === 'oldest';
  byId('links-count').textContent = countText(links.length, filtered, next !== null);
  byId('account-disabled').hidden = !accountDisabled;
  renderUsage();
}

/**
 * When an answer says the account is disabled, the page says so and shows every link as
 * disabled (they answer 410 now). Answers whether it was that.
 * @param {unknown} error
 */
export function noteDisabled(error) {
  if (!(error instanceof ApiError && error.status === 403 && /account is disabled/i.test(error.message))) return false;
  accountDisabled = true;
  renderLinks();
  return true;
}

/**
 * Shows these links as the account's (a new account's: none).
 * @param {LinkDetails[]} list
 */
export function showLinks(list) {
  links = list;
  next = null;
  usage = { count: list.length, exact: true };
  renderLinks();
}

/** Loads of the list started so far, and those still waiting for their answer. */
let loadsStarted = 0;
let loadsRunning = 0;
/**
 * Visits per shortcode heard from the live stream while a load was running.
 * @type {Map<string, number>}
 */
const visitsDuringLoad = new Map();

/**
 * Fetches and shows the first page of the account's links (those matching the search, if
 * one is set); throws the API's error, leaving the list as it was.
 */
export async function loadLinks() {
  const list = byId('links');
  list.setAttribute('aria-busy', 'true');
  const mine = ++loadsStarted;
  loadsRunning++;
  try {
    const page = await listLinks({ ...filter, limit: PAGE_SIZE });
    // Two loads can overlap (a create's, then Refresh): the newest alone is shown, so an
    // older answer arriving last cannot put back counts from before.
    if (mine !== loadsStarted) return;
    links = page.links;
    next = page.next;
    // Visits heard while this load ran may predate its answer: counted again rather than
    // lost (at worst one too high until the next load, never a state shown too early).
    for (const [code, n] of visitsDuringLoad) {
      const i = links.findIndex((link) => link.ShortCode === code);
      const link = links[i];
      if (link !== undefined) links[i] = { ...link, Accesses: link.Accesses + n };
    }
    visitsDuringLoad.clear();
    if (filter.q === '' && filter.tag === '') usage = { count: links.length, exact: next === null };
    clearErrors('links-error');
    renderLinks();
  } finally {
    loadsRunning--;
    if (loadsRunning === 0) {
      list.removeAttribute('aria-busy');
      visitsDuringLoad.clear();
    }
  }
}

/** "Load more": the next page, after those shown; focus moves to the first new link. */
async function loadMore() {
  const cursor = next;
  if (cursor === null) return;
  const button = byId('load-more', HTMLButtonElement);
  clearErrors('links-error');
  let page;
  try {
    page = await busy(button, () => listLinks({ ...filter, limit: PAGE_SIZE, cursor }));
  } catch (error) {
    if (!noteDisabled(error)) showError('links-error', messageOf(error));
    return;
  }
  const known = new Set(links.map((link) => link.ShortCode));
  const added = page.links.filter((link) => !known.has(link.ShortCode));
  links = [...links, ...added];
  next = page.next;
  if (filter.q === '' && filter.tag === '') usage = { count: links.length, exact: next === null };
  renderLinks();
  const first = added[0];
  const item = first === undefined ? null : byId('links').querySelector(`li[data-code="${CSS.escape(first.ShortCode)}"] .short-url`);
  // The button may be gone (the last page): focus never falls back to the page's start.
  if (item instanceof HTMLElement) item.focus();
  else if (button.hidden) byId('links-heading').focus();
  announce(`Loaded ${added.length} more ${added.length === 1 ? 'link' : 'links'}${next === null ? '; that is all of them' : ''}.`);
}

/** On sign-out: no trace of the account's links, the new link or the forms' input is left. */
export function forgetLinks() {
  links = [];
  next = null;
  filter = { q: '', tag: '' };
  usage = { count: 0, exact: true };
  accountDisabled = false;
  byId('links').replaceChildren();
  byId('new-link').hidden = true;
  byId('new-link-qr').replaceChildren();
  for (const id of ['link-form', 'links-filter', 'edit-form']) {
    const form = byId(id, HTMLFormElement);
    form.reset();
    clearInvalid(form);
  }
  byId('link-options', HTMLDetailsElement).open = false;
  for (const id of ['edit-dialog', 'delete-dialog']) byId(id, HTMLDialogElement).close();
  clearErrors(
    'link-url-error', 'link-short-error', 'link-title-error', 'link-tags-error', 'link-expires-error',
    'link-max-visits-error', 'link-form-error', 'links-error',
  );
  byId('account-disabled').hidden = true;
  byId('links-count').textContent = '';
  byId('load-more').hidden = true;
}

/** The account's links as loaded so far. */
export function loadedLinks() {
  return links;
}

/**
 * Which parameter an API error is about, from its status and wording; 'form' when none.
 * @param {ApiError} error
 * @returns {'url' | 'short' | 'title' | 'tags' | 'expires' | 'max_visits' | 'form'}
 */
function fieldOf(error) {
  const reason = error.message.replace(/^Unable to [^:]*:\s*/, '');
  if (error.status === 409) return 'short';
  if (error.status !== 400) return 'form';
  if (/^short\b|"short"|shortcode/i.test(reason)) return 'short';
  if (/^url\b|"url"/i.test(reason)) return 'url';
  if (/^title\b|"title"/i.test(reason)) return 'title';
  if (/^tags?\b|"tags?"|^each tag\b/i.test(reason)) return 'tags';
  if (/^expires\b|"expires"|expiry/i.test(reason)) return 'expires';
  if (/^max_visits\b|"max_visits"|visit limit/i.test(reason)) return 'max_visits';
  return 'form';
}

/** The input of each parameter in a form, by its id prefix (`link-`, `edit-`). */
const INPUT_SUFFIX = /** @type {const} */ ({
  url: 'url',
  short: 'short',
  title: 'title',
  tags: 'tags',
  expires: 'expires',
  max_visits: 'max-visits',
});

/**
 * Shows an API error beside the field it concerns (or the form's own line) and focuses it.
 * @param {'link' | 'edit'} prefix
 * @param {unknown} error
 */
function showFieldError(prefix, error) {
  const field = error instanceof ApiError ? fieldOf(error) : 'form';
  const id = field === 'form' ? null : `${prefix}-${INPUT_SUFFIX[field]}`;
  const input = id === null ? null : document.getElementById(id);
  if (input instanceof HTMLInputElement) {
    if (prefix === 'link' && input.closest('details') instanceof HTMLDetailsElement) byId('link-options', HTMLDetailsElement).open = true;
    showError(`${id}-error`, messageOf(error), input);
    input.focus();
  } else {
    showError(prefix === 'link' ? 'link-form-error' : 'edit-error', messageOf(error));
  }
}

/**
 * Tags as typed ("News, launch ,2026") as the API takes them ("News,launch,2026").
 * @param {string} value
 */
function tagsParameter(value) {
  return value.split(',').map((tag) => tag.trim()).filter((tag) => tag !== '').join(',');
}

/** @param {SubmitEvent} event */
async function submitLink(event) {
  event.preventDefault();
  const form = byId('link-form', HTMLFormElement);
  const urlInput = byId('link-url', HTMLInputElement);
  clearErrors(
    'link-url-error', 'link-short-error', 'link-title-error', 'link-tags-error', 'link-expires-error',
    'link-max-visits-error', 'link-form-error',
  );
  clearInvalid(form);
  const url = withScheme(urlInput.value.trim());
  if (url !== urlInput.value.trim()) urlInput.value = url;
  /** @type {LinkFields} */
  const body = { url };
  const short = byId('link-short', HTMLInputElement).value.trim();
  if (short !== '') body.short = short;
  const title = byId('link-title', HTMLInputElement).value.trim();
  if (title !== '') body.title = title;
  const tags = tagsParameter(byId('link-tags', HTMLInputElement).value);
  if (tags !== '') body.tags = tags;
  const expires = localToRfc3339(byId('link-expires', HTMLInputElement).value);
  if (expires !== '') body.expires = expires;
  const maxVisits = byId('link-max-visits', HTMLInputElement).value.trim();
  if (maxVisits !== '') body.max_visits = maxVisits;

  let shortUrl;
  try {
    shortUrl = await busy(submitterOf(event), () => createLink(body));
  } catch (error) {
    if (!noteDisabled(error)) showFieldError('link', error);
    else showError('link-form-error', messageOf(error));
    return;
  }
  setLink(byId('new-link-url', HTMLAnchorElement), shortUrl);
  byId('new-link-qr').replaceChildren(qrCode(shortUrl, `QR code for ${shortUrl}`));
  byId('new-link').hidden = false;
  form.reset();
  if (usage.exact) usage = { count: usage.count + 1, exact: true };
  announce(`Short link created: ${shortUrl}`);
  byId('new-link-heading').focus();
  try {
    await loadLinks();
  } catch (error) {
    if (!noteDisabled(error)) showError('links-error', messageOf(error));
  }
}

async function refresh() {
  const button = byId('refresh-links', HTMLButtonElement);
  clearErrors('links-error');
  try {
    await busy(button, async () => {
      session.account = await getAccount();
      await loadLinks();
    });
    announce(`Links refreshed: ${usage.count}${usage.exact ? '' : ' or more'} of ${session.account?.MaxLinks}.`);
  } catch (error) {
    if (!noteDisabled(error)) showError('links-error', messageOf(error));
  }
}

/** @param {SubmitEvent} event */
async function submitFilter(event) {
  event.preventDefault();
  const q = byId('filter-q', HTMLInputElement).value.trim();
  const tag = tagsParameter(byId('filter-tag', HTMLInputElement).value);
  await applyFilter({ q, tag }, submitterOf(event));
}

/**
 * Loads the first page of the links matching `wanted`, and says how many were found.
 * @param {{ q: string, tag: string }} wanted
 * @param {HTMLButtonElement | null} button
 */
async function applyFilter(wanted, button) {
  clearErrors('links-error');
  const previous = filter;
  filter = wanted;
  try {
    await busy(button, loadLinks);
  } catch (error) {
    filter = previous;
    if (!noteDisabled(error)) showError('links-error', messageOf(error));
    return;
  }
  const n = links.length;
  const more = next === null ? '' : ' or more';
  if (wanted.q === '' && wanted.tag === '') announce(`Showing all links: ${n}${more}.`);
  else announce(n === 0 ? 'No link matches this search.' : `${n}${more} ${n === 1 && more === '' ? 'link matches' : 'links match'}.`);
}

async function clearFilter() {
  byId('filter-q', HTMLInputElement).value = '';
  byId('filter-tag', HTMLInputElement).value = '';
  await applyFilter({ q: '', tag: '' }, null);
  byId('filter-q').focus();
}

/** @param {LinkDetails} link */
function openDeleteDialog(link) {
  deleting = link;
  byId('delete-code').textContent = link.ShortCode;
  clearErrors('delete-error');
  byId('delete-dialog', HTMLDialogElement).showModal();
}

async function confirmDelete() {
  const link = deleting;
  if (link === null) return;
  const dialog = byId('delete-dialog', HTMLDialogElement);
  clearErrors('delete-error');
  try {
    await busy(byId('delete-confirm', HTMLButtonElement), () => deleteLink(link.ShortCode));
  } catch (error) {
    // Already gone (deleted elsewhere): the goal is reached; anything else stays visible.
    if (!(error instanceof ApiError && error.status === 404)) {
      noteDisabled(error);
      showError('delete-error', messageOf(error));
      return;
    }
  }
  deleting = null;
  dialog.close('deleted');
  links = links.filter((l) => l.ShortCode !== link.ShortCode);
  // Its statistics went with it.
  if (statsShowing() === link.ShortCode) forgetStats();
  if (usage.exact) usage = { count: Math.max(0, usage.count - 1), exact: true };
  renderLinks();
  byId('links-heading').focus();
  announce(`Deleted the short link ${link.ShortCode}.`);
  try {
    await loadLinks();
  } catch (error) {
    if (!noteDisabled(error)) showError('links-error', messageOf(error));
  }
}

const EDIT_ERRORS = ['edit-url-error', 'edit-title-error', 'edit-tags-error', 'edit-expires-error', 'edit-max-visits-error', 'edit-error'];

/** @param {LinkDetails} link */
function openEditDialog(link) {
  editing = link;
  const form = byId('edit-form', HTMLFormElement);
  clearErrors(...EDIT_ERRORS);
  clearInvalid(form);
  byId('edit-code').textContent = link.ShortCode;
  byId('edit-url', HTMLInputElement).value = link.PointsTo;
  byId('edit-title', HTMLInputElement).value = link.Title ?? '';
  byId('edit-tags', HTMLInputElement).value = (link.Tags ?? []).join(', ');
  byId('edit-expires', HTMLInputElement).value = rfc3339ToLocal(link.ExpiresAt ?? null);
  byId('edit-max-visits', HTMLInputElement).value = link.MaxVisits === null || link.MaxVisits === undefined ? '' : String(link.MaxVisits);
  byId('edit-dialog', HTMLDialogElement).showModal();
  byId('edit-url').focus();
}

/**
 * The parameters of an edit: only the fields that differ from the link as loaded, an emptied
 * one as '' (which clears it).
 * @param {LinkDetails} link
 * @returns {LinkFields}
 */
function changedFields(link) {
  /** @type {LinkFields} */
  const fields = {};
  const urlInput = byId('edit-url', HTMLInputElement);
  const url = withScheme(urlInput.value.trim());
  if (url !== urlInput.value.trim()) urlInput.value = url;
  if (url !== link.PointsTo) fields.url = url;
  const title = byId('edit-title', HTMLInputElement).value.trim();
  if (title !== (link.Title ?? '')) fields.title = title;
  const tags = tagsParameter(byId('edit-tags', HTMLInputElement).value);
  if (tags.toLowerCase() !== (link.Tags ?? []).join(',')) fields.tags = tags;
  const expires = byId('edit-expires', HTMLInputElement).value;
  if (expires !== rfc3339ToLocal(link.ExpiresAt ?? null)) fields.expires = localToRfc3339(expires);
  const maxVisits = byId('edit-max-visits', HTMLInputElement).value.trim();
  if (maxVisits !== (link.MaxVisits === null || link.MaxVisits === undefined ? '' : String(link.MaxVisits))) fields.max_visits = maxVisits;
  return fields;
}

/** @param {SubmitEvent} event */
async function submitEdit(event) {
  event.preventDefault();
  const link = editing;
  if (link === null) return;
  const dialog = byId('edit-dialog', HTMLDialogElement);
  clearErrors(...EDIT_ERRORS);
  clearInvalid(byId('edit-form', HTMLFormElement));
  const fields = changedFields(link);
  if (Object.keys(fields).length === 0) {
    dialog.close('unchanged');
    announce(`Nothing to change on ${link.ShortCode}.`);
    return;
  }
  /** @type {LinkDetails} */
  let updated;
  try {
    updated = await busy(byId('edit-save', HTMLButtonElement), () => updateLink(link.ShortCode, fields));
  } catch (error) {
    noteDisabled(error);
    showFieldError('edit', error);
    return;
  }
  editing = null;
  links = links.map((l) => (l.ShortCode === link.ShortCode ? updated : l));
  dialog.close('saved');
  renderLinks();
  const button = byId('links').querySelector(`li[data-code="${CSS.escape(link.ShortCode)}"] [data-action="edit"]`);
  if (button instanceof HTMLElement) button.focus();
  else byId('links-heading').focus();
  announce(`Saved the changes to ${link.ShortCode}. It is ${STATE_TEXT[stateOf(updated)].toLowerCase()}.`);
}

/** How long a count that just changed stays marked. */
const LIVE_MARK_MS = 2000;
/** The open statistics follow visits at most this often. */
const LIVE_STATS_MS = 1000;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let liveStats;

/**
 * Shows one of the account's live events (live.js): visits raise the counts of the links
 * shown, in place, with a brief mark, and reload open statistics they belong to (at most
 * once a second); an edit redraws its link; a link created or deleted
 * elsewhere joins or leaves the list.
 * @param {import('./live.js').LiveEvent} event
 */
export function applyLiveEvent(event) {
  if (session.code === null) return;
  if (event.type === 'link.visited') {
    /** @type {Map<string, number>} */
    const counts = new Map();
    for (const visit of Array.isArray(event.data?.visits) ? event.data.visits : []) {
      if (typeof visit?.ShortCode === 'string') counts.set(visit.ShortCode, (counts.get(visit.ShortCode) ?? 0) + 1);
    }
    for (const [code, n] of counts) {
      if (loadsRunning > 0) visitsDuringLoad.set(code, (visitsDuringLoad.get(code) ?? 0) + n);
      const i = links.findIndex((link) => link.ShortCode === code);
      const link = links[i];
      if (link === undefined) continue;
      const counted = { ...link, Accesses: link.Accesses + n };
      links[i] = counted;
      redrawItem(counted, stateOf(counted) !== stateOf(link));
    }
    // The statistics view, when open on the account or on a link just visited, loads again.
    const open = statsShowing();
    if (open !== undefined && (open === null || counts.has(open)) && liveStats === undefined) {
      liveStats = setTimeout(() => {
        liveStats = undefined;
        void refreshStats();
      }, LIVE_STATS_MS);
    }
  } else if (event.type === 'link.updated' && typeof event.data?.ShortCode === 'string') {
    const i = links.findIndex((link) => link.ShortCode === event.data.ShortCode);
    if (i === -1) return;
    links[i] = event.data;
    redrawItem(event.data, true);
  } else if (event.type === 'link.created' && typeof event.data?.ShortCode === 'string') {
    // Joins the list when the whole list is shown (no search, no page left to load).
    if (filter.q !== '' || filter.tag !== '' || next !== null || links.some((link) => link.ShortCode === event.data.ShortCode)) return;
    links = [...links, event.data];
    if (usage.exact) usage = { count: links.length, exact: true };
    renderLinks();
  } else if (event.type === 'link.deleted' && typeof event.data?.ShortCode === 'string') {
    if (!links.some((link) => link.ShortCode === event.data.ShortCode)) return;
    links = links.filter((link) => link.ShortCode !== event.data.ShortCode);
    if (usage.exact && filter.q === '' && filter.tag === '') usage = { count: Math.max(0, usage.count - 1), exact: true };
    renderLinks();
  }
}

/**
 * Shows a link's new count (and, when `whole`, everything else about it) where it is in the
 * list, marked for a moment. Redrawing keeps the focus on the same action.
 * @param {LinkDetails} link
 * @param {boolean} whole
 */
function redrawItem(link, whole) {
  const item = byId('links').querySelector(`li[data-code="${CSS.escape(link.ShortCode)}"]`);
  if (!(item instanceof HTMLLIElement)) return;
  let shown = item;
  if (whole) {
    const prototype = byId('link-item', HTMLTemplateElement).content.firstElementChild;
    if (!(prototype instanceof HTMLLIElement)) return;
    const focused = document.activeElement instanceof HTMLElement && item.contains(document.activeElement)
      ? document.activeElement.dataset.action ?? null : null;
    shown = renderItem(prototype, link, Date.now());
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

/** Listens to the links part of the page. */
export function wireLinksView() {
  byId('link-form', HTMLFormElement).addEventListener('submit', submitLink);
  for (const field of ['url', 'short', 'title', 'tags', 'expires', 'max-visits']) {
    clearErrorOnEdit(byId(`link-${field}`, HTMLInputElement), `link-${field}-error`, 'link-form-error');
  }
  byId('copy-new-link', HTMLButtonElement).addEventListener('click', (event) =>
    copyWithFeedback(buttonOf(event), byId('new-link-url').textContent ?? '', 'short link'));
  byId('refresh-links', HTMLButtonElement).addEventListener('click', refresh);
  byId('links-filter', HTMLFormElement).addEventListener('submit', submitFilter);
  byId('filter-clear', HTMLButtonElement).addEventListener('click', clearFilter);
  byId('filter-sort', HTMLSelectElement).addEventListener('change', () => {
    renderLinks();
    const order = byId('filter-sort', HTMLSelectElement).selectedOptions[0]?.textContent ?? '';
    announce(`Sorted ${order.toLowerCase()}${next === null ? '' : ', among the links loaded so far'}.`);
  });
  byId('load-more', HTMLButtonElement).addEventListener('click', loadMore);
  byId('delete-confirm', HTMLButtonElement).addEventListener('click', confirmDelete);
  byId('delete-dialog', HTMLDialogElement).addEventListener('close', () => { deleting = null; });
  byId('edit-form', HTMLFormElement).addEventListener('submit', submitEdit);
  for (const field of ['url', 'title', 'tags', 'expires', 'max-visits']) {
    clearErrorOnEdit(byId(`edit-${field}`, HTMLInputElement), `edit-${field}-error`, 'edit-error');
  }
  byId('edit-cancel', HTMLButtonElement).addEventListener('click', () => byId('edit-dialog', HTMLDialogElement).close('cancel'));
  byId('edit-dialog', HTMLDialogElement).addEventListener('close', () => { editing = null; });
}
