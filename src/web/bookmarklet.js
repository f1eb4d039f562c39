// "Shorten this page" from any site: a bookmarklet that opens this page with the site's
// address in `?url=`, and the prefill that reads it. The bookmarklet only navigates: it
// fetches nothing from the visited page (whose own CSP would refuse a connection to us) and
// never sees the access code, which stays with this origin. The form is filled, not sent: a
// link elsewhere that points at `/?url=…` cannot make anyone create a link unawares.
import { announce, byId } from './dom.js';

/** The query parameter the bookmarklet fills in. */
const PARAMETER = 'url';

/**
 * The bookmarklet's address for a UI at `origin`. Single quotes: an origin cannot hold one
 * (so it cannot break out of the string), and unlike double quotes URLs keep them as they are.
 * @param {string} origin
 * @returns {string}
 */
export function bookmarkletFor(origin) {
  return `javascript:void(location.href='${origin}/?${PARAMETER}='+encodeURIComponent(location.href))`;
}

/**
 * Fills the link form from `?url=` (the bookmarklet's visit) and takes the parameter out of the
 * address, so that a reload or a shared address does not carry it on.
 */
export function prefillFromAddress() {
  const params = new URLSearchParams(location.search);
  const url = params.get(PARAMETER);
  if (url === null || url.trim() === '') return;
  byId('link-url', HTMLInputElement).value = url.trim();
  byId('create-box', HTMLDetailsElement).open = true;
  params.delete(PARAMETER);
  const rest = params.toString();
  // The form is in the Links view (the default): an address naming another view names it instead.
  const hash = location.hash === '' || location.hash === '#' ? '' : '#/links';
  history.replaceState(history.state, '', `${location.pathname}${rest === '' ? '' : `?${rest}`}${hash}`);
}

/** Sets the bookmarklet link up; clicking it here only explains what it is for. */
export function wireBookmarklet() {
  const link = byId('bookmarklet', HTMLAnchorElement);
  link.href = bookmarkletFor(location.origin);
  // Followed on this page, a javascript: address would be refused by the CSP (rightly): say
  // what to do instead.
  link.addEventListener('click', (event) => {
    event.preventDefault();
    byId('bookmarklet-hint').hidden = false;
    announce('Drag the link to your bookmarks bar, then use it on any page to shorten that page.');
  });
}
