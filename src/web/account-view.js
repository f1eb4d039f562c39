// Getting in and out: creating an account (and showing its code once), signing in with a
// code (kept for the tab, or on the device with "Remember me"), signing out, and the Account
// view with its two consequential actions: changing the access code (the new one shown once)
// and deleting the account.
import { ApiError, deleteAccount, getAccount, messageOf, newAccount, rotateAccessCode } from './api.js';
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
} from './dom.js';
import { forgetIntegrations, showLiveState } from './integrations-view.js';
import { forgetDomains, loadDomains } from './domains.js';
import { forgetCreate } from './link-create.js';
import { forgetDelete } from './link-delete.js';
import { forgetEdit } from './link-edit.js';
import { forgetLinks, loadLinks, showLinks } from './links-list.js';
import { applyLiveEvent } from './links-live.js';
import { links, noteDisabled } from './links-state.js';
import { startLive, stopLive } from './live.js';
import { setSignedIn } from './router.js';
import { keep, rememberedCode, session, storedCode } from './session.js';
import { forgetStats } from './stats-view.js';

/** The account card's Uid and creation time (its "Links used" is the links view's). */
function renderAccount() {
  const account = session.account;
  if (account === null) return;
  byId('account-uid').textContent = String(account.Uid);
  setTime(byId('account-created', HTMLTimeElement), account.DateCreated);
}

/**
 * Shows an access code once, with the warning that it is the only key.
 * @param {string} code
 * @param {boolean} rotated a replacement (the old code no longer works)
 */
function showNewCode(code, rotated) {
  byId('new-code-heading').textContent = rotated ? 'Save your new access code' : 'Save your access code';
  byId('new-code-rotated').hidden = !rotated;
  byId('new-code-value').textContent = code;
  byId('new-code').hidden = false;
  byId('new-code-heading').focus();
}

function hideNewCode() {
  byId('new-code').hidden = true;
  byId('new-code-value').textContent = '';
}

/**
 * Follows the signed-in account's events (visits arrive in the list live). When the stream
 * reopens after a break, the list is loaded again: events of the break are not replayed.
 */
function listen() {
  startLive(applyLiveEvent, () => void loadLinks().catch(() => {}), showLiveState);
}

/** Focuses the heading of the view shown. */
function focusView() {
  const heading = document.querySelector('.view:not([hidden]) h2');
  if (heading instanceof HTMLElement) heading.focus();
}

/** @param {boolean} signedIn */
function showSignedIn(signedIn) {
  byId('signed-in').hidden = !signedIn;
  byId('signed-out').hidden = signedIn;
  setSignedIn(signedIn);
}

/**
 * Checks a code against the API and, when it works, shows the account.
 * @param {string} code
 * @returns {Promise<void>}
 */
async function signIn(code) {
  session.code = code;
  try {
    session.account = await getAccount();
    await Promise.all([loadLinks(), loadDomains()]);
  } catch (error) {
    session.code = null;
    session.account = null;
    throw error;
  }
  renderAccount();
  showSignedIn(true);
  listen();
}

/** Forgets the account in this page and on this device, and shows the way in again. */
function forgetAccount() {
  stopLive();
  showLiveState('off');
  session.code = null;
  session.account = null;
  keep(null);
  forgetLinks();
  forgetDomains();
  forgetCreate();
  forgetEdit();
  forgetDelete();
  forgetStats();
  forgetIntegrations();
  hideNewCode();
  for (const id of ['rotate-dialog', 'delete-account-dialog']) byId(id, HTMLDialogElement).close();
  const form = byId('sign-in-form', HTMLFormElement);
  form.reset();
  clearInvalid(form);
  clearErrors('sign-in-error', 'create-account-error');
  showSignedIn(false);
}

function signOut() {
  forgetAccount();
  byId('sign-in-heading').focus();
  announce('Signed out. The access code is forgotten in this tab and on this device.');
}

function openRotateDialog() {
  clearErrors('rotate-error');
  byId('rotate-dialog', HTMLDialogElement).showModal();
}

