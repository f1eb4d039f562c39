import postgres from 'postgres';
import { DomainError, ErrorCode } from '../errors.ts';
import { createBatcher } from './batcher.ts';
import { createGroupCommit, type CountedLink } from './group-commit.ts';
import { POSTGRES_MIGRATIONS } from './migrations/postgres.ts';
import type {
  AccountRecord, CreateLinkResult, DeleteLinkResult, LinkRecord, NewAccount, NewLink, Store,
} from './store.ts';

export interface PostgresOptions {
  readonly url: string;
  /** Connections in the pool. */
  readonly max?: number;
}

// Any advisory-lock key works as long as every instance uses the same one.
const MIGRATION_LOCK = 0x5_1a_71_4c;

// Connection-level failures (client side, and SQLSTATE classes 08 connection exception,
// 53 insufficient resources, 57P admin shutdown / cannot connect now) mean "try later".
const UNAVAILABLE_CLIENT_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN',
  'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT',
]);

function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  return UNAVAILABLE_CLIENT_CODES.has(code) || code.startsWith('08') || code.startsWith('53') || code.startsWith('57P');
}

function translate(error: unknown): unknown {
  return isUnavailable(error)
    ? new DomainError(ErrorCode.StorageUnavailable, 'storage unavailable', { retryAfter: 1, cause: error })
    : error;
}

/**
 * True when PostgreSQL itself refused a statement (an SQLSTATE outside the "unavailable"
 * classes): its transaction was rolled back, so running the work again cannot apply it twice.
 */
function refusedByServer(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !isUnavailable(error);
}

async function guarded<R>(work: Promise<R>): Promise<R> {
  try {
    return await work;
  } catch (error) {
    throw translate(error);
  }
}

type Sql = postgres.Sql<Record<string, never>>;

/** Applies pending migrations under an advisory lock, so concurrent starts apply them once. */
export async function migratePostgres(sql: Sql): Promise<number> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
    const [row] = await tx<{ current: number }[]>`SELECT coalesce(max(version), 0)::int AS current FROM schema_migrations`;
    const current = row?.current ?? 0;
    for (let version = current; version < POSTGRES_MIGRATIONS.length; version++) {
      await tx.unsafe(POSTGRES_MIGRATIONS[version]!);
      await tx`INSERT INTO schema_migrations (version) VALUES (${version + 1})`;
    }
    return POSTGRES_MIGRATIONS.length - current;
  });
}

/**
 * A connection pool with the project's settings (numbers for int8, fast reconnects), its
 * schema migrated. Shared by the server's store and the admin store.
 */
export async function connectPostgres(url: string, max: number, applicationName: string): Promise<Sql> {
  const sql: Sql = postgres(url, {
    max,
    onnotice: () => {},
    connect_timeout: 5,
    idle_timeout: 60,
    // postgres.js waits before reconnecting a failed connection, up to 20 s after a few
    // failures, and queues queries meanwhile: during an outage requests would hang instead of
    // answering 503, and recovery would lag the database's return by as long. A connection is
    // only retried when a query needs it, so retrying at once costs one refused connect per
    // request while the database is down.
    backoff: () => 0,
    // int8 columns (uid, accesses) fit in a double for any realistic count.
    types: { bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: (value: string) => Number(value) } },
    connection: { application_name: applicationName },
  }) as unknown as Sql;
  try {
    await migratePostgres(sql);
  } catch (error) {
    await sql.end({ timeout: 1 });
    throw error;
  }
  return sql;
}

