import type { StorageConfig } from '../config.ts';
import { openSqliteStore } from './sqlite.ts';
import type { Store } from './store.ts';

/** Opens the store the configuration names, running its migrations. */
export async function openStore(storage: StorageConfig): Promise<Store> {
  switch (storage.kind) {
    case 'sqlite':
      return openSqliteStore({ path: storage.path, synchronous: storage.synchronous });
    case 'postgres':
      throw new Error('PostgreSQL storage is not available in this build');
  }
}
