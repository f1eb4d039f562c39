/**
 * A database of the release before webhooks (SQLite at migration 3, PostgreSQL at 6, with
 * accounts, links and visits still in the statistics journal) opens with the current code,
 * takes migration 4 / 7 once (and the later ones), and works: webhooks can be registered (the
 * cap starts at 0 held), the journal's visits are in the statistics, and a visit counted after
 * a link.visited webhook was registered reaches it. (Visits from before the webhook existed
 * are not delivered: since ADR 24 the webhooks' copy is made when the visit is counted.)
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
const SEED = [
  `INSERT INTO accounts (code_hash, date_created, max_links, link_count) VALUES ('${'a'.repeat(64)}', '${CREATED}', 20, 1)`,
  `INSERT INTO links (short_code, points_to, created_by, accesses, date_created) VALUES ('before', 'https://before.example/', 1, 3, '${CREATED}')`,
  // Counted before the upgrade, not folded yet.
  `INSERT INTO stats_journal (link_id, hour, bot, referrer, country, browser, os, device, visits)
   VALUES (1, 492000, 0, '(direct)', 'ZZ', 'Chrome', 'Linux', 'desktop', 3)`,
];

async function checkUpgraded(store: Store): Promise<void> {
  const webhook = {
    id: `wh_${'1'.repeat(24)}`, accountUid: 1, url: 'https://hooks.example/', events: ['link.visited', 'link.created'] as const,
    dateCreated: new Date().toISOString(), sealedSecret: 'v1.x',
  };
  for (let i = 0; i < 5; i++) assert.equal(await store.webhooks.create({ ...webhook, id: `wh_${String(i).repeat(24)}`, events: [...webhook.events] }), 'created');
  assert.equal(await store.webhooks.create({ ...webhook, id: `wh_${'9'.repeat(24)}`, events: [...webhook.events] }), 'cap_reached');
  assert.deepEqual((await store.readStats({ shortCode: 'before' }, 492000, 492001)).series.map((row) => ({ ...row })), [{ hour: 492000, visits: 3, bots: 0 }]);
  const before = Date.now();
  const hour = Math.floor(before / 3_600_000);
  const visit = { hour, key: 'k', bot: false, referrer: '(direct)', country: 'ZZ', browser: 'Chrome', os: 'Linux', device: 'desktop' } as const;
  assert.equal((await store.resolveLink('before', undefined, visit))?.accesses, 4);
  while (await store.foldStats() > 0);
  assert.ok(await store.webhooks.collectVisits({ now: new Date().toISOString(), maxVisits: 100, foldAbove: 1000 }) >= 1);
  const events = await store.webhooks.claim({ now: Date.now(), leaseMs: 1000, owner: 'upgrade', limit: 10, busyWebhooks: [] });
  assert.equal(events.length, 5, 'one link.visited event per webhook');
  const visits = (JSON.parse(deliveryData(events[0]!.type, events[0]!.data)) as { visits: { ShortCode: string; Time: string }[] }).visits;
  assert.equal(visits.length, 1);
  assert.equal(visits[0]!.ShortCode, 'before');
  assert.ok(Date.parse(visits[0]!.Time) >= before - 1000, 'the count batch\'s second');
}

describe('upgrading to webhooks', () => {
  test('SQLite: a database at migration 3 takes migration 4 and works', async () => {
    const dir = tempDir('shortlink-webhooks-upgrade-');
    const path = join(dir.path, 'old.db');
    const old = new DatabaseSync(path);
    old.exec('PRAGMA journal_mode = WAL');
    old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT (strftime(\'%Y-%m-%dT%H:%M:%fZ\', \'now\')))');
    for (const migration of SQLITE_MIGRATIONS.slice(0, 3)) {
      old.exec(migration.sql);
      old.prepare('INSERT INTO schema_migrations (version) VALUES (?)').run(migration.version);
    }
    old.exec('PRAGMA user_version = 3');
    for (const sql of SEED) old.exec(sql);
    old.close();
    const store = await openSqliteStore({ path });
    try {
      await checkUpgraded(store);
    } finally {
      await store.close();
      dir.remove();
    }
  });

  const gate = postgresGate();
  test('PostgreSQL: a database at migration 6 takes migration 7 and works', { skip: gate.skip }, async () => {
    const database = await createPostgresDatabase(gate.value!);
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      await sql.begin(async (tx) => {
        await tx`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
        for (const migration of POSTGRES_MIGRATIONS.slice(0, 6)) {
          await tx.unsafe(migration.sql);
          await tx`INSERT INTO schema_migrations (version) VALUES (${migration.version})`;
        }
        for (const statement of SEED) await tx.unsafe(statement);
      });
      const store = await openPostgresStore({ url: database.url, max: 2 });
      try {
        await checkUpgraded(store);
      } finally {
        await store.close();
      }
      const versions = await sql<{ version: number }[]>`SELECT version FROM schema_migrations ORDER BY version`;
      assert.deepEqual(versions.map((row) => row.version), POSTGRES_MIGRATIONS.map((migration) => migration.version));
    } finally {
      await sql.end();
      await database.drop();
    }
  });
});
