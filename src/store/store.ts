import type { Administration } from './admin.ts';
import type { StreamSlotStore } from './stream-slots.ts';
import type { WebhookStore } from './webhooks.ts';

/**
 * The storage boundary. Every rule that needs atomicity (the link cap, unique shortcodes,
 * exact access counts) is settled inside one call here, by the database, never by a read
 * followed by a write in the caller. Every implementation passes test/store/contract.ts.
 */
import type { Visit } from '../stats/visit.ts';
import type { BatchListener } from './group-commit.ts';

export interface AccountRecord {
  readonly uid: number;
  readonly dateCreated: string;
  readonly maxLinks: number;
  /** Set by an administrator: the account's calls answer 403 and its links 410. */
  readonly disabled: boolean;
}

export interface LinkRecord {
  readonly shortCode: string;
  readonly pointsTo: string;
  readonly createdBy: number;
  readonly accesses: number;
}

/** Why a link that exists does not resolve (CONTRACT §7.1, §7.3); the order is the precedence. */
export type LinkRefusal = 'disabled' | 'expired' | 'visit_limit';

/**
 * A resolution's outcome: the link with its count. `refused` set means the link exists but
 * was not resolved and nothing was counted (`accesses` is then its count as it stands).
 */
export interface ResolvedLink extends LinkRecord {
  readonly refused?: LinkRefusal;
}

/** A link with everything its owner sees (LinkDetails). */
export interface LinkDetailsRecord extends LinkRecord {
  readonly dateCreated: string;
  readonly title: string | null;
  /** Lower case, in the order given, no duplicates. */
  readonly tags: readonly string[];
  /** `toISOString()` form (UTC), or null. */
  readonly expiresAt: string | null;
  readonly maxVisits: number | null;
}

/** The optional details a link is created with; omitted means none. */
export interface LinkDetailsInput {
  readonly title?: string | null;
  readonly tags?: readonly string[];
  readonly expiresAt?: string | null;
  readonly maxVisits?: number | null;
}

/** An edit: only the fields present change; null (or [] for tags) clears a field. */
export interface LinkChanges {
  readonly pointsTo?: string;
  readonly title?: string | null;
  readonly tags?: readonly string[];
  readonly expiresAt?: string | null;
  readonly maxVisits?: number | null;
}

export type UpdateLinkResult =
  | { readonly status: 'updated'; readonly link: LinkDetailsRecord }
  | { readonly status: 'not_found' | 'not_owner' | 'account_disabled' };

/** One page of an account's links (`GET /v1/links`); every field is optional. */
export interface LinkQuery {
  /** Case-insensitive substring of the shortcode, the target or the title (given lower-case). */
  readonly q?: string;
  /** Tags the link must all carry (lower case). */
  readonly tags?: readonly string[];
  /** Only links after this position (a previous page's `next`). */
  readonly after?: number;
  /** At most this many links; all of them when omitted. */
  readonly limit?: number;
}

export interface LinkPage {
  readonly links: LinkDetailsRecord[];
  /** Where the next page starts, when more links match; the store's own position (the row id). */
  readonly next: number | undefined;
}

export interface NewAccount {
  /** SHA-256 hex digest of the lower-case access code; the code itself is never stored. */
  readonly codeHash: string;
  readonly dateCreated: string;
  readonly maxLinks: number;
}

export interface NewLink extends LinkDetailsInput {
  readonly shortCode: string;
  readonly pointsTo: string;
  readonly createdBy: number;
  readonly dateCreated: string;
  /** The id of its link.created event (outbox and live stream); a fresh one when omitted. */
  readonly eventId?: string;
}

/** Outcome of an insert: cap is checked before uniqueness, as the contract orders them. */
export type CreateLinkResult = 'created' | 'cap_reached' | 'taken';

export type DeleteLinkResult = 'deleted' | 'not_found' | 'not_owner';

export interface PingOptions {
  /** Commit a write that changes nothing, through the same write path as the store's writes. */
  readonly write?: boolean;
}

/** Whose statistics: one link, or every link an account holds. */
export type StatsScope = { readonly shortCode: string } | { readonly accountUid: number };

/** Statistics over a range of hours, summed over the scope's links. */
export interface StatsRows {
  /** Visits per hour that has any, in hour order (a folded day sits at its first hour). */
  readonly series: readonly { readonly hour: number; readonly visits: number; readonly bots: number }[];
  /** Visits per value of each dimension but the first (`Dimension`), in no order. */
  readonly values: readonly { readonly dimension: number; readonly value: string; readonly visits: number }[];
}

export interface FoldOptions {
  /**
   * Move the tuples of the hours before this one (hours since the epoch) into the rollups
   * (ADR 20); default: the hour now, i.e. every hour that is over.
   */
  readonly hoursBefore?: number;
  /**
   * Fold hourly rows before this hour (hours since the epoch) into one row per day (at the
   * day's first hour), and forget the statistics of deleted links.
   */
  readonly daysBeforeHour?: number;
}

