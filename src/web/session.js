// Who is signed in: the access code and the account it opens. The code lives in this page's
// memory, and in localStorage only when the user asks to be remembered on this device.
import { byId } from './dom.js';

/** @import { Account } from '../http/schemas.ts' */

const STORAGE_KEY = 'shortlink.accessCode';

/** The signed-in account; both null when signed out. */
export const session = {
  /** @type {string | null} */ code: null,
  /** @type {Account | null} */ account: null,
};

/** The code remembered on this device, if any. */
export function rememberedCode() {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

/**
 * Remembers `code` on this device, or forgets any (null), and shows which in both
 * "Remember me" boxes.
 * @param {string | null} code
 */
export function remember(code) {
  try {
    if (code === null) localStorage.removeItem(STORAGE_KEY);
    else localStorage.setItem(STORAGE_KEY, code);
  } catch {
    // Storage disabled: the code stays in memory for this page only.
  }
  const on = code !== null;
  byId('account-remember', HTMLInputElement).checked = on;
  byId('sign-in-remember', HTMLInputElement).checked = on;
}
