// Who is signed in: the access code and the account it opens. The code is kept for this tab
// (sessionStorage, so a reload stays signed in and closing the tab forgets it), and in
// localStorage as well only when the user asks to be remembered on this device. Signing out
// clears both.
import { byId } from './dom.js';

/** @import { Account } from '../http/schemas.ts' */

const STORAGE_KEY = 'shortlink.accessCode';

/** The signed-in account; both null when signed out. */
export const session = {
  /** @type {string | null} */ code: null,
  /** @type {Account | null} */ account: null,
};

/**
 * @param {'local' | 'session'} kind
 * @returns {Storage | null} the storage, or null where the browser refuses it
 */
function storage(kind) {
  try {
    return kind === 'local' ? localStorage : sessionStorage;
  } catch {
    return null;
  }
}

/** @param {'local' | 'session'} kind */
function read(kind) {
  try {
    return storage(kind)?.getItem(STORAGE_KEY) ?? null;
  } catch {
    return null;
  }
}

/** @param {'local' | 'session'} kind @param {string | null} code */
function write(kind, code) {
  try {
    const store = storage(kind);
    if (code === null) store?.removeItem(STORAGE_KEY);
    else store?.setItem(STORAGE_KEY, code);
  } catch {
    // Storage disabled: the code stays in memory for this page only.
  }
}

/** The code remembered on this device (localStorage), if any. */
export function rememberedCode() {
  return read('local');
}

/** The code to sign in with on load: this tab's, else the device's. */
export function storedCode() {
  return read('session') ?? read('local');
}

/**
 * Keeps `code` for this tab, and on this device too when `onDevice`; null forgets it in
 * both. Shows which in both "Remember me" boxes.
 * @param {string | null} code
 * @param {boolean} [onDevice]
 */
export function keep(code, onDevice = false) {
  write('session', code);
  write('local', code !== null && onDevice ? code : null);
  const on = code !== null && onDevice;
  byId('account-remember', HTMLInputElement).checked = on;
  byId('sign-in-remember', HTMLInputElement).checked = on;
}
