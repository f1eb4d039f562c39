// The signed-in account's links: the "Shorten a URL" form, the list with its copy, QR and
// delete actions, the delete dialog, and the "Links used" count of the account card.
import { ApiError, createLink, deleteLink, getAccount, listLinks, messageOf } from './api.js';
import {
  accessesText,
  announce,
  busy,
  buttonOf,
  byId,
  clearErrors,
  clearInvalid,
  copyWithFeedback,
  isWebUrl,
  linkOrText,
  query,
  setLink,
  showError,
  submitterOf,
} from './dom.js';
import { openQrDialog, qrCode } from './qr.js';
import { session } from './session.js';

/** @import { Link } from '../http/schemas.ts' */
/** @import { CreateLinkBody } from './api.js' */

/** @type {Link[]} */
let links = [];
/** The link the delete dialog is asking about. @type {Link | null} */
let deleting = null;
// Short URLs are BASE_URL + "/" + code. The API tells BASE_URL only in a create answer;
// until then this origin is the best guess (the service serves both).
let base = location.origin;

/** @param {string} code */
function shortUrlOf(code) {
  return `${base}/${code}`;
}

function renderUsage() {
  const account = session.account;
  if (account === null) return;
  byId('account-usage').textContent = `${links.length} / ${account.MaxLinks}`;
}

function renderLinks() {
  const prototype = byId('link-item', HTMLTemplateElement).content.firstElementChild;
  if (!(prototype instanceof HTMLLIElement)) throw new Error('#link-item holds no <li>');
  const items = links.map((link) => {
    const item = /** @type {HTMLLIElement} */ (prototype.cloneNode(true));
    item.dataset.code = link.ShortCode;
    const url = shortUrlOf(link.ShortCode);
    setLink(query(item, '.short-url', HTMLAnchorElement), url);
    query(item, '.target-slot', HTMLElement).replaceWith(linkOrText(link.PointsTo, 'target'));
    query(item, '.accesses', HTMLElement).textContent = accessesText(link.Accesses);
    for (const hidden of item.querySelectorAll('.actions .visually-hidden')) hidden.textContent = ` ${link.ShortCode}`;
    query(item, '[data-action="copy"]', HTMLButtonElement).addEventListener('click', (event) =>
      copyWithFeedback(buttonOf(event), url, 'short link'));
    query(item, '[data-action="qr"]', HTMLButtonElement).addEventListener('click', () => openQrDialog(url));
    query(item, '[data-action="delete"]', HTMLButtonElement).addEventListener('click', () => openDeleteDialog(link));
    return item;
  });
  byId('links').replaceChildren(...items);
  byId('links-empty').hidden = links.length > 0;
  renderUsage();
}

/**
 * Shows these links as the account's (a new account's: none).
 * @param {Link[]} list
 */
export function showLinks(list) {
  links = list;
  renderLinks();
}

/** Fetches and shows the account's links; throws the API's error, leaving the list as it was. */
export async function loadLinks() {
  const list = byId('links');
  list.setAttribute('aria-busy', 'true');
  try {
    links = await listLinks();
    clearErrors('links-error');
    renderLinks();
  } finally {
    list.removeAttribute('aria-busy');
  }
}

/** On sign-out: no trace of the account's links, the new link or the form's input is left. */
export function forgetLinks() {
  links = [];
  byId('links').replaceChildren();
  byId('new-link').hidden = true;
  byId('new-link-qr').replaceChildren();
  const form = byId('link-form', HTMLFormElement);
  form.reset();
  clearInvalid(form);
  clearErrors('link-url-error', 'link-short-error', 'link-form-error', 'links-error');
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
  const form = byId('link-form', HTMLFormElement);
  const urlInput = byId('link-url', HTMLInputElement);
  const shortInput = byId('link-short', HTMLInputElement);
  clearErrors('link-url-error', 'link-short-error', 'link-form-error');
  clearInvalid(form);
  const url = urlInput.value.trim();
  const short = shortInput.value.trim();
  /** @type {CreateLinkBody} */
  const body = { url };
  if (short !== '') body.short = short;

  let shortUrl;
  try {
    shortUrl = await busy(submitterOf(event), () => createLink(body));
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
  if (isWebUrl(shortUrl) && slash > 0) base = shortUrl.slice(0, slash);

  setLink(byId('new-link-url', HTMLAnchorElement), shortUrl);
  byId('new-link-qr').replaceChildren(qrCode(shortUrl, `QR code for ${shortUrl}`));
  byId('new-link').hidden = false;
  urlInput.value = '';
  shortInput.value = '';
  announce(`Short link created: ${shortUrl}`);
  byId('new-link-heading').focus();
  try {
    await loadLinks();
  } catch (error) {
    showError('links-error', messageOf(error));
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
    announce(`Links refreshed: ${links.length} of ${session.account?.MaxLinks}.`);
  } catch (error) {
    showError('links-error', messageOf(error));
  }
}

/** @param {Link} link */
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
      showError('delete-error', messageOf(error));
      return;
    }
  }
  deleting = null;
  dialog.close('deleted');
  links = links.filter((l) => l.ShortCode !== link.ShortCode);
  renderLinks();
  byId('links-heading').focus();
  announce(`Deleted the short link ${link.ShortCode}.`);
  try {
    await loadLinks();
  } catch (error) {
    showError('links-error', messageOf(error));
  }
}

/** Listens to the links part of the page. */
export function wireLinksView() {
  byId('link-form', HTMLFormElement).addEventListener('submit', submitLink);
  byId('copy-new-link', HTMLButtonElement).addEventListener('click', (event) =>
    copyWithFeedback(buttonOf(event), byId('new-link-url').textContent ?? '', 'short link'));
  byId('refresh-links', HTMLButtonElement).addEventListener('click', refresh);
  byId('delete-confirm', HTMLButtonElement).addEventListener('click', confirmDelete);
  byId('delete-dialog', HTMLDialogElement).addEventListener('close', () => { deleting = null; });
}
