import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { DomainError, ErrorCode } from '../errors.ts';
import type { SqliteSynchronous } from '../config.ts';
import { createGroupCommit, type CountedLink } from './group-commit.ts';
import { startCheckpointer } from './sqlite-checkpointer.ts';
import { createWriteBatch } from './sqlite-write-batch.ts';
import { SQLITE_MIGRATIONS } from './migrations/sqlite.ts';
import type {
  AccountRecord, CreateLinkResult, DeleteLinkResult, LinkRecord, NewAccount, NewLink, Store,
} from './store.ts';

export interface SqliteOptions {
  /** File path, or `:memory:`. Missing parent folders are created. */
  readonly path: string;
  /**
   * `normal` (default): a commit reaches the operating system before it is acknowledged, so
   * it survives the process being killed; a power cut may lose the last commits.
   * `full`: every commit is fsynced as well.
   */
  readonly synchronous?: SqliteSynchronous;
  /**
   * Let the reads of one event-loop turn share one read transaction (default true). Only
   * while this process is the file's only writer, which is what makes it exact: every write
   * it makes ends the shared read first. Off in `WORKERS` processes, where another process's
   * acknowledged write must be visible to the next request at once.
   */
  readonly shareReads?: boolean;
}

// SQLite primary result codes that mean "the database cannot serve right now" rather than
// "this statement is wrong": busy or locked, read-only, I/O error, disk full, cannot open.
// Also "malformed" and "not a database": after an I/O error (a filesystem gone read-only)
// every later read reports SQLITE_CORRUPT although the file is sound; either way it is the
// storage that fails, not the request (test/e2e/storage-faults.test.ts).
const UNAVAILABLE_CODES = new Set([5, 6, 8, 10, 11, 13, 14, 26]);

/** Maps engine failures that a retry later could cure to the storage-unavailable error. */
function translate(error: unknown): unknown {
  const errcode = (error as { errcode?: unknown }).errcode;
  if (typeof errcode === 'number' && UNAVAILABLE_CODES.has(errcode & 0xff)) {
    return new DomainError(ErrorCode.StorageUnavailable, 'storage unavailable', { retryAfter: 1, cause: error });
  }
  return error;
}

const LINK_COLUMNS = 'short_code AS shortCode, points_to AS pointsTo, created_by AS createdBy, accesses';

