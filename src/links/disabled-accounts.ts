/**
 * A disabled account's link calls answer 403 (CONTRACT §7.3), in the contract's order: after
 * its parameters were checked (400) and its shortcode was found (404). The link service
 * checks parameters before it touches the store, so a second service over a store that
 * refuses the account's link operations gives exactly that order without the link rules
 * knowing about disabled accounts. `refuseDisabledAccounts` picks the service by the
 * account's flag; resolving is not the owner's call and goes straight through.
 */
import { accountDisabled } from '../accounts/account-service.ts';
import type { AccountRecord } from '../accounts/account-store.ts';
import type { LinkStore } from './link-store.ts';
import type { LinkService } from './link-service.ts';

/** The store as a disabled account's link calls see it: every owner operation is refused. */
export function refusingStore(store: LinkStore): LinkStore {
  return {
    ...store,
    async createLink() {
      throw accountDisabled();
    },
    async deleteLink(shortCode) {
      if ((await store.findLink(shortCode)) === undefined) return { status: 'not_found' };
      throw accountDisabled();
    },
    async listLinks() {
      throw accountDisabled();
    },
    async listLinkDetails() {
      throw accountDisabled();
    },
    // updateLink needs nothing here: the store refuses a disabled owner's edit itself
    // (`account_disabled`), after its own not-found and ownership checks.
  };
}

/** `active` for accounts in good standing, `refusing` (built on refusingStore) for disabled ones. */
export function refuseDisabledAccounts(active: LinkService, refusing: LinkService): LinkService {
  const pick = (account: AccountRecord) => (account.disabled ? refusing : active);
  return {
    create: (account, input) => pick(account).create(account, input),
    createMany: (account, inputs) => pick(account).createMany(account, inputs),
    delete: (account, shortCode, domain) => pick(account).delete(account, shortCode, domain),
    list: (account) => pick(account).list(account),
    listDetails: (account, input) => pick(account).listDetails(account, input),
    update: (account, shortCode, input, domain) => pick(account).update(account, shortCode, input, domain),
    resolve: active.resolve,
    peek: active.peek,
    keyOf: active.keyOf,
  };
}
