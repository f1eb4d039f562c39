import { ACCOUNT_COLUMNS, LINK_COLUMNS } from '../columns.ts';
import { createBatcher } from '../batcher.ts';
import { DEFAULT_STORAGE_TIMEOUT_MS, withDeadline } from '../deadline.ts';
import { createGroupCommit, type CountedLink } from '../group-commit.ts';
import type {
  AccountRecord, CreateLinkResult, DeleteLinkResult, LinkRecord, NewAccount, NewLink, Store,
  PingOptions,
} from '../store.ts';
import { connect } from './connection.ts';
import { guarded, refusedByServer } from './errors.ts';

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

  const counter = createGroupCommit<LinkRecord>(async (increments) => {
    const codes = [...increments.keys()];
    const counts = codes.map((code) => increments.get(code)!);
    // Rows are locked in id order so that batches of different instances cannot deadlock.
    const rows = await guarded(() => sql<LinkRecord[]>`
      WITH batch AS (
        SELECT l.id, b.n FROM links l
        JOIN unnest(${sql.array(codes, 25)}::text[], ${sql.array(counts, 23)}::int[]) AS b(code, n) ON l.short_code = b.code
        ORDER BY l.id
        FOR UPDATE OF l
      )
      UPDATE links l SET accesses = l.accesses + batch.n FROM batch WHERE l.id = batch.id
      RETURNING ${sql.unsafe(LINK_COLUMNS)}`);
    const results = new Map<string, CountedLink<LinkRecord>>();
    for (const row of rows) results.set(row.shortCode, { row, accesses: row.accesses });
    return results;
  }, { timeoutMs });

  // Creates are batched (src/store/batcher.ts): one statement and one commit for all the
  // creates that arrive while the previous batch is written. Per create, a transaction of
  // its own held the account's row lock across two round trips and a commit, so creates
  // for one account ran one at a time (~800/s measured with 50 concurrent clients).
  const linkCreates = createBatcher<NewLink, CreateLinkResult>(async (links) => {
    // Account rows are locked in uid order (stable: arrival order within an account), so
    // batches of different instances cannot wait on each other in a cycle.
    const order = links.map((_, i) => i).sort((a, b) => links[a]!.createdBy - links[b]!.createdBy);
    const sorted = order.map((i) => links[i]!);
    const [row] = await guarded(() => sql<{ results: CreateLinkResult[] }[]>`
      SELECT shortlink_create_links(
        ${sql.array(sorted.map((l) => l.shortCode), 25)}::text[],
        ${sql.array(sorted.map((l) => l.pointsTo), 25)}::text[],
        ${sql.array(sorted.map((l) => l.createdBy), 20)}::bigint[],
        ${sql.array(sorted.map((l) => l.dateCreated), 25)}::text[]
      ) AS results`);
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

  let closed = false;

  return {
    engine: 'postgres',

    createAccount(account: NewAccount) {
      return accountCreates.run(account);
    },

    async findAccountByCodeHash(codeHash: string) {
      const [row] = await timed(() => sql<AccountRecord[]>`
        SELECT ${sql.unsafe(ACCOUNT_COLUMNS)} FROM accounts WHERE code_hash = ${codeHash}`);
      return row;
    },

    createLink(link: NewLink) {
      return linkCreates.run(link);
    },

    deleteLink(shortCode: string, accountUid: number): Promise<DeleteLinkResult> {
      // One deadline for the whole exchange. When it fires, the delete may still commit:
      // the client saw 503, and a retry answers 404 (ADR 15).
      return withDeadline(deleteOwnLink(shortCode, accountUid), timeoutMs);
    },

    async listLinks(accountUid: number) {
      // A plain array, not the driver's Result subclass.
      return [...await timed(() => sql<LinkRecord[]>`
        SELECT ${sql.unsafe(LINK_COLUMNS)} FROM links WHERE created_by = ${accountUid} ORDER BY id`)];
    },

    async resolveLink(shortCode: string) {
      const counted = await counter.count(shortCode);
      if (counted === undefined) return undefined;
      const { row, accesses } = counted;
      return { shortCode: row.shortCode, pointsTo: row.pointsTo, createdBy: row.createdBy, accesses };
    },

    async findLink(shortCode: string) {
      const [row] = await timed(() => sql<LinkRecord[]>`
        SELECT ${sql.unsafe(LINK_COLUMNS)} FROM links WHERE short_code = ${shortCode}`);
      return row;
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

  /** Deletes `shortCode` if `accountUid` owns it, freeing its slot in the same statement. */
  async function deleteOwnLink(shortCode: string, accountUid: number): Promise<DeleteLinkResult> {
    for (;;) {
      // One statement: the delete and the freed slot commit together.
      const [row] = await guarded(() => sql<{ deleted: number; exists: boolean }[]>`
        WITH removed AS (
          DELETE FROM links WHERE short_code = ${shortCode} AND created_by = ${accountUid} RETURNING created_by
        ), freed AS (
          UPDATE accounts SET link_count = link_count - 1 WHERE uid IN (SELECT created_by FROM removed) RETURNING uid
        )
        SELECT (SELECT count(*) FROM freed)::int AS deleted,
               EXISTS (SELECT 1 FROM links WHERE short_code = ${shortCode}) AS exists`);
      if (row!.deleted === 1) return 'deleted';
      if (!row!.exists) return 'not_found';
      // The link was there in the statement's snapshot, yet the DELETE removed nothing:
      // either it belongs to another account, or a concurrent delete removed it while this
      // one waited for its row lock (the DELETE then sees the newer state, EXISTS does
      // not). Look again with a fresh snapshot.
      const [current] = await guarded(() => sql<{ createdBy: number }[]>`
        SELECT created_by AS "createdBy" FROM links WHERE short_code = ${shortCode}`);
      if (current === undefined) return 'not_found';
      if (current.createdBy !== accountUid) return 'not_owner';
      // Deleted and created again by the same account meanwhile: delete that one.
    }
  }
}
