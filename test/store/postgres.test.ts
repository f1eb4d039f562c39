import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { applyMigrations } from '../../src/store/postgres/migrations.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.ts';
import type { Store } from '../../src/store/store.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';
import { reopenableStore, storeContract, type OpenedStore } from './contract.ts';

const gate = postgresGate();

describe('PostgreSQL store', { skip: gate.skip }, () => {
  // One database for the whole file: the contract suite tags its data per test.
  let database: { url: string; drop(): Promise<void> };
  before(async () => {
    database = await createPostgresDatabase(gate.value!);
  });
  after(async () => {
    await database?.drop();
  });

  storeContract('postgres', (): Promise<OpenedStore> => reopenableStore(() => openPostgresStore({ url: database.url, max: 4 })));

  test('migrations run once even when several instances start at the same moment', async () => {
    const sqls = Array.from({ length: 4 }, () => postgres(database.url, { max: 1, onnotice: () => {} }));
    try {
      const applied = await Promise.all(sqls.map((sql) => applyMigrations(sql as never)));
      assert.deepEqual(applied, [0, 0, 0, 0], 'the schema was already in place from the contract suite');
      const [row] = await sqls[0]!`SELECT count(*)::int AS n FROM schema_migrations`;
      assert.equal(row!.n, POSTGRES_MIGRATIONS.length);
    } finally {
      await Promise.all(sqls.map((sql) => sql.end()));
    }
  });

  test('a fresh database migrated by racing instances gets the schema exactly once', async () => {
    const fresh = await createPostgresDatabase(gate.value!);
    const stores: Store[] = [];
    try {
      stores.push(...(await Promise.all(Array.from({ length: 4 }, () => openPostgresStore({ url: fresh.url, max: 1 })))));
      const sql = postgres(fresh.url, { max: 1, onnotice: () => {} });
      const [row] = await sql`SELECT count(*)::int AS n FROM schema_migrations`;
      await sql.end();
      assert.equal(row!.n, POSTGRES_MIGRATIONS.length, 'each migration recorded once');
    } finally {
      for (const store of stores) await store.close();
      await fresh.drop();
    }
  });

  test('opening against an unreachable server fails with the connection error', async () => {
    await assert.rejects(openPostgresStore({ url: 'postgres://postgres@127.0.0.1:1/none' }), (error: Error) => {
      assert.match(String((error as { code?: string }).code ?? error.message), /ECONNREFUSED|CONNECT/);
      return true;
    });
  });
});
