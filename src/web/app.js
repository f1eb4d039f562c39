// Shortlink's browser UI. It talks to the public HTTP API only, like any other client.
// Everything that came from a user or the API reaches the page through textContent or an
// attribute, never as markup; links are made only for http(s) addresses.
import { encode } from './uqr.js';

const STORAGE_KEY = 'shortlink.accessCode';
const SVG_NS = 'http://www.w3.org/2000/svg';

/** @typedef {{ Uid: number, AccessCode: string, DateCreated: string, MaxLinks: number }} Account */
/** @typedef {{ ShortCode: string, PointsTo: string, CreatedBy: number, Accesses: number }} Link */

const state = {
  /** @type {string | null} */ code: null,
  /** @type {Account | null} */ account: null,
  /** @type {Link[]} */ links: [],
  // Short URLs are BASE_URL + "/" + code. The API tells BASE_URL only in a create answer;
  // until then this origin is the best guess (the service serves both).
  base: location.origin,
  /** @type {Link | null} */ deleting: null,
  /** @type {string | null} */ downloadUrl: null,
};

/** @param {string} id @returns {any} */
const $ = (id) => {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`#${id} is missing`);
  return element;
};

// ---------------------------------------------------------------------------------------
// Talking to the API

class ApiError extends Error {
  /** @param {number} status @param {string} message */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * One API call. Answers the body text; throws an ApiError carrying the API's own error line.
 * @param {string} method
 * @param {string} path
 * @param {{ params?: Record<string, string>, body?: unknown, auth?: boolean }} [options]
 */
async function api(method, path, { params, body, auth = true } = {}) {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(params ?? {})) url.searchParams.set(name, value);
  /** @type {Record<string, string>} */
  const headers = {};
  if (auth && state.code !== null) headers.authorization = `Bearer ${state.code}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
      redirect: 'error',
    });
  } catch {
    throw new ApiError(0, 'Unable to reach the service: check the connection and try again.');
  }
  const text = await response.text();
  if (!response.ok) {
    const line = text.trim().split('\n', 1)[0] ?? '';
    throw new ApiError(response.status, line !== '' && line.length < 5000 ? line : `The service answered ${response.status}.`);
  }
  return text;
}

/** @param {string} text @returns {any} */
function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(0, 'The service sent an answer this page does not understand.');
  }
}

/** @param {unknown} error */
function messageOf(error) {
  return error instanceof ApiError ? error.message : 'Something went wrong in this page. Reload it and try again.';
}

// ---------------------------------------------------------------------------------------
// Small page helpers

/** @param {string} text */
function announce(text) {
  const region = $('announce');
  region.textContent = '';
  // A fresh node in a later frame makes screen readers repeat an identical message.
  requestAnimationFrame(() => { region.textContent = text; });
}

/** @param {string} text */
function alertText(text) {
  const region = $('alert');
  region.textContent = '';
  requestAnimationFrame(() => { region.textContent = text; });
}

/**
 * Shows an error line next to what it concerns, and marks the field invalid.
 * @param {string} id the error element
 * @param {string} text
 * @param {HTMLInputElement} [field]
 */
function showError(id, text, field) {
  const element = $(id);
  element.textContent = text;
  element.hidden = false;
  if (field !== undefined) field.setAttribute('aria-invalid', 'true');
  alertText(text);
}

/** @param {...string} ids */
function clearErrors(...ids) {
  for (const id of ids) {
    const element = $(id);
    element.textContent = '';
    element.hidden = true;
  }
}

/** @param {HTMLElement} root */
function clearInvalid(root) {
  for (const field of root.querySelectorAll('[aria-invalid]')) field.removeAttribute('aria-invalid');
}

/** True for an absolute http(s) URL: the only kind that ever becomes a clickable link. */
/** @param {string} value */
function isWebUrl(value) {
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
 */
function linkOrText(text, className) {
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
function setLink(a, url) {
  a.textContent = url;
  a.title = url;
  if (isWebUrl(url)) {
    a.href = url;
  } else {
    a.removeAttribute('href');
    a.tabIndex = 0;
  }
}

/** @param {string} code */
function shortUrlOf(code) {
  return `${state.base}/${code}`;
}

/**
 * Copies text to the clipboard; falls back to a selection copy where the Clipboard API is
 * missing (plain http on a non-local address is no secure context).
 * @param {string} text
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
    let copied = false;
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
 * @param {HTMLButtonElement} button
 * @param {string} text
 * @param {string} what what was copied, for the announcement
 */
async function copyWithFeedback(button, text, what) {
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
 */
async function busy(button, action) {
  if (button !== null) button.disabled = true;
  try {
    return await action();
  } finally {
    if (button !== null) button.disabled = false;
  }
}

// ---------------------------------------------------------------------------------------
// QR codes, drawn as SVG elements in the page

/**
 * @param {string} text
 * @param {string} label accessible name
 */
function qrCode(text, label) {
  let qr;
  try {
    qr = encode(text, { ecc: 'M', border: 4 });
  } catch {
    try {
      qr = encode(text, { ecc: 'L', border: 4 });
    } catch {
      const p = document.createElement('p');
      p.className = 'qr-too-long';
      p.textContent = 'This short URL is too long for a QR code.';
      return p;
    }
  }
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('xmlns', SVG_NS);
  svg.setAttribute('viewBox', `0 0 ${qr.size} ${qr.size}`);
  svg.setAttribute('shape-rendering', 'crispEdges');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  // Dark on light whatever the theme: that is what scanners read.
  const background = document.createElementNS(SVG_NS, 'rect');
  background.setAttribute('width', String(qr.size));
  background.setAttribute('height', String(qr.size));
  background.setAttribute('fill', '#ffffff');
  const path = document.createElementNS(SVG_NS, 'path');
  const d = [];
  qr.data.forEach((row, y) => {
    for (let x = 0; x < row.length; x++) {
      if (!row[x]) continue;
      let run = 1;
      while (row[x + run]) run++;
      d.push(`M${x} ${y}h${run}v1h-${run}z`);
      x += run - 1;
    }
  });
  path.setAttribute('d', d.join(''));
  path.setAttribute('fill', '#000000');
  svg.append(background, path);
  return svg;
}

// ---------------------------------------------------------------------------------------
// Remembering the access code on this device (opt-in)

function rememberedCode() {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

/** @param {string | null} code */
function remember(code) {
  try {
    if (code === null) localStorage.removeItem(STORAGE_KEY);
    else localStorage.setItem(STORAGE_KEY, code);
  } catch {
    // Storage disabled: the code stays in memory for this page only.
  }
  const on = code !== null;
  $('account-remember').checked = on;
  $('sign-in-remember').checked = on;
}

// ---------------------------------------------------------------------------------------
// Rendering

function renderAccount() {
  const account = state.account;
  if (account === null) return;
  $('account-uid').textContent = String(account.Uid);
  const created = $('account-created');
  created.dateTime = account.DateCreated;
  const date = new Date(account.DateCreated);
  created.textContent = Number.isNaN(date.getTime())
    ? account.DateCreated
    : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  $('account-usage').textContent = `${state.links.length} / ${account.MaxLinks}`;
}

/** @param {number} n */
function accessesText(n) {
  return n === 1 ? '1 access' : `${n} accesses`;
}

function renderLinks() {
  const list = $('links');
  /** @type {HTMLTemplateElement} */
  const template = $('link-item');
  const items = state.links.map((link) => {
    const item = /** @type {HTMLLIElement} */ (template.content.firstElementChild.cloneNode(true));
    item.dataset.code = link.ShortCode;
    const url = shortUrlOf(link.ShortCode);
    setLink(item.querySelector('.short-url'), url);
    item.querySelector('.target-slot').replaceWith(linkOrText(link.PointsTo, 'target'));
    item.querySelector('.accesses').textContent = accessesText(link.Accesses);
    for (const hidden of item.querySelectorAll('.actions .visually-hidden')) hidden.textContent = ` ${link.ShortCode}`;
    item.querySelector('[data-action="copy"]').addEventListener('click', (event) =>
      copyWithFeedback(/** @type {HTMLButtonElement} */ (event.currentTarget), url, 'short link'));
    item.querySelector('[data-action="qr"]').addEventListener('click', () => openQrDialog(url));
    item.querySelector('[data-action="delete"]').addEventListener('click', () => openDeleteDialog(link));
    return item;
  });
  list.replaceChildren(...items);
  $('links-empty').hidden = state.links.length > 0;
  renderAccount();
}

/** @param {boolean} signedIn */
function showSignedIn(signedIn) {
  $('signed-in').hidden = !signedIn;
  $('signed-out').hidden = signedIn;
}

// ---------------------------------------------------------------------------------------
// Actions

async function loadLinks() {
  const list = $('links');
  list.setAttribute('aria-busy', 'true');
  try {
    const links = parseJson(await api('GET', '/v1/links'));
    state.links = Array.isArray(links) ? links : [];
    clearErrors('links-error');
    renderLinks();
  } finally {
    list.removeAttribute('aria-busy');
  }
}

/**
 * Checks a code against the API and, when it works, shows the account.
 * @param {string} code
 * @returns {Promise<void>}
 */
async function signIn(code) {
  state.code = code;
  try {
    state.account = parseJson(await api('GET', '/v1/get_account'));
    await loadLinks();
  } catch (error) {
    state.code = null;
    state.account = null;
    throw error;
  }
  renderAccount();
  showSignedIn(true);
}

function signOut() {
  state.code = null;
  state.account = null;
  state.links = [];
  remember(null);
  $('links').replaceChildren();
  $('new-code').hidden = true;
  $('new-code-value').textContent = '';
  $('new-link').hidden = true;
  $('new-link-qr').replaceChildren();
  for (const form of [$('link-form'), $('sign-in-form')]) {
    form.reset();
    clearInvalid(form);
  }
  clearErrors('link-url-error', 'link-short-error', 'link-form-error', 'links-error', 'sign-in-error');
  showSignedIn(false);
  $('sign-in-heading').focus();
  announce('Signed out. The access code is forgotten on this device.');
}

async function createAccount() {
  clearErrors('create-account-error');
  try {
    /** @type {Account} */
    const account = parseJson(await api('POST', '/v1/new_account', { auth: false }));
    state.code = account.AccessCode;
    state.account = account;
    state.links = [];
    remember(null);
  } catch (error) {
    showError('create-account-error', messageOf(error));
    return;
  }
  renderLinks();
  $('new-code-value').textContent = state.code;
  $('new-code').hidden = false;
  showSignedIn(true);
  $('new-code-heading').focus();
  announce('Account created. Save your access code now: it is your only key and is shown only once.');
}

/** @param {SubmitEvent} event */
async function submitSignIn(event) {
  event.preventDefault();
  const form = $('sign-in-form');
  const input = $('sign-in-code');
  clearErrors('sign-in-error');
  clearInvalid(form);
  const code = input.value.trim();
  if (code === '') {
    showError('sign-in-error', 'Enter your access code.', input);
    input.focus();
    return;
  }
  try {
    await signIn(code);
  } catch (error) {
    showError('sign-in-error', messageOf(error), input);
    input.focus();
    return;
  }
  remember($('sign-in-remember').checked ? code : null);
  form.reset();
  $('account-heading').focus();
  announce(`Signed in to account ${state.account?.Uid}.`);
}

/**
 * Which field an API error is about, from its status and wording.
 * @param {ApiError} error
 * @returns {'url' | 'short' | 'form'}
 */
function fieldOf(error) {
  const reason = error.message.replace(/^Unable to [^:]*:\s*/, '');
  if (error.status === 409 || /^short\b|"short"|shortcode/i.test(reason)) return 'short';
  if (error.status === 400 && (/^url\b|"url"/i.test(reason))) return 'url';
  return 'form';
}

/** @param {SubmitEvent} event */
async function submitLink(event) {
  event.preventDefault();
  const form = $('link-form');
  const urlInput = $('link-url');
  const shortInput = $('link-short');
  clearErrors('link-url-error', 'link-short-error', 'link-form-error');
  clearInvalid(form);
  const url = urlInput.value.trim();
  const short = shortInput.value.trim();
  /** @type {Record<string, string>} */
  const body = { url };
  if (short !== '') body.short = short;

  const button = /** @type {HTMLButtonElement | null} */ (event.submitter instanceof HTMLButtonElement ? event.submitter : null);
  let shortUrl;
  try {
    shortUrl = await busy(button, () => api('POST', '/v1/link', { body }));
  } catch (error) {
    const field = error instanceof ApiError ? fieldOf(error) : 'form';
    if (field === 'url') {
      showError('link-url-error', messageOf(error), urlInput);
      urlInput.focus();
    } else if (field === 'short') {
      showError('link-short-error', messageOf(error), shortInput);
      shortInput.focus();
    } else {
      showError('link-form-error', messageOf(error));
    }
    return;
  }
  const slash = shortUrl.lastIndexOf('/');
  if (isWebUrl(shortUrl) && slash > 0) state.base = shortUrl.slice(0, slash);

  setLink($('new-link-url'), shortUrl);
  $('new-link-qr').replaceChildren(qrCode(shortUrl, `QR code for ${shortUrl}`));
  $('new-link').hidden = false;
  urlInput.value = '';
  shortInput.value = '';
  announce(`Short link created: ${shortUrl}`);
  $('new-link-heading').focus();
  try {
    await loadLinks();
  } catch (error) {
    showError('links-error', messageOf(error));
  }
}

async function refresh() {
  const button = $('refresh-links');
  clearErrors('links-error');
  try {
    await busy(button, async () => {
      state.account = parseJson(await api('GET', '/v1/get_account'));
      await loadLinks();
    });
    announce(`Links refreshed: ${state.links.length} of ${state.account?.MaxLinks}.`);
  } catch (error) {
    showError('links-error', messageOf(error));
  }
}

/** @param {Link} link */
function openDeleteDialog(link) {
  state.deleting = link;
  $('delete-code').textContent = link.ShortCode;
  clearErrors('delete-error');
  $('delete-dialog').showModal();
}

async function confirmDelete() {
  const link = state.deleting;
  if (link === null) return;
  const dialog = $('delete-dialog');
  clearErrors('delete-error');
  try {
    await busy($('delete-confirm'), () => api('DELETE', '/v1/link', { params: { short: link.ShortCode } }));
  } catch (error) {
    // Already gone (deleted elsewhere): the goal is reached; anything else stays visible.
    if (!(error instanceof ApiError && error.status === 404)) {
      showError('delete-error', messageOf(error));
      return;
    }
  }
  state.deleting = null;
  dialog.close('deleted');
  state.links = state.links.filter((l) => l.ShortCode !== link.ShortCode);
  renderLinks();
  $('links-heading').focus();
  announce(`Deleted the short link ${link.ShortCode}.`);
  try {
    await loadLinks();
  } catch (error) {
    showError('links-error', messageOf(error));
  }
}

/** @param {string} url */
function openQrDialog(url) {
  const image = qrCode(url, `QR code for ${url}`);
  $('qr-dialog-image').replaceChildren(image);
  $('qr-dialog-url').textContent = url;
  const download = $('qr-download');
  if (state.downloadUrl !== null) URL.revokeObjectURL(state.downloadUrl);
  state.downloadUrl = null;
  if (image instanceof SVGElement) {
    const blob = new Blob([new XMLSerializer().serializeToString(image)], { type: 'image/svg+xml' });
    state.downloadUrl = URL.createObjectURL(blob);
    download.href = state.downloadUrl;
    download.hidden = false;
  } else {
    download.removeAttribute('href');
    download.hidden = true;
  }
  $('qr-dialog').showModal();
}

/** The code in what was typed: a bare shortcode, or the last path segment of a short URL. */
/** @param {string} value */
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
  const form = $('lookup-form');
  const input = $('lookup-code');
  clearErrors('lookup-error');
  clearInvalid(form);
  $('lookup-result').hidden = true;
  const code = codeFrom(input.value.trim());
  if (code === '') {
    showError('lookup-error', 'Enter a shortcode.', input);
    input.focus();
    return;
  }
  const button = /** @type {HTMLButtonElement | null} */ (event.submitter instanceof HTMLButtonElement ? event.submitter : null);
  /** @type {Link} */
  let link;
  try {
    link = parseJson(await busy(button, () => api('GET', `/v1/get/${encodeURIComponent(code)}`, { auth: false })));
  } catch (error) {
    showError('lookup-error', messageOf(error), input);
    input.focus();
    return;
  }
  $('lookup-short').textContent = link.ShortCode;
  $('lookup-target').replaceChildren(linkOrText(link.PointsTo, 'target-full'));
  $('lookup-accesses').textContent = String(link.Accesses);
  $('lookup-result').hidden = false;
  announce(`${link.ShortCode} points to ${link.PointsTo} and has ${accessesText(link.Accesses)}.`);
}

// ---------------------------------------------------------------------------------------
// Start

function wire() {
  $('create-account').addEventListener('click', /** @param {MouseEvent} event */ (event) =>
    busy(/** @type {HTMLButtonElement} */ (event.currentTarget), createAccount));
  $('sign-in-form').addEventListener('submit', submitSignIn);
  $('sign-out').addEventListener('click', signOut);
  $('account-remember').addEventListener('change', /** @param {Event} event */ (event) => {
    const on = /** @type {HTMLInputElement} */ (event.currentTarget).checked;
    remember(on ? state.code : null);
    announce(on ? 'The access code is remembered on this device.' : 'The access code is no longer remembered on this device.');
  });
  $('copy-new-code').addEventListener('click', /** @param {MouseEvent} event */ (event) =>
    copyWithFeedback(/** @type {HTMLButtonElement} */ (event.currentTarget), state.code ?? '', 'access code'));
  $('dismiss-new-code').addEventListener('click', () => {
    $('new-code').hidden = true;
    $('new-code-value').textContent = '';
    $('account-heading').focus();
  });
  $('link-form').addEventListener('submit', submitLink);
  $('copy-new-link').addEventListener('click', /** @param {MouseEvent} event */ (event) =>
    copyWithFeedback(/** @type {HTMLButtonElement} */ (event.currentTarget), $('new-link-url').textContent ?? '', 'short link'));
  $('refresh-links').addEventListener('click', refresh);
  $('delete-confirm').addEventListener('click', confirmDelete);
  $('delete-dialog').addEventListener('close', () => { state.deleting = null; });
  $('lookup-form').addEventListener('submit', submitLookup);
}

async function start() {
  wire();
  const stored = rememberedCode();
  if (stored !== null) {
    try {
      await signIn(stored);
      remember(stored);
      return;
    } catch (error) {
      showSignedIn(false);
      // A code the service refuses is forgotten; an outage keeps it for the next visit.
      if (error instanceof ApiError && error.status === 401) {
        remember(null);
        showError('sign-in-error', 'The access code remembered on this device no longer works. Sign in again.');
      } else {
        showError('sign-in-error', messageOf(error));
      }
      return;
    }
  }
  showSignedIn(false);
}

void start();
