// The delete dialog: one link (its Delete button) or the links selected in the list
// (Delete selected). It asks first; links already gone count as deleted.
import { ApiError, deleteLink, messageOf } from './api.js';
import { announce, busy, byId, clearErrors, showError } from './dom.js';
import { reloadLinks } from './links-list.js';
import { changed, linkKey, links, noteDisabled } from './links-state.js';

/** @import { LinkDetails } from '../http/schemas.ts' */

/** The links the dialog is asking about. */
const dialogState = { deleting: /** @type {LinkDetails[]} */ ([]) };

/**
 * Asks whether to delete these links.
 * @param {LinkDetails[]} chosen
 */
export function openDeleteDialog(chosen) {
  if (chosen.length === 0) return;
  dialogState.deleting = chosen;
  const one = chosen.length === 1 ? chosen[0] : undefined;
  byId('delete-heading').textContent = one === undefined ? `Delete ${chosen.length} links?` : 'Delete this link?';
  const what = byId('delete-what');
  if (one === undefined) {
    what.textContent = `These ${chosen.length} short links stop`;
    byId('delete-whose').textContent = 'their codes become';
  } else {
    const code = document.createElement('code');
    code.id = 'delete-code';
    code.className = 'wrap-anywhere';
    code.textContent = linkKey(one);
    what.replaceChildren('The short link ', code, ' stops');
    byId('delete-whose').textContent = 'its code becomes';
  }
  byId('delete-confirm').textContent = one === undefined ? `Delete ${chosen.length} links` : 'Delete link';
  clearErrors('delete-error');
  byId('delete-dialog', HTMLDialogElement).showModal();
}

async function confirmDelete() {
  const chosen = dialogState.deleting;
  if (chosen.length === 0) return;
  const dialog = byId('delete-dialog', HTMLDialogElement);
  clearErrors('delete-error');
  /** The keys of the links deleted (links-state.js linkKey). @type {string[]} */
  const gone = [];
  /** @type {unknown} */
  let failure = null;
  await busy(byId('delete-confirm', HTMLButtonElement), async () => {
    for (const link of chosen) {
      try {
        await deleteLink(link);
      } catch (error) {
        // Already gone (deleted elsewhere): the goal is reached; anything else stops here.
        if (!(error instanceof ApiError && error.status === 404)) {
          failure = error;
          break;
        }
      }
      gone.push(linkKey(link));
    }
  });
  const removed = new Set(gone);
  links.list = links.list.filter((l) => !removed.has(linkKey(l)));
  for (const key of gone) links.selected.delete(key);
  if (links.usage.exact) links.usage = { count: Math.max(0, links.usage.count - gone.length), exact: true };
  changed();
  if (failure !== null) {
    noteDisabled(failure);
    dialogState.deleting = chosen.filter((link) => !removed.has(linkKey(link)));
    showError('delete-error', `${gone.length > 0 ? `Deleted ${gone.length}; then: ` : ''}${messageOf(failure)}`);
    return;
  }
  dialogState.deleting = [];
  dialog.close('deleted');
  byId('links-heading').focus();
  announce(gone.length === 1 ? `Deleted the short link ${chosen[0]?.ShortCode}.` : `Deleted ${gone.length} short links.`);
  await reloadLinks();
}

/** On sign-out. */
export function forgetDelete() {
  byId('delete-dialog', HTMLDialogElement).close();
}

/** Listens to the delete dialog. */
export function wireDeleteDialog() {
  byId('delete-confirm', HTMLButtonElement).addEventListener('click', confirmDelete);
  const dialog = byId('delete-dialog', HTMLDialogElement);
  // A close event that runs after the dialog opened again belongs to the earlier opening.
  dialog.addEventListener('close', () => { if (!dialog.open) dialogState.deleting = []; });
}
