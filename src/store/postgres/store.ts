import type postgres from 'postgres';
import { ACCOUNT_COLUMNS, LINK_COLUMNS } from '../columns.ts';
import { createBatcher } from '../batcher.ts';
import { DEFAULT_STORAGE_TIMEOUT_MS, withDeadline } from '../deadline.ts';
import { createGroupCommit, type BatchVisits, type CountedLink } from '../group-commit.ts';
import {
  DELETE_ORPHAN_ROLLUPS, deleteFoldedHoursSql, deleteTupleChunkSql, FOLD_BATCH, foldHoursIntoDaysSql, journalToTuplesSql,
  seriesSql, STATS_KEPT_VALUES, tupleChunkEndSql, tupleChunkLinkHoursSql, tuplesToRollupsSql, valuesSql,
} from '../stats-sql.ts';
import { hourOf, OTHER, type Visit } from '../../stats/visit.ts';
import {
  detailsOf, joinTags, LINK_DETAILS_COLUMNS, newLinkRow, refusalOf, resolvedOf, type LinkDetailsRow, type LinkStateRow,
} from '../link-rows.ts';
import type {
  AccountRecord, CreateLinkResult, DeleteLinkResult, FoldOptions, LinkChanges, LinkQuery, LinkRecord, NewAccount, NewLink,
  PingOptions, ResolvedLink, StatsRows, StatsScope, Store, UpdateLinkResult,
} from '../store.ts';
import { administration } from './administration.ts';
import { connect } from './connection.ts';
import { guarded, refusedByServer } from './errors.ts';
import { prepareWebhooks } from './webhooks.ts';
import { prepareApiKeys } from './api-keys.ts';
import { EventType } from '../../events/events.ts';
import { accountRotatedData, linkDetailsData, newEventId, newLinkData } from '../../events/payloads.ts';
import { journalToWebhooksSql, subscribedTo } from '../webhooks.ts';

export interface PostgresOptions {
  readonly url: string;
  /** Connections in the pool (10 when omitted). */
  readonly max?: number;
  /** Named prepared statements (true when omitted); false behind PgBouncer in transaction mode. */
  readonly prepare?: boolean;
  /**
   * The storage deadline (STORAGE_TIMEOUT), default 5 s: a call the database has not answered
   * by then fails as storage unavailable (a frozen server, a lost network, crash recovery).
   */
  readonly timeoutMs?: number;
}

/** PostgreSQL's spelling of parameter N. */
const postgresParameter = (n: number): string => `$${n}`;

// One folding process at a time across instances (any key, the same in every instance; an int4).
const FOLD_LOCK = 0x5_7a_75_01;

// The second stage of a fold (stats-sql.ts): tuples of hours that are over, into the rollups.
const TUPLE_CHUNK_END = tupleChunkEndSql(postgresParameter, FOLD_BATCH.postgres);
const TUPLE_CHUNK_LINK_HOURS = tupleChunkLinkHoursSql(postgresParameter);
const TUPLES_TO_ROLLUPS = tuplesToRollupsSql(postgresParameter);
const DELETE_TUPLE_CHUNK = deleteTupleChunkSql(postgresParameter);

