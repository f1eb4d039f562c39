// The edit dialog of one link: target, title, tags, expiry and visit limit. Only the fields
// that differ from the link as loaded are sent; an emptied one clears that detail.
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
import { changed, links, noteDisabled, STATE_TEXT, stateOf } from './links-state.js';

/** @import { LinkDetails } from '../http/schemas.ts' */
/** @import { LinkFields } from './api.js' */

const FIELDS = ['url', 'title', 'tags', 'expires', 'max-visits'];
const ERRORS = [...FIELDS.map((field) => `edit-${field}-error`), 'edit-error'];

/** The link the dialog is changing. */
const dialogState = { editing: /** @type {LinkDetails | null} */ (null) };

/** @param {LinkDetails} link */
export function openEditDialog(link) {
  dialogState.editing = link;
  const form = byId('edit-form', HTMLFormElement);
  clearErrors(...ERRORS);
  clearInvalid(form);
  byId('edit-code').textContent = link.ShortCode;
  byId('edit-url', HTMLInputElement).value = link.PointsTo;
  byId('edit-title', HTMLInputElement).value = link.Title ?? '';
  byId('edit-tags', HTMLInputElement).value = (link.Tags ?? []).join(', ');
  byId('edit-expires', HTMLInputElement).value = rfc3339ToLocal(link.ExpiresAt ?? null);
  byId('edit-max-visits', HTMLInputElement).value = link.MaxVisits === null || link.MaxVisits === undefined ? '' : String(link.MaxVisits);
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
    updated = await busy(byId('edit-save', HTMLButtonElement), () => updateLink(link.ShortCode, fields));
  } catch (error) {
    noteDisabled(error);
    showFieldError('edit', error, 'edit-error');
    return;
  }
  dialogState.editing = null;
  links.list = links.list.map((l) => (l.ShortCode === link.ShortCode ? updated : l));
  dialog.close('saved');
  changed();
  const button = byId('links').querySelector(`tr[data-code="${CSS.escape(link.ShortCode)}"] [data-action="edit"]`);
  if (button instanceof HTMLElement) button.focus();
  else byId('links-heading').focus();
  announce(`Saved the changes to ${link.ShortCode}. It is ${STATE_TEXT[stateOf(updated)].toLowerCase()}.`);
}

/** On sign-out. */
export function forgetEdit() {
  const form = byId('edit-form', HTMLFormElement);
  form.reset();
  clearInvalid(form);
  byId('edit-dialog', HTMLDialogElement).close();
}

/** Listens to the edit dialog. */
export function wireEditDialog() {
  byId('edit-form', HTMLFormElement).addEventListener('submit', submitEdit);
  for (const field of FIELDS) {
    clearErrorOnEdit(byId(`edit-${field}`, HTMLInputElement), `edit-${field}-error`, 'edit-error');
  }
  byId('edit-cancel', HTMLButtonElement).addEventListener('click', () => byId('edit-dialog', HTMLDialogElement).close('cancel'));
  byId('edit-dialog', HTMLDialogElement).addEventListener('close', () => { dialogState.editing = null; });
}
