/**
 * The store and admin-store contract suites through PgBouncer in transaction pooling mode
 * (issue 13, item 7), with PG_PREPARE=false: each transaction may run on another server
 * connection, so nothing may rely on session state (named prepared statements, session
 * advisory locks, SET). Migrations take a transaction-level advisory lock, so they run
 * through it too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { openPostgresAdminStore } from '../../src/store/postgres/admin.ts';
import { MIGRATIONS } from '../../src/store/postgres/migrations.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import { pgbouncerGate, startPgbouncer, type PrivatePgbouncer } from '../helpers/pgbouncer.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';
import { adminStoreContract, openedAdminStore, type OpenedAdminStore } from './admin-contract.ts';
import { reopenableStore, storeContract, type OpenedStore } from './contract.ts';

const gate = postgresGate();
const bouncerGate = pgbouncerGate();

describe('PostgreSQL through PgBouncer (transaction mode, PG_PREPARE=false)', { skip: gate.skip || bouncerGate.skip }, () => {
  let database: { url: string; drop(): Promise<void> };
  let bouncer: PrivatePgbouncer;
  before(async () => {
    database = await createPostgresDatabase(gate.value!);
    // Fewer server connections than the stores below open: transactions share them.
    bouncer = await startPgbouncer({ upstreamUrl: database.url, poolSize: 3 });
  });
  after(async () => {
    await bouncer?.destroy();
    await database?.drop();
  });

  test('a fresh database is migrated through PgBouncer by racing instances, each migration once', async () => {
    const stores = await Promise.all(Array.from({ length: 4 }, () => openPostgresStore({ url: bouncer.url, max: 2, prepare: false })));
    try {
      const sql = postgres(database.url, { max: 1, onnotice: () => {} });
      const [row] = await sql`SELECT count(*)::int AS n FROM schema_migrations`;
      await sql.end();
      assert.equal(row!.n, MIGRATIONS.length);
    } finally {
      for (const store of stores) await store.close();
    }
  });

  storeContract('postgres through PgBouncer', (): Promise<OpenedStore> =>
    reopenableStore(() => openPostgresStore({ url: bouncer.url, max: 4, prepare: false })));

  adminStoreContract('postgres through PgBouncer', async (): Promise<OpenedAdminStore> => {
    const admin = await openPostgresAdminStore({ url: bouncer.url, prepare: false });
    return openedAdminStore(admin, await openPostgresStore({ url: bouncer.url, max: 4, prepare: false }));
  });
});
