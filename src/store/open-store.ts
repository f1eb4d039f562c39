/**
 * Engine selection: the one place that knows which backends exist. Both engines open the
 * same way (async, migrations first) and return the same interfaces.
 */
import { existsSync } from 'node:fs';
import type { StorageConfig } from '../config.ts';
import type { AdminStore } from './admin.ts';
import { DEFAULT_STORAGE_TIMEOUT_MS } from './deadline.ts';
import { DatabaseMissingError } from './errors.ts';
import { openPostgresAdminStore } from './postgres/admin.ts';
import { connectMigrated as connectPostgresMigrated } from './postgres/connection.ts';
import { connectMigrated as connectSqliteMigrated } from './sqlite/connection.ts';
import { openPostgresStore } from './postgres/store.ts';
import { openSqliteAdminStore } from './sqlite/admin.ts';
import { openSqliteStore } from './sqlite/store.ts';
import type { Store } from './store.ts';

export interface OpenStoreOptions {
  /** No other server process writes to this database (false in `WORKERS` processes). */
  readonly soleProcess?: boolean;
  /** The storage deadline (STORAGE_TIMEOUT); 5 s when omitted. */
  readonly timeoutMs?: number;
  /** SQLite: checkpoint the WAL on a worker thread (default true; tests that do not test it turn it off). */
  readonly checkpointer?: boolean;
}

/** Opens the store the configuration names, running its migrations. */
export async function openStore(
  storage: StorageConfig,
  { soleProcess = true, timeoutMs = DEFAULT_STORAGE_TIMEOUT_MS, checkpointer = true }: OpenStoreOptions = {},
): Promise<Store> {
  switch (storage.kind) {
    case 'sqlite':
      return openSqliteStore({ path: storage.path, synchronous: storage.synchronous, shareReads: soleProcess, timeoutMs, checkpointer });
    case 'postgres':
      return openPostgresStore({ url: storage.url, max: storage.poolMax, prepare: storage.prepare, timeoutMs });
  }
}

export interface OpenAdminOptions {
  /**
   * Create the database (SQLite file) when it does not exist yet. Off for commands that only
   * read or change existing data, so that a mistyped DATABASE_URL is an error, not a new file.
   */
  readonly create: boolean;
}

/** Opens the database the configuration names for the CLI's operator commands, running its migrations first. */
export async function openAdminStore(storage: StorageConfig, options: OpenAdminOptions): Promise<AdminStore> {
  switch (storage.kind) {
    case 'sqlite':
      if (storage.path === ':memory:') throw new Error('an in-memory SQLite database has nothing to administer');
      if (!options.create && !existsSync(storage.path)) throw new DatabaseMissingError(storage.path);
      return openSqliteAdminStore({ path: storage.path, synchronous: storage.synchronous });
    case 'postgres':
      return openPostgresAdminStore({ url: storage.url, prepare: storage.prepare });
  }
}

/**
 * Brings the schema of the database the configuration names up to date, creating a SQLite
 * file if needed, and returns how many migrations that applied (0: it already was).
 */
export async function migrateDatabase(storage: StorageConfig): Promise<number> {
  switch (storage.kind) {
    case 'sqlite': {
      const { db, applied } = await connectSqliteMigrated({ path: storage.path, synchronous: storage.synchronous, busyTimeoutMs: 5000, lockWaitMs: 5000 });
      db.close();
      return applied;
    }
    case 'postgres': {
      const { sql, applied } = await connectPostgresMigrated({ url: storage.url, max: 1, applicationName: 'shortlink migrate' });
      await sql.end();
      return applied;
    }
  }
}
