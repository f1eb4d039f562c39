/**
 * What administration needs from storage (the administration port, CONTRACT §7.3): on the
 * server's Store (`/v1/admin/…`) and the CLI's AdminStore alike, both running the same
 * per-engine code. The domain never imports an engine.
 */
import type { AccountRecord } from '../accounts/account-store.ts';
import type { LinkDetailsRecord } from '../links/link-store.ts';

/** An account with the number of links it holds right now. */
export interface AdminAccount extends AccountRecord {
  readonly linkCount: number;
}

/** What an administrator may change on an account; at least one field. */
export interface AccountChanges {
  readonly maxLinks?: number;
  readonly disabled?: boolean;
}

export type UpdateAccountResult =
  | { readonly outcome: 'updated'; readonly previous: AdminAccount; readonly account: AdminAccount }
  | { readonly outcome: 'not_found' }
  /** The account holds more links than the new cap; contract §6.1 forbids that state. */
  | { readonly outcome: 'below_held'; readonly linkCount: number };

/** One page of a search across every account's links, keyset-paged by the link's row id. */
export interface LinkSearch {
  /** Only links whose row id is above this (0 for the first page). */
  readonly after: number;
  readonly limit: number;
  /** Lower-case text the shortcode, the target or the title must contain. */
  readonly text?: string;
  /**
   * Lower-case texts of which the target must contain one (a host in its ASCII and Unicode
   * forms): a coarse filter, the caller checks the parsed host.
   */
  readonly targetContains?: readonly string[];
}

export interface FoundLink {
  /** The row id, the cursor of the next page. */
  readonly id: number;
  readonly link: LinkDetailsRecord;
}

/**
 * The administration calls, on the server's Store (`/v1/admin/…`) and the CLI's AdminStore alike,
 * both running the same per-engine code.
 */
export interface Administration {
  /** Accounts with uid above `after`, by uid, at most `limit`. */
  listAccounts(after: number, limit: number): Promise<AdminAccount[]>;
  /** Changes MaxLinks and/or Disabled, refusing a cap below the links held (atomically). */
  updateAccount(uid: number, changes: AccountChanges): Promise<UpdateAccountResult>;
  searchLinks(search: LinkSearch): Promise<FoundLink[]>;
  /**
   * Deletes the link whoever owns it, freeing the owner's slot and writing a link.deleted
   * event for the owner's subscribed webhooks, in one transaction; the link as it was (its
   * details, the event's data), or undefined. `eventId` is the event's id (a fresh one when omitted).
   */
  takeDownLink(shortCode: string, eventId?: string): Promise<LinkDetailsRecord | undefined>;
}

