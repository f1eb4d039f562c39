// Which view the signed-in page shows, named by the address's hash so that each view has its
// own address and the browser's back and forward buttons move between them:
// `#/links` (the default), `#/stats` (the account's statistics), `#/stats/<shortcode>` (one
// link's), `#/integrations` and `#/account`. A hash needs no server route and no build step.
import { byId } from './dom.js';

/** @typedef {'links' | 'stats' | 'integrations' | 'account'} View */
/** @typedef {{ view: View, param: string | null }} Route */

const VIEWS = /** @type {const} */ (['links', 'stats', 'integrations', 'account']);

/** What each view's heading says in the tab's title. */
const TITLES = /** @type {Record<View, string>} */ ({
  links: 'Links',
  stats: 'Statistics',
  integrations: 'Integrations',
  account: 'Account',
});

/**
 * The route a hash names; anything unknown is the links view.
 * @param {string} hash
 * @returns {Route}
 */
export function parseRoute(hash) {
  const [name = '', ...rest] = hash.replace(/^#\/?/, '').split('/');
  const view = /** @type {View | undefined} */ (VIEWS.find((v) => v === name));
  if (view === undefined) return { view: 'links', param: null };
  let param = rest.length === 0 || rest.join('/') === '' ? null : rest.join('/');
  if (param !== null) {
    try {
      param = decodeURIComponent(param);
    } catch {
      param = null;
    }
  }
  return { view, param: view === 'stats' ? param : null };
}

/**
 * The hash of a route.
 * @param {View} view
 * @param {string | null} [param]
 */
export function hashOf(view, param = null) {
  return `#/${view}${param === null ? '' : `/${encodeURIComponent(param)}`}`;
}

/** @type {Map<View, (route: Route) => void>} */
const handlers = new Map();
let signedIn = false;

/**
 * Runs `handler` each time `view` is shown (on navigation, and once at sign-in when it is
 * the view the address names).
 * @param {View} view
 * @param {(route: Route) => void} handler
 */
export function onView(view, handler) {
  handlers.set(view, handler);
}

/** The route the address names now. */
export function currentRoute() {
  return parseRoute(location.hash);
}

/**
 * Shows the view the address names (signed in), or none (signed out).
 * @param {{ focus: boolean }} options focus the view's heading (after a navigation)
 */
function show({ focus }) {
  byId('nav').hidden = !signedIn;
  const route = currentRoute();
  for (const view of VIEWS) {
    byId(`view-${view}`).hidden = !signedIn || view !== route.view;
  }
  for (const a of byId('nav').querySelectorAll('a[data-view]')) {
    if (a.getAttribute('data-view') === route.view) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  // The lookup is for anyone: below the way in when signed out, in the Account view when in.
  byId('lookup-form').hidden = signedIn && route.view !== 'account';
  document.title = signedIn ? `${TITLES[route.view]} · Shortlink` : 'Shortlink';
  if (!signedIn) return;
  handlers.get(route.view)?.(route);
  if (focus) {
    const heading = byId(`view-${route.view}`).querySelector('h2');
    if (heading instanceof HTMLElement) heading.focus();
  }
}

/**
 * Goes to a route: a new history entry, as a link would make.
 * @param {View} view
 * @param {string | null} [param]
 */
export function go(view, param = null) {
  const hash = hashOf(view, param);
  if (location.hash === hash) show({ focus: true });
  else location.hash = hash;
}

/**
 * The page is signed in (the views show) or out (none does).
 * @param {boolean} on
 */
export function setSignedIn(on) {
  signedIn = on;
  show({ focus: false });
}

/** Follows the address's hash. */
export function wireRouter() {
  window.addEventListener('hashchange', () => show({ focus: true }));
}
