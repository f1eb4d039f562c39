/**
 * A database created by the release before the storage reshape opens with the current code,
 * migrates forward, and keeps its data and its behaviour: the same rows, the same caps, the
 * old version record adopted into `schema_migrations`.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import type { AdminStore } from '../../src/store/admin.ts';
import { openPostgresAdminStore } from '../../src/store/postgres/admin.ts';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import { openSqliteAdminStore } from '../../src/store/sqlite/admin.ts';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { openSqliteStore } from '../../src/store/sqlite/store.ts';
import type { Store } from '../../src/store/store.ts';
import { tempDir } from '../helpers/app.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';
import { PREVIOUS_POSTGRES_MIGRATIONS, PREVIOUS_SQLITE_MIGRATIONS } from './fixtures/previous-release.ts';

const HASH_FULL = 'f'.repeat(64);
const HASH_ROOMY = 'e'.repeat(64);
const CREATED = '2025-06-07T08:09:10.111Z';

/**
 * What the previous release left behind: account 1 at its cap of 2 (links old1, old2, 5 and 0
 * accesses), account 2 with room for 3 and one link (old3).
 */
const SEED = [
  `INSERT INTO accounts (code_hash, date_created, max_links, link_count) VALUES ('${HASH_FULL}', '${CREATED}', 2, 2)`,
  `INSERT INTO accounts (code_hash, date_created, max_links, link_count) VALUES ('${HASH_ROOMY}', '${CREATED}', 3, 1)`,
  `INSERT INTO links (short_code, points_to, created_by, accesses, date_created) VALUES
     ('old1', 'https://one.example/', 1, 5, '${CREATED}'),
     ('old2', 'https://two.example/', 1, 0, '${CREATED}'),
     ('old3', 'https://three.example/', 2, 9, '${CREATED}')`,
];

/** The same checks on either engine, through the current Store and AdminStore. */
async function checkUpgraded(store: Store, admin: AdminStore): Promise<void> {
  const full = await store.findAccountByCodeHash(HASH_FULL);
  assert.deepEqual({ ...full }, { uid: 1, dateCreated: CREATED, maxLinks: 2, disabled: false });
  assert.deepEqual((await store.listLinks(1)).map((link) => ({ ...link })), [
    { shortCode: 'old1', pointsTo: 'https://one.example/', createdBy: 1, accesses: 5 },
    { shortCode: 'old2', pointsTo: 'https://two.example/', createdBy: 1, accesses: 0 },
  ]);
  assert.equal((await store.resolveLink('old1'))?.accesses, 6, 'counts go on from the stored count');
  // Statistics start with the upgrade: counts from before it are in Accesses only.
  const hour = Math.floor(Date.now() / 3_600_000);
  const visit = { hour, key: 'k', bot: false, referrer: '(direct)', country: 'ZZ', browser: 'Chrome', os: 'Linux', device: 'desktop' } as const;
  assert.equal((await store.resolveLink('old3', undefined, visit))?.accesses, 10);
  assert.deepEqual((await store.readStats({ shortCode: 'old3' }, hour, hour + 1)).series.map((row) => ({ ...row })), [{ hour, visits: 1, bots: 0 }]);
  assert.deepEqual((await store.readStats({ shortCode: 'old1' }, hour, hour + 1)).series, []);
  await store.foldStats({ daysBeforeHour: hour - 24 });

  // Old links have no details, and take them (CONTRACT §7.1): a visit limit below the count
  // already reached refuses at once, without counting.
  const details = (await store.listLinkDetails(1)).links.map((link) => ({ ...link, tags: [...link.tags] }));
  assert.deepEqual(details.map(({ title, tags, expiresAt, maxVisits, dateCreated }) => ({ title, tags, expiresAt, maxVisits, dateCreated })), [
    { title: null, tags: [], expiresAt: null, maxVisits: null, dateCreated: CREATED },
    { title: null, tags: [], expiresAt: null, maxVisits: null, dateCreated: CREATED },
  ]);
  const edited = await store.updateLink('old1', 1, { title: 'Kept', tags: ['old'], maxVisits: 6 });
  assert.equal(edited.status, 'updated');
  assert.equal((await store.resolveLink('old1'))?.refused, 'visit_limit');
  assert.deepEqual((await store.listLinkDetails(1, { tags: ['old'] })).links.map((link) => link.shortCode), ['old1']);
  await store.updateLink('old1', 1, { maxVisits: null });

  // The cap as the old rows set it, through the server's creates and the admin import alike.
  const newLink = (shortCode: string, createdBy: number) =>
    ({ shortCode, pointsTo: 'https://new.example/', createdBy, dateCreated: new Date().toISOString() });
  assert.equal(await store.createLink(newLink('new1', 1)), 'cap_reached');
  assert.equal(await store.createLink(newLink('old3', 2)), 'taken');
  assert.equal(await store.createLink(newLink('new2', 2)), 'created');
  const rows = ['imp1', 'old1', 'imp2'].map((shortCode) => ({ shortCode, pointsTo: 'https://imp.example/', accesses: 1, dateCreated: CREATED }));
  assert.deepEqual(await admin.importLinks(rows, { accountUid: 2, raiseCap: false, dryRun: false }), ['imported', 'taken', 'cap_reached']);
  assert.deepEqual({ ...(await admin.findAccount(2)) }, { uid: 2, dateCreated: CREATED, maxLinks: 3, linkCount: 3, disabled: false });
  // Old accounts can be disabled, rotated and deleted like new ones.
  assert.equal((await admin.updateAccount(2, { disabled: true })).outcome, 'updated');
  assert.equal((await store.listAccounts(1, 1))[0]?.disabled, true);
  assert.equal((await admin.updateAccount(2, { disabled: false })).outcome, 'updated');
  assert.equal((await store.deleteLink('old2', 1)).status, 'deleted');
  assert.equal(await store.createLink(newLink('new1', 1)), 'created');

  // Uids continue above the old ones.
  const next = await store.createAccount({ codeHash: 'd'.repeat(64), dateCreated: CREATED, maxLinks: 1 });
  assert.equal(next.uid, 3);
}

