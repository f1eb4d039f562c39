import { after, before, describe } from 'node:test';
import { openPostgresAdminStore } from '../../src/store/postgres/admin.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';
import { adminStoreContract, openedAdminStore, type OpenedAdminStore } from './admin-contract.ts';

const gate = postgresGate();

describe('PostgreSQL admin store', { skip: gate.skip }, () => {
  // One database for the whole file: the contract suite tags its data per test.
  let database: { url: string; drop(): Promise<void> };
  before(async () => {
    database = await createPostgresDatabase(gate.value!);
  });
  after(async () => {
    await database?.drop();
  });

  adminStoreContract('postgres', async (): Promise<OpenedAdminStore> => {
    const admin = await openPostgresAdminStore({ url: database.url });
    return openedAdminStore(admin, await openPostgresStore({ url: database.url, max: 4 }));
  });
});
