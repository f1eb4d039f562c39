import { statfs } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { StatementSync } from 'node:sqlite';
import type { SqliteSynchronous } from '../../config.ts';
import { storageUnavailable } from '../errors.ts';
import { MIGRATIONS_TABLE } from '../migration.ts';
import type { PingOptions, Store } from '../store.ts';
import { DEFAULT_STORAGE_TIMEOUT_MS } from '../deadline.ts';
import { prepareAdministration } from './administration.ts';
import { isBusy, retryWhileBusy } from './busy.ts';
import { startCheckpointer } from './checkpointer.ts';
import { connect } from './connection.ts';
import { guarded, translateError } from './errors.ts';
import { createWriteBatch } from './write-batch.ts';
import { prepareWebhooks } from './webhooks.ts';
import { prepareStreamSlots } from './stream-slots.ts';
import { accountCalls } from './accounts.ts';
import type { SqliteEngine } from './engine.ts';
import { linkCalls } from './links.ts';
import { countingCalls } from '../counting-calls.ts';
import { statsCalls } from './stats.ts';
import { createCounter } from './counting.ts';
import { prepareApiKeys } from './api-keys.ts';
import { prepareDomains } from './domains.ts';

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
  /**
   * Run WAL checkpoints on a worker thread of their own (checkpointer.ts; default true). Off,
   * SQLite's automatic checkpoint (every 20000 pages) and the one at close remain: tests
   * that do not test it turn it off, since a thread per store was most of their CPU.
   */
  readonly checkpointer?: boolean;
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
    }, timeoutMs), options.path);
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
    }, timeoutMs, signal), options.path);
  }

  const counter = createCounter(db, transaction, timeoutMs);

  const administration = prepareAdministration(db);
  const writes = createWriteBatch(db, transaction, (error) => translateError(error, options.path), timeoutMs);
  const webhooks = prepareWebhooks(db, read, writes);
  const apiKeys = prepareApiKeys(db, read, writes);
  const engine: SqliteEngine = { db, read, writes, outbox: webhooks.outbox, administration };
  const checkpointer = options.path === ':memory:' || options.checkpointer === false ? undefined : startCheckpointer(options.path);
  let closed = false;

  return {
    engine: 'sqlite',
    webhooks: webhooks.store,
    apiKeys,
    domains: prepareDomains(db, read, (work) => writes.run(work)),
    streamSlots: prepareStreamSlots(db, read, writes),
    ...accountCalls(engine),
    ...linkCalls(engine),
    ...countingCalls(counter),
    ...statsCalls(engine),

    listAccounts(after, limit) {
      return read(() => administration.listAccounts(after, limit));
    },

    updateAccount(uid, changes) {
      return writes.run(() => administration.updateAccount(uid, changes));
    },

    searchLinks(search) {
      return read(() => administration.searchLinks(search));
    },

    takeDownLink(shortCode, eventId) {
      return writes.run(() => administration.takeDownLink(shortCode, eventId));
    },

    async ping(probe?: PingOptions) {
      if (probe?.write !== true) {
        return guarded(() => void statements.ping.get(), options.path);
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
