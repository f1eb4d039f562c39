// The edit dialog of one link: target, title, tags, expiry and visit limit, and under
// "Routing and password" query forwarding, the password (empty keeps it; "Remove the
// password" takes it off) and the rules (rules-editor.js). Only the fields that differ from
// the link as loaded are sent; an emptied one clears that detail. The link is addressed by
// its domain and shortcode.
import { updateLink } from './api.js';
import {
  announce,
  busy,
  byId,
  clearErrorOnEdit,
  clearErrors,
  clearInvalid,
  localToRfc3339,
  rfc3339ToLocal,
  withScheme,
} from './dom.js';
import { showFieldError } from './field-errors.js';
import { tagsParameter } from './links-list.js';
import { changed, linkKey, links, noteDisabled, STATE_TEXT, stateOf } from './links-state.js';
import { createRulesEditor } from './rules-editor.js';
import { draftOf, ruleOf, rulesText } from './rules.js';

/** @import { LinkDetails } from '../http/schemas.ts' */
/** @import { LinkFields } from './api.js' */

const FIELDS = ['url', 'title', 'tags', 'expires', 'max-visits', 'password'];
const ERRORS = [...FIELDS.map((field) => `edit-${field}-error`), 'edit-forward-query-error', 'edit-rules-error', 'edit-error'];

/** The link the dialog is changing, and the rules editor once wired. */
const dialogState = {
  editing: /** @type {LinkDetails | null} */ (null),
  rules: /** @type {import('./rules-editor.js').RulesEditor | null} */ (null),
};

/** @param {LinkDetails} link */
export function openEditDialog(link) {
  dialogState.editing = link;
  const form = byId('edit-form', HTMLFormElement);
  clearErrors(...ERRORS);
  clearInvalid(form);
  byId('edit-code').textContent = linkKey(link);
  byId('edit-url', HTMLInputElement).value = link.PointsTo;
  byId('edit-title', HTMLInputElement).value = link.Title ?? '';
  byId('edit-tags', HTMLInputElement).value = (link.Tags ?? []).join(', ');
  byId('edit-expires', HTMLInputElement).value = rfc3339ToLocal(link.ExpiresAt ?? null);
  byId('edit-max-visits', HTMLInputElement).value = link.MaxVisits === null || link.MaxVisits === undefined ? '' : String(link.MaxVisits);
  byId('edit-forward-query', HTMLInputElement).checked = link.ForwardQuery === true;
  const password = byId('edit-password', HTMLInputElement);
  password.value = '';
  password.disabled = false;
  byId('edit-remove-password', HTMLInputElement).checked = false;
  byId('edit-remove-password-field').hidden = link.Protected !== true;
  dialogState.rules?.load(link.Rules ?? []);
  // Open when the link routes or is protected: what it does shows at once.
  byId('edit-routing', HTMLDetailsElement).open = link.Protected === true || link.ForwardQuery === true || (link.Rules ?? []).length > 0;
  byId('edit-dialog', HTMLDialogElement).showModal();
  byId('edit-url').focus();
}

/**
 * The parameters of an edit: only the fields that differ from the link as loaded, an emptied
 * one as '' (which clears it).
 * @param {LinkDetails} link
 * @returns {LinkFields}
 */
