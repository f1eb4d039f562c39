/**
 * The links port (links/link-store.ts) on PostgreSQL, but for counting: batched creates with
 * the cap and uniqueness settled in the database (shortlink_insert_links), deletes, lists,
 * edits and lookups.
 */
import { EventType } from '../../events/events.ts';
import { linkDetailsData, newEventId, newLinkData } from '../../events/payloads.ts';
import type {
  CreateLinkResult, DeleteLinkResult, LinkChanges, LinkQuery, LinkRecord, LinkStore, NewLink, UpdateLinkResult,
} from '../../links/link-store.ts';
import { createBatcher } from '../batcher.ts';
import { LINK_COLUMNS } from '../columns.ts';
import { withDeadline } from '../deadline.ts';
import {
  detailsOf, joinTags, LINK_DETAILS_COLUMNS, newLinkRow, ORDER_BY, resolvedOf, ROUTING_COLUMNS, type LinkDetailsRow, type LinkStateRow,
} from '../link-rows.ts';
import { keyRange } from '../../links/link-key.ts';
import { subscribedTo } from '../webhooks.ts';
import type { Drained, PostgresEngine } from './engine.ts';
import { guarded, refusedByServer } from './errors.ts';

/** The link calls other than counting. */
export type LinkCalls = Omit<LinkStore, 'resolveLink' | 'watchCounts'>;

