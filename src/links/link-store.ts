/**
 * What the link rules need from storage (the links port): the records a link is stored and
 * answered as, and the calls that settle the cap, uniqueness and exact counts inside the
 * database. Each engine under src/store/ implements it; the domain never imports an engine.
 */
import type { Visit } from '../stats/visit.ts';

/**
 * A link as storage answers it. `shortCode` is the link's key (link-key.ts): the code on the
 * default domain, `host/code` on a registered one; whatever answers a client splits it.
 */
export interface LinkRecord {
  readonly shortCode: string;
  readonly pointsTo: string;
  readonly createdBy: number;
  readonly accesses: number;
}

/**
 * Why a link that exists does not resolve (CONTRACT §7.1, §7.3, §8.3); the order is the
 * precedence. `password`: a protected link counted without its password having been checked.
 */
export type LinkRefusal = 'disabled' | 'expired' | 'visit_limit' | 'password';

/** How a visit is routed (CONTRACT §8.2): read with the count, on the redirect path. */
export interface LinkRouting {
  readonly forwardQuery: boolean;
  /** The rules as stored (JSON text, rules.ts), or null for none. */
  readonly rules: string | null;
  /** The password's scrypt hash, or null for an open link. */
  readonly passwordHash: string | null;
}

/**
 * A resolution's outcome: the link with its count. `refused` set means the link exists but
 * was not resolved and nothing was counted (`accesses` is then its count as it stands).
 */
export interface ResolvedLink extends LinkRecord {
  readonly refused?: LinkRefusal;
  /** How to route the visit; absent means none of it (an engine that has not read it). */
  readonly routing?: LinkRouting;
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
  readonly forwardQuery: boolean;
  /** The rules as stored (JSON text), or null for none. */
  readonly rules: string | null;
  /** Whether a password protects it; the hash itself never leaves storage in this record. */
  readonly protected: boolean;
}

/** The optional details a link is created with; omitted means none. */
export interface LinkDetailsInput {
  readonly title?: string | null;
  readonly tags?: readonly string[];
  readonly expiresAt?: string | null;
  readonly maxVisits?: number | null;
  readonly forwardQuery?: boolean;
  readonly rules?: string | null;
  readonly passwordHash?: string | null;
}

/** An edit: only the fields present change; null (or [] for tags) clears a field. */
export interface LinkChanges {
  readonly pointsTo?: string;
  readonly title?: string | null;
  readonly tags?: readonly string[];
  readonly expiresAt?: string | null;
  readonly maxVisits?: number | null;
  readonly forwardQuery?: boolean;
  readonly rules?: string | null;
  readonly passwordHash?: string | null;
}

export type UpdateLinkResult =
  | { readonly status: 'updated'; readonly link: LinkDetailsRecord }
  | { readonly status: 'not_found' | 'not_owner' | 'account_disabled' };

/** One page of an account's links (`GET /v1/links`); every field is optional. */
/**
 * The order of a list (CONTRACT §7.1): `oldest` first (by creation, the row id), `newest`
 * first, or most `visits` first with ties newest first.
 */
export type LinkOrder = 'oldest' | 'newest' | 'visits';

/** Where a page ended: the last link's row id, and for `visits` its count as it was then. */
export interface LinkPosition {
  readonly id: number;
  readonly accesses?: number;
}

export interface LinkQuery {
  /**
   * Only the links of this domain: a registered host, or '' for the default domain; every
   * domain when omitted.
   */
  readonly domain?: string;
  /** Case-insensitive substring of the shortcode, the target or the title (given lower-case). */
  readonly q?: string;
  /** Tags the link must all carry (lower case). */
  readonly tags?: readonly string[];
  /** `oldest` when omitted. */
  readonly order?: LinkOrder;
  /** Only links after this position in the order (a previous page's `next`). */
  readonly after?: LinkPosition;
  /** At most this many links; all of them when omitted. */
  readonly limit?: number;
}

export interface LinkPage {
  readonly links: LinkDetailsRecord[];
  /** Where the next page starts, when more links match; the store's own position. */
  readonly next: LinkPosition | undefined;
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

/** Outcome of a delete: the removed link as it last stood, or why nothing was removed. */
export type DeleteLinkResult =
  | { readonly status: 'deleted'; readonly link: LinkDetailsRecord }
  | { readonly status: 'not_found' }
  | { readonly status: 'not_owner' };

/** One caller's outcome: its own count, or (nothing counted) the refusal and the count as it stands. */
export type CountOutcome<T> =
  | { readonly row: T; readonly accesses: number; readonly refused?: undefined }
  | { readonly row: T; readonly accesses: number; readonly refused: LinkRefusal };

/** One counted resolution as a batch saw it: its shortcode, time (ISO) and visit, if any. */
export interface BatchCall {
  readonly code: string;
  readonly now: string;
  readonly visit: Visit | undefined;
}

/**
 * A committed batch: its calls in arrival order and each one's outcome (undefined: no such
 * link; `refused`: not counted). Must not throw or hold the batch up.
 */
export type BatchListener<T> = (calls: readonly BatchCall[], outcomes: readonly (CountOutcome<T> | undefined)[]) => void;

/** The link calls of a store. */
export interface LinkStore {
  /**
   * Inserts the link if its account holds fewer than MaxLinks links and the shortcode is
   * free, in one atomic step. Resolves only once the insert is durable.
   */
  createLink(link: NewLink): Promise<CreateLinkResult>;

  /**
   * Deletes the link if `accountUid` owns it, freeing its slot and its shortcode; answers the
   * removed link as it last stood (the link.deleted event's data).
   */
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
   * Tells `listener` about every batch of resolutions once it has committed, with each call's
   * outcome (the live `link.visited` events, ADR 19); the answer stops telling it.
   */
  watchCounts(listener: BatchListener<LinkRecord>): () => void;

  /** The link without counting an access (HEAD requests), with `refused` as resolveLink would say. */
  findLink(shortCode: string, now?: string): Promise<ResolvedLink | undefined>;

}