function changedFields(link) {
  /** @type {LinkFields} */
  const fields = {};
  const urlInput = byId('edit-url', HTMLInputElement);
  const url = withScheme(urlInput.value.trim());
  if (url !== urlInput.value.trim()) urlInput.value = url;
  if (url !== link.PointsTo) fields.url = url;
  const title = byId('edit-title', HTMLInputElement).value.trim();
  if (title !== (link.Title ?? '')) fields.title = title;
  const tags = tagsParameter(byId('edit-tags', HTMLInputElement).value);
  if (tags.toLowerCase() !== (link.Tags ?? []).join(',')) fields.tags = tags;
  const expires = byId('edit-expires', HTMLInputElement).value;
  if (expires !== rfc3339ToLocal(link.ExpiresAt ?? null)) fields.expires = localToRfc3339(expires);
  const maxVisits = byId('edit-max-visits', HTMLInputElement).value.trim();
  if (maxVisits !== (link.MaxVisits === null || link.MaxVisits === undefined ? '' : String(link.MaxVisits))) fields.max_visits = maxVisits;
  const forward = byId('edit-forward-query', HTMLInputElement).checked;
  if (forward !== (link.ForwardQuery === true)) fields.forward_query = forward ? 'true' : 'false';
  // Empty keeps the password; "Remove the password" sends '' (which removes it).
  if (link.Protected === true && byId('edit-remove-password', HTMLInputElement).checked) fields.password = '';
  else if (byId('edit-password', HTMLInputElement).value !== '') fields.password = byId('edit-password', HTMLInputElement).value;
  const ruleList = dialogState.rules?.rules() ?? [];
  if (rulesText(ruleList) !== rulesText((link.Rules ?? []).map((rule) => ruleOf(draftOf(rule))))) fields.rules = ruleList;
  return fields;
}

/** @param {SubmitEvent} event */
async function submitEdit(event) {
  event.preventDefault();
  const link = dialogState.editing;
  if (link === null) return;
  const dialog = byId('edit-dialog', HTMLDialogElement);
  clearErrors(...ERRORS);
  clearInvalid(byId('edit-form', HTMLFormElement));
  const fields = changedFields(link);
  if (Object.keys(fields).length === 0) {
    dialog.close('unchanged');
    announce(`Nothing to change on ${link.ShortCode}.`);
    return;
  }
  /** @type {LinkDetails} */
  let updated;
  try {
    updated = await busy(byId('edit-save', HTMLButtonElement), () => updateLink(link, fields));
  } catch (error) {
    noteDisabled(error);
    showFieldError('edit', error, 'edit-error');
    return;
  }
  dialogState.editing = null;
  links.list = links.list.map((l) => (linkKey(l) === linkKey(link) ? updated : l));
  dialog.close('saved');
  changed();
  const button = byId('links').querySelector(`tr[data-key="${CSS.escape(linkKey(link))}"] [data-action="edit"]`);
  if (button instanceof HTMLElement) button.focus();
  else byId('links-heading').focus();
  announce(`Saved the changes to ${link.ShortCode}. It is ${STATE_TEXT[stateOf(updated)].toLowerCase()}.`);
}

/** On sign-out. */
export function forgetEdit() {
  const form = byId('edit-form', HTMLFormElement);
  form.reset();
  clearInvalid(form);
  dialogState.rules?.reset();
  byId('edit-dialog', HTMLDialogElement).close();
}

/** Listens to the edit dialog. */
export function wireEditDialog() {
  byId('edit-form', HTMLFormElement).addEventListener('submit', submitEdit);
  for (const field of FIELDS) {
    clearErrorOnEdit(byId(`edit-${field}`, HTMLInputElement), `edit-${field}-error`, 'edit-error');
  }
  dialogState.rules = createRulesEditor('edit');
  clearErrorOnEdit(byId('edit-rules'), 'edit-rules-error', 'edit-error');
  clearErrorOnEdit(byId('edit-forward-query', HTMLInputElement), 'edit-forward-query-error', 'edit-error');
  const remove = byId('edit-remove-password', HTMLInputElement);
  remove.addEventListener('change', () => {
    const password = byId('edit-password', HTMLInputElement);
    password.disabled = remove.checked;
    if (remove.checked) password.value = '';
  });
  const dialog = byId('edit-dialog', HTMLDialogElement);
  byId('edit-cancel', HTMLButtonElement).addEventListener('click', () => dialog.close('cancel'));
  dialog.addEventListener('close', () => {
    // The close event is a task of its own: when the dialog was opened again before it ran
    // (Escape, then Enter on the Edit button at once), it belongs to the earlier opening.
    if (dialog.open) return;
    dialogState.editing = null;
    // The password typed goes with the dialog, whatever way it closed.
    byId('edit-password', HTMLInputElement).value = '';
  });
}
