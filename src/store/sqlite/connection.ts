/**
 * One way to open the SQLite file, shared by the server's store and the admin store: the
 * same pragmas and the same migrations. The same name as ../postgres/connection.ts.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { SqliteSynchronous } from '../../config.ts';
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
}

/** Opens (creating if needed) the database in WAL mode, its schema migrated. */
export async function connect(options: SqliteConnectOptions): Promise<DatabaseSync> {
  if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
  const db = new DatabaseSync(options.path, { timeout: 5000, enableForeignKeyConstraints: true });
  try {
    db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    await applyMigrations(db);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
