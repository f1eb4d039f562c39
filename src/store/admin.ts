/**
 * Operator access to the database, beyond what the service itself needs: changing an
 * account's cap, streaming every link out, and bulk-loading links in. Used by the CLI only.
 *
 * It is a separate interface (and separate files, sqlite/admin.ts and postgres/admin.ts, each
 * opening its own connection) so that the `Store` the server runs on stays small. The invariants are the same ones `Store`
 * keeps: an account's `link_count` always equals the links it holds, a shortcode belongs to
 * one link, and the cap is settled by the database inside each write transaction.
 */
import type { AccountRecord, NewAccount } from '../accounts/account-store.ts';
import type { AdminAccount, Administration } from '../admin/administration.ts';
import type { DomainStore } from '../domains/domain-store.ts';
import type { LinkDetailsInput, LinkDetailsRecord } from '../links/link-store.ts';

export type { AccountChanges, AdminAccount, Administration, FoundLink, LinkSearch, UpdateAccountResult } from '../admin/administration.ts';

/** One link as `export` writes it: everything the link holds. */
export type ExportedLink = LinkDetailsRecord;

/**
 * One link to import, already validated; it is given to the account named in the options.
 * Its details are optional: a file from another shortener may have none.
 */
export interface ImportLink extends LinkDetailsInput {
  readonly shortCode: string;
  readonly pointsTo: string;
  readonly accesses: number;
  readonly dateCreated: string;
}

/**
 * What became of one row: `taken` when a link already holds the shortcode (it is never
 * overwritten), `cap_reached` when the account already holds MaxLinks links.
 */
export type ImportOutcome = 'imported' | 'taken' | 'cap_reached';

export interface ImportOptions {
  /**
   * The account that receives the links. `null` only for a dry run whose links would go to an
   * account the import has not created yet (so no cap applies).
   */
  readonly accountUid: number | null;
  /** Raise the account's MaxLinks to what it holds after the import instead of refusing rows past it. */
  readonly raiseCap: boolean;
  /** Check every row against the database but write nothing. */
  readonly dryRun: boolean;
  /** Dry runs only: links that earlier batches of the same dry run would have added to the account. */
  readonly pendingLinks?: number;
}

export type SetMaxLinksResult =
  | { readonly outcome: 'updated'; readonly previous: number; readonly account: AdminAccount }
  | { readonly outcome: 'not_found' }
  /** The account holds more links than the new cap; contract §6.1 forbids that state. */
  | { readonly outcome: 'below_held'; readonly linkCount: number };

export interface AdminStore extends Administration {
  readonly engine: 'sqlite' | 'postgres';

  /** Registered domains and the default domain's fallbacks, the same calls as the server's Store. */
  readonly domains: DomainStore;

  findAccount(uid: number): Promise<AdminAccount | undefined>;
  createAccount(account: NewAccount): Promise<AccountRecord>;

  /** Sets MaxLinks, refusing a value below the links the account holds (atomically). */
  setMaxLinks(uid: number, maxLinks: number): Promise<SetMaxLinksResult>;

  /**
   * Every link, oldest first, read from one consistent snapshot and streamed (a page at a time),
   * so memory stays flat however many links there are.
   */
  exportLinks(): AsyncIterable<ExportedLink>;

  /**
   * Imports one batch in one transaction and returns an outcome per row, in order. Rows are
   * taken in order until the cap is reached; a taken shortcode is reported, never replaced;
   * `Accesses` and `DateCreated` are kept; the account's link count grows by the links added.
   */
  importLinks(rows: readonly ImportLink[], options: ImportOptions): Promise<ImportOutcome[]>;

  close(): Promise<void>;
}
