import { statfs } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { StatementSync } from 'node:sqlite';
import type { Visit } from '../../stats/visit.ts';
import type { SqliteSynchronous } from '../../config.ts';
import { ACCOUNT_COLUMNS, LINK_COLUMNS } from '../columns.ts';
import { createGroupCommit, grantedVisits, type CountedLink } from '../group-commit.ts';
import {
  DELETE_ORPHAN_ROLLUPS, deleteFoldedHoursSql, deleteTupleChunkSql, excessValuesSql, FOLD_BATCH, foldHoursIntoDaysSql,
  JOURNAL_WEBHOOK_COLUMNS, journalToTuplesSql, ROLLUP_ROWS_SQL, seriesSql, STATS_KEPT_VALUES,
  tupleChunkEndSql, tupleChunkLinkHoursSql, tuplesToRollupsSql, valuesSql,
} from '../stats-sql.ts';
import { hourOf, OTHER } from '../../stats/visit.ts';
import { storageUnavailable } from '../errors.ts';
import { MIGRATIONS_TABLE } from '../migration.ts';
import {
  detailsOf, joinTags, LINK_DETAILS_COLUMNS, refusalOf, resolvedOf, type LinkDetailsRow, type LinkStateRow,
} from '../link-rows.ts';
import type {
  AccountRecord, CreateLinkResult, DeleteLinkResult, LinkChanges, LinkQuery, LinkRecord, NewAccount, NewLink, Store,
  PingOptions, ResolvedLink, StatsRows, StatsScope, UpdateLinkResult,
} from '../store.ts';
import { DEFAULT_STORAGE_TIMEOUT_MS } from '../deadline.ts';
import { accountOf, prepareAdministration } from './administration.ts';
import { GIVE_BACK_SLOT, TAKE_SLOT } from './cap.ts';
import { isBusy, retryWhileBusy } from './busy.ts';
import { startCheckpointer } from './checkpointer.ts';
import { connect } from './connection.ts';
import { guarded, translateError } from './errors.ts';
import { createWriteBatch } from './write-batch.ts';
import { prepareWebhooks } from './webhooks.ts';
import { journalToWebhooksSql } from '../webhooks.ts';
import { EventType } from '../../events/events.ts';
import { accountRotatedData, linkDetailsData, newLinkData } from '../../events/payloads.ts';

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

/** A `LinkStateRow`: the link, its limits and its owner's disabled flag. */
const LINK_STATE_COLUMNS = `${LINK_COLUMNS}, expires_at AS "expiresAt", max_visits AS "maxVisits",
  (SELECT disabled FROM accounts WHERE uid = links.created_by) AS disabled`;

/**
 * The statement of one list shape and its parameters. Keyset paging: `id > after` on the
 * (created_by, id) index, so a page costs its own rows (and the rows the filters skip), never
 * the pages before it. One more row than the limit is read to know whether more remain.
 */
