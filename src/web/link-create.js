// The "Shorten a URL" box at the top of the links view: the target, the domain (when there
// is a choice) and an optional shortcode, with title, tags, expiry and visit limit under
// "More options", and query forwarding, a password and redirect rules (rules-editor.js) under
// "Routing and password". A new attempt
// clears the last result and errors first; the new short link comes with copy and a QR code.
// "Paste many URLs" below it is link-paste.js's.
import { createLink } from './api.js';
import {
  announce,
  busy,
  buttonOf,
  byId,
  clearErrorOnEdit,
  clearErrors,
  clearInvalid,
  copyWithFeedback,
  localToRfc3339,
  setLink,
  submitterOf,
  withScheme,
} from './dom.js';
import { pickedDomain } from './domains.js';
import { showFieldError } from './field-errors.js';
import { forgetPaste, wirePasteForm } from './link-paste.js';
import { reloadLinks, tagsParameter } from './links-list.js';
import { changed, links, noteDisabled } from './links-state.js';
import { qrCode } from './qr.js';
import { createRulesEditor } from './rules-editor.js';

/** @import { LinkFields } from './api.js' */

const FIELDS = ['url', 'short', 'title', 'tags', 'expires', 'max-visits', 'password'];
const ERRORS = [...FIELDS.map((field) => `link-${field}-error`), 'link-domain-error', 'link-forward-query-error', 'link-rules-error', 'link-form-error'];

/** The rules editor, once wired. @type {{ editor: import('./rules-editor.js').RulesEditor | null }} */
const rules = { editor: null };

/** The last result goes: a new attempt never shows the previous link under its error. */
function hideResult() {
  byId('new-link').hidden = true;
  byId('new-link-url', HTMLAnchorElement).removeAttribute('href');
  byId('new-link-url').textContent = '';
  byId('new-link-qr').replaceChildren();
}

/** The form's fields as the API's parameters (an empty field left out). */
function fieldsOf() {
  const urlInput = byId('link-url', HTMLInputElement);
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
  const domain = pickedDomain();
  if (domain !== '') body.domain = domain;
  // Unticked leaves the service's default (FORWARD_QUERY), which is off unless its operator says.
  if (byId('link-forward-query', HTMLInputElement).checked) body.forward_query = 'true';
  // The password goes as typed: spaces count, and the service judges its length.
  const password = byId('link-password', HTMLInputElement).value;
  if (password !== '') body.password = password;
  const ruleList = rules.editor?.rules() ?? [];
  if (ruleList.length > 0) body.rules = ruleList;
  return body;
}

/** @param {SubmitEvent} event */
async function submitLink(event) {
  event.preventDefault();
  const form = byId('link-form', HTMLFormElement);
  clearErrors(...ERRORS);
  clearInvalid(form);
  hideResult();
  const body = fieldsOf();
  let shortUrl;
  try {
    shortUrl = await busy(submitterOf(event), () => createLink(body));
  } catch (error) {
    noteDisabled(error);
    showFieldError('link', error, 'link-form-error');
    return;
  }
  setLink(byId('new-link-url', HTMLAnchorElement), shortUrl);
  byId('new-link-qr').replaceChildren(qrCode(shortUrl, `QR code for ${shortUrl}`));
  byId('new-link').hidden = false;
  form.reset();
  rules.editor?.reset();
  byId('link-options', HTMLDetailsElement).open = false;
  byId('link-routing', HTMLDetailsElement).open = false;
  if (links.usage.exact) links.usage = { count: links.usage.count + 1, exact: true };
  changed();
  announce(`Short link created: ${shortUrl}`);
  byId('new-link-heading').focus();
  await reloadLinks();
}

/** On sign-out: the form's input and the last result go. */
export function forgetCreate() {
  const form = byId('link-form', HTMLFormElement);
  form.reset();
  clearInvalid(form);
  clearErrors(...ERRORS);
  hideResult();
  forgetPaste();
  rules.editor?.reset();
  byId('link-options', HTMLDetailsElement).open = false;
  byId('link-routing', HTMLDetailsElement).open = false;
  byId('create-box', HTMLDetailsElement).open = true;
}

/** Listens to the create box. */
export function wireCreateForm() {
  byId('link-form', HTMLFormElement).addEventListener('submit', submitLink);
  wirePasteForm();
  for (const field of FIELDS) {
    clearErrorOnEdit(byId(`link-${field}`, HTMLInputElement), `link-${field}-error`, 'link-form-error');
  }
  rules.editor = createRulesEditor('link');
  clearErrorOnEdit(byId('link-rules'), 'link-rules-error', 'link-form-error');
  byId('copy-new-link', HTMLButtonElement).addEventListener('click', (event) =>
    copyWithFeedback(buttonOf(event), byId('new-link-url').textContent ?? '', 'short link'));
}
