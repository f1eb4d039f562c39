/**
 * Link details as both engines store them, and the one rule that decides whether a stored
 * link still resolves. Tags are one text column, lower case and comma-joined ('' for none);
 * ExpiresAt is `toISOString()` text (UTC), so "expired" is a text comparison with the
 * current time in the same form, in SQL and here alike.
 */
import { LINK_COLUMNS } from './columns.ts';
import type { LinkOrder, LinkRouting } from '../links/link-store.ts';
import type { LinkDetailsRecord, LinkRecord, LinkRefusal, NewLink, ResolvedLink } from './store.ts';

/** A `LinkDetailsRow`: the link columns and its details as stored. */
export const LINK_DETAILS_COLUMNS =
  `${LINK_COLUMNS}, date_created AS "dateCreated", title, tags, expires_at AS "expiresAt", max_visits AS "maxVisits",
   forward_query AS "forwardQuery", rules, password_hash IS NOT NULL AS protected`;

/** A `RoutingRow`: how a visit to the link is routed (CONTRACT §8.2-8.3), read with its count. */
export const ROUTING_COLUMNS = 'forward_query AS "forwardQuery", rules, password_hash AS "passwordHash"';

/** A row as read with ROUTING_COLUMNS (SQLite answers forward_query as 0/1). */
export interface RoutingRow {
  readonly forwardQuery: number | boolean;
  readonly rules: string | null;
  readonly passwordHash: string | null;
}

/** A row as read with LINK_DETAILS_COLUMNS. */
export interface LinkDetailsRow extends LinkRecord {
  readonly dateCreated: string;
  readonly title: string | null;
  readonly tags: string;
  readonly expiresAt: string | null;
  readonly maxVisits: number | null;
  readonly forwardQuery: number | boolean;
  readonly rules: string | null;
  readonly protected: number | boolean;
}

/** What decides whether a link resolves, read beside its columns, and how it routes. */
export interface LinkStateRow extends LinkRecord, Partial<RoutingRow> {
  readonly expiresAt: string | null;
  readonly maxVisits: number | null;
  /** The owner account's flag (SQLite 0/1, PostgreSQL boolean). */
  readonly disabled: number | boolean | null;
}

/** Tags as stored: lower case, comma-joined, '' for none. */
export function joinTags(tags: readonly string[] | undefined): string {
  return tags === undefined ? '' : tags.join(',');
}

/**
 * Each list order's sort (CONTRACT §7.1), the same on both engines; ties by the row id, so a
 * position (id, and accesses for `visits`) names one place in the order. No index serves
 * `visits`: one would cost every count batch an index update on the hot path, for a list an
 * account of at most MaxLinks links sorts in memory (docs/api.md, "List your links").
 */
export const ORDER_BY: Readonly<Record<LinkOrder, string>> = {
  oldest: 'id',
  newest: 'id DESC',
  visits: 'accesses DESC, id DESC',
};

/** A new link's stored columns, by column name. */
export type NewLinkRow = Readonly<Record<(typeof NEW_LINK_COLUMNS)[number], string | number | null>>;

/**
 * Every column a new link is inserted with, in one place for both engines: SQLite's insert
 * statement lists these columns, and PostgreSQL's `shortlink_insert_links` (migration 9) reads
 * each row as a record of the `links` table, so a new column is added here and in the table,
 * never to a function's argument list.
 */
export const NEW_LINK_COLUMNS = [
  'short_code', 'points_to', 'created_by', 'accesses', 'date_created', 'title', 'tags', 'expires_at', 'max_visits',
  'forward_query', 'rules', 'password_hash',
] as const;

/** A new link as the row it is inserted as (see NEW_LINK_COLUMNS). */
export function newLinkRow(link: NewLink): NewLinkRow {
  return {
    short_code: link.shortCode,
    points_to: link.pointsTo,
    created_by: link.createdBy,
    accesses: 0,
    date_created: link.dateCreated,
    title: link.title ?? null,
    tags: joinTags(link.tags),
    expires_at: link.expiresAt ?? null,
    max_visits: link.maxVisits ?? null,
    forward_query: link.forwardQuery === true ? 1 : 0,
    rules: link.rules ?? null,
    password_hash: link.passwordHash ?? null,
  };
}

