import { DomainError, ErrorCode } from '../errors.ts';
import type { AccountEventSink } from '../events/domain-events.ts';
import { newEventId } from '../events/payloads.ts';
import type { AccountRecord, AccountStore } from './account-store.ts';
import { createAccountCache } from './account-cache.ts';
import { createAccountWithCode, hashAccessCode, isWellFormedAccessCode, newAccessCode } from './access-code.ts';

/** An account as the API shows it, with the access code the caller holds. */
export interface Account extends AccountRecord {
  /** Lower case; only ever known from the request that carried it or created it. */
  readonly accessCode: string;
}

export interface AccountService {
  /** A new account; refused while registration is closed (operators use `shortlink account create`). */
  create(): Promise<Account>;
  /**
   * The account the access code opens; throws Unauthenticated for anything else. `fresh`
   * reads the store even when the account is cached (to show or change the account itself).
   * A disabled account is still returned: whether that refuses the call is decided after the
   * call's parameters are checked (contract §7's order), see `assertActive`.
   */
  authenticate(accessCode: string | undefined, options?: { fresh?: boolean }): Promise<Account>;
  /**
   * Gives the account a new access code; the old one stops working here at once and on
   * every other process within the cache's lifetime.
   */
  rotate(account: Account): Promise<Account>;
  /** Deletes the account and every link it holds. */
  remove(account: Account): Promise<void>;
  /** Forgets what this process remembers of the account (an administrator changed it). */
  forget(uid: number): void;
}

export interface AccountServiceDeps {
  readonly store: AccountStore;
  readonly clock: () => Date;
  readonly defaultMaxLinks: number;
  /** False when REGISTRATION=closed. Default true. */
  readonly registrationOpen?: boolean;
  /**
   * How long an authenticated account is remembered (see account-cache.ts); 0 looks every
   * access code up in the store. Default 500 ms: a rotated, deleted or disabled account is
   * seen by every process within that (the contract allows 1 s). Only calls that go on to use
   * the store anyway (list, create, delete) use the cache; showing the account always reads it.
   */
  readonly accountCacheMs?: number;
  /** Told of each rotation once it has committed (the live events); none when omitted. */
  readonly events?: AccountEventSink | undefined;
}

/** The default lifetime of a remembered account (ADR 18). */
export const ACCOUNT_CACHE_MS = 500;

/** The refusal of a disabled account's call. */
export function accountDisabled(): DomainError {
  return new DomainError(ErrorCode.AccountDisabled, 'the account is disabled');
}

/** Refuses a disabled account's call; every protected operation asks, after its parameters. */
export function assertActive(account: AccountRecord): void {
  if (account.disabled) throw accountDisabled();
}

export function createAccountService({
  store, clock, defaultMaxLinks, registrationOpen = true, accountCacheMs = ACCOUNT_CACHE_MS, events,
}: AccountServiceDeps): AccountService {
  const cache = createAccountCache({ ttlMs: accountCacheMs, maxEntries: 10_000 });
  const notValid = () => new DomainError(ErrorCode.Unauthenticated, 'the access code is not valid');
  return {
    async create() {
      if (!registrationOpen) throw new DomainError(ErrorCode.RegistrationClosed, 'registration is closed');
      return createAccountWithCode(store, { dateCreated: clock().toISOString(), maxLinks: defaultMaxLinks });
    },

    async authenticate(accessCode, { fresh = false } = {}) {
      if (accessCode === undefined) {
        throw new DomainError(ErrorCode.Unauthenticated, 'an access code is required');
      }
      if (!isWellFormedAccessCode(accessCode)) throw notValid();
      const codeHash = hashAccessCode(accessCode);
      let record = fresh ? undefined : cache.get(codeHash);
      if (record === undefined) {
        record = await store.findAccountByCodeHash(codeHash);
        if (record === undefined) {
          cache.evict(codeHash);
          throw notValid();
        }
        cache.set(codeHash, record);
      }
      return { ...record, accessCode: accessCode.toLowerCase() };
    },

    async rotate(account) {
      assertActive(account);
      const codeHash = hashAccessCode(account.accessCode);
      const accessCode = newAccessCode();
      // Conditional on the old digest: of two rotations racing with one code, one wins and the
      // other finds its code no longer valid.
      const eventId = newEventId();
      const record = await store.rotateAccessCode(account.uid, codeHash, hashAccessCode(accessCode), eventId);
      cache.evict(codeHash);
      if (record === undefined) throw notValid();
      events?.accountRotated(record.uid, eventId);
      return { ...record, accessCode };
    },

    async remove(account) {
      assertActive(account);
      const deleted = await store.deleteAccount(account.uid);
      cache.evictAccount(account.uid);
      if (!deleted) throw notValid();
    },

    forget(uid) {
      cache.evictAccount(uid);
    },
  };
}
