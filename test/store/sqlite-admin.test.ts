import { join } from 'node:path';
import { openSqliteAdminStore } from '../../src/store/sqlite/admin.ts';
import { openSqliteStore } from '../../src/store/sqlite/store.ts';
import { tempDir } from '../helpers/app.ts';
import { adminStoreContract, openedAdminStore, type OpenedAdminStore } from './admin-contract.ts';

adminStoreContract('sqlite', async (): Promise<OpenedAdminStore> => {
  const dir = tempDir('shortlink-sqlite-admin-');
  const path = join(dir.path, 'store.db');
  // The admin store first, as `shortlink migrate` or an import into a new file would.
  const admin = await openSqliteAdminStore({ path });
  return openedAdminStore(admin, await openSqliteStore({ path, checkpointer: false }), dir.remove);
});