function listQuery(accountUid: number, query: LinkQuery): { sql: string; parameters: (string | number)[] } {
  const where = ['created_by = ?'];
  const parameters: (string | number)[] = [accountUid];
  if (query.after !== undefined) {
    where.push('id > ?');
    parameters.push(query.after);
  }
  if (query.q !== undefined) {
    // SQLite's LIKE folds ASCII case itself, in C: a page scanning 500 rows took 0.70 ms
    // against 1.06 ms with instr(lower(…)), for the same matches (lower() is ASCII-only too).
    const pattern = `%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    where.push("(short_code LIKE ? ESCAPE '\\' OR points_to LIKE ? ESCAPE '\\' OR title LIKE ? ESCAPE '\\')");
    parameters.push(pattern, pattern, pattern);
  }
  for (const tag of query.tags ?? []) {
    // Whole tags only: ',a,' is in ',a,b,' but not in ',ab,'. instr, not LIKE: '_' is a tag character.
    where.push("instr(',' || tags || ',', ?) > 0");
    parameters.push(`,${tag},`);
  }
  let sql = `SELECT id, ${LINK_DETAILS_COLUMNS} FROM links WHERE ${where.join(' AND ')} ORDER BY id`;
  if (query.limit !== undefined) {
    sql += ' LIMIT ?';
    parameters.push(query.limit + 1);
  }
  return { sql, parameters };
}

/** SQLite's spelling of parameter N. */
const sqlite = (n: number): string => `?${n}`;

/** A link row as the count batch returns it: with its id, which the journal records. */
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
    insertAccount: db.prepare(
      `INSERT INTO accounts (code_hash, date_created, max_links) VALUES (?, ?, ?) RETURNING ${ACCOUNT_COLUMNS}`,
    ),
    findAccount: db.prepare(
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE code_hash = ?`,
    ),
    takeSlot: db.prepare(TAKE_SLOT),
    giveBackSlot: db.prepare(GIVE_BACK_SLOT),
    insertLink: db.prepare(
      `INSERT INTO links (short_code, points_to, created_by, date_created, title, tags, expires_at, max_visits)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (short_code) DO NOTHING`,
    ),
    deleteOwnLink: db.prepare(`DELETE FROM links WHERE short_code = ? AND created_by = ? RETURNING ${LINK_DETAILS_COLUMNS}`),
    linkExists: db.prepare('SELECT 1 AS found FROM links WHERE short_code = ?'),
    listLinks: db.prepare(`SELECT ${LINK_COLUMNS} FROM links WHERE created_by = ? ORDER BY id`),
    findLink: db.prepare(`SELECT ${LINK_STATE_COLUMNS} FROM links WHERE short_code = ?`),
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
    journalVisits: db.prepare(
      `INSERT INTO stats_journal (link_id, hour, bot, referrer, country, browser, os, device, visits, time)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    lastJournalId: db.prepare(`SELECT max(id) AS last FROM (SELECT id FROM stats_journal ORDER BY id LIMIT ${FOLD_BATCH.sqlite})`),
    journalToTuples: db.prepare(journalToTuplesSql('stats_journal', 'id <= ?1')),
    tupleChunkEnd: db.prepare(tupleChunkEndSql(sqlite, FOLD_BATCH.sqlite)),
    tuplesToRollups: db.prepare(tuplesToRollupsSql(sqlite)),
    tupleChunkLinkHours: db.prepare(tupleChunkLinkHoursSql(sqlite)),
    deleteTupleChunk: db.prepare(deleteTupleChunkSql(sqlite)),
    rollupRows: db.prepare(ROLLUP_ROWS_SQL),
    forgetJournal: db.prepare('DELETE FROM stats_journal WHERE id <= ?'),
    journalToWebhooks: db.prepare(journalToWebhooksSql(`(SELECT ${JOURNAL_WEBHOOK_COLUMNS} FROM stats_journal WHERE id <= ?2)`, sqlite)),
    addToRollup: db.prepare(`INSERT INTO stats_rollups (link_id, hour, dim, value, visits) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (link_id, hour, dim, value) DO UPDATE SET visits = stats_rollups.visits + excluded.visits`),
    excessValues: db.prepare(excessValuesSql(sqlite)),
    deleteRollup: db.prepare('DELETE FROM stats_rollups WHERE link_id = ? AND hour = ? AND dim = ? AND value = ?'),
    hoursToFold: db.prepare('SELECT DISTINCT link_id AS "linkId", hour - hour % 24 AS hour FROM stats_rollups WHERE hour < ? AND hour % 24 <> 0'),
    foldHours: db.prepare(foldHoursIntoDaysSql(sqlite)),
    deleteFoldedHours: db.prepare(deleteFoldedHoursSql(sqlite)),
    deleteOrphanRollups: db.prepare(DELETE_ORPHAN_ROLLUPS),
    linkOwner: db.prepare(
      `SELECT l.created_by AS "createdBy", (SELECT disabled FROM accounts WHERE uid = ?2) AS disabled
         FROM links l WHERE l.short_code = ?1`,
    ),
    // Each field changes only when its flag is set, so one statement serves every edit.
    updateLink: db.prepare(
      `UPDATE links SET
         points_to  = CASE WHEN ?2 THEN ?3 ELSE points_to END,
         title      = CASE WHEN ?4 THEN ?5 ELSE title END,
         tags       = CASE WHEN ?6 THEN ?7 ELSE tags END,
         expires_at = CASE WHEN ?8 THEN ?9 ELSE expires_at END,
         max_visits = CASE WHEN ?10 THEN ?11 ELSE max_visits END
       WHERE short_code = ?1 RETURNING ${LINK_DETAILS_COLUMNS}`,
    ),
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
      // The statistics of the accesses granted commit with their counts: appended to the
      // journal's tail, one row per link and distinct classes.
      if (visits.size > 0) {
        for (const [code, result] of results) {
          const linkId = result.row.linkId;
          if (linkId === undefined) continue; // nothing granted
          // With the batch's time: link.visited webhooks get these rows when they are folded.
          for (const { visit, count } of grantedVisits(visits.get(code), result.granted ?? increments.get(code)!)) {
            statements.journalVisits.run(linkId, visit.hour, visit.bot ? 1 : 0, visit.referrer, visit.country, visit.browser, visit.os, visit.device, count, now);
          }
        }
      }
      return results;
    }, signal),
  { timeoutMs });
  const listStatements = new Map<string, StatementSync>();

  /** Keeps the named values of each link-hour within the bound, the rest summed as (other). */
  function trimValues(pairs: readonly { linkId: number; hour: number }[]): void {
    for (const { linkId, hour } of pairs) {
      // Six dimensions of a few values each is the common case: a count by the key is enough.
      if ((statements.rollupRows.get(linkId, hour) as { n: number }).n <= STATS_KEPT_VALUES) continue;
      const excess = statements.excessValues.all(linkId, hour) as unknown as { dim: number; value: string; visits: number }[];
      for (const { dim, value, visits } of excess) {
        statements.deleteRollup.run(linkId, hour, dim, value);
        statements.addToRollup.run(linkId, hour, dim, OTHER, visits);
      }
    }
  }

  /**
   * One fold, in a write transaction: a chunk of journal rows into the tuples, a chunk of the
   * tuples of hours that are over into the rollups, and (`daysBeforeHour`) old hours into days.
   * Answers how many journal rows and tuples it moved.
   */
  function fold(hoursBefore: number, daysBeforeHour: number | undefined): number {
    const { last } = statements.lastJournalId.get() as { last: number | null };
    let moved = 0;
    if (last !== null) {
      // The visits of links with link.visited webhooks go on to them (ADR 21), in this transaction.
      statements.journalToWebhooks.run(new Date().toISOString(), last);
      statements.journalToTuples.run(last);
      moved += Number(statements.forgetJournal.run(last).changes);
    }
    // Up to the chunk's last (hour, link), or all of them when fewer are left.
    const end = statements.tupleChunkEnd.get(hoursBefore) as { hour: number; linkId: number } | undefined;
    const chunk = [hoursBefore, end?.hour ?? hoursBefore, end?.linkId ?? Number.MAX_SAFE_INTEGER] as const;
    const pairs = statements.tupleChunkLinkHours.all(...chunk) as unknown as { linkId: number; hour: number }[];
    if (pairs.length > 0) {
      statements.tuplesToRollups.run(...chunk);
      moved += Number(statements.deleteTupleChunk.run(...chunk).changes);
      trimValues(pairs);
    }
    if (daysBeforeHour !== undefined) {
      const days = statements.hoursToFold.all(daysBeforeHour) as unknown as { linkId: number; hour: number }[];
      if (days.length > 0) {
        statements.foldHours.run(daysBeforeHour);
        statements.deleteFoldedHours.run(daysBeforeHour);
        trimValues(days);
      }
      statements.deleteOrphanRollups.run();
    }
    return moved;
  }

  const administration = prepareAdministration(db);
  const writes = createWriteBatch(db, transaction, translateError, timeoutMs);
  const webhooks = prepareWebhooks(db, read, writes);
  const { outbox } = webhooks;
  const statsByScope = {
    link: { series: db.prepare(seriesSql({ shortCode: '' }, sqlite)), values: db.prepare(valuesSql({ shortCode: '' }, sqlite)) },
    account: { series: db.prepare(seriesSql({ accountUid: 0 }, sqlite)), values: db.prepare(valuesSql({ accountUid: 0 }, sqlite)) },
  };
  const statsStatements = (scope: StatsScope) => ('shortCode' in scope ? statsByScope.link : statsByScope.account);
  const checkpointer = options.path === ':memory:' || options.checkpointer === false ? undefined : startCheckpointer(options.path);
  let closed = false;

  return {
    engine: 'sqlite',
    webhooks: webhooks.store,

    createAccount(account: NewAccount) {
      return writes.run(
        () => accountOf<AccountRecord>(statements.insertAccount.get(account.codeHash, account.dateCreated, account.maxLinks)),
      );
    },

    findAccountByCodeHash(codeHash: string) {
      return read(() => {
        const row = statements.findAccount.get(codeHash);
        return row === undefined ? undefined : accountOf<AccountRecord>(row);
      });
    },

    rotateAccessCode(uid, codeHash, newCodeHash, eventId) {
      return writes.run(() => {
        const account = administration.rotateAccessCode(uid, codeHash, newCodeHash);
        if (account !== undefined) outbox.write(EventType.AccountRotated, new Date().toISOString(), accountRotatedData(uid), uid, eventId);
        return account;
      });
    },

    deleteAccount(uid) {
      return writes.run(() => administration.deleteAccount(uid));
    },

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

    createLink(link: NewLink) {
      return writes.run<CreateLinkResult>(
        () => {
          if (statements.takeSlot.run(link.createdBy, 0).changes === 0) return 'cap_reached';
          const inserted = statements.insertLink.run(
            link.shortCode, link.pointsTo, link.createdBy, link.dateCreated,
            link.title ?? null, joinTags(link.tags), link.expiresAt ?? null, link.maxVisits ?? null,
          );
          if (inserted.changes === 0) return 'taken';
          outbox.write(EventType.LinkCreated, link.dateCreated, newLinkData(link), link.createdBy, link.eventId);
          return 'created';
        },
        (result) => result === 'created',
      );
    },

    deleteLink(shortCode: string, accountUid: number, eventId?: string) {
      return writes.run<DeleteLinkResult>(() => {
        const removed = statements.deleteOwnLink.get(shortCode, accountUid) as LinkDetailsRow | undefined;
        if (removed !== undefined) {
          statements.giveBackSlot.run(accountUid);
          outbox.write(EventType.LinkDeleted, new Date().toISOString(), linkDetailsData(detailsOf(removed)), accountUid, eventId);
          return 'deleted';
        }
        return statements.linkExists.get(shortCode) === undefined ? 'not_found' : 'not_owner';
      });
    },

    listLinks(accountUid: number) {
      return read(() => statements.listLinks.all(accountUid) as unknown as LinkRecord[]);
    },

    listLinkDetails(accountUid: number, query: LinkQuery = {}) {
      const { sql, parameters } = listQuery(accountUid, query);
      let statement = listStatements.get(sql);
      if (statement === undefined) {
        statement = db.prepare(sql);
        listStatements.set(sql, statement);
      }
      const rows = read(() => statement.all(...parameters) as unknown as (LinkDetailsRow & { id: number })[]);
      return rows.then((all) => {
        const more = query.limit !== undefined && all.length > query.limit;
        const page = more ? all.slice(0, query.limit) : all;
        return { links: page.map(detailsOf), next: more ? page.at(-1)!.id : undefined };
      });
    },

    updateLink(shortCode: string, accountUid: number, changes: LinkChanges, eventId?: string) {
      return writes.run<UpdateLinkResult>(() => {
        const owner = statements.linkOwner.get(shortCode, accountUid) as { createdBy: number; disabled: number | null } | undefined;
        if (owner === undefined) return { status: 'not_found' };
        if (owner.createdBy !== accountUid) return { status: 'not_owner' };
        if (owner.disabled === 1) return { status: 'account_disabled' };
        const row = statements.updateLink.get(
          shortCode,
          changes.pointsTo !== undefined ? 1 : 0, changes.pointsTo ?? null,
          changes.title !== undefined ? 1 : 0, changes.title ?? null,
          changes.tags !== undefined ? 1 : 0, joinTags(changes.tags),
          changes.expiresAt !== undefined ? 1 : 0, changes.expiresAt ?? null,
          changes.maxVisits !== undefined ? 1 : 0, changes.maxVisits ?? null,
        ) as unknown as LinkDetailsRow;
        const link = detailsOf(row);
        outbox.write(EventType.LinkUpdated, new Date().toISOString(), linkDetailsData(link), accountUid, eventId);
        return { status: 'updated', link };
      });
    },

    watchCounts(listener) {
      return counter.watch(listener);
    },

    async resolveLink(shortCode: string, now?: string, visit?: Visit): Promise<ResolvedLink | undefined> {
      const counted = await counter.count(shortCode, now, visit);
      if (counted === undefined) return undefined;
      const { row, accesses, refused } = counted;
      const link = { shortCode: row.shortCode, pointsTo: row.pointsTo, createdBy: row.createdBy, accesses };
      return refused === undefined ? link : { ...link, refused };
    },

    async findLink(shortCode: string, now?: string) {
      const row = await read(() => statements.findLink.get(shortCode) as LinkStateRow | undefined);
      return row === undefined ? undefined : resolvedOf(row, now ?? new Date().toISOString());
    },

    readStats(scope: StatsScope, fromHour: number, toHour: number) {
      const { series, values } = statsStatements(scope);
      const parameter = 'shortCode' in scope ? scope.shortCode : scope.accountUid;
      return read((): StatsRows => ({
        series: series.all(parameter, fromHour, toHour) as unknown as StatsRows['series'],
        values: values.all(parameter, fromHour, toHour) as unknown as StatsRows['values'],
      }));
    },

    foldStats(foldOptions = {}) {
      const hoursBefore = foldOptions.hoursBefore ?? hourOf(Date.now());
      return writes.run(() => fold(hoursBefore, foldOptions.daysBeforeHour));
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
