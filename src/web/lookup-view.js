// "Look up a shortcode": open to anyone, signed in or not.
import { lookUp, messageOf } from './api.js';
import { accessesText, announce, busy, byId, clearErrors, clearInvalid, isWebUrl, linkOrText, showError, submitterOf } from './dom.js';

/** @import { Link } from '../http/schemas.ts' */

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
  /** @type {Link} */
  let link;
  try {
    link = await busy(submitterOf(event), () => lookUp(code));
  } catch (error) {
    showError('lookup-error', messageOf(error), input);
    input.focus();
    return;
  }
  byId('lookup-short').textContent = link.ShortCode;
  byId('lookup-target').replaceChildren(linkOrText(link.PointsTo, 'target-full'));
  byId('lookup-accesses').textContent = String(link.Accesses);
  byId('lookup-result').hidden = false;
  announce(`${link.ShortCode} points to ${link.PointsTo} and has ${accessesText(link.Accesses)}.`);
}

/** Listens to the lookup form. */
export function wireLookupView() {
  byId('lookup-form', HTMLFormElement).addEventListener('submit', submitLookup);
}
