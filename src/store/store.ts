/**
 * The storage boundary. Every rule that needs atomicity (the link cap, unique shortcodes,
 * exact access counts) is settled inside one call here, by the database, never by a read
 * followed by a write in the caller. Every implementation passes test/store/contract.ts.
 */

export interface AccountRecord {
  readonly uid: number;
  readonly dateCreated: string;
  readonly maxLinks: number;
}

export interface LinkRecord {
  readonly shortCode: string;
  readonly pointsTo: string;
  readonly createdBy: number;
  readonly accesses: number;
}

export interface NewAccount {
  /** SHA-256 hex digest of the lower-case access code; the code itself is never stored. */
  readonly codeHash: string;
  readonly dateCreated: string;
  readonly maxLinks: number;
}

export interface NewLink {
  readonly shortCode: string;
  readonly pointsTo: string;
  readonly createdBy: number;
  readonly dateCreated: string;
}

/** Outcome of an insert: cap is checked before uniqueness, as the contract orders them. */
export type CreateLinkResult = 'created' | 'cap_reached' | 'taken';

export type DeleteLinkResult = 'deleted' | 'not_found' | 'not_owner';

export interface PingOptions {
  /** Commit a write that changes nothing, through the same write path as the store's writes. */
  readonly write?: boolean;
}

export interface Store {
  /** Which engine this is, for logs and health output. */
  readonly engine: string;

  createAccount(account: NewAccount): Promise<AccountRecord>;
  findAccountByCodeHash(codeHash: string): Promise<AccountRecord | undefined>;

  /**
   * Inserts the link if its account holds fewer than MaxLinks links and the shortcode is
   * free, in one atomic step. Resolves only once the insert is durable.
   */
  createLink(link: NewLink): Promise<CreateLinkResult>;

  /** Deletes the link if `accountUid` owns it, freeing its slot and its shortcode. */
  deleteLink(shortCode: string, accountUid: number): Promise<DeleteLinkResult>;

  /** The account's links, oldest first. */
  listLinks(accountUid: number): Promise<LinkRecord[]>;

  /**
   * Counts one access and returns the link as it stands after it, or undefined when no
   * such link exists. Concurrent calls never see the same count, and the promise settles
   * only after the increment is durable.
   */
  resolveLink(shortCode: string): Promise<LinkRecord | undefined>;

  /** The link without counting an access (HEAD requests). */
  findLink(shortCode: string): Promise<LinkRecord | undefined>;

  /**
   * Resolves when the database answers a trivial query; with `write`, when it also commits a
   * write that changes nothing (a full disk or a read-only file fails that, not a read).
   */
  ping(options?: PingOptions): Promise<void>;

  /** Finishes pending writes and releases the database. */
  close(): Promise<void>;
}