/**
 * The server's store. It also carries the administration calls (`/v1/admin/…`), which the CLI's
 * AdminStore runs through the same per-engine code (sqlite/administration.ts,
 * postgres/administration.ts).
 */
export interface Store extends Administration {
  /** Which engine this is, for logs and health output. */
  readonly engine: string;

  /**
   * Webhook registrations, the outbox and the delivery log (CONTRACT §7.5). The outbox rows
   * of createLink, updateLink, deleteLink, rotateAccessCode and resolveLink are written by
   * those calls, in their own transaction. Each takes the id its event is to have
   * (`eventId`, made by the caller with newEventId(), so that the live stream shows the
   * same id as the webhook deliveries); a fresh one when omitted.
   */
  readonly webhooks: WebhookStore;

  /** The leases of live event streams: the per-account cap across processes, and their credentials' checks. */
  readonly streamSlots: StreamSlotStore;

  createAccount(account: NewAccount): Promise<AccountRecord>;
  findAccountByCodeHash(codeHash: string): Promise<AccountRecord | undefined>;

  /**
   * Replaces the account's access-code digest, only while it is still `codeHash` (two racing
   * rotations with one code: one wins). Undefined when the account or that digest is gone.
   */
  rotateAccessCode(uid: number, codeHash: string, newCodeHash: string, eventId?: string): Promise<AccountRecord | undefined>;

  /** Deletes the account and every link it holds, in one transaction; false when there was none. */
  deleteAccount(uid: number): Promise<boolean>;

  /**
   * Inserts the link if its account holds fewer than MaxLinks links and the shortcode is
   * free, in one atomic step. Resolves only once the insert is durable.
   */
  createLink(link: NewLink): Promise<CreateLinkResult>;

  /** Deletes the link if `accountUid` owns it, freeing its slot and its shortcode. */
  deleteLink(shortCode: string, accountUid: number, eventId?: string): Promise<DeleteLinkResult>;

  /** The account's links, oldest first. */
  listLinks(accountUid: number): Promise<LinkRecord[]>;

  /**
   * The account's links with their details, oldest first, filtered and paged by `query`.
   * Pages follow the (created_by, id) index (keyset), so a page costs the same however many
   * links come before it.
   */
  listLinkDetails(accountUid: number, query?: LinkQuery): Promise<LinkPage>;

  /**
   * Applies `changes` to the link if `accountUid` owns it and that account is not disabled,
   * in one atomic step; answers the link as it then stands. The shortcode and the count stay.
   */
  updateLink(shortCode: string, accountUid: number, changes: LinkChanges, eventId?: string): Promise<UpdateLinkResult>;

  /**
   * Counts one access and returns the link as it stands after it, or undefined when no
   * such link exists. Concurrent calls never see the same count, and the promise settles
   * only after the increment is durable. A link past its expiry (at `now`, an ISO time,
   * default the current time), at its visit limit, or whose account is disabled is not
   * counted and comes back with `refused`; with MaxVisits N, exactly N calls ever succeed.
   * With `visit`, a counted access's statistics are recorded in the same transaction as its
   * count (a refused one records nothing).
   */
  resolveLink(shortCode: string, now?: string, visit?: Visit): Promise<ResolvedLink | undefined>;

  /**
   * Statistics of hours `fromHour` (inclusive) to `toHour` (exclusive): everything counted
   * so far, folded into the rollups or still in the visit journal.
   */
  readStats(scope: StatsScope, fromHour: number, toHour: number): Promise<StatsRows>;

  /**
   * Moves recorded visits from the journal into the per-hour rollups (top values per link,
   * hour and dimension kept by name, the rest summed as `(other)`), and with
   * `daysBeforeHour` folds old hours into days. Answers how many journal rows it moved.
   * Safe to run from several processes at once.
   */
  foldStats(options?: FoldOptions): Promise<number>;

  /**
   * Tells `listener` about every batch of resolutions once it has committed, with each call's
   * outcome (the live `link.visited` events, ADR 19); the answer stops telling it.
   */
  watchCounts(listener: BatchListener<LinkRecord>): () => void;

  /** The link without counting an access (HEAD requests), with `refused` as resolveLink would say. */
  findLink(shortCode: string, now?: string): Promise<ResolvedLink | undefined>;

  /**
   * Resolves when the database answers a trivial query; with `write`, when it also commits a
   * write that changes nothing (a full disk or a read-only file fails that, not a read).
   */
  ping(options?: PingOptions): Promise<void>;

  /** Finishes pending writes and releases the database. */
  close(): Promise<void>;
}
