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
 * @param {HTMLElement} [field] an input, or the group it concerns
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

/**
 * Takes a field's error away as soon as the field is edited: the line beside it, its invalid
 * mark, and (when the form shows one) the form's general error, which may have been about it.
 * @param {HTMLElement} field an input, or a group whose inputs' edits bubble up
 * @param {string} errorId the field's error element
 * @param {string} [formErrorId] the form's general error element, if any
 */
export function clearErrorOnEdit(field, errorId, formErrorId) {
  field.addEventListener('input', () => {
    if (!field.hasAttribute('aria-invalid') && byId(errorId).hidden) return;
    field.removeAttribute('aria-invalid');
    clearErrors(errorId);
    if (formErrorId !== undefined) clearErrors(formErrorId);
  });
}

/**
 * A time as this browser's locale writes it (date and time, short), or the text itself when
 * it is no date.
 * @param {string} iso
 */
export function dateText(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * Fills a <time> with a timestamp: machine-readable in `datetime`, readable in the text.
 * @param {HTMLTimeElement} element
 * @param {string} iso
 */
export function setTime(element, iso) {
  element.dateTime = iso;
  element.textContent = dateText(iso);
}

/** @param {number} n */
function pad(n) {
  return String(n).padStart(2, '0');
}

/**
 * A `datetime-local` field's value (the device's local time, no zone) as RFC 3339 with this
 * device's offset at that moment, e.g. `2026-12-01T09:30:00+01:00`; '' for an empty field.
 * A value the browser could not have produced is sent as it is, for the API to refuse.
 * @param {string} value
 */
export function localToRfc3339(value) {
  if (value === '') return '';
  const date = new Date(value);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(value) || Number.isNaN(date.getTime())) return value;
  const offset = -date.getTimezoneOffset();
  const zone = offset === 0 ? 'Z' : `${offset > 0 ? '+' : '-'}${pad(Math.trunc(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}${zone}`;
}

/**
 * An RFC 3339 time as a `datetime-local` field's value, in this device's time zone.
 * @param {string | null} iso
 */
export function rfc3339ToLocal(iso) {
  if (iso === null) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/**
 * What the user typed as a target, with `https://` added when it is a bare host and path
 * (`example.com/x`, `localhost:8080/x`). Anything else (a URL with a scheme, words, a
 * `javascript:` address) is left exactly as typed, for the API to accept or refuse: the API
 * itself stays strict.
 * @param {string} value
 */
export function withScheme(value) {
  if (value === '' || /\s/.test(value)) return value;
  let candidate;
  if (value.startsWith('//')) candidate = `https:${value}`;
  // A scheme is a letter, more scheme characters, then a colon not followed by a port number.
  else if (/^[a-z][a-z0-9+.-]*:(?!\d)/i.test(value)) return value;
  else candidate = `https://${value}`;
  let host;
  try {
    host = new URL(candidate).hostname;
  } catch {
    return value;
  }
  const isHost = host === 'localhost' || host.startsWith('[') || /^[^.]+(\.[^.]+)+$/.test(host);
  return isHost && /[a-z0-9\]]$/i.test(host) ? candidate : value;
}
