/**
 * A database of the release with the statistics journal (at the migration before "visits
 * without a journal": SQLite 5, PostgreSQL 8 or later, with visits still in the journal, a
 * tuple of the same hour and classes, and a link.visited webhook) opens with the current code
 * and takes that migration (ADR 24):
 * the journal's visits are in the statistics, added to the tuple, the watched ones wait for the
 * webhook with the time their batch recorded, and the journal is emptied but kept: during a
 * rolling upgrade instances of the previous release still append to it, and the next fold
 * moves what they wrote (docs/deployment.md, "Upgrades and migrations").
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, test } from 'node:test';
import postgres from 'postgres';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { openSqliteStore } from '../../src/store/sqlite/store.ts';
import type { Store } from '../../src/store/store.ts';
import { deliveryData } from '../../src/store/webhooks.ts';
import { tempDir } from '../helpers/app.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';

const CREATED = '2026-11-20T08:00:00.000Z';
/** How many migrations come before the one that empties the journal (found by name, not number). */
const before = (migrations: readonly { name: string }[]) => migrations.findIndex((migration) => migration.name === 'visits without a journal');
const HOUR = 492_000;
const SEED = [
  `INSERT INTO accounts (code_hash, date_created, max_links, link_count, webhook_count) VALUES ('${'a'.repeat(64)}', '${CREATED}', 20, 2, 1)`,
  `INSERT INTO accounts (code_hash, date_created, max_links, link_count) VALUES ('${'b'.repeat(64)}', '${CREATED}', 20, 1)`,
  `INSERT INTO links (short_code, points_to, created_by, accesses, date_created) VALUES
     ('watched', 'https://one.example/', 1, 7, '${CREATED}'),
     ('other', 'https://two.example/', 2, 4, '${CREATED}')`,
  `INSERT INTO webhooks (id, account_uid, url, events, visited, secret, date_created)
   VALUES ('wh_${'1'.repeat(24)}', 1, 'https://hooks.example/', 'link.visited', 1, 'v1.x', '${CREATED}')`,
  // Already folded into the tuples: 2 visits; still in the journal: 3 + 2 of link 1, 4 of link 2.
  `INSERT INTO stats_tuples (hour, link_id, bot, referrer, country, browser, os, device, visits)
   VALUES (${HOUR}, 1, 0, '(direct)', 'ZZ', 'Chrome', 'Linux', 'desktop', 2)`,
  `INSERT INTO stats_journal (link_id, hour, bot, referrer, country, browser, os, device, visits, time) VALUES
     (1, ${HOUR}, 0, '(direct)', 'ZZ', 'Chrome', 'Linux', 'desktop', 3, '2026-02-16T00:10:11.123Z'),
     (1, ${HOUR}, 1, '(direct)', 'ZZ', 'Other', 'Other', 'bot', 2, '2026-02-16T00:10:12.456Z'),
     (2, ${HOUR}, 0, '(direct)', 'DE', 'Firefox', 'Linux', 'desktop', 4, '2026-02-16T00:10:12.456Z')`,
];

/** What an instance of the previous release writes while it runs beside this one: 5 visits of `other`. */
const OLD_INSTANCE_VISITS = `INSERT INTO stats_journal (link_id, hour, bot, referrer, country, browser, os, device, visits, time)
  VALUES (2, ${HOUR}, 0, '(direct)', 'DE', 'Firefox', 'Linux', 'desktop', 5, '2026-02-16T00:11:00.000Z')`;

/** The old instance's visits are in the statistics after the next fold, once, and the journal is empty. */
async function checkRollingUpgrade(store: Store, journalRows: () => Promise<number>): Promise<void> {
  const series = async () => (await store.readStats({ shortCode: 'other' }, HOUR, HOUR + 1)).series.map((row) => ({ ...row }));
  await store.foldStats({ hoursBefore: HOUR });
  assert.deepEqual(await series(), [{ hour: HOUR, visits: 9, bots: 0 }], 'the old instance\'s 5 visits added to the 4');
  assert.equal(await journalRows(), 0);
  await store.foldStats({ hoursBefore: HOUR });
  assert.deepEqual(await series(), [{ hour: HOUR, visits: 9, bots: 0 }], 'moved once');
}