/** Connects to PostgreSQL, runs migrations, and returns it as a Store. */
export async function openPostgresStore(options: PostgresOptions): Promise<Store> {
  const sql = await connectPostgres(options.url, options.max ?? 10, 'shortlink');

  const counter = createGroupCommit<LinkRecord>(async (increments) => {
    const codes = [...increments.keys()];
    const counts = codes.map((code) => increments.get(code)!);
    // Rows are locked in id order so that batches of different instances cannot deadlock.
    const rows = await guarded(sql<LinkRecord[]>`
      WITH batch AS (
        SELECT l.id, b.n FROM links l
        JOIN unnest(${sql.array(codes, 25)}::text[], ${sql.array(counts, 23)}::int[]) AS b(code, n) ON l.short_code = b.code
        ORDER BY l.id
        FOR UPDATE OF l
      )
      UPDATE links l SET accesses = l.accesses + batch.n FROM batch WHERE l.id = batch.id
      RETURNING l.short_code AS "shortCode", l.points_to AS "pointsTo", l.created_by AS "createdBy", l.accesses`);
    const results = new Map<string, CountedLink<LinkRecord>>();
    for (const row of rows) results.set(row.shortCode, { row, accesses: row.accesses });
    return results;
  });

  // Creates are batched (src/store/batcher.ts): one statement and one commit for all the
  // creates that arrive while the previous batch is written. Per create, a transaction of
  // its own held the account's row lock across two round trips and a commit, so creates
  // for one account ran one at a time (~800/s measured with 50 concurrent clients).
  const linkCreates = createBatcher<NewLink, CreateLinkResult>(async (links) => {
    // Account rows are locked in uid order (stable: arrival order within an account), so
    // batches of different instances cannot wait on each other in a cycle.
    const order = links.map((_, i) => i).sort((a, b) => links[a]!.createdBy - links[b]!.createdBy);
    const sorted = order.map((i) => links[i]!);
    const [row] = await guarded(sql<{ results: CreateLinkResult[] }[]>`
      SELECT shortlink_create_links(
        ${sql.array(sorted.map((l) => l.shortCode), 25)}::text[],
        ${sql.array(sorted.map((l) => l.pointsTo), 25)}::text[],
        ${sql.array(sorted.map((l) => l.createdBy), 20)}::bigint[],
        ${sql.array(sorted.map((l) => l.dateCreated), 25)}::text[]
      ) AS results`);
    const results = new Array<CreateLinkResult>(links.length);
    order.forEach((original, position) => (results[original] = row!.results[position]!));
    return results;
  }, { retryAlone: refusedByServer });

  const accountCreates = createBatcher<NewAccount, AccountRecord>(async (accounts) => {
    const rows = await guarded(sql<(AccountRecord & { codeHash: string })[]>`
      INSERT INTO accounts (code_hash, date_created, max_links)
      SELECT * FROM unnest(
        ${sql.array(accounts.map((a) => a.codeHash), 25)}::text[],
        ${sql.array(accounts.map((a) => a.dateCreated), 25)}::text[],
        ${sql.array(accounts.map((a) => a.maxLinks), 23)}::int[])
      RETURNING code_hash AS "codeHash", uid, date_created AS "dateCreated", max_links AS "maxLinks"`);
    const byHash = new Map(rows.map(({ codeHash, ...account }) => [codeHash, account]));
    return accounts.map((a) => byHash.get(a.codeHash)!);
  }, { retryAlone: refusedByServer });

  let closed = false;

  return {
    engine: 'postgres',

    createAccount(account: NewAccount) {
      return accountCreates.run(account);
    },

    async findAccountByCodeHash(codeHash: string) {
      const [row] = await guarded(sql<AccountRecord[]>`
        SELECT uid, date_created AS "dateCreated", max_links AS "maxLinks" FROM accounts WHERE code_hash = ${codeHash}`);
      return row;
    },

    createLink(link: NewLink) {
      return linkCreates.run(link);
    },

    async deleteLink(shortCode: string, accountUid: number): Promise<DeleteLinkResult> {
      for (;;) {
        // One statement: the delete and the freed slot commit together.
        const [row] = await guarded(sql<{ deleted: number; exists: boolean }[]>`
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
        const [current] = await guarded(sql<{ createdBy: number }[]>`
          SELECT created_by AS "createdBy" FROM links WHERE short_code = ${shortCode}`);
        if (current === undefined) return 'not_found';
        if (current.createdBy !== accountUid) return 'not_owner';
        // Deleted and created again by the same account meanwhile: delete that one.
      }
    },

    async listLinks(accountUid: number) {
      // A plain array, not the driver's Result subclass.
      return [...await guarded(sql<LinkRecord[]>`
        SELECT short_code AS "shortCode", points_to AS "pointsTo", created_by AS "createdBy", accesses
        FROM links WHERE created_by = ${accountUid} ORDER BY id`)];
    },

    async resolveLink(shortCode: string) {
      const counted = await counter.count(shortCode);
      if (counted === undefined) return undefined;
      const { row, accesses } = counted;
      return { shortCode: row.shortCode, pointsTo: row.pointsTo, createdBy: row.createdBy, accesses };
    },

    async findLink(shortCode: string) {
      const [row] = await guarded(sql<LinkRecord[]>`
        SELECT short_code AS "shortCode", points_to AS "pointsTo", created_by AS "createdBy", accesses
        FROM links WHERE short_code = ${shortCode}`);
      return row;
    },

    async ping() {
      await guarded(sql`SELECT 1`);
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
}
