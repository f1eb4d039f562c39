// "Look up a shortcode": open to anyone, signed in or not. One of the signed-in account's own
// links is shown from the account's list, which counts no access; any other is resolved.
import { listLinks, lookUp, messageOf } from './api.js';
import {
  accessesText,
  announce,
  busy,
  byId,
  clearErrorOnEdit,
  clearErrors,
  clearInvalid,
  isWebUrl,
  linkOrText,
  showError,
  submitterOf,
} from './dom.js';
import { loadedLinks } from './links-list.js';
import { STATE_TEXT, stateOf } from './links-state.js';
import { session } from './session.js';

/** @import { Link, LinkDetails } from '../http/schemas.ts' */

/** Pages of a search the lookup reads at most to find an own link before resolving instead. */
const OWN_SEARCH_PAGES = 3;

/**
 * The signed-in account's link with exactly this code, or null (signed out, or not its own):
 * from the links already loaded, else from a search of the account's links.
 * @param {string} code
 * @returns {Promise<LinkDetails | null>}
 */
async function ownLink(code) {
  if (session.code === null) return null;
  const loaded = loadedLinks().find((link) => link.ShortCode === code);
  if (loaded !== undefined) return loaded;
  let cursor = null;
  for (let page = 0; page < OWN_SEARCH_PAGES; page++) {
    const found = await listLinks({ q: code, limit: 1000, cursor });
    const match = found.links.find((link) => link.ShortCode === code);
    if (match !== undefined) return match;
    if (found.next === null) return null;
    cursor = found.next;
  }
  return null;
}

/**
 * The code in what was typed: a bare shortcode, or the last path segment of a short URL.
 * @param {string} value
 */
function codeFrom(value) {
  if (isWebUrl(value)) {
    const path = new URL(value).pathname;
    const segment = path.slice(path.lastIndexOf('/') + 1);
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  }
  return value;
}

/** @param {SubmitEvent} event */
async function submitLookup(event) {
  event.preventDefault();
  const form = byId('lookup-form', HTMLFormElement);
  const input = byId('lookup-code', HTMLInputElement);
  clearErrors('lookup-error');
  clearInvalid(form);
  byId('lookup-result').hidden = true;
  const code = codeFrom(input.value.trim());
  if (code === '') {
    showError('lookup-error', 'Enter a shortcode.', input);
    input.focus();
    return;
  }
  /** @type {Link | LinkDetails} */
  let link;
  /** @type {LinkDetails | null} */
  let own = null;
  try {
    link = await busy(submitterOf(event), async () => {
      // The account's own list failing (an outage, a rotated code) is no reason not to resolve.
      own = await ownLink(code).catch(() => null);
      return own ?? lookUp(code);
    });
  } catch (error) {
    showError('lookup-error', messageOf(error), input);
    input.focus();
    return;
  }
  byId('lookup-short').textContent = link.ShortCode;
  byId('lookup-target').replaceChildren(linkOrText(link.PointsTo, 'target-full'));
  byId('lookup-accesses').textContent = String(link.Accesses);
  const state = own === null ? null : STATE_TEXT[stateOf(own)];
  byId('lookup-state').textContent = state ?? '';
  byId('lookup-state-row').hidden = state === null;
  byId('lookup-own').hidden = own === null;
  byId('lookup-result').hidden = false;
  announce(`${link.ShortCode} points to ${link.PointsTo} and has ${accessesText(link.Accesses)}` +
    `${state === null ? '' : `. It is one of your links (${state.toLowerCase()}); no access was counted`}.`);
}

/** Listens to the lookup form. */
export function wireLookupView() {
  byId('lookup-form', HTMLFormElement).addEventListener('submit', submitLookup);
  clearErrorOnEdit(byId('lookup-code', HTMLInputElement), 'lookup-error');
}
