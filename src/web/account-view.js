// Getting in and out: creating an account (and showing its code once), signing in with a
// code, "Remember me", signing out, and the account card.
import { ApiError, getAccount, messageOf, newAccount } from './api.js';
import { announce, busy, buttonOf, byId, clearErrors, clearInvalid, copyWithFeedback, showError } from './dom.js';
import { forgetLinks, loadLinks, showLinks } from './links-view.js';
import { remember, rememberedCode, session } from './session.js';

/** The account card's Uid and creation time (its "Links used" is the links view's). */
function renderAccount() {
  const account = session.account;
  if (account === null) return;
  byId('account-uid').textContent = String(account.Uid);
  const created = byId('account-created', HTMLTimeElement);
  created.dateTime = account.DateCreated;
  const date = new Date(account.DateCreated);
  created.textContent = Number.isNaN(date.getTime())
    ? account.DateCreated
    : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** @param {boolean} signedIn */
function showSignedIn(signedIn) {
  byId('signed-in').hidden = !signedIn;
  byId('signed-out').hidden = signedIn;
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
    await loadLinks();
  } catch (error) {
    session.code = null;
    session.account = null;
    throw error;
  }
  renderAccount();
  showSignedIn(true);
}

function signOut() {
  session.code = null;
  session.account = null;
  remember(null);
  forgetLinks();
  byId('new-code').hidden = true;
  byId('new-code-value').textContent = '';
  const form = byId('sign-in-form', HTMLFormElement);
  form.reset();
  clearInvalid(form);
  clearErrors('sign-in-error');
  showSignedIn(false);
  byId('sign-in-heading').focus();
  announce('Signed out. The access code is forgotten on this device.');
}

async function createAccount() {
  clearErrors('create-account-error');
  let code;
  try {
    const account = await newAccount();
    code = account.AccessCode;
    session.code = code;
    session.account = account;
    remember(null);
  } catch (error) {
    showError('create-account-error', messageOf(error));
    return;
  }
  showLinks([]);
  renderAccount();
  byId('new-code-value').textContent = code;
  byId('new-code').hidden = false;
  showSignedIn(true);
  byId('new-code-heading').focus();
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
  remember(byId('sign-in-remember', HTMLInputElement).checked ? code : null);
  form.reset();
  byId('account-heading').focus();
  announce(`Signed in to account ${session.account?.Uid}.`);
}

/**
 * Signs in with the code remembered on this device, if there is one; shows the sign-in
 * otherwise, or when the code no longer works.
 * @returns {Promise<void>}
 */
export async function restoreSession() {
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

/** Listens to the account part of the page. */
export function wireAccountView() {
  byId('create-account', HTMLButtonElement).addEventListener('click', (event) => busy(buttonOf(event), createAccount));
  byId('sign-in-form', HTMLFormElement).addEventListener('submit', submitSignIn);
  byId('sign-out', HTMLButtonElement).addEventListener('click', signOut);
  const rememberBox = byId('account-remember', HTMLInputElement);
  rememberBox.addEventListener('change', () => {
    const on = rememberBox.checked;
    remember(on ? session.code : null);
    announce(on ? 'The access code is remembered on this device.' : 'The access code is no longer remembered on this device.');
  });
  byId('copy-new-code', HTMLButtonElement).addEventListener('click', (event) =>
    copyWithFeedback(buttonOf(event), session.code ?? '', 'access code'));
  byId('dismiss-new-code', HTMLButtonElement).addEventListener('click', () => {
    byId('new-code').hidden = true;
    byId('new-code-value').textContent = '';
    byId('account-heading').focus();
  });
}
