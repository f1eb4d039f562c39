// The account's links as this page knows them: one state object shared by the list
// (links-list.js), the create form (link-create.js), the dialogs (link-edit.js,
// link-delete.js) and live updates (links-live.js), with the facts derived from a link
// (its short URL, its state). Whoever changes the state calls changed(); the list redraws.
import { isDisabledError } from './api.js';
import { byId, isWebUrl } from './dom.js';
import { session } from './session.js';

/** @import { Domain, LinkDetails } from '../http/schemas.ts' */
/** @import { LinkId, Order } from './api.js' */

/** Links asked for at once: one page of the list, and each "Load more". */
export const PAGE_SIZE = 50;

export const links = {
  /** The loaded links, in the order the list asked for. @type {LinkDetails[]} */
  list: [],
  /** The cursor of the next page, or null when every matching link is loaded. @type {string | null} */
  next: null,
  /** The search the list shows (empty: every link; `domain` a host, empty: every domain). */
  filter: { q: '', tag: '', domain: '' },
  /** The domains the account may use, the default first (GET /v1/domains, once per sign-in). @type {Domain[]} */
  domains: [],
  /** The order the list asks the API for. @type {Order} */
  order: /** @type {Order} */ ('newest'),
  /** How many links the account holds, when known: `exact` false means at least `count`. */
  usage: { count: 0, exact: true },
  /** Set once the API says the account is disabled: its links no longer resolve. */
  accountDisabled: false,
  /** The links ticked for a bulk action, by linkKey. @type {Set<string>} */
  selected: new Set(),
};

/** @type {Set<() => void>} */
const listeners = new Set();

/** @param {() => void} listener called after every change of the state */
export function onLinksChange(listener) {
  listeners.add(listener);
}

/** Tells every listener (the list, the counts) that the state changed. */
export function changed() {
  for (const listener of listeners) listener();
}

/** Whether a search is set. */
export function filtered() {
  return links.filter.q !== '' || links.filter.tag !== '' || links.filter.domain !== '';
}

/** Back to nothing known (sign-out). */
export function resetLinks() {
  links.list = [];
  links.next = null;
  links.filter = { q: '', tag: '', domain: '' };
  links.domains = [];
  links.order = 'newest';
  links.usage = { count: 0, exact: true };
  links.accountDisabled = false;
  links.selected.clear();
}

/**
 * The default domain's short URLs are BASE_URL + "/" + code. The page names BASE_URL (the
 * server writes it in); this origin is the fallback for a page that somehow lacks it.
 */
function baseUrl() {
  const meta = document.querySelector('meta[name="shortlink-base-url"]');
  const value = meta instanceof HTMLMetaElement ? meta.content : '';
  return isWebUrl(value) ? value.replace(/\/+$/, '') : location.origin;
}
/** @type {string | undefined} */
let base;

/**
 * The origin of a domain's short URLs: the default's (null) is BASE_URL; another's is its
 * `Origin` from GET /v1/domains, or, for one registered since the list was loaded, its host
 * under BASE_URL's scheme.
 * @param {string | null | undefined} host
 */
export function originOf(host) {
  base ??= baseUrl();
  if (host === null || host === undefined || host === '') return base;
  const known = links.domains.find((domain) => domain.Host === host);
  if (known !== undefined) return known.Origin.replace(/\/+$/, '');
  return `${new URL(base).protocol}//${host}`;
}

/**
 * A link's short URL: its domain's origin + "/" + its shortcode.
 * @param {LinkId} link
 */
export function shortUrlOf(link) {
  return `${originOf(link.Domain)}/${link.ShortCode}`;
}

/**
 * What tells one link from another: a shortcode is unique per domain only (CONTRACT §8.1).
 * The shortcode alone on the default domain, `host/code` on another (a shortcode holds no
 * slash); also the parameter of the statistics' address.
 * @param {LinkId} link
 */
export function linkKey(link) {
  return typeof link.Domain === 'string' && link.Domain !== '' ? `${link.Domain}/${link.ShortCode}` : link.ShortCode;
}

/**
 * The link a key names (the inverse of linkKey).
 * @param {string} key
 * @returns {{ ShortCode: string, Domain: string | null }}
 */
export function parseLinkKey(key) {
  const slash = key.lastIndexOf('/');
  return slash === -1 ? { ShortCode: key, Domain: null } : { ShortCode: key.slice(slash + 1), Domain: key.slice(0, slash) };
}

/**
 * Whether two descriptions name the same link (same domain, same shortcode).
 * @param {LinkId} a
 * @param {LinkId} b
 */
export function sameLink(a, b) {
  return linkKey(a) === linkKey(b);
}

/**
 * Where a link stands: it resolves (`active`), or it answers 410 and why.
 * @param {LinkDetails} link
 * @param {number} [now]
 * @returns {'active' | 'expired' | 'limit' | 'disabled'}
 */
export function stateOf(link, now = Date.now()) {
  if (links.accountDisabled) return 'disabled';
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

/**
 * The links in `order`, as the API orders them (CONTRACT §7.1: visits most first, ties newest
 * first). Used on a complete list only, where it gives the API's order whatever the server.
 * @param {LinkDetails[]} list
 * @param {Order} order
 */
export function sortLinks(list, order) {
  const created = (/** @type {LinkDetails} */ link) => link.DateCreated ?? '';
  const indexed = list.map((link, i) => ({ link, i }));
  const newest = (/** @type {{ link: LinkDetails, i: number }} */ a, /** @type {{ link: LinkDetails, i: number }} */ b) =>
    created(b.link).localeCompare(created(a.link));
  if (order === 'newest') indexed.sort(newest);
  else if (order === 'visits') indexed.sort((a, b) => b.link.Accesses - a.link.Accesses || newest(a, b));
  else indexed.sort((a, b) => created(a.link).localeCompare(created(b.link)));
  return indexed.map(({ link }) => link);
}

/**
 * When an answer says the account is disabled, the page says so and shows every link as
 * disabled (they answer 410 now). Answers whether it was that.
 * @param {unknown} error
 */
export function noteDisabled(error) {
  if (!isDisabledError(error)) return false;
  links.accountDisabled = true;
  changed();
  return true;
}

/** The "links used" count, where the page shows it. */
export function renderUsage() {
  const account = session.account;
  if (account === null) return;
  const text = `${links.usage.count}${links.usage.exact ? '' : '+'} / ${account.MaxLinks}`;
  byId('account-usage').textContent = text;
  byId('account-links').textContent = text;
}
