/**
 * One way to open the SQLite file, shared by the server's store and the admin store: the
 * same pragmas and the same migrations. The same name as ../postgres/connection.ts.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { SqliteSynchronous } from '../../config.ts';
import { DatabaseDamagedError } from '../errors.ts';
import { retryWhileBusy } from './busy.ts';
import { applyMigrations } from './migrations.ts';

export interface SqliteConnectOptions {
  /** File path, or `:memory:`. Missing parent folders are created. */
  readonly path: string;
  /**
   * `normal` (default): a commit reaches the operating system before it is acknowledged, so
   * it survives the process being killed; a power cut may lose the last commits.
   * `full`: every commit is fsynced as well.
   */
  readonly synchronous?: SqliteSynchronous | undefined;
  /**
   * Run `PRAGMA quick_check` before anything else, refusing a damaged file with
   * DatabaseDamagedError (the server's store; operator commands leave it out).
   */
  readonly check?: boolean;
  /**
   * How long a statement may sleep inside node:sqlite waiting for another connection's lock.
   * 0 for the server (it waits from timers instead, sqlite/busy.ts); the CLI, which serves
   * nobody meanwhile, may block.
   */
  readonly busyTimeoutMs: number;
  /** How long opening waits, without blocking, for the lock the migrations need. */
  readonly lockWaitMs: number;
}

// quick_check reads every page: measured ~90-200 ms for 100,000 links (a 16 MB file), so a
// file this large would add seconds to every start; above it the check is left to the
// operator (docs/deployment.md) and damage shows at run time as failing calls.
const MAX_CHECKED_BYTES = 256 * 1024 * 1024;

/**
 * The first problem `PRAGMA quick_check` finds, or undefined for a sound file (or one too
 * large to check at start).
 */
function firstProblem(db: DatabaseSync, path: string): string | undefined {
  if (path === ':memory:' || !existsSync(path) || statSync(path).size > MAX_CHECKED_BYTES) return undefined;
  const [row] = db.prepare('PRAGMA quick_check(1)').all() as { quick_check: string }[];
  return row === undefined || row.quick_check === 'ok' ? undefined : row.quick_check;
}

/** Opens (creating if needed) the database in WAL mode, its schema migrated. */
export async function connect(options: SqliteConnectOptions): Promise<DatabaseSync> {
  return (await connectMigrated(options)).db;
}

/** As connect(), also saying how many migrations it applied (`shortlink migrate` reports it). */
export async function connectMigrated(options: SqliteConnectOptions): Promise<{ db: DatabaseSync; applied: number }> {
  if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
  const db = new DatabaseSync(options.path, { timeout: options.busyTimeoutMs, enableForeignKeyConstraints: true });
  try {
    if (options.check === true) {
      let problem: string | undefined;
      try {
        // A read: in WAL mode refused only while another connection recovers the WAL.
        problem = await retryWhileBusy(() => firstProblem(db, options.path), options.lockWaitMs);
      } catch (error) {
        // SQLITE_CORRUPT (11) or SQLITE_NOTADB (26) while checking: damaged too.
        const errcode = (error as { errcode?: unknown }).errcode;
        if (typeof errcode !== 'number' || ![11, 26].includes(errcode & 0xff)) throw error;
        problem = (error as Error).message;
      }
      if (problem !== undefined) throw new DatabaseDamagedError(options.path, problem);
    }
    // Switching a new file to WAL needs the write lock.
    await retryWhileBusy(() => db.exec('PRAGMA journal_mode = WAL'), options.lockWaitMs);
    db.exec(`PRAGMA synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    return { db, applied: await applyMigrations(db, { lockWaitMs: options.lockWaitMs }) };
  } catch (error) {
    db.close();
    throw error;
  }
}