/** Connects to PostgreSQL, runs migrations, and returns it as a Store. */
export async function openPostgresStore(options: PostgresOptions): Promise<Store> {
  const sql = await connect({
    url: options.url, max: options.max ?? 10, prepare: options.prepare ?? true, applicationName: 'shortlink',
  });
  const timeoutMs = options.timeoutMs ?? DEFAULT_STORAGE_TIMEOUT_MS;
  // Single queries race the deadline; batched ones get it from their batcher, which also
  // knows whether the batch was sent. A timed-out query stays queued in the driver and runs
  // when the server answers again: withdrawing it (query.cancel()) would, for one already
  // sent, open a cancel connection whose failure nothing could catch.
  const timed = <R>(work: () => PromiseLike<R>): Promise<Awaited<R>> => withDeadline(guarded(work), timeoutMs);

  const counter = createGroupCommit<LinkRecord>(async (increments, _signal, now, visits) => {
    const codes = [...increments.keys()];
    const counts = codes.map((code) => increments.get(code)!);
    // Rows are locked in id order so that batches of different instances cannot deadlock.
    // The locked rows are read as they stand after any wait for the lock, so each link is
    // granted what its limit leaves (least(n, max_visits - accesses)), or nothing when it
    // has expired or its owner is disabled, in the same statement that counts it.
    const rows = await guarded(() => sql<(LinkStateRow & { granted: number })[]>`
      WITH batch AS (
        SELECT l.id, b.n, l.short_code, l.points_to, l.created_by, l.accesses, l.expires_at, l.max_visits, a.disabled
          FROM links l
          JOIN unnest(${sql.array(codes, 25)}::text[], ${sql.array(counts, 23)}::int[]) AS b(code, n) ON l.short_code = b.code
          JOIN accounts a ON a.uid = l.created_by
         ORDER BY l.id
           FOR UPDATE OF l
      ), granted AS (
        SELECT batch.*,
               CASE WHEN disabled OR expires_at <= ${now} THEN 0
                    WHEN max_visits IS NULL THEN n
                    ELSE least(n, greatest(max_visits - accesses, 0)) END AS granted
          FROM batch
      ), counted AS (
        UPDATE links l SET accesses = l.accesses + granted.granted
          FROM granted WHERE l.id = granted.id AND granted.granted > 0
      )${visits.size === 0 ? sql`` : sql`, visits AS (
        SELECT g.id, v.hour, v.bot, v.referrer, v.country, v.browser, v.os, v.device
          FROM unnest(${visitColumns(visits)}) AS v(code, position, hour, bot, referrer, country, browser, os, device)
          JOIN granted g ON g.short_code = v.code
         WHERE v.position <= g.granted
      ), journal AS (
        -- The statistics of the accesses granted (a link's first calls, in arrival order),
        -- in the same statement as the counts: one row per link and distinct classes, with
        -- the batch's time (link.visited webhooks get them from the fold, ADR 21).
        INSERT INTO stats_journal (link_id, hour, bot, referrer, country, browser, os, device, visits, time)
        SELECT id, hour, bot, referrer, country, browser, os, device, count(*), ${now}
          FROM visits GROUP BY id, hour, bot, referrer, country, browser, os, device
      )`}
      SELECT short_code AS "shortCode", points_to AS "pointsTo", created_by AS "createdBy",
             accesses + granted AS accesses, granted, expires_at AS "expiresAt", max_visits AS "maxVisits", disabled
        FROM granted`);
    const results = new Map<string, CountedLink<LinkRecord>>();
    for (const state of rows) {
      const row = { shortCode: state.shortCode, pointsTo: state.pointsTo, createdBy: state.createdBy, accesses: Number(state.accesses) };
      const before = row.accesses - state.granted;
      results.set(row.shortCode, {
        row, accesses: row.accesses, granted: state.granted, refused: refusalOf(state, before, now) ?? 'visit_limit',
      });
    }
    return results;
  }, { timeoutMs });

  /** The calls' visits as the nine arrays the journal insert unnests: each with its link and position. */
  function visitColumns(batch: BatchVisits) {
    const calls: { code: string; position: number; visit: Visit }[] = [];
    for (const [code, list] of batch) {
      list.forEach((visit, i) => {
        if (visit !== undefined) calls.push({ code, position: i + 1, visit });
      });
    }
    const text = (pick: (visit: Visit) => string) => sql.array(calls.map(({ visit }) => pick(visit)), 25);
    return sql`${sql.array(calls.map((c) => c.code), 25)}::text[],
      ${sql.array(calls.map((c) => c.position), 23)}::int[],
      ${sql.array(calls.map((c) => c.visit.hour), 23)}::int[],
      ${sql.array(calls.map((c) => (c.visit.bot ? 1 : 0)), 21)}::smallint[],
      ${text((v) => v.referrer)}::text[], ${text((v) => v.country)}::text[], ${text((v) => v.browser)}::text[],
      ${text((v) => v.os)}::text[], ${text((v) => v.device)}::text[]`;
  }

  const statsQueries = {
    link: { series: seriesSql({ shortCode: '' }, postgresParameter), values: valuesSql({ shortCode: '' }, postgresParameter) },
    account: { series: seriesSql({ accountUid: 0 }, postgresParameter), values: valuesSql({ accountUid: 0 }, postgresParameter) },
  };

  /** One fold in one transaction; only one process folds at a time (the others skip). */
  async function fold({ daysBeforeHour, hoursBefore = hourOf(Date.now()) }: FoldOptions): Promise<number> {
    return guarded(() => sql.begin(async (tx) => {
      // Per schema: instances sharing one schema fold in turn; databases holding several
      // (tests, hosting) do not wait for each other.
      const [lock] = await tx<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(${FOLD_LOCK}, hashtext(current_schema())) AS locked`;
      if (lock?.locked !== true) return 0;
      // The journal rows are moved into the tuples inside the server (one row per hour, link
      // and classes), and the count comes back. Shipping the rows to this process and their
      // increments back cost ~15 µs of its CPU per visit.
      const [first] = await tx.unsafe<{ moved: number }[]>(`
        WITH moved AS (
          DELETE FROM stats_journal WHERE id IN (SELECT id FROM stats_journal ORDER BY id LIMIT ${FOLD_BATCH.postgres})
          RETURNING link_id, hour, bot, referrer, country, browser, os, device, visits, time
        ), hooked AS (
          -- The visits of links with link.visited webhooks go on to them (ADR 21), in this statement.
          ${journalToWebhooksSql('moved', postgresParameter)}
        ), added AS (${journalToTuplesSql('moved', 'true')})
        SELECT count(*)::int AS moved FROM moved`, [new Date().toISOString()]);
      let moved = first?.moved ?? 0;
      // The tuples of hours that are over go on to the rollups, a chunk per fold, whole link-hours.
      const [end] = await tx.unsafe<{ hour: number; linkId: string }[]>(TUPLE_CHUNK_END, [hoursBefore]);
      const chunk = [hoursBefore, end?.hour ?? hoursBefore, end?.linkId ?? String(Number.MAX_SAFE_INTEGER)];
      const pairs = (await tx.unsafe<{ linkId: string; hour: number }[]>(TUPLE_CHUNK_LINK_HOURS, chunk))
        .map((pair) => ({ linkId: Number(pair.linkId), hour: pair.hour }));
      if (pairs.length > 0) {
        await tx.unsafe(TUPLES_TO_ROLLUPS, chunk);
        moved += (await tx.unsafe(DELETE_TUPLE_CHUNK, chunk)).count;
        await trimValues(tx, pairs);
      }
      if (daysBeforeHour !== undefined) {
        const days = await tx<{ linkId: number; hour: number }[]>`
          SELECT DISTINCT link_id::int AS "linkId", hour - hour % 24 AS hour FROM stats_rollups WHERE hour < ${daysBeforeHour} AND hour % 24 <> 0`;
        if (days.length > 0) {
          await tx.unsafe(foldHoursIntoDaysSql(postgresParameter), [daysBeforeHour]);
          await tx.unsafe(deleteFoldedHoursSql(postgresParameter), [daysBeforeHour]);
          await trimValues(tx, days);
        }
        await tx.unsafe(DELETE_ORPHAN_ROLLUPS);
      }
      return moved;
    }));
  }

  /** Keeps the named values of each link-hour within the bound, the rest summed as (other). */
  async function trimValues(tx: postgres.TransactionSql, pairs: readonly { linkId: number; hour: number }[]): Promise<void> {
    if (pairs.length === 0) return;
    await tx`
      WITH crowded AS (
        SELECT r.link_id, r.hour FROM stats_rollups r
          JOIN unnest(${tx.array(pairs.map((p) => p.linkId), 20)}::bigint[], ${tx.array(pairs.map((p) => p.hour), 23)}::int[]) AS t(link_id, hour)
            ON r.link_id = t.link_id AND r.hour = t.hour
         GROUP BY r.link_id, r.hour HAVING count(*) > ${STATS_KEPT_VALUES}
      ), ranked AS (
        SELECT r.link_id, r.hour, r.dim, r.value, r.visits,
               row_number() OVER (PARTITION BY r.link_id, r.hour, r.dim ORDER BY r.visits DESC, r.value) AS position
          FROM stats_rollups r JOIN crowded c ON r.link_id = c.link_id AND r.hour = c.hour
         WHERE r.value <> ${OTHER}
      ), removed AS (
        DELETE FROM stats_rollups s USING ranked
         WHERE ranked.position > ${STATS_KEPT_VALUES}
           AND s.link_id = ranked.link_id AND s.hour = ranked.hour AND s.dim = ranked.dim AND s.value = ranked.value
        RETURNING s.link_id, s.hour, s.dim, s.visits
      )
      INSERT INTO stats_rollups (link_id, hour, dim, value, visits)
      SELECT link_id, hour, dim, ${OTHER}, sum(visits) FROM removed GROUP BY link_id, hour, dim
      ON CONFLICT (link_id, hour, dim, value) DO UPDATE SET visits = stats_rollups.visits + excluded.visits`;
  }

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
          JOIN webhooks w ON w.account_uid = e.owner AND (',' || w.events || ',') LIKE ${subscribedTo(EventType.LinkCreated)}
         WHERE e.result = 'created'
      )
      SELECT results FROM created`);
    const results = new Array<CreateLinkResult>(links.length);
    order.forEach((original, position) => (results[original] = row!.results[position]!));
    return results;
  }, { retryAlone: refusedByServer, timeoutMs });

  const accountCreates = createBatcher<NewAccount, AccountRecord>(async (accounts) => {
    const rows = await guarded(() => sql<(AccountRecord & { codeHash: string })[]>`
      INSERT INTO accounts (code_hash, date_created, max_links)
      SELECT * FROM unnest(
        ${sql.array(accounts.map((a) => a.codeHash), 25)}::text[],
        ${sql.array(accounts.map((a) => a.dateCreated), 25)}::text[],
        ${sql.array(accounts.map((a) => a.maxLinks), 23)}::int[])
      RETURNING code_hash AS "codeHash", ${sql.unsafe(ACCOUNT_COLUMNS)}`);
    const byHash = new Map(rows.map(({ codeHash, ...account }) => [codeHash, account]));
    return accounts.map((a) => byHash.get(a.codeHash)!);
  }, { retryAlone: refusedByServer, timeoutMs });

  const admin = administration(sql);
  const webhooks = prepareWebhooks(sql, timed);
  let closed = false;

  return {
    engine: 'postgres',
    webhooks: webhooks.store,
    apiKeys: prepareApiKeys(sql, timed),

    createAccount(account: NewAccount) {
      return accountCreates.run(account);
    },

    async findAccountByCodeHash(codeHash: string) {
      const [row] = await timed(() => sql<AccountRecord[]>`
        SELECT ${sql.unsafe(ACCOUNT_COLUMNS)} FROM accounts WHERE code_hash = ${codeHash}`);
      return row;
    },

    rotateAccessCode(uid, codeHash, newCodeHash, eventId) {
      // One transaction: the new digest and the account.rotated outbox rows commit together.
      return timed(() => sql.begin(async (tx) => {
        const [row] = await tx<AccountRecord[]>`
          UPDATE accounts SET code_hash = ${newCodeHash} WHERE uid = ${uid} AND code_hash = ${codeHash}
          RETURNING ${sql.unsafe(ACCOUNT_COLUMNS)}`;
        if (row !== undefined) await webhooks.outbox.write(tx, EventType.AccountRotated, new Date().toISOString(), accountRotatedData(uid), uid, eventId);
        return row === undefined ? undefined : { ...row };
      })) as Promise<AccountRecord | undefined>;
    },

    deleteAccount(uid) {
      return timed(() => admin.deleteAccount(uid));
    },

    listAccounts(after, limit) {
      return timed(() => admin.listAccounts(after, limit));
    },

    updateAccount(uid, changes) {
      return timed(() => admin.updateAccount(uid, changes));
    },

    searchLinks(search) {
      return timed(() => admin.searchLinks(search));
    },

    takeDownLink(shortCode, eventId) {
      return timed(() => admin.takeDownLink(shortCode, eventId));
    },

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
      const { q, tags = [], after, limit } = query;
      const tagFilter = tags.reduce((fragment, tag) => sql`${fragment} AND strpos(',' || tags || ',', ${`,${tag},`}) > 0`, sql``);
      const rows = await timed(() => sql<(LinkDetailsRow & { id: number })[]>`
        SELECT id, ${sql.unsafe(LINK_DETAILS_COLUMNS)} FROM links
         WHERE created_by = ${accountUid}
           ${after === undefined ? sql`` : sql`AND id > ${after}`}
           ${q === undefined ? sql`` : sql`AND (strpos(lower(short_code), ${q}) > 0 OR strpos(lower(points_to), ${q}) > 0
                                                OR strpos(lower(coalesce(title, '')), ${q}) > 0)`}
           ${tagFilter}
         ORDER BY id
         ${limit === undefined ? sql`` : sql`LIMIT ${limit + 1}`}`);
      const more = limit !== undefined && rows.length > limit;
      const page = more ? rows.slice(0, limit) : [...rows];
      return { links: page.map(detailsOf), next: more ? Number(page.at(-1)!.id) : undefined };
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
            max_visits = CASE WHEN ${changes.maxVisits !== undefined} THEN ${changes.maxVisits ?? null}::int ELSE max_visits END
          WHERE short_code = ${shortCode}
          RETURNING ${sql.unsafe(LINK_DETAILS_COLUMNS)}`;
        const link = detailsOf(row!);
        await webhooks.outbox.write(tx, EventType.LinkUpdated, new Date().toISOString(), linkDetailsData(link), accountUid, eventId);
        return { status: 'updated', link };
      })), timeoutMs);
    },

    watchCounts(listener) {
      return counter.watch(listener);
    },

    async resolveLink(shortCode: string, now?: string, visit?: Visit): Promise<ResolvedLink | undefined> {
      const counted = await counter.count(shortCode, now, visit);
      if (counted === undefined) return undefined;
      const { row, accesses, refused } = counted;
      const link = { shortCode: row.shortCode, pointsTo: row.pointsTo, createdBy: row.createdBy, accesses };
      return refused === undefined ? link : { ...link, refused };
    },

    async findLink(shortCode: string, now?: string) {
      const [row] = await timed(() => sql<LinkStateRow[]>`
        SELECT ${sql.unsafe(LINK_COLUMNS)}, l.expires_at AS "expiresAt", l.max_visits AS "maxVisits", a.disabled
          FROM links l JOIN accounts a ON a.uid = l.created_by WHERE l.short_code = ${shortCode}`);
      return row === undefined ? undefined : resolvedOf(row, now ?? new Date().toISOString());
    },

    async readStats(scope: StatsScope, fromHour: number, toHour: number): Promise<StatsRows> {
      const queries = 'shortCode' in scope ? statsQueries.link : statsQueries.account;
      const parameter = 'shortCode' in scope ? scope.shortCode : scope.accountUid;
      // Sums arrive as bigint text: hours of a link never near 2^53 visits.
      const [series, values] = await timed(() => Promise.all([
        sql.unsafe<{ hour: number; visits: string; bots: string }[]>(queries.series, [parameter, fromHour, toHour]),
        sql.unsafe<{ dimension: number; value: string; visits: string }[]>(queries.values, [parameter, fromHour, toHour]),
      ]));
      return {
        series: series.map((r) => ({ hour: Number(r.hour), visits: Number(r.visits), bots: Number(r.bots) })),
        values: values.map((r) => ({ dimension: Number(r.dimension), value: r.value, visits: Number(r.visits) })),
      };
    },

    foldStats(options: FoldOptions = {}) {
      return withDeadline(fold(options), timeoutMs);
    },

    async ping(options?: PingOptions) {
      // txid_current() assigns a transaction id, so the commit writes to the WAL.
      await timed(() => (options?.write === true ? sql`SELECT txid_current()` : sql`SELECT 1`));
    },

    async close() {
      if (closed) return;
      closed = true;
      await counter.drain();
      await linkCreates.drain();
      await accountCreates.drain();
      await sql.end({ timeout: 5 });
    },
  };

  /**
   * Deletes `shortCode` if `accountUid` owns it, in one transaction with its freed slot and
   * its link.deleted outbox rows (the link's last state).
   */
  async function deleteOwnLink(shortCode: string, accountUid: number, eventId: string | undefined): Promise<DeleteLinkResult> {
    return guarded(() => sql.begin(async (tx): Promise<DeleteLinkResult> => {
      // The row lock orders this delete with a concurrent one: the second finds no row.
      const [owner] = await tx<{ createdBy: number }[]>`
        SELECT created_by AS "createdBy" FROM links WHERE short_code = ${shortCode} FOR UPDATE`;
      if (owner === undefined) return 'not_found';
      if (Number(owner.createdBy) !== accountUid) return 'not_owner';
      const [removed] = await tx<LinkDetailsRow[]>`
        DELETE FROM links WHERE short_code = ${shortCode} RETURNING ${sql.unsafe(LINK_DETAILS_COLUMNS)}`;
      await tx`UPDATE accounts SET link_count = link_count - 1 WHERE uid = ${accountUid}`;
      await webhooks.outbox.write(tx, EventType.LinkDeleted, new Date().toISOString(), linkDetailsData(detailsOf(removed!)), accountUid, eventId);
      return 'deleted';
    })) as Promise<DeleteLinkResult>;
  }
}