/** Opens (creating if needed) a SQLite database and returns it as a Store. */
export function openSqliteStore(options: SqliteOptions): Store {
  if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
  const db = new DatabaseSync(options.path, { timeout: 5000, enableForeignKeyConstraints: true });
  try {
    db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    // A 64 MiB page cache and memory-mapped reads: resolving random links among millions
    // then costs no read(2) per B-tree page (SQLite's default cache is 2 MiB).
    db.exec('PRAGMA cache_size = -65536');
    db.exec('PRAGMA mmap_size = 268435456');
    db.exec('PRAGMA wal_autocheckpoint = 20000');
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }

  const statements = {
    insertAccount: db.prepare(
      `INSERT INTO accounts (code_hash, date_created, max_links) VALUES (?, ?, ?)
       RETURNING uid, date_created AS dateCreated, max_links AS maxLinks`,
    ),
    findAccount: db.prepare(
      'SELECT uid, date_created AS dateCreated, max_links AS maxLinks FROM accounts WHERE code_hash = ?',
    ),
    takeSlot: db.prepare('UPDATE accounts SET link_count = link_count + 1 WHERE uid = ? AND link_count < max_links'),
    freeSlot: db.prepare('UPDATE accounts SET link_count = link_count - 1 WHERE uid = ?'),
    insertLink: db.prepare(
      `INSERT INTO links (short_code, points_to, created_by, date_created) VALUES (?, ?, ?, ?)
       ON CONFLICT (short_code) DO NOTHING`,
    ),
    deleteOwnLink: db.prepare('DELETE FROM links WHERE short_code = ? AND created_by = ?'),
    linkExists: db.prepare('SELECT 1 AS found FROM links WHERE short_code = ?'),
    listLinks: db.prepare(`SELECT ${LINK_COLUMNS} FROM links WHERE created_by = ? ORDER BY id`),
    findLink: db.prepare(`SELECT ${LINK_COLUMNS} FROM links WHERE short_code = ?`),
    addAccesses: db.prepare(`UPDATE links SET accesses = accesses + ? WHERE short_code = ? RETURNING ${LINK_COLUMNS}`),
    ping: db.prepare('SELECT 1 AS ok'),
  } satisfies Record<string, StatementSync>;

  // Reads share one read transaction per turn of the event loop. Alone, every SELECT is a
  // transaction of its own, and in WAL mode each one takes and drops a lock on the database
  // file and checks its size: three system calls, more than a lookup by key costs (measured
  // in isolation: a primary-key SELECT takes 4.7 µs alone, 0.9 µs among 50 in one
  // transaction; in the server, lists +12–15%). The first read of a turn opens the
  // transaction and a setImmediate closes it; a write closes it first. It sees everything
  // committed before it began, and takes no lock that writers or other processes wait for.
  // A read made in the check phase (a pipelined request answered after a batch) keeps its
  // transaction through the next poll phase, so a commit by another process in between
  // would go unseen by a request arriving after it: hence only for a sole writer.
  const shareReads = options.shareReads ?? true;
  const begin = db.prepare('BEGIN');
  const beginWrite = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  let reading = false;
  function endRead(): void {
    if (!reading) return;
    reading = false;
    try {
      commit.run();
    } catch {
      // SQLite already ended it (an I/O error rolls a transaction back)
    }
  }
  function read<R>(work: () => R): Promise<R> {
    return guarded(() => {
      if (shareReads && !reading && !db.isTransaction) {
        begin.run();
        reading = true;
        setImmediate(endRead);
      }
      return work();
    });
  }

  /**
   * Runs `work` between BEGIN IMMEDIATE and COMMIT, ending the shared read first; rolls back
   * if `work` or the COMMIT throws.
   */
  function transaction<R>(work: () => R): Promise<R> {
    return guarded(() => {
      endRead();
      beginWrite.run();
      try {
        const result = work();
        commit.run();
        return result;
      } catch (error) {
        // A failed statement or COMMIT (disk full, I/O error) may leave the transaction open,
        // or SQLite may have rolled it back already.
        try { rollback.run(); } catch { /* already rolled back by SQLite */ }
        throw error;
      }
    });
  }

  /** Runs a synchronous database call and turns engine failures into domain errors. */
  function guarded<R>(work: () => R): Promise<R> {
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(translate(error));
    }
  }

  const counter = createGroupCommit<LinkRecord>((increments) =>
    transaction(() => {
      const results = new Map<string, CountedLink<LinkRecord>>();
      for (const [code, count] of increments) {
        const row = statements.addAccesses.get(count, code) as LinkRecord | undefined;
        if (row !== undefined) results.set(code, { row, accesses: row.accesses });
      }
      return results;
    }),
  );

  const writes = createWriteBatch(db, transaction, translate);
  const checkpointer = options.path === ':memory:' ? undefined : startCheckpointer(options.path);
  let closed = false;

  return {
    engine: 'sqlite',

    createAccount(account: NewAccount) {
      return writes.run(
        () => statements.insertAccount.get(account.codeHash, account.dateCreated, account.maxLinks) as unknown as AccountRecord,
      );
    },

    findAccountByCodeHash(codeHash: string) {
      return read(() => statements.findAccount.get(codeHash) as AccountRecord | undefined);
    },

    createLink(link: NewLink) {
      return writes.run<CreateLinkResult>(
        () => {
          if (statements.takeSlot.run(link.createdBy).changes === 0) return 'cap_reached';
          const inserted = statements.insertLink.run(link.shortCode, link.pointsTo, link.createdBy, link.dateCreated);
          return inserted.changes === 0 ? 'taken' : 'created';
        },
        (result) => result === 'created',
      );
    },

    deleteLink(shortCode: string, accountUid: number) {
      return writes.run<DeleteLinkResult>(() => {
        if (statements.deleteOwnLink.run(shortCode, accountUid).changes === 1) {
          statements.freeSlot.run(accountUid);
          return 'deleted';
        }
        return statements.linkExists.get(shortCode) === undefined ? 'not_found' : 'not_owner';
      });
    },

    listLinks(accountUid: number) {
      return read(() => statements.listLinks.all(accountUid) as unknown as LinkRecord[]);
    },

    async resolveLink(shortCode: string) {
      const counted = await counter.count(shortCode);
      if (counted === undefined) return undefined;
      const { row, accesses } = counted;
      return { shortCode: row.shortCode, pointsTo: row.pointsTo, createdBy: row.createdBy, accesses };
    },

    findLink(shortCode: string) {
      return read(() => statements.findLink.get(shortCode) as LinkRecord | undefined);
    },

    ping() {
      return guarded(() => {
        statements.ping.get();
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      await counter.drain();
      await writes.drain();
      endRead();
      await checkpointer?.stop();
      db.close();
    },
  };
}

/** Brings the schema up to date; the write lock makes concurrent starts apply it once. */
function migrate(db: DatabaseSync): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    const { user_version: current } = db.prepare('PRAGMA user_version').get() as { user_version: number };
    for (let version = current; version < SQLITE_MIGRATIONS.length; version++) {
      db.exec(SQLITE_MIGRATIONS[version]!);
    }
    if (current < SQLITE_MIGRATIONS.length) db.exec(`PRAGMA user_version = ${SQLITE_MIGRATIONS.length}`);
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}
