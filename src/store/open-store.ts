import type { StorageConfig } from '../config.ts';
import { openPostgresStore } from './postgres.ts';
import { openSqliteStore } from './sqlite.ts';
import type { Store } from './store.ts';

/**
 * Opens the store the configuration names, running its migrations. `soleProcess`: no other
 * server process writes to this database (false in `WORKERS` processes).
 */
export async function openStore(storage: StorageConfig, { soleProcess = true } = {}): Promise<Store> {
  switch (storage.kind) {
    case 'sqlite':
      return openSqliteStore({ path: storage.path, synchronous: storage.synchronous, shareReads: soleProcess });
    case 'postgres':
      return openPostgresStore({ url: storage.url });
  }
}
