import type postgres from 'postgres';
import type {
  AdminAccount, AdminStore, ExportedLink, ImportLink, ImportOptions, ImportOutcome, SetMaxLinksResult,
} from '../admin.ts';
import { ACCOUNT_COLUMNS, ADMIN_ACCOUNT_COLUMNS } from '../columns.ts';
import { predictImport } from '../import-plan.ts';
import { detailsOf, joinTags, LINK_DETAILS_COLUMNS, type LinkDetailsRow } from '../link-rows.ts';
import type { AccountRecord, NewAccount } from '../store.ts';
import { administration } from './administration.ts';
import { connect, type Sql } from './connection.ts';
import { prepareDomains } from './domains.ts';

export interface PostgresAdminOptions {
  readonly url: string;
  /** Named prepared statements (true when omitted); false behind PgBouncer in transaction mode. */
  readonly prepare?: boolean;
}

// Rows fetched per round trip while exporting.
const EXPORT_PAGE = 1000;

/**
 * Opens its own small pool next to any running servers. Each import batch is one transaction
 * that first locks the receiving account's row: the servers' conditional `UPDATE accounts`
 * (their cap check) waits for it, so the cap and the link count stay exact under load.
 */
export async function openPostgresAdminStore(options: PostgresAdminOptions): Promise<AdminStore> {
  const sql = await connect({ url: options.url, max: 2, prepare: options.prepare ?? true, applicationName: 'shortlink-admin' });

  async function findAccount(tx: Sql | postgres.TransactionSql<Record<string, never>>, uid: number, lock = false) {
    const [row] = lock
      ? await tx<AdminAccount[]>`SELECT ${sql.unsafe(ADMIN_ACCOUNT_COLUMNS)} FROM accounts WHERE uid = ${uid} FOR UPDATE`
      : await tx<AdminAccount[]>`SELECT ${sql.unsafe(ADMIN_ACCOUNT_COLUMNS)} FROM accounts WHERE uid = ${uid}`;
    return row;
  }

  const admin = administration(sql);
  let closed = false;

  return {
    engine: 'postgres',
    domains: prepareDomains(sql, (work) => Promise.resolve(work())),

    findAccount(uid) {
      return findAccount(sql, uid);
    },

    async createAccount(account: NewAccount) {
      const [row] = await sql<AccountRecord[]>`
        INSERT INTO accounts (code_hash, date_created, max_links)
        VALUES (${account.codeHash}, ${account.dateCreated}, ${account.maxLinks})
        RETURNING ${sql.unsafe(ACCOUNT_COLUMNS)}`;
      return row!;
    },

    async setMaxLinks(uid, maxLinks): Promise<SetMaxLinksResult> {
      const result = await admin.updateAccount(uid, { maxLinks });
      return result.outcome === 'updated' ? { ...result, previous: result.previous.maxLinks } : result;
    },

    listAccounts: admin.listAccounts,
    updateAccount: admin.updateAccount,
    searchLinks: admin.searchLinks,
    takeDownLink: admin.takeDownLink,

    async *exportLinks(): AsyncGenerator<ExportedLink> {
      // One statement read through a cursor: a single snapshot, fetched a page at a time.
      const pages = sql<LinkDetailsRow[]>`SELECT ${sql.unsafe(LINK_DETAILS_COLUMNS)} FROM links ORDER BY id`.cursor(EXPORT_PAGE);
      for await (const page of pages) for (const row of page) yield detailsOf(row);
    },

    async importLinks(rows: readonly ImportLink[], options: ImportOptions): Promise<ImportOutcome[]> {
      if (rows.length === 0) return [];
      if (options.dryRun) {
        const account = options.accountUid === null ? undefined : await findAccount(sql, options.accountUid);
        const found = await sql<{ code: string }[]>`
          SELECT short_code AS code FROM links WHERE short_code = ANY(${sql.array(rows.map((row) => row.shortCode), 25)}::text[])`;
        return predictImport(rows, options, account, new Set(found.map((row) => row.code)));
      }

      if (options.accountUid === null) throw new Error('an import that writes needs an account');
      const uid = options.accountUid;
      return sql.begin(async (tx) => {
        const account = await findAccount(tx, uid, true);
        if (account === undefined) throw new Error(`there is no account ${uid}`);
        // Row by row, in order, as the server's creates: shortlink_import_links (migration 3)
        // reports a taken code first, then asks the cap rule, shortlink_take_slot.
        const [row] = await tx<{ results: ImportOutcome[] }[]>`
          SELECT shortlink_import_links(
            ${uid},
            ${sql.array(rows.map((r) => r.shortCode), 25)}::text[],
            ${sql.array(rows.map((r) => r.pointsTo), 25)}::text[],
            ${sql.array(rows.map((r) => String(r.accesses)), 25)}::bigint[],
            ${sql.array(rows.map((r) => r.dateCreated), 25)}::text[],
            ${options.raiseCap}
          ) AS results`;
        const results = row!.results;
        // The details are set on the rows just imported, in the same transaction: the import
        // function (migration 3) predates them, and a new one would need a migration.
        const detailed = rows.filter((r, i) => results[i] === 'imported' &&
          (r.title != null || (r.tags?.length ?? 0) > 0 || r.expiresAt != null || r.maxVisits != null || r.forwardQuery === true || r.rules != null));
        if (detailed.length > 0) {
          await tx`
            UPDATE links SET title = d.title, tags = d.tags, expires_at = d.expires_at, max_visits = d.max_visits,
              forward_query = d.forward_query, rules = d.rules
            FROM unnest(
              ${sql.array(detailed.map((r) => r.shortCode), 25)}::text[],
              ${sql.array(detailed.map((r) => r.title ?? null) as string[], 25)}::text[],
              ${sql.array(detailed.map((r) => joinTags(r.tags)), 25)}::text[],
              ${sql.array(detailed.map((r) => r.expiresAt ?? null) as string[], 25)}::text[],
              ${sql.array(detailed.map((r) => (r.maxVisits == null ? null : String(r.maxVisits))) as string[], 25)}::integer[],
              ${sql.array(detailed.map((r) => String(r.forwardQuery === true)), 25)}::boolean[],
              ${sql.array(detailed.map((r) => r.rules ?? null) as string[], 25)}::text[]
            ) AS d(short_code, title, tags, expires_at, max_visits, forward_query, rules)
            WHERE links.short_code = d.short_code AND links.created_by = ${uid}`;
        }
        return results;
      }) as Promise<ImportOutcome[]>;
    },

    async close() {
      if (closed) return;
      closed = true;
      await sql.end({ timeout: 5 });
    },
  };
}
