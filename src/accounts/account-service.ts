import { DomainError, ErrorCode } from '../errors.ts';
import type { AccountRecord, Store } from '../store/store.ts';
import { hashAccessCode, isWellFormedAccessCode, newAccessCode } from './access-code.ts';

/** An account as the API shows it, with the access code the caller holds. */
export interface Account extends AccountRecord {
  /** Lower case; only ever known from the request that carried it or created it. */
  readonly accessCode: string;
}

export interface AccountService {
  create(): Promise<Account>;
  /** The account the access code opens; throws Unauthenticated for anything else. */
  authenticate(accessCode: string | undefined): Promise<Account>;
}

export interface AccountServiceDeps {
  readonly store: Store;
  readonly clock: () => Date;
  readonly defaultMaxLinks: number;
}

export function createAccountService({ store, clock, defaultMaxLinks }: AccountServiceDeps): AccountService {
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

    async authenticate(accessCode) {
      if (accessCode === undefined) {
        throw new DomainError(ErrorCode.Unauthenticated, 'an access code is required');
      }
      if (!isWellFormedAccessCode(accessCode)) {
        throw new DomainError(ErrorCode.Unauthenticated, 'the access code is not valid');
      }
      const record = await store.findAccountByCodeHash(hashAccessCode(accessCode));
      if (record === undefined) {
        throw new DomainError(ErrorCode.Unauthenticated, 'the access code is not valid');
      }
      return { ...record, accessCode: accessCode.toLowerCase() };
    },
  };
}
