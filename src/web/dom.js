// Page helpers shared by the views: finding elements, error lines and screen-reader
// announcements, links, the clipboard. Whatever came from a user or the API reaches the page
// through textContent or an attribute, never as markup; links are made only for http(s)
// addresses.

/**
 * The element with this id, checked to be of the expected kind, so that a page and a script
 * out of step fail here, by name, rather than later on a missing property.
 * @template {HTMLElement} [T=HTMLElement]
 * @param {string} id
 * @param {{ new (): T, prototype: T }} [kind] HTMLElement when left out
 * @returns {T}
 */
export function byId(id, kind) {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`#${id} is missing`);
  const expected = kind ?? HTMLElement;
  if (!(element instanceof expected)) throw new Error(`#${id} is not a ${expected.name}`);
  return /** @type {T} */ (element);
}

/**
 * The first element under `root` matching `selector`, checked like byId.
 * @template {Element} T
 * @param {ParentNode} root
 * @param {string} selector
 * @param {{ new (): T, prototype: T }} kind
 * @returns {T}
 */
export function query(root, selector, kind) {
  const element = root.querySelector(selector);
  if (!(element instanceof kind)) throw new Error(`no ${kind.name} matches ${selector}`);
  return element;
}

/**
 * Says `text` in a live region. A fresh node in a later frame makes screen readers repeat an
 * identical message.
 * @param {HTMLElement} region
 * @param {string} text
 */
function speak(region, text) {
  region.textContent = '';
  requestAnimationFrame(() => { region.textContent = text; });
}

/** @param {string} text said politely: a result */
export function announce(text) {
  speak(byId('announce'), text);
}

/** @param {string} text said at once: an error */
export function alertText(text) {
  speak(byId('alert'), text);
}

/**
 * Shows an error line next to what it concerns, and marks the field invalid.
 * @param {string} id the error element
 * @param {string} text
 * @param {HTMLInputElement} [field]
 */
export function showError(id, text, field) {
  const element = byId(id);
  element.textContent = text;
  element.hidden = false;
  if (field !== undefined) field.setAttribute('aria-invalid', 'true');
  alertText(text);
}

/** @param {...string} ids error elements */
export function clearErrors(...ids) {
  for (const id of ids) {
    const element = byId(id);
    element.textContent = '';
    element.hidden = true;
  }
}

/** @param {HTMLElement} root */
export function clearInvalid(root) {
  for (const field of root.querySelectorAll('[aria-invalid]')) field.removeAttribute('aria-invalid');
}

/**
 * True for an absolute http(s) URL: the only kind that ever becomes a clickable link.
 * @param {string} value
 */
export function isWebUrl(value) {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * An element showing `text`: a link to it when it is an http(s) URL, plain text otherwise
 * (a `javascript:` or `data:` address is never clickable).
 * @param {string} text
 * @param {string} className
 * @returns {HTMLElement}
 */
export function linkOrText(text, className) {
  if (isWebUrl(text)) {
    const a = document.createElement('a');
    a.href = text;
    a.rel = 'noopener noreferrer';
    a.className = className;
    a.textContent = text;
    a.title = text;
    return a;
  }
  const span = document.createElement('span');
  span.className = className;
  span.textContent = text;
  span.title = text;
  // Focusable so a keyboard user can reveal the whole of a cut-off value, as on hover.
  span.tabIndex = 0;
  return span;
}

/**
 * Points an <a> at an http(s) address, or leaves it without href (so it is inert text).
 * @param {HTMLAnchorElement} a
 * @param {string} url
 */
export function setLink(a, url) {
  a.textContent = url;
  a.title = url;
  if (isWebUrl(url)) {
    a.href = url;
  } else {
    a.removeAttribute('href');
    a.tabIndex = 0;
  }
}

/** @param {number} n */
export function accessesText(n) {
  return n === 1 ? '1 access' : `${n} accesses`;
}

/**
 * Copies text to the clipboard; falls back to a selection copy where the Clipboard API is
 * missing (plain http on a non-local address is no secure context).
 * @param {string} text
 * @returns {Promise<boolean>}
 */
async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const active = document.activeElement;
    const area = document.createElement('textarea');
    area.value = text;
    area.readOnly = true;
    area.className = 'visually-hidden';
    document.body.append(area);
    area.select();
    let copied;
    try {
      copied = document.execCommand('copy');
    } catch {
      copied = false;
    }
    area.remove();
    if (active instanceof HTMLElement) active.focus();
    return copied;
  }
}

/**
 * Copies, then says so on the button and to screen readers (or says how to copy by hand).
 * @param {HTMLButtonElement} button
 * @param {string} text
 * @param {string} what what was copied, for the announcement
 */
export async function copyWithFeedback(button, text, what) {
  const copied = await copyText(text);
  if (!copied) {
    alertText(`Could not copy the ${what}: select it and copy it by hand.`);
    return;
  }
  const label = button.firstChild;
  if (label !== null && label.nodeType === Node.TEXT_NODE) {
    label.textContent = 'Copied';
    setTimeout(() => { label.textContent = 'Copy'; }, 2000);
  }
  announce(`Copied the ${what} to the clipboard.`);
}

/**
 * Runs an action with its button disabled, so a double click cannot send it twice.
 * @template T
 * @param {HTMLButtonElement | null} button
 * @param {() => Promise<T>} action
 * @returns {Promise<T>}
 */
export async function busy(button, action) {
  if (button !== null) button.disabled = true;
  try {
    return await action();
  } finally {
    if (button !== null) button.disabled = false;
  }
}

/**
 * The button that submitted a form, to keep it disabled while the request runs.
 * @param {SubmitEvent} event
 * @returns {HTMLButtonElement | null}
 */
export function submitterOf(event) {
  return event.submitter instanceof HTMLButtonElement ? event.submitter : null;
}

/**
 * The button a click listener sits on.
 * @param {Event} event
 * @returns {HTMLButtonElement}
 */
export function buttonOf(event) {
  const button = event.currentTarget;
  if (!(button instanceof HTMLButtonElement)) throw new Error('the listener is not on a button');
  return button;
}