export function linkCalls({ sql, timeoutMs, timed, outbox }: PostgresEngine): Drained<LinkCalls> {
  // Creates are batched (src/store/batcher.ts): one statement and one commit for all the
  // creates that arrive while the previous batch is written. Per create, a transaction of
  // its own held the account's row lock across two round trips and a commit, so creates
  // for one account ran one at a time (~800/s measured with 50 concurrent clients).
  const linkCreates = createBatcher<NewLink, CreateLinkResult>(async (links) => {
    // Account rows are locked in uid order (stable: arrival order within an account), so
    // batches of different instances cannot wait on each other in a cycle.
    const order = links.map((_, i) => i).sort((a, b) => links[a]!.createdBy - links[b]!.createdBy);
    const sorted = order.map((i) => links[i]!);
    // The link.created outbox rows go in the same statement, for the creates that succeed.
    const [row] = await guarded(() => sql<{ results: CreateLinkResult[] }[]>`
      WITH created AS (
        SELECT shortlink_insert_links(${sql.json(sorted.map(newLinkRow))}) AS results
      ), events AS (
        INSERT INTO webhook_events (event_id, webhook_id, type, occurred_at, data)
        SELECT e.event_id, w.id, ${EventType.LinkCreated}, e.occurred_at, e.data
          FROM created,
               unnest(created.results, ${sql.array(sorted.map((l) => l.eventId ?? newEventId()), 25)}::text[],
                      ${sql.array(sorted.map((l) => l.createdBy), 20)}::bigint[],
                      ${sql.array(sorted.map((l) => l.dateCreated), 25)}::text[],
                      ${sql.array(sorted.map((l) => JSON.stringify(newLinkData(l))), 25)}::text[])
                 AS e(result, event_id, owner, occurred_at, data)
          JOIN webhooks w ON w.account_uid = e.owner AND strpos(',' || w.events || ',', ${subscribedTo(EventType.LinkCreated)}) > 0
         WHERE e.result = 'created'
      )
      SELECT results FROM created`);
    const results = new Array<CreateLinkResult>(links.length);
    order.forEach((original, position) => (results[original] = row!.results[position]!));
    return results;
  }, { retryAlone: refusedByServer, timeoutMs });

  /**
   * Deletes `shortCode` if `accountUid` owns it, in one transaction with its freed slot and
   * its link.deleted outbox rows (the link's last state). One statement finds, locks and
   * deletes the row and says whose it was, in one snapshot: a racing delete of the same link
   * waits for the row lock, then finds nothing; a create committed meanwhile is seen whole or
   * not at all (two statements could see it appear between them and call it another's).
   */
  function deleteOwnLink(shortCode: string, accountUid: number, eventId: string | undefined): Promise<DeleteLinkResult> {
    return guarded(() => sql.begin(async (tx): Promise<DeleteLinkResult> => {
      const [found] = await tx<(Partial<LinkDetailsRow> & { owner: number })[]>`
        WITH target AS (SELECT id AS target_id, created_by AS owner FROM links WHERE short_code = ${shortCode} FOR UPDATE),
             removed AS (DELETE FROM links USING target WHERE links.id = target.target_id AND target.owner = ${accountUid}
                         RETURNING ${sql.unsafe(LINK_DETAILS_COLUMNS)})
        SELECT target.owner, removed.* FROM target LEFT JOIN removed ON true`;
      if (found === undefined) return { status: 'not_found' };
      if (Number(found.owner) !== accountUid || found.shortCode === undefined) return { status: 'not_owner' };
      await tx`UPDATE accounts SET link_count = link_count - 1 WHERE uid = ${accountUid}`;
      const link = detailsOf(found as LinkDetailsRow);
      await outbox.write(tx, EventType.LinkDeleted, new Date().toISOString(), linkDetailsData(link), accountUid, eventId);
      return { status: 'deleted', link };
    })) as Promise<DeleteLinkResult>;
  }

  const calls: LinkCalls = {
    createLink(link: NewLink) {
      return linkCreates.run(link);
    },

    deleteLink(shortCode: string, accountUid: number, eventId?: string): Promise<DeleteLinkResult> {
      // One deadline for the whole exchange. When it fires, the delete may still commit:
      // the client saw 503, and a retry answers 404 (ADR 15).
      return withDeadline(deleteOwnLink(shortCode, accountUid, eventId), timeoutMs);
    },

    async listLinks(accountUid: number) {
      // A plain array, not the driver's Result subclass.
      return [...await timed(() => sql<LinkRecord[]>`
        SELECT ${sql.unsafe(LINK_COLUMNS)} FROM links WHERE created_by = ${accountUid} ORDER BY id`)];
    },

    async listLinkDetails(accountUid: number, query: LinkQuery = {}) {
      // Keyset paging on the (created_by, id) index; one row more than the limit tells
      // whether more remain. Tags match whole (',a,' within ',a,b,'); strpos, not LIKE, since
      // '_' is a tag character.
      const { q, tags = [], after, limit, order = 'oldest' } = query;
      const start = after === undefined ? sql``
        : order === 'oldest' ? sql`AND id > ${after.id}`
          : order === 'newest' ? sql`AND id < ${after.id}`
            : sql`AND (accesses, id) < (${after.accesses ?? 0}, ${after.id})`;
      // A domain's keys are one range of the unique index; the default domain's hold no '/'.
      const domainFilter = query.domain === undefined ? sql``
        : query.domain === '' ? sql`AND strpos(short_code, '/') = 0`
          : sql`AND short_code >= ${keyRange(query.domain)[0]} AND short_code < ${keyRange(query.domain)[1]}`;
      const tagFilter = tags.reduce((fragment, tag) => sql`${fragment} AND strpos(',' || tags || ',', ${`,${tag},`}) > 0`, sql``);
      const rows = await timed(() => sql<(LinkDetailsRow & { id: number })[]>`
        SELECT id, ${sql.unsafe(LINK_DETAILS_COLUMNS)} FROM links
         WHERE created_by = ${accountUid}
           ${start}
           ${domainFilter}
           ${q === undefined ? sql`` : sql`AND (strpos(lower(substr(short_code, strpos(short_code, '/') + 1)), ${q}) > 0 OR strpos(lower(points_to COLLATE "C"), ${q}) > 0
                                                OR strpos(lower(coalesce(title, '') COLLATE "C"), ${q}) > 0)`}
           ${tagFilter}
         ORDER BY ${sql.unsafe(ORDER_BY[order])}
         ${limit === undefined ? sql`` : sql`LIMIT ${limit + 1}`}`);
      const more = limit !== undefined && rows.length > limit;
      const page = more ? rows.slice(0, limit) : [...rows];
      const last = page.at(-1);
      return { links: page.map(detailsOf), next: more && last !== undefined ? { id: Number(last.id), accesses: Number(last.accesses) } : undefined };
    },

    updateLink(shortCode: string, accountUid: number, changes: LinkChanges, eventId?: string): Promise<UpdateLinkResult> {
      return withDeadline(guarded(() => sql.begin(async (tx): Promise<UpdateLinkResult> => {
        // The row lock orders this edit with the batches that count the link's accesses.
        const [owner] = await tx<{ createdBy: number; disabled: boolean }[]>`
          SELECT l.created_by AS "createdBy", (SELECT disabled FROM accounts WHERE uid = ${accountUid}) AS disabled
            FROM links l WHERE l.short_code = ${shortCode} FOR UPDATE`;
        if (owner === undefined) return { status: 'not_found' };
        if (Number(owner.createdBy) !== accountUid) return { status: 'not_owner' };
        if (owner.disabled) return { status: 'account_disabled' };
        const [row] = await tx<LinkDetailsRow[]>`
          UPDATE links SET
            points_to  = CASE WHEN ${changes.pointsTo !== undefined} THEN ${changes.pointsTo ?? null}::text ELSE points_to END,
            title      = CASE WHEN ${changes.title !== undefined} THEN ${changes.title ?? null}::text ELSE title END,
            tags       = CASE WHEN ${changes.tags !== undefined} THEN ${joinTags(changes.tags)}::text ELSE tags END,
            expires_at = CASE WHEN ${changes.expiresAt !== undefined} THEN ${changes.expiresAt ?? null}::text ELSE expires_at END,
            max_visits = CASE WHEN ${changes.maxVisits !== undefined} THEN ${changes.maxVisits ?? null}::int ELSE max_visits END,
            forward_query = CASE WHEN ${changes.forwardQuery !== undefined} THEN ${changes.forwardQuery === true} ELSE forward_query END,
            rules      = CASE WHEN ${changes.rules !== undefined} THEN ${changes.rules ?? null}::text ELSE rules END,
            password_hash = CASE WHEN ${changes.passwordHash !== undefined} THEN ${changes.passwordHash ?? null}::text ELSE password_hash END
          WHERE short_code = ${shortCode}
          RETURNING ${sql.unsafe(LINK_DETAILS_COLUMNS)}`;
        const link = detailsOf(row!);
        await outbox.write(tx, EventType.LinkUpdated, new Date().toISOString(), linkDetailsData(link), accountUid, eventId);
        return { status: 'updated', link };
      })), timeoutMs);
    },

    async findLink(shortCode: string, now?: string) {
      const [row] = await timed(() => sql<LinkStateRow[]>`
        SELECT ${sql.unsafe(LINK_COLUMNS)}, l.expires_at AS "expiresAt", l.max_visits AS "maxVisits", a.disabled,
               ${sql.unsafe(ROUTING_COLUMNS)}
          FROM links l JOIN accounts a ON a.uid = l.created_by WHERE l.short_code = ${shortCode}`);
      return row === undefined ? undefined : resolvedOf(row, now ?? new Date().toISOString());
    },
  };
  return { calls, drain: () => linkCreates.drain() };
}