describe('upgrading a SQLite database from the previous release', () => {
  test('opens, records the old version in schema_migrations, and keeps data and behaviour', async () => {
    const dir = tempDir('shortlink-upgrade-');
    const path = join(dir.path, 'old.db');
    const old = new DatabaseSync(path);
    // As the previous release's migrate() left it.
    old.exec('PRAGMA journal_mode = WAL');
    old.exec('BEGIN IMMEDIATE');
    for (const sql of PREVIOUS_SQLITE_MIGRATIONS) old.exec(sql);
    old.exec(`PRAGMA user_version = ${PREVIOUS_SQLITE_MIGRATIONS.length}`);
    old.exec('COMMIT');
    for (const sql of SEED) old.exec(sql);
    old.close();

    const store = await openSqliteStore({ path });
    const admin = await openSqliteAdminStore({ path });
    try {
      await checkUpgraded(store, admin);
    } finally {
      await admin.close();
      await store.close();
    }

    const db = new DatabaseSync(path, { readOnly: true });
    try {
      const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all().map((row) => row.version);
      assert.deepEqual(versions, SQLITE_MIGRATIONS.map((migration) => migration.version));
      const { user_version: version } = db.prepare('PRAGMA user_version').get() as { user_version: number };
      assert.equal(version, SQLITE_MIGRATIONS.length, 'kept for releases that still read it');
    } finally {
      db.close();
      dir.remove();
    }
  });
});

const gate = postgresGate();

describe('upgrading a PostgreSQL database from the previous release', { skip: gate.skip }, () => {
  let database: { url: string; drop(): Promise<void> };
  before(async () => {
    database = await createPostgresDatabase(gate.value!);
  });
  after(async () => {
    await database?.drop();
  });

  test('opens, applies the new migrations once, and keeps data and behaviour', async () => {
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      // As the previous release's migratePostgres() left it.
      await sql.begin(async (tx) => {
        await tx`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
        for (const [index, migration] of PREVIOUS_POSTGRES_MIGRATIONS.entries()) {
          await tx.unsafe(migration);
          await tx`INSERT INTO schema_migrations (version) VALUES (${index + 1})`;
        }
        // A fresh database: the identity column hands out uids 1 and 2, as SEED expects.
        for (const statement of SEED) await tx.unsafe(statement);
      });

      const store = await openPostgresStore({ url: database.url, max: 2 });
      const admin = await openPostgresAdminStore({ url: database.url });
      try {
        await checkUpgraded(store, admin);
      } finally {
        await admin.close();
        await store.close();
      }

      const versions = await sql<{ version: number }[]>`SELECT version FROM schema_migrations ORDER BY version`;
      assert.deepEqual(versions.map((row) => row.version), POSTGRES_MIGRATIONS.map((migration) => migration.version));
    } finally {
      await sql.end();
    }
  });
});
