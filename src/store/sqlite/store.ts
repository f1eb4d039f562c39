import { statfs } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { StatementSync } from 'node:sqlite';
import type { SqliteSynchronous } from '../../config.ts';
import { LINK_COLUMNS } from '../columns.ts';
import { createGroupCommit, grantedVisits, type CountedLink } from '../group-commit.ts';
import { ADD_TUPLE_SQL } from '../stats-sql.ts';
import { storageUnavailable } from '../errors.ts';
import { MIGRATIONS_TABLE } from '../migration.ts';
import { refusalOf, type LinkStateRow } from '../link-rows.ts';
import type { LinkRecord, PingOptions, Store } from '../store.ts';
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
import { LINK_STATE_COLUMNS, linkCalls } from './links.ts';
import { countingCalls } from '../counting-calls.ts';
import { statsCalls } from './stats.ts';
import { ANY_VISITED_WEBHOOK_SQL, VISITS_TO_WEBHOOKS_SQL, visitSecond } from '../webhooks.ts';
import { prepareApiKeys } from './api-keys.ts';

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

/** A link row as the count batch returns it: with its id, which the tuples record. */
type CountedRow = LinkRecord & { readonly linkId?: number };

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
    // The hot path: one statement per link and batch, as before the limits existed. It only
    // counts a link without a visit limit, unexpired, whose owner is not disabled; any other
    // link (or none) returns no row and is settled by linkState/grantAccesses below.
    addAccesses: db.prepare(
      `UPDATE links SET accesses = accesses + ?1
        WHERE short_code = ?2 AND max_visits IS NULL AND (expires_at IS NULL OR expires_at > ?3)
          AND NOT EXISTS (SELECT 1 FROM accounts WHERE uid = links.created_by AND disabled <> 0)
        RETURNING id AS "linkId", ${LINK_COLUMNS}`,
    ),
    linkState: db.prepare(`SELECT ${LINK_STATE_COLUMNS} FROM links WHERE short_code = ?`),
    grantAccesses: db.prepare(`UPDATE links SET accesses = accesses + ? WHERE short_code = ? RETURNING id AS "linkId", ${LINK_COLUMNS}`),
    addTuple: db.prepare(ADD_TUPLE_SQL),
    anyVisitedWebhook: db.prepare(ANY_VISITED_WEBHOOK_SQL),
    addToWaitingVisits: db.prepare(VISITS_TO_WEBHOOKS_SQL[0]),
    newWaitingVisits: db.prepare(VISITS_TO_WEBHOOKS_SQL[1]),
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

  const counter = createGroupCommit<CountedRow>((increments, signal, now, visits) =>
    transaction(() => {
      const results = new Map<string, CountedLink<CountedRow>>();
      for (const [code, count] of increments) {
        const row = statements.addAccesses.get(count, code, now) as CountedRow | undefined;
        if (row !== undefined) {
          results.set(code, { row, accesses: row.accesses });
          continue;
        }
        // Unknown, or a link with a limit, an expiry or a disabled owner. Inside the write
        // transaction, so nothing changes between this read and the grant.
        const state = statements.linkState.get(code) as LinkStateRow | undefined;
        if (state === undefined) continue;
        const refused = refusalOf(state, state.accesses, now);
        const granted = refused !== undefined ? 0
          : state.maxVisits === null ? count : Math.min(count, state.maxVisits - state.accesses);
        const counted = granted > 0 ? statements.grantAccesses.get(granted, code) as unknown as CountedRow : state;
        results.set(code, { row: counted, accesses: counted.accesses, granted, refused: refused ?? 'visit_limit' });
      }
      // The statistics of the accesses granted commit with their counts: added to the
      // tuples, one upsert per link and distinct classes (ADR 24). The visits of links whose
      // owner has a link.visited webhook are also written for it, with their shortcode, here:
      // one probe per batch finds whether any such webhook exists at all.
      if (visits.size > 0) {
        const watched = statements.anyVisitedWebhook.get() !== undefined;
        const second = visitSecond(now);
        for (const [code, result] of results) {
          const linkId = result.row.linkId;
          if (linkId === undefined) continue; // nothing granted
          for (const { visit, count } of grantedVisits(visits.get(code), result.granted ?? increments.get(code)!)) {
            const bot = visit.bot ? 1 : 0;
            statements.addTuple.run(visit.hour, linkId, bot, visit.referrer, visit.country, visit.browser, visit.os, visit.device, count);
            if (watched) {
              const row = [result.row.shortCode, second, bot, visit.referrer, visit.country, visit.browser, visit.os, visit.device, count, result.row.createdBy] as const;
              statements.addToWaitingVisits.run(...row);
              statements.newWaitingVisits.run(...row);
            }
          }
        }
      }
      return results;
    }, signal),
  { timeoutMs });

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
