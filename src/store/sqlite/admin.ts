import type { SqliteSynchronous } from '../../config.ts';
import type {
  AdminStore, ExportedLink, ImportLink, ImportOptions, ImportOutcome, SetMaxLinksResult,
} from '../admin.ts';
import { ACCOUNT_COLUMNS } from '../columns.ts';
import { predictImport } from '../import-plan.ts';
import { detailsOf, joinTags, LINK_DETAILS_COLUMNS, type LinkDetailsRow } from '../link-rows.ts';
import type { AccountRecord, NewAccount } from '../store.ts';
import { accountOf, prepareAdministration } from './administration.ts';
import { GIVE_BACK_SLOT, TAKE_SLOT } from './cap.ts';
import { connect } from './connection.ts';
import { prepareDomains } from './domains.ts';

export interface SqliteAdminOptions {
  readonly path: string;
  readonly synchronous?: SqliteSynchronous;
}

/**
 * Opens its own connection to the SQLite file, next to any server using it. Every write is one
 * short `BEGIN IMMEDIATE` transaction, so the cap and uniqueness rules hold against the
 * server's writes too, and a running server's writes wait (from timers, never blocking it)
 * only that long. The CLI serves no one, so it may block on a server's lock: up to 5 s per
 * statement, SQLite's own busy wait.
 */
export async function openSqliteAdminStore(options: SqliteAdminOptions): Promise<AdminStore> {
  const db = await connect({ ...options, busyTimeoutMs: 5000, lockWaitMs: 5000 });

  const statements = {
    insertAccount: db.prepare(
      `INSERT INTO accounts (code_hash, date_created, max_links) VALUES (?, ?, ?) RETURNING ${ACCOUNT_COLUMNS}`,
    ),
    linkExists: db.prepare('SELECT 1 AS found FROM links WHERE short_code = ?'),
    takeSlot: db.prepare(TAKE_SLOT),
    giveBackSlot: db.prepare(GIVE_BACK_SLOT),
    insertLink: db.prepare(
      `INSERT INTO links (short_code, points_to, created_by, accesses, date_created, title, tags, expires_at, max_visits, forward_query, rules)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (short_code) DO NOTHING`,
    ),
    exportLinks: db.prepare(`SELECT ${LINK_DETAILS_COLUMNS} FROM links ORDER BY id`),
  };

  /** Runs `work` between BEGIN IMMEDIATE and COMMIT; rolls back if it throws. */
  function transaction<R>(work: () => R): R {
    db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      db.exec('COMMIT');
      return result;
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }

  const administration = prepareAdministration(db);
  const { findAccount } = administration;

  let closed = false;

  return {
    engine: 'sqlite',
    domains: prepareDomains(db, async (work) => work(), async (work) => transaction(work)),

    async findAccount(uid) {
      return findAccount(uid);
    },

    async createAccount(account: NewAccount) {
      return accountOf<AccountRecord>(statements.insertAccount.get(account.codeHash, account.dateCreated, account.maxLinks));
    },

    async setMaxLinks(uid, maxLinks) {
      return transaction((): SetMaxLinksResult => {
        const result = administration.updateAccount(uid, { maxLinks });
        return result.outcome === 'updated' ? { ...result, previous: result.previous.maxLinks } : result;
      });
    },

    async listAccounts(after, limit) {
      return administration.listAccounts(after, limit);
    },

    async updateAccount(uid, changes) {
      return transaction(() => administration.updateAccount(uid, changes));
    },

    async searchLinks(search) {
      return administration.searchLinks(search);
    },

    async takeDownLink(shortCode, eventId) {
      return transaction(() => administration.takeDownLink(shortCode, eventId));
    },

    async *exportLinks(): AsyncGenerator<ExportedLink> {
      // One statement is one read transaction: in WAL mode it sees a single snapshot while
      // the server goes on writing.
      for (const row of statements.exportLinks.iterate()) yield detailsOf(row as unknown as LinkDetailsRow);
    },

    async importLinks(rows: readonly ImportLink[], options: ImportOptions): Promise<ImportOutcome[]> {
      if (options.dryRun) {
        const account = options.accountUid === null ? undefined : findAccount(options.accountUid);
        const taken = new Set(rows.filter((row) => statements.linkExists.get(row.shortCode) !== undefined).map((row) => row.shortCode));
        return predictImport(rows, options, account, taken);
      }
      if (options.accountUid === null) throw new Error('an import that writes needs an account');
      const uid = options.accountUid;
      const raise = options.raiseCap ? 1 : 0;
      return transaction(() => {
        if (findAccount(uid) === undefined) throw new Error(`there is no account ${uid}`);
        // Row by row, in order, as the server's creates: a taken code is reported first,
        // then the cap (TAKE_SLOT) decides.
        return rows.map((row): ImportOutcome => {
          if (statements.linkExists.get(row.shortCode) !== undefined) return 'taken';
          if (statements.takeSlot.run(uid, raise).changes === 0) return 'cap_reached';
          const inserted = statements.insertLink.run(
            row.shortCode, row.pointsTo, uid, row.accesses, row.dateCreated,
            row.title ?? null, joinTags(row.tags), row.expiresAt ?? null, row.maxVisits ?? null,
            row.forwardQuery === true ? 1 : 0, row.rules ?? null,
          );
          if (inserted.changes === 1) return 'imported';
          statements.giveBackSlot.run(uid);
          return 'taken';
        });
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}