/** Replaces the access code: the page switches to the new one and shows it once. */
async function confirmRotate() {
  clearErrors('rotate-error');
  let account;
  try {
    account = await busy(byId('rotate-confirm', HTMLButtonElement), rotateAccessCode);
  } catch (error) {
    noteDisabled(error);
    showError('rotate-error', messageOf(error));
    return;
  }
  const wasRemembered = rememberedCode() !== null;
  session.code = account.AccessCode;
  session.account = account;
  // A device that remembered the old code remembers the new one instead.
  keep(account.AccessCode, wasRemembered);
  byId('rotate-dialog', HTMLDialogElement).close('rotated');
  renderAccount();
  // The stream opened with the old code stops working at its next reconnect: open one now.
  listen();
  showNewCode(account.AccessCode, true);
  announce('Access code changed. The old code no longer works. Save the new one now: it is shown only once.');
}

function openDeleteAccountDialog() {
  clearErrors('delete-account-error');
  const held = `${links.usage.count}${links.usage.exact ? '' : '+'}`;
  byId('delete-account-count').textContent = held === '0' ? 'its links (it holds none)'
    : held === '1' ? 'its 1 link' : `all its ${held} links`;
  byId('delete-account-dialog', HTMLDialogElement).showModal();
}

async function confirmDeleteAccount() {
  clearErrors('delete-account-error');
  try {
    await busy(byId('delete-account-confirm', HTMLButtonElement), deleteAccount);
  } catch (error) {
    noteDisabled(error);
    showError('delete-account-error', messageOf(error));
    return;
  }
  forgetAccount();
  byId('create-account-heading').focus();
  announce('Account deleted, with all its links. The access code no longer works.');
}

async function createAccount() {
  clearErrors('create-account-error');
  let code;
  try {
    const account = await newAccount();
    code = account.AccessCode;
    session.code = code;
    session.account = account;
    keep(code);
  } catch (error) {
    showError('create-account-error', messageOf(error));
    return;
  }
  showLinks([]);
  void loadDomains();
  renderAccount();
  showSignedIn(true);
  listen();
  showNewCode(code, false);
  announce('Account created. Save your access code now: it is your only key and is shown only once.');
}

/** @param {SubmitEvent} event */
async function submitSignIn(event) {
  event.preventDefault();
  const form = byId('sign-in-form', HTMLFormElement);
  const input = byId('sign-in-code', HTMLInputElement);
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
  keep(code, byId('sign-in-remember', HTMLInputElement).checked);
  form.reset();
  focusView();
  announce(`Signed in to account ${session.account?.Uid}.`);
}

/**
 * Signs in with the code remembered on this device, if there is one; shows the sign-in
 * otherwise, or when the code no longer works.
 * @returns {Promise<void>}
 */
export async function restoreSession() {
  const stored = storedCode();
  if (stored !== null) {
    const onDevice = rememberedCode() === stored;
    try {
      await signIn(stored);
      keep(stored, onDevice);
      return;
    } catch (error) {
      showSignedIn(false);
      // A code the service refuses is forgotten; an outage keeps it for the next visit.
      if (error instanceof ApiError && error.status === 401) {
        keep(null);
        showError('sign-in-error', 'The access code kept in this browser no longer works. Sign in again.');
      } else {
        showError('sign-in-error', messageOf(error));
      }
      return;
    }
  }
  showSignedIn(false);
}

/** Listens to the account part of the page. */
export function wireAccountView() {
  byId('create-account', HTMLButtonElement).addEventListener('click', (event) => busy(buttonOf(event), createAccount));
  byId('sign-in-form', HTMLFormElement).addEventListener('submit', submitSignIn);
  byId('sign-out', HTMLButtonElement).addEventListener('click', signOut);
  const rememberBox = byId('account-remember', HTMLInputElement);
  rememberBox.addEventListener('change', () => {
    const on = rememberBox.checked;
    keep(session.code, on);
    announce(on ? 'The access code is remembered on this device.' : 'The access code is kept for this tab only.');
  });
  byId('copy-new-code', HTMLButtonElement).addEventListener('click', (event) =>
    copyWithFeedback(buttonOf(event), session.code ?? '', 'access code'));
  byId('dismiss-new-code', HTMLButtonElement).addEventListener('click', () => {
    hideNewCode();
    focusView();
  });
  clearErrorOnEdit(byId('sign-in-code', HTMLInputElement), 'sign-in-error');
  byId('rotate-code', HTMLButtonElement).addEventListener('click', openRotateDialog);
  byId('rotate-confirm', HTMLButtonElement).addEventListener('click', confirmRotate);
  byId('delete-account', HTMLButtonElement).addEventListener('click', openDeleteAccountDialog);
  byId('delete-account-confirm', HTMLButtonElement).addEventListener('click', confirmDeleteAccount);
}
