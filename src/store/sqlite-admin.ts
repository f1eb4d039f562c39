import { DatabaseSync } from 'node:sqlite';
import type { SqliteSynchronous } from '../config.ts';
import type {
  AdminAccount, AdminStore, ExportedLink, ImportLink, ImportOptions, ImportOutcome, SetMaxLinksResult,
} from './admin.ts';
import { openSqliteStore } from './sqlite.ts';
import type { AccountRecord, NewAccount } from './store.ts';

export interface SqliteAdminOptions {
  readonly path: string;
  readonly synchronous?: SqliteSynchronous;
}

const ACCOUNT_COLUMNS = 'uid, date_created AS dateCreated, max_links AS maxLinks, link_count AS linkCount';

/**
 * Opens its own connection to the SQLite file, next to any server using it. Every write is one
 * short `BEGIN IMMEDIATE` transaction, so a running server waits at most one batch (its busy
 * timeout is 5 s) and the cap and uniqueness rules hold against its writes too.
 */
export async function openSqliteAdminStore(options: SqliteAdminOptions): Promise<AdminStore> {
  // The server's own opener applies the migrations and WAL mode; opening and closing it here
  // keeps one migration path for both.
  await openSqliteStore({ path: options.path, ...(options.synchronous === undefined ? {} : { synchronous: options.synchronous }) }).close();

  const db = new DatabaseSync(options.path, { timeout: 5000, enableForeignKeyConstraints: true });
  db.exec(`PRAGMA synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);

  const statements = {
    findAccount: db.prepare(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE uid = ?`),
    insertAccount: db.prepare(
      `INSERT INTO accounts (code_hash, date_created, max_links) VALUES (?, ?, ?)
       RETURNING uid, date_created AS dateCreated, max_links AS maxLinks`,
    ),
    setMaxLinks: db.prepare(`UPDATE accounts SET max_links = ? WHERE uid = ? AND link_count <= ? RETURNING ${ACCOUNT_COLUMNS}`),
    linkExists: db.prepare('SELECT 1 AS found FROM links WHERE short_code = ?'),
    insertLink: db.prepare(
      `INSERT INTO links (short_code, points_to, created_by, accesses, date_created) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (short_code) DO NOTHING`,
    ),
    addHeld: db.prepare(
      `UPDATE accounts SET link_count = link_count + ?,
              max_links = CASE WHEN ? THEN max(max_links, link_count + ?) ELSE max_links END
       WHERE uid = ?`,
    ),
    exportLinks: db.prepare(
      `SELECT short_code AS shortCode, points_to AS pointsTo, created_by AS createdBy, accesses, date_created AS dateCreated
       FROM links ORDER BY id`,
    ),
  };

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

  function findAccount(uid: number): AdminAccount | undefined {
    return statements.findAccount.get(uid) as AdminAccount | undefined;
  }

  let closed = false;

  return {
    engine: 'sqlite',

    async findAccount(uid) {
      return findAccount(uid);
    },

    async createAccount(account: NewAccount) {
      return statements.insertAccount.get(account.codeHash, account.dateCreated, account.maxLinks) as unknown as AccountRecord;
    },

    async setMaxLinks(uid, maxLinks): Promise<SetMaxLinksResult> {
      return transaction(() => {
        const before = findAccount(uid);
        if (before === undefined) return { outcome: 'not_found' };
        const after = statements.setMaxLinks.get(maxLinks, uid, maxLinks) as AdminAccount | undefined;
        if (after === undefined) return { outcome: 'below_held', linkCount: before.linkCount };
        return { outcome: 'updated', previous: before.maxLinks, account: after };
      });
    },

    async *exportLinks(): AsyncGenerator<ExportedLink> {
      // One statement is one read transaction: in WAL mode it sees a single snapshot while
      // the server goes on writing.
      for (const row of statements.exportLinks.iterate()) yield row as unknown as ExportedLink;
    },

    async importLinks(rows: readonly ImportLink[], options: ImportOptions): Promise<ImportOutcome[]> {
      if (options.dryRun) return dryRun(rows, options);
      if (options.accountUid === null) throw new Error('an import that writes needs an account');
      const uid = options.accountUid;
      return transaction(() => {
        const account = findAccount(uid);
        if (account === undefined) throw new Error(`there is no account ${uid}`);
        let free = options.raiseCap ? Infinity : account.maxLinks - account.linkCount;
        let added = 0;
        const outcomes = rows.map((row): ImportOutcome => {
          if (statements.linkExists.get(row.shortCode) !== undefined) return 'taken';
          if (free <= 0) return 'cap_reached';
          const inserted = statements.insertLink.run(row.shortCode, row.pointsTo, uid, row.accesses, row.dateCreated);
          if (inserted.changes === 0) return 'taken';
          free--;
          added++;
          return 'imported';
        });
        if (added > 0) statements.addHeld.run(added, options.raiseCap ? 1 : 0, added, uid);
        return outcomes;
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };

  function dryRun(rows: readonly ImportLink[], options: ImportOptions): ImportOutcome[] {
    let free = Infinity;
    if (options.accountUid !== null && !options.raiseCap) {
      const account = findAccount(options.accountUid);
      if (account === undefined) throw new Error(`there is no account ${options.accountUid}`);
      free = account.maxLinks - account.linkCount - (options.pendingLinks ?? 0);
    }
    const seen = new Set<string>();
    return rows.map((row): ImportOutcome => {
      if (seen.has(row.shortCode) || statements.linkExists.get(row.shortCode) !== undefined) return 'taken';
      if (free <= 0) return 'cap_reached';
      seen.add(row.shortCode);
      free--;
      return 'imported';
    });
  }
}
