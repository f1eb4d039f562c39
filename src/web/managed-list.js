// The lists of the Integrations view (webhooks, API keys): loaded into their <ul> with an
// empty note and an error line, each item's Delete button, which deletes on its second click
// (the first one says what will stop), the secret a new one shows once, and the checked boxes
// of its form. One place for both, so they behave alike.
import { messageOf } from './api.js';
import { announce, busy, byId, clearErrors, showError } from './dom.js';
import { noteDisabled } from './links-state.js';

/**
 * @typedef {object} ListIds
 * @property {string} list the <ul>
 * @property {string} empty the note shown when the list is empty
 * @property {string} error the error line of the whole list
 * @property {string} heading the heading focused after a delete
 */

/**
 * Loads the items and shows them, or the error in plain words.
 * @template T
 * @param {ListIds} ids
 * @param {() => Promise<T[]>} fetch
 * @param {(item: T) => HTMLElement} render
 */
export async function loadList(ids, fetch, render) {
  clearErrors(ids.error);
  const list = byId(ids.list);
  list.setAttribute('aria-busy', 'true');
  try {
    const items = await fetch();
    list.replaceChildren(...items.map(render));
    byId(ids.empty).hidden = items.length > 0;
  } catch (error) {
    if (!noteDisabled(error)) showError(ids.error, messageOf(error));
  } finally {
    list.removeAttribute('aria-busy');
  }
}

/**
 * The actions of one item: a Delete button that asks first, and the line its error shows in.
 * @param {object} options
 * @param {ListIds} options.ids
 * @param {HTMLElement} options.item the item it removes once deleted
 * @param {string} options.name what a screen reader hears after "Delete"
 * @param {string} options.warning what the first click announces
 * @param {string} options.done what a successful delete announces
 * @param {() => Promise<unknown>} options.remove the API call
 * @returns {{ actions: HTMLElement, error: HTMLElement }}
 */
export function deleteAction({ ids, item, name, warning, done, remove }) {
  const actions = document.createElement('div');
  actions.className = 'actions';
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'danger small';
  const label = document.createTextNode('Delete');
  const hidden = document.createElement('span');
  hidden.className = 'visually-hidden';
  hidden.textContent = ` ${name}`;
  button.append(label, hidden);
  const error = document.createElement('p');
  error.className = 'error';
  error.hidden = true;
  button.addEventListener('click', async () => {
    // A first click asks; the second deletes.
    if (button.dataset.confirm !== 'yes') {
      button.dataset.confirm = 'yes';
      label.textContent = 'Click again to delete';
      announce(warning);
      return;
    }
    try {
      await busy(button, remove);
    } catch (failure) {
      noteDisabled(failure);
      error.textContent = messageOf(failure);
      error.hidden = false;
      return;
    }
    item.remove();
    byId(ids.empty).hidden = byId(ids.list).childElementCount > 0;
    byId(ids.heading).focus();
    announce(done);
  });
  actions.append(button);
  return { actions, error };
}

/**
 * The box that shows a new secret (a webhook's signing secret, an API key) this once: shown
 * with `value` and focused, or (`value` undefined) hidden and emptied.
 * @param {string} boxId its element has `${boxId}-value` and `${boxId}-heading` inside
 * @param {string} [value]
 */
export function showOnce(boxId, value) {
  byId(`${boxId}-value`).textContent = value ?? '';
  byId(boxId).hidden = value === undefined;
  if (value !== undefined) byId(`${boxId}-heading`).focus();
}

/**
 * The values of the checked boxes inside `id` (a form's events or scopes).
 * @param {string} id
 */
export function checkedValues(id) {
  return [...byId(id).querySelectorAll('input[type="checkbox"]:checked')]
    .map((box) => (box instanceof HTMLInputElement ? box.value : ''));
}