/** The routing of a row read with ROUTING_COLUMNS. */
export function routingOf(row: RoutingRow): LinkRouting {
  return { forwardQuery: row.forwardQuery === true || row.forwardQuery === 1, rules: row.rules, passwordHash: row.passwordHash };
}

/**
 * A resolution's `routing` field, for a row that may have read the routing columns: nothing
 * for a link that routes nothing (nearly every link, on the hot path: no object made), which
 * ResolvedLink reads as none.
 */
export function routingField(row: Partial<RoutingRow>): { routing?: LinkRouting } {
  if (row.rules === undefined || (row.rules === null && row.passwordHash === null && row.forwardQuery !== true && row.forwardQuery !== 1)) {
    return NO_ROUTING;
  }
  return { routing: routingOf(row as RoutingRow) };
}
const NO_ROUTING = Object.freeze({});

export function detailsOf(row: LinkDetailsRow): LinkDetailsRecord {
  return {
    shortCode: row.shortCode,
    pointsTo: row.pointsTo,
    createdBy: Number(row.createdBy),
    accesses: Number(row.accesses),
    dateCreated: row.dateCreated,
    title: row.title,
    tags: row.tags === '' ? [] : row.tags.split(','),
    expiresAt: row.expiresAt,
    maxVisits: row.maxVisits === null ? null : Number(row.maxVisits),
    forwardQuery: row.forwardQuery === true || row.forwardQuery === 1,
    rules: row.rules,
    protected: row.protected === true || row.protected === 1,
  };
}

/**
 * `detailsOf` for a statement that answers rows as arrays (`setReturnArrays`): the values of
 * LINK_DETAILS_COLUMNS, in its order, from position `at`. A list page builds 20–100 rows; as
 * arrays they cost SQLite less than half the CPU of row objects (one property per column).
 */
export function detailsOfValues(values: readonly unknown[], at: number): LinkDetailsRecord {
  return detailsOf({
    shortCode: values[at], pointsTo: values[at + 1], createdBy: values[at + 2], accesses: values[at + 3],
    dateCreated: values[at + 4], title: values[at + 5], tags: values[at + 6], expiresAt: values[at + 7],
    maxVisits: values[at + 8], forwardQuery: values[at + 9], rules: values[at + 10], protected: values[at + 11],
  } as LinkDetailsRow);
}

/**
 * Why a link in this state does not resolve at `now` (an ISO time), or undefined when it
 * does. A disabled owner comes first, then expiry, then the visit limit, then a password not
 * checked (`unlocked` false for a protected link).
 */
export function refusalOf(
  state: {
    readonly expiresAt: string | null; readonly maxVisits: number | null; readonly disabled: number | boolean | null;
    readonly passwordHash?: string | null | undefined;
  },
  accesses: number,
  now: string,
  unlocked = false,
): LinkRefusal | undefined {
  if (state.disabled === true || state.disabled === 1) return 'disabled';
  if (state.expiresAt !== null && state.expiresAt <= now) return 'expired';
  if (state.maxVisits !== null && accesses >= Number(state.maxVisits)) return 'visit_limit';
  if (!unlocked && state.passwordHash !== null && state.passwordHash !== undefined) return 'password';
  return undefined;
}

/** The public link of a state row, with its routing and its refusal (if any) at `now`. */
export function resolvedOf(row: LinkStateRow, now: string): ResolvedLink {
  const link = {
    shortCode: row.shortCode, pointsTo: row.pointsTo, createdBy: Number(row.createdBy), accesses: Number(row.accesses),
    ...routingField(row),
  };
  const refused = refusalOf(row, link.accesses, now);
  return refused === undefined ? link : { ...link, refused };
}
