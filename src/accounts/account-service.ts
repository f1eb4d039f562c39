import { DomainError, ErrorCode } from '../errors.ts';
import type { AccountRecord, Store } from '../store/store.ts';
import { createAccountCache } from './account-cache.ts';
import { hashAccessCode, isWellFormedAccessCode, newAccessCode } from './access-code.ts';

/** An account as the API shows it, with the access code the caller holds. */
export interface Account extends AccountRecord {
  /** Lower case; only ever known from the request that carried it or created it. */
  readonly accessCode: string;
}

export interface AccountService {
  create(): Promise<Account>;
  /**
   * The account the access code opens; throws Unauthenticated for anything else. `fresh`
   * reads the store even when the account is cached (to show the account itself).
   */
  authenticate(accessCode: string | undefined, options?: { fresh?: boolean }): Promise<Account>;
}

export interface AccountServiceDeps {
  readonly store: Store;
  readonly clock: () => Date;
  readonly defaultMaxLinks: number;
  /**
   * How long an authenticated account is remembered (see account-cache.ts); 0 looks every
   * access code up in the store. Default 1000 ms. Only calls that go on to use the store
   * anyway (list, create, delete) use the cache; showing the account always reads it.
   */
  readonly accountCacheMs?: number;
}

export function createAccountService({ store, clock, defaultMaxLinks, accountCacheMs = 1000 }: AccountServiceDeps): AccountService {
  const cache = createAccountCache({ ttlMs: accountCacheMs, maxEntries: 10_000 });
  return {
    async create() {
      const accessCode = newAccessCode();
      const record = await store.createAccount({
        codeHash: hashAccessCode(accessCode),
        dateCreated: clock().toISOString(),
        maxLinks: defaultMaxLinks,
      });
      return { ...record, accessCode };
    },

    async authenticate(accessCode, { fresh = false } = {}) {
      if (accessCode === undefined) {
        throw new DomainError(ErrorCode.Unauthenticated, 'an access code is required');
      }
      if (!isWellFormedAccessCode(accessCode)) {
        throw new DomainError(ErrorCode.Unauthenticated, 'the access code is not valid');
      }
      const codeHash = hashAccessCode(accessCode);
      let record = fresh ? undefined : cache.get(codeHash);
      if (record === undefined) {
        record = await store.findAccountByCodeHash(codeHash);
        if (record === undefined) {
          throw new DomainError(ErrorCode.Unauthenticated, 'the access code is not valid');
        }
        cache.set(codeHash, record);
      }
      return { ...record, accessCode: accessCode.toLowerCase() };
    },
  };
}
