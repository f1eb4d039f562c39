import postgres from 'postgres';
import type {
  AdminAccount, AdminStore, ExportedLink, ImportLink, ImportOptions, ImportOutcome, SetMaxLinksResult,
} from './admin.ts';
import { connectPostgres } from './postgres.ts';
import type { AccountRecord, NewAccount } from './store.ts';

export interface PostgresAdminOptions {
  readonly url: string;
}

type Sql = postgres.Sql<Record<string, never>>;

// Rows fetched per round trip while exporting.
const EXPORT_PAGE = 1000;

/**
 * Opens its own small pool next to any running servers. Each import batch is one transaction
 * that first locks the receiving account's row: the servers' conditional `UPDATE accounts`
 * (their cap check) waits for it, so the cap and the link count stay exact under load.
 */
export async function openPostgresAdminStore(options: PostgresAdminOptions): Promise<AdminStore> {
  const sql = await connectPostgres(options.url, 2, 'shortlink-admin');

  async function findAccount(tx: Sql | postgres.TransactionSql<Record<string, never>>, uid: number, lock = false) {
    const [row] = lock
      ? await tx<AdminAccount[]>`
          SELECT uid, date_created AS "dateCreated", max_links AS "maxLinks", link_count AS "linkCount"
          FROM accounts WHERE uid = ${uid} FOR UPDATE`
      : await tx<AdminAccount[]>`
          SELECT uid, date_created AS "dateCreated", max_links AS "maxLinks", link_count AS "linkCount"
          FROM accounts WHERE uid = ${uid}`;
    return row;
  }

  async function takenAmong(tx: Sql | postgres.TransactionSql<Record<string, never>>, codes: readonly string[]): Promise<Set<string>> {
    const rows = await tx<{ code: string }[]>`
      SELECT short_code AS code FROM links WHERE short_code = ANY(${sql.array([...codes], 25)}::text[])`;
    return new Set(rows.map((row) => row.code));
  }

  let closed = false;

  return {
    engine: 'postgres',

    findAccount(uid) {
      return findAccount(sql, uid);
    },

    async createAccount(account: NewAccount) {
      const [row] = await sql<AccountRecord[]>`
        INSERT INTO accounts (code_hash, date_created, max_links)
        VALUES (${account.codeHash}, ${account.dateCreated}, ${account.maxLinks})
        RETURNING uid, date_created AS "dateCreated", max_links AS "maxLinks"`;
      return row!;
    },

    async setMaxLinks(uid, maxLinks) {
      return sql.begin(async (tx): Promise<SetMaxLinksResult> => {
        const before = await findAccount(tx, uid, true);
        if (before === undefined) return { outcome: 'not_found' };
        if (before.linkCount > maxLinks) return { outcome: 'below_held', linkCount: before.linkCount };
        const [after] = await tx<AdminAccount[]>`
          UPDATE accounts SET max_links = ${maxLinks} WHERE uid = ${uid}
          RETURNING uid, date_created AS "dateCreated", max_links AS "maxLinks", link_count AS "linkCount"`;
        return { outcome: 'updated', previous: before.maxLinks, account: after! };
      });
    },

    async *exportLinks(): AsyncGenerator<ExportedLink> {
      // One statement read through a cursor: a single snapshot, fetched a page at a time.
      const pages = sql<ExportedLink[]>`
        SELECT short_code AS "shortCode", points_to AS "pointsTo", created_by AS "createdBy", accesses,
               date_created AS "dateCreated"
        FROM links ORDER BY id`.cursor(EXPORT_PAGE);
      for await (const page of pages) yield* page;
    },

    async importLinks(rows: readonly ImportLink[], options: ImportOptions): Promise<ImportOutcome[]> {
      if (rows.length === 0) return [];
      if (options.dryRun) {
        let free = Infinity;
        if (options.accountUid !== null && !options.raiseCap) {
          const account = await findAccount(sql, options.accountUid);
          if (account === undefined) throw new Error(`there is no account ${options.accountUid}`);
          free = account.maxLinks - account.linkCount - (options.pendingLinks ?? 0);
        }
        const taken = await takenAmong(sql, rows.map((row) => row.shortCode));
        return rows.map((row): ImportOutcome => {
          if (taken.has(row.shortCode)) return 'taken';
          if (free <= 0) return 'cap_reached';
          taken.add(row.shortCode);
          free--;
          return 'imported';
        });
      }

      if (options.accountUid === null) throw new Error('an import that writes needs an account');
      const uid = options.accountUid;
      return sql.begin(async (tx) => {
        const account = await findAccount(tx, uid, true);
        if (account === undefined) throw new Error(`there is no account ${uid}`);
        let free = options.raiseCap ? Infinity : account.maxLinks - account.linkCount;

        // Decide in order which rows to try: free codes, until the cap is used up.
        const taken = await takenAmong(tx, rows.map((row) => row.shortCode));
        const outcomes: ImportOutcome[] = [];
        const tried: ImportLink[] = [];
        for (const row of rows) {
          if (taken.has(row.shortCode)) {
            outcomes.push('taken');
          } else if (free <= 0) {
            outcomes.push('cap_reached');
          } else {
            taken.add(row.shortCode);
            free--;
            tried.push(row);
            outcomes.push('imported');
          }
        }
        if (tried.length === 0) return outcomes;

        // A server may have created one of these codes since the check: the unique constraint
        // settles it, and such a row is reported as taken.
        const inserted = await tx<{ code: string }[]>`
          INSERT INTO links (short_code, points_to, created_by, accesses, date_created)
          SELECT code, url, ${uid}, accesses, created
          FROM unnest(
            ${sql.array(tried.map((row) => row.shortCode), 25)}::text[],
            ${sql.array(tried.map((row) => row.pointsTo), 25)}::text[],
            ${sql.array(tried.map((row) => String(row.accesses)), 25)}::bigint[],
            ${sql.array(tried.map((row) => row.dateCreated), 25)}::text[]
          ) WITH ORDINALITY AS t(code, url, accesses, created, ord)
          ORDER BY ord
          ON CONFLICT (short_code) DO NOTHING
          RETURNING short_code AS code`;
        const added = new Set(inserted.map((row) => row.code));
        rows.forEach((row, index) => {
          if (outcomes[index] === 'imported' && !added.has(row.shortCode)) outcomes[index] = 'taken';
        });
        if (added.size > 0) {
          await tx`
            UPDATE accounts SET link_count = link_count + ${added.size},
                   max_links = CASE WHEN ${options.raiseCap} THEN greatest(max_links, link_count + ${added.size}) ELSE max_links END
            WHERE uid = ${uid}`;
        }
        return outcomes;
      }) as Promise<ImportOutcome[]>;
    },

    async close() {
      if (closed) return;
      closed = true;
      await sql.end({ timeout: 5 });
    },
  };
}
