/**
 * A database of the release before domains, routing and protected links (every migration
 * before "domains, routing and protected links", with accounts, links and counts in it)
 * opens with the current code, takes that migration (and the later ones) once, and its links keep working on the
 * default domain: redirect and resolve as before (counted from their stored count), listed
 * with `Domain` null, no forwarding, no password, no rules; a domain registered afterwards
 * does not capture them, and the same code can then be made on it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, test } from 'node:test';
import postgres from 'postgres';
import { hashAccessCode } from '../../src/accounts/access-code.ts';
import { buildApp } from '../../src/app.ts';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { openSqliteStore } from '../../src/store/sqlite/store.ts';
import type { Store } from '../../src/store/store.ts';
import type { LinkDetails } from '../../src/http/schemas.ts';
import { tempDir, testConfig, TEST_BASE_URL } from '../helpers/app.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';

const CODE = '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b';
const ADMIN_TOKEN = 'upgrade-admin-token-0123456789abcdefghij';
const CREATED = '2026-11-20T08:00:00.000Z';
const SEED = [
  `INSERT INTO accounts (code_hash, date_created, max_links, link_count) VALUES ('${hashAccessCode(CODE)}', '${CREATED}', 20, 2)`,
  `INSERT INTO links (short_code, points_to, created_by, accesses, date_created) VALUES
     ('before1', 'https://before.example/one', 1, 7, '${CREATED}'),
     ('before2', 'https://before.example/two', 1, 0, '${CREATED}')`,
];

/** The migrations of the release before domains (every one before "domains, routing and protected links"). */
function beforeDomains<M extends { name: string }>(migrations: readonly M[]): readonly M[] {
  const at = migrations.findIndex((migration) => migration.name === 'domains, routing and protected links');
  assert.ok(at > 0, 'the migration under test exists');
  return migrations.slice(0, at);
}

/** The same checks on either engine, through the HTTP app on the upgraded store. */
async function checkUpgraded(store: Store): Promise<void> {
  const app = await buildApp({ config: testConfig({ adminToken: ADMIN_TOKEN }), store });
  try {
    await app.ready();
    const auth = { authorization: `Bearer ${CODE}` };
    const redirect = await app.inject({ method: 'GET', url: '/before1' });
    assert.equal(redirect.statusCode, 302);
    assert.equal(redirect.headers.location, 'https://before.example/one');
    const resolved = await app.inject({ method: 'GET', url: '/v1/get/before1', query: { domain: new URL(TEST_BASE_URL).hostname } });
    assert.equal(resolved.statusCode, 200, resolved.body);
    assert.equal((resolved.json() as { Accesses: number }).Accesses, 9, 'counted on from the stored count');

    const listed = await app.inject({ method: 'GET', url: '/v1/links', headers: auth });
    assert.equal(listed.statusCode, 200, listed.body);
    const links = listed.json() as LinkDetails[];
    assert.deepEqual(links.map((l) => [l.ShortCode, l.Domain, l.ForwardQuery, l.Protected, l.Rules]), [
      ['before1', null, false, false, []],
      ['before2', null, false, false, []],
    ]);

    const put = await app.inject({ method: 'PUT', url: '/v1/admin/domain', query: { origin: 'https://go.example.com' }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal((await app.inject({ method: 'GET', url: '/before2', headers: { host: 'go.example.com' } })).statusCode, 404, 'an old link is on the default domain only');
    assert.equal((await app.inject({ method: 'GET', url: '/before2', headers: { host: 'anything.example' } })).statusCode, 302);
    const same = await app.inject({ method: 'GET', url: '/v1/link', query: { url: 'https://new.example/', short: 'before2', domain: 'go.example.com' }, headers: auth });
    assert.equal(same.statusCode, 200, same.body);
    assert.equal(same.body, 'https://go.example.com/before2');
    const taken = await app.inject({ method: 'GET', url: '/v1/link', query: { url: 'https://new.example/', short: 'before2' }, headers: auth });
    assert.equal(taken.statusCode, 409);
    const locked = await app.inject({ method: 'PATCH', url: '/v1/link', query: { short: 'before2', password: 'a fine password' }, headers: auth });
    assert.equal(locked.statusCode, 200, locked.body);
    assert.equal((await app.inject({ method: 'GET', url: '/before2' })).statusCode, 200, 'the password form');
  } finally {
    await app.close();
  }
}

describe('upgrading to domains, routing and protected links', () => {
  test('SQLite: a database of the release before domains takes the later migrations and its links resolve on the default domain', async () => {
    const dir = tempDir('shortlink-domains-upgrade-');
    const path = join(dir.path, 'old.db');
    const old = new DatabaseSync(path);
    old.exec('PRAGMA journal_mode = WAL');
    old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT (strftime(\'%Y-%m-%dT%H:%M:%fZ\', \'now\')))');
    const previous = beforeDomains(SQLITE_MIGRATIONS);
    for (const migration of previous) {
      old.exec(migration.sql);
      old.prepare('INSERT INTO schema_migrations (version) VALUES (?)').run(migration.version);
    }
    old.exec(`PRAGMA user_version = ${previous.length}`);
    for (const sql of SEED) old.exec(sql);
    old.close();
    const store = await openSqliteStore({ path });
    try {
      await checkUpgraded(store);
    } finally {
      await store.close();
    }
    const reopened = new DatabaseSync(path);
    try {
      const versions = reopened.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[];
      assert.deepEqual(versions.map((row) => row.version), SQLITE_MIGRATIONS.map((migration) => migration.version));
    } finally {
      reopened.close();
      dir.remove();
    }
  });

  const gate = postgresGate();
  test('PostgreSQL: a database of the release before domains takes the later migrations and its links resolve on the default domain', { skip: gate.skip }, async () => {
    const database = await createPostgresDatabase(gate.value!);
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      await sql.begin(async (tx) => {
        await tx`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
        for (const migration of beforeDomains(POSTGRES_MIGRATIONS)) {
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
