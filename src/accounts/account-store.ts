/**
 * What the account rules need from storage (the accounts port): the records and the calls.
 * Each engine under src/store/ implements it; the domain never imports an engine.
 */

export interface AccountRecord {
  readonly uid: number;
  readonly dateCreated: string;
  readonly maxLinks: number;
  /** Set by an administrator: the account's calls answer 403 and its links 410. */
  readonly disabled: boolean;
}

export interface NewAccount {
  /** SHA-256 hex digest of the lower-case access code; the code itself is never stored. */
  readonly codeHash: string;
  readonly dateCreated: string;
  readonly maxLinks: number;
}

/** The account calls of a store. */
export interface AccountStore {
  createAccount(account: NewAccount): Promise<AccountRecord>;
  findAccountByCodeHash(codeHash: string): Promise<AccountRecord | undefined>;

  /**
   * Replaces the account's access-code digest, only while it is still `codeHash` (two racing
   * rotations with one code: one wins). Undefined when the account or that digest is gone.
   */
  rotateAccessCode(uid: number, codeHash: string, newCodeHash: string, eventId?: string): Promise<AccountRecord | undefined>;

  /** Deletes the account and every link it holds, in one transaction; false when there was none. */
  deleteAccount(uid: number): Promise<boolean>;
}
