import { statfs } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { StatementSync } from 'node:sqlite';
import type { SqliteSynchronous } from '../../config.ts';
import { ACCOUNT_COLUMNS, LINK_COLUMNS } from '../columns.ts';
import { createGroupCommit, type CountedLink } from '../group-commit.ts';
import { storageUnavailable } from '../errors.ts';
import { MIGRATIONS_TABLE } from '../migration.ts';
import type {
  AccountRecord, CreateLinkResult, DeleteLinkResult, LinkRecord, NewAccount, NewLink, Store,
  PingOptions,
} from '../store.ts';
import { DEFAULT_STORAGE_TIMEOUT_MS } from '../deadline.ts';
import { GIVE_BACK_SLOT, TAKE_SLOT } from './cap.ts';
import { isBusy, retryWhileBusy } from './busy.ts';
import { startCheckpointer } from './checkpointer.ts';
import { connect } from './connection.ts';
import { guarded, translateError } from './errors.ts';
import { createWriteBatch } from './write-batch.ts';

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
  /**
   * The storage deadline (STORAGE_TIMEOUT), default 5 s: how long a call waits for another
   * connection's lock, from timers, before it fails as storage unavailable.
   */
  readonly timeoutMs?: number;
}

// Below this, writes that need a new page fail (SQLITE_FULL) although a probe may fit.
const MIN_FREE_BYTES = 1024 * 1024;

/** Opens (creating if needed) a SQLite database, its schema migrated, as a Store. */
export async function openSqliteStore(options: SqliteOptions): Promise<Store> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_STORAGE_TIMEOUT_MS;
  // Busy timeout 0: a lock held by another connection must never put the event loop to
  // sleep inside a statement (sqlite/busy.ts); calls wait from timers instead.
  const db = await connect({ path: options.path, synchronous: options.synchronous, busyTimeoutMs: 0, lockWaitMs: timeoutMs, check: true });
  try {
    // A 64 MiB page cache and memory-mapped reads: resolving random links among millions
    // then costs no read(2) per B-tree page (SQLite's default cache is 2 MiB).
    db.exec('PRAGMA cache_size = -65536');
    db.exec('PRAGMA mmap_size = 268435456');
    db.exec('PRAGMA wal_autocheckpoint = 20000');
  } catch (error) {
    db.close();
    throw error;
  }

  const statements = {
    insertAccount: db.prepare(
      `INSERT INTO accounts (code_hash, date_created, max_links) VALUES (?, ?, ?) RETURNING ${ACCOUNT_COLUMNS}`,
    ),
    findAccount: db.prepare(
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE code_hash = ?`,
    ),
    takeSlot: db.prepare(TAKE_SLOT),
    giveBackSlot: db.prepare(GIVE_BACK_SLOT),
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
    // A committed write that changes nothing: the newest migration's row rewritten as it is.
    pingWrite: db.prepare(`UPDATE ${MIGRATIONS_TABLE} SET version = version WHERE version = (SELECT max(version) FROM ${MIGRATIONS_TABLE})`),
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
    return guarded(() => retryWhileBusy(() => {
      if (shareReads && !reading && !db.isTransaction) {
        begin.run();
        reading = true;
        setImmediate(endRead);
      }
      try {
        return work();
      } catch (error) {
        // In WAL mode a reader is refused only while another connection recovers the WAL
        // (after a crash): end the read, so the retry starts a fresh one.
        if (isBusy(error)) endRead();
        throw error;
      }
    }, timeoutMs));
  }

  /**
   * Runs `work` between BEGIN IMMEDIATE and COMMIT, ending the shared read first; rolls back
   * if `work` or the COMMIT throws. While another connection holds the write lock, tries
   * again from timers (nothing was applied) until the deadline or until `signal` (the
   * batcher's: a call of the batch was answered 503 meanwhile) is aborted.
   */
  function transaction<R>(work: () => R, signal?: AbortSignal): Promise<R> {
    return guarded(() => retryWhileBusy(() => {
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
    }, timeoutMs, signal));
  }

  const counter = createGroupCommit<LinkRecord>((increments, signal) =>
    transaction(() => {
      const results = new Map<string, CountedLink<LinkRecord>>();
      for (const [code, count] of increments) {
        const row = statements.addAccesses.get(count, code) as LinkRecord | undefined;
        if (row !== undefined) results.set(code, { row, accesses: row.accesses });
      }
      return results;
    }, signal),
  { timeoutMs });

  const writes = createWriteBatch(db, transaction, translateError, timeoutMs);
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
          if (statements.takeSlot.run(link.createdBy, 0).changes === 0) return 'cap_reached';
          const inserted = statements.insertLink.run(link.shortCode, link.pointsTo, link.createdBy, link.dateCreated);
          return inserted.changes === 0 ? 'taken' : 'created';
        },
        (result) => result === 'created',
      );
    },

    deleteLink(shortCode: string, accountUid: number) {
      return writes.run<DeleteLinkResult>(() => {
        if (statements.deleteOwnLink.run(shortCode, accountUid).changes === 1) {
          statements.giveBackSlot.run(accountUid);
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

    async ping(probe?: PingOptions) {
      if (probe?.write !== true) {
        return guarded(() => void statements.ping.get());
      }
      // Through the write batch, like every write: it ends the shared read and commits.
      await writes.run(() => statements.pingWrite.run());
      // Rewriting a page fits in space the WAL already holds, so on a full disk the probe
      // above succeeds while every write that needs a new page fails: the free space decides.
      if (options.path === ':memory:') return;
      const { bavail, bsize } = await statfs(dirname(resolve(options.path)));
      if (bavail * bsize < MIN_FREE_BYTES) throw storageUnavailable(new Error(`less than ${MIN_FREE_BYTES} bytes free beside ${options.path}`));
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
