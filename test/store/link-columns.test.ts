/**
 * A new link is inserted from one column map (NEW_LINK_COLUMNS / newLinkRow in
 * src/store/link-rows.ts) on both engines; PostgreSQL's shortlink_insert_links reads each row
 * as a record of the links table (issue 24: a new column no longer redefines the function).
 * These tests keep the map and the migrated tables in step: a column added to `links` but
 * not to the map would be left at NULL by every create (on SQLite, but for the two columns
 * the count writes).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { NEW_LINK_COLUMNS } from '../../src/store/link-rows.ts';
import { connectMigrated as connectPostgres } from '../../src/store/postgres/connection.ts';
import { connectMigrated as connectSqlite } from '../../src/store/sqlite/connection.ts';
import { tempDir } from '../helpers/app.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';

/** Every column but the row id, which the database assigns. */
const expected = [...NEW_LINK_COLUMNS].sort();

/** SQLite's statistics of the current hour (ADR 29; the first pair no longer written): written by the count, none for a new link. */
const SQLITE_COUNT_COLUMNS = ['hour_tallies', 'hour_visits', 'tallies_hour', 'visits_hour'];

describe('the new-link column map', () => {
  test('names every column of SQLite\'s links table', async () => {
    const dir = tempDir('link-columns');
    const { db } = await connectSqlite({ path: join(dir.path, 'links.db'), busyTimeoutMs: 1000, lockWaitMs: 5000 });
    try {
      const columns = (db.prepare('SELECT name FROM pragma_table_info(\'links\')').all() as { name: string }[])
        .map((row) => row.name).filter((name) => name !== 'id' && !SQLITE_COUNT_COLUMNS.includes(name)).sort();
      assert.deepEqual(columns, expected);
    } finally {
      db.close();
      dir.remove();
    }
  });

  const gate = postgresGate();
  describe('on PostgreSQL', { skip: gate.skip }, () => {
    let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
    before(async () => {
      database = await createPostgresDatabase(gate.value!);
    });
    after(() => database?.drop());

    test("names every column of PostgreSQL's links table, and the function inserts each from it", async () => {
      const { sql } = await connectPostgres({ url: database.url, max: 1, applicationName: 'link-columns test' });
      try {
        const rows = await sql<{ name: string }[]>`
          SELECT column_name AS name FROM information_schema.columns
           WHERE table_schema = current_schema() AND table_name = 'links' AND column_name <> 'id'`;
        assert.deepEqual(rows.map((row) => row.name).sort(), expected);
        await sql`INSERT INTO accounts (code_hash, date_created, max_links) VALUES (${'a'.repeat(64)}, '2026-01-01T00:00:00.000Z', 1)`;
        const row = Object.fromEntries(NEW_LINK_COLUMNS.map((column, i) => [column, `v${i}`]));
        // forward_query arrives as newLinkRow writes it (1/0, SQLite's form) into a boolean column.
        Object.assign(row, { created_by: 1, accesses: 0, max_visits: 3, tags: 'a,b', forward_query: 1 });
        const [answer] = await sql<{ results: string[] }[]>`SELECT shortlink_insert_links(${sql.json([row, { ...row, short_code: 'other' }])}) AS results`;
        assert.deepEqual(answer?.results, ['created', 'cap_reached']);
        const [stored] = await sql<Record<string, unknown>[]>`SELECT ${sql(NEW_LINK_COLUMNS as unknown as string[])} FROM links`;
        assert.deepEqual({ ...stored }, { ...row, forward_query: true }, 'every column arrives as given');
      } finally {
        await sql.end();
      }
    });
  });
});