async function checkUpgraded(store: Store): Promise<void> {
  const series = async (shortCode: string) =>
    (await store.readStats({ shortCode }, HOUR, HOUR + 1)).series.map((row) => ({ ...row }));
  assert.deepEqual(await series('watched'), [{ hour: HOUR, visits: 7, bots: 2 }], 'journal and tuple added up');
  assert.deepEqual(await series('other'), [{ hour: HOUR, visits: 4, bots: 0 }]);
  assert.ok(await store.webhooks.collectVisits({ now: new Date().toISOString(), maxVisits: 100, foldAbove: 1000 }) >= 1);
  const [event] = await store.webhooks.claim({ now: Date.now(), leaseMs: 1000, owner: 'upgrade', limit: 10, busyWebhooks: [] });
  const visits = (JSON.parse(deliveryData(event!.type, event!.data)) as { visits: { ShortCode: string; Time: string; Bot: boolean }[] }).visits;
  assert.deepEqual(visits.map((v) => [v.ShortCode, v.Time, v.Bot]), [
    ['watched', '2026-02-16T00:10:11.000Z', false], ['watched', '2026-02-16T00:10:11.000Z', false], ['watched', '2026-02-16T00:10:11.000Z', false],
    ['watched', '2026-02-16T00:10:12.000Z', true], ['watched', '2026-02-16T00:10:12.000Z', true],
  ], 'the journal\'s visits of the watched link, none of the other account\'s');
}

describe('upgrading to visits without a journal', () => {
  test('SQLite: a database with the journal takes "visits without a journal" and keeps every visit', async () => {
    const dir = tempDir('shortlink-journal-upgrade-');
    const path = join(dir.path, 'old.db');
    const old = new DatabaseSync(path);
    old.exec('PRAGMA journal_mode = WAL');
    old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT (strftime(\'%Y-%m-%dT%H:%M:%fZ\', \'now\')))');
    for (const migration of SQLITE_MIGRATIONS.slice(0, before(SQLITE_MIGRATIONS))) {
      old.exec(migration.sql);
      old.prepare('INSERT INTO schema_migrations (version) VALUES (?)').run(migration.version);
    }
    old.exec(`PRAGMA user_version = ${before(SQLITE_MIGRATIONS)}`);
    for (const sql of SEED) old.exec(sql);
    old.close();
    const store = await openSqliteStore({ path });
    const side = new DatabaseSync(path);
    try {
      await checkUpgraded(store);
      side.exec(OLD_INSTANCE_VISITS);
      await checkRollingUpgrade(store, async () => (side.prepare('SELECT count(*) AS n FROM stats_journal').get() as { n: number }).n);
    } finally {
      side.close();
      await store.close();
    }
    const after = new DatabaseSync(path);
    try {
      const left = after.prepare('SELECT count(*) AS n FROM stats_journal').get() as { n: number };
      assert.equal(left.n, 0, 'the journal is emptied (and kept for a rolling upgrade)');
      assert.equal((after.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: number }).v, SQLITE_MIGRATIONS.at(-1)!.version);
    } finally {
      after.close();
      dir.remove();
    }
  });

  const gate = postgresGate();
  test('PostgreSQL: a database with the journal takes "visits without a journal" and keeps every visit', { skip: gate.skip }, async () => {
    const database = await createPostgresDatabase(gate.value!);
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      await sql.begin(async (tx) => {
        await tx`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
        for (const migration of POSTGRES_MIGRATIONS.slice(0, before(POSTGRES_MIGRATIONS))) {
          await tx.unsafe(migration.sql);
          await tx`INSERT INTO schema_migrations (version) VALUES (${migration.version})`;
        }
        for (const statement of SEED) await tx.unsafe(statement);
      });
      const store = await openPostgresStore({ url: database.url, max: 2 });
      try {
        await checkUpgraded(store);
        await sql.unsafe(OLD_INSTANCE_VISITS);
        await checkRollingUpgrade(store, async () => (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM stats_journal`)[0]!.n);
      } finally {
        await store.close();
      }
      const [journal] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM stats_journal`;
      assert.equal(journal!.n, 0, 'the journal is emptied (and kept for a rolling upgrade)');
      const versions = await sql<{ version: number }[]>`SELECT version FROM schema_migrations ORDER BY version`;
      assert.deepEqual(versions.map((row) => row.version), POSTGRES_MIGRATIONS.map((migration) => migration.version));
    } finally {
      await sql.end();
      await database.drop();
    }
  });
});
