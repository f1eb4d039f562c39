// The API keys of the Integrations view: create one with a name and what it may do (its
// scopes), the key shown this once with a copy button; the list with each key's scopes,
// creation and last use; delete after a second click. Every error is worded by messages.js.
import { createKey, deleteKey, listKeys } from './api.js';
import {
  announce,
  busy,
  buttonOf,
  byId,
  clearErrorOnEdit,
  clearErrors,
  clearInvalid,
  copyWithFeedback,
  setTime,
  showError,
  submitterOf,
} from './dom.js';
import { showFieldError } from './field-errors.js';
import { checkedValues, deleteAction, loadList, showOnce } from './managed-list.js';
import { noteDisabled } from './links-state.js';

/** @import { ApiKey } from '../http/schemas.ts' */

/** What each scope is called here. */
const SCOPE_NAMES = /** @type {Record<string, string>} */ ({
  'links:read': 'List links',
  'links:write': 'Change links',
  'stats:read': 'Statistics',
  webhooks: 'Webhooks and events',
});

const ERRORS = ['key-name-error', 'key-scopes-error', 'key-form-error'];
const KEY_LIST = { list: 'keys', empty: 'keys-empty', error: 'keys-error', heading: 'keys-heading' };

/**
 * One key of the list.
 * @param {ApiKey} key
 */
function keyItem(key) {
  const item = document.createElement('li');
  item.className = 'webhook api-key';
  item.dataset.id = key.Id;
  const name = document.createElement('p');
  name.className = 'webhook-url wrap-anywhere';
  const bdi = document.createElement('bdi');
  bdi.textContent = key.Name;
  name.append(bdi);
  const scopes = document.createElement('p');
  scopes.className = 'key-scopes';
  scopes.textContent = `May: ${key.Scopes.map((s) => SCOPE_NAMES[s] ?? s).join(', ')}`;
  const meta = document.createElement('p');
  meta.className = 'hint';
  const created = document.createElement('time');
  setTime(created, key.DateCreated);
  const used = document.createElement('span');
  used.className = 'key-last-used';
  if (key.LastUsed === null) {
    used.textContent = 'never';
  } else {
    const time = document.createElement('time');
    setTime(time, key.LastUsed);
    used.append(time);
  }
  meta.append('Created ', created, ' · last used ', used);

  const { actions, error } = deleteAction({
    ids: KEY_LIST, item, name: `key ${key.Name}`, remove: () => deleteKey(key.Id),
    warning: `Click Delete again to delete the key ${key.Name}: whatever uses it stops working at once.`,
    done: `Deleted the key ${key.Name}.`,
  });
  item.append(name, scopes, meta, actions, error);
  return item;
}

/** Loads and shows the account's keys. */
export function loadKeys() {
  return loadList(KEY_LIST, listKeys, keyItem);
}

function hideKey() {
  showOnce('key-new');
}

/** @param {SubmitEvent} event */
async function submitKey(event) {
  event.preventDefault();
  const form = byId('key-form', HTMLFormElement);
  clearErrors(...ERRORS);
  clearInvalid(form);
  hideKey();
  const input = byId('key-name', HTMLInputElement);
  const name = input.value.trim();
  const scopes = checkedValues('key-scopes');
  if (name === '') {
    showError('key-name-error', 'Give the key a name, such as the script or service that will use it.', input);
    input.focus();
    return;
  }
  if (scopes.length === 0) {
    showError('key-scopes-error', 'Pick at least one thing the key may do.');
    byId('key-scope-links-read').focus();
    return;
  }
  let created;
  try {
    created = await busy(submitterOf(event), () => createKey(name, scopes));
  } catch (error) {
    noteDisabled(error);
    showFieldError('key', error, 'key-form-error');
    return;
  }
  form.reset();
  showOnce('key-new', created.Key);
  announce(`Key ${created.Name} created. Copy it now: it is shown only this once.`);
  await loadKeys();
}

/** On sign-out: no key, name or list of the account stays. */
export function forgetKeys() {
  hideKey();
  byId('keys').replaceChildren();
  byId('keys-empty').hidden = true;
  const form = byId('key-form', HTMLFormElement);
  form.reset();
  clearInvalid(form);
  clearErrors(...ERRORS, 'keys-error');
}

/** Listens to the keys panel (the Integrations view loads the list each time it is shown). */
export function wireKeysPanel() {
  byId('key-form', HTMLFormElement).addEventListener('submit', submitKey);
  clearErrorOnEdit(byId('key-name', HTMLInputElement), 'key-name-error', 'key-form-error');
  byId('keys-refresh', HTMLButtonElement).addEventListener('click', (event) => busy(buttonOf(event), loadKeys));
  byId('copy-key', HTMLButtonElement).addEventListener('click', (event) =>
    copyWithFeedback(buttonOf(event), byId('key-new-value').textContent ?? '', 'API key'));
  byId('dismiss-key', HTMLButtonElement).addEventListener('click', () => {
    hideKey();
    byId('keys-heading').focus();
  });
}
