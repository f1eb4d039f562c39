/**
 * `shortlink admin domains add|list|remove`, straight on the database, on SQLite and (with
 * TEST_DATABASE_URL) PostgreSQL: what they write is what a server's store reads.
 */
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { linkKey } from '../../src/links/link-key.ts';
import type { AdminDomain } from '../../src/http/schemas.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';
import { jsonLines, openDatabase, runCli, seedAccount, tempFolder } from './support.ts';

const gate = postgresGate();
const BASE_URL = 'https://short.example';

/** Writes a link row on the domain with a connection of the test's own (the link routes are not this test's). */
async function withLinkRow(databaseUrl: string, key: string, uid: number, work: () => Promise<void>): Promise<void> {
  const date = new Date().toISOString();
  if (/^postgres(ql)?:/.test(databaseUrl)) {
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    try {
      await sql`INSERT INTO links (short_code, points_to, created_by, date_created) VALUES (${key}, 'https://target.example/', ${uid}, ${date})`;
      await work();
      await sql`DELETE FROM links WHERE short_code = ${key}`;
    } finally {
      await sql.end();
    }
    return;
  }
  const db = new DatabaseSync(databaseUrl, { timeout: 5000 });
  try {
    db.prepare('INSERT INTO links (short_code, points_to, created_by, date_created) VALUES (?, ?, ?, ?)').run(key, 'https://target.example/', uid, date);
    await work();
    db.prepare('DELETE FROM links WHERE short_code = ?').run(key);
  } finally {
    db.close();
  }
}

function domainSuite(engine: string, setUp: () => Promise<{ url: string; remove(): Promise<void> }>, skip: string | false = false): void {
  describe(`domain commands on ${engine}`, { skip }, () => {
    let database: { url: string; remove(): Promise<void> };
    let env: Record<string, string>;
    let uid: number;

    before(async () => {
      database = await setUp();
      env = { DATABASE_URL: database.url, BASE_URL };
      const store = await openDatabase(database.url);
      try {
        uid = (await seedAccount(store, [])).uid;
      } finally {
        await store.close();
      }
    });
    after(() => database?.remove());

    const list = async () => {
      const result = await runCli(['admin', 'domains', 'list'], { env });
      assert.equal(result.code, 0, result.stderr);
      return jsonLines<AdminDomain>(result.stdout);
    };

    test('add registers a domain with its fallbacks; list prints the default first, then by host', async () => {
      const added = await runCli(['admin', 'domains', 'add', 'https://Go.Example.com', '--not-found-url', 'https://www.example.com/404', '--root-url', 'https://www.example.com/'], { env });
      assert.equal(added.code, 0, added.stderr);
      assert.equal(added.stdout, 'Domain go.example.com: https://go.example.com, not found → https://www.example.com/404, root → https://www.example.com/ (holds 0 links).\n');
      assert.equal((await runCli(['admin', 'domains', 'add', 'http://a.example:8080'], { env })).code, 0);
      const listed = await list();
      assert.deepEqual(listed.map((domain) => [domain.Host, domain.Origin, domain.NotFoundUrl, domain.RootUrl, domain.ExpiredUrl]), [
        ['short.example', BASE_URL, null, null, null],
        ['a.example', 'http://a.example:8080', null, null, null],
        ['go.example.com', 'https://go.example.com', 'https://www.example.com/404', 'https://www.example.com/', null],
      ]);
      for (const domain of listed) assert.deepEqual(Object.keys(domain), ['Host', 'Origin', 'NotFoundUrl', 'RootUrl', 'ExpiredUrl', 'Links', 'DateCreated']);
      assert.equal(listed[0]!.DateCreated, null);
      assert.match(listed[2]!.DateCreated!, /Z$/);

      // What the server reads.
      const store = await openDatabase(database.url);
      try {
        assert.deepEqual((await store.domains.listDomains()).map((domain) => domain.host), ['a.example', 'go.example.com']);
      } finally {
        await store.close();
      }

      // Again: the fallbacks are set as given (none omitted is kept).
      assert.equal((await runCli(['admin', 'domains', 'add', 'https://go.example.com', '--expired-url', 'https://www.example.com/gone'], { env })).code, 0);
      const again = (await list()).find((domain) => domain.Host === 'go.example.com')!;
      assert.deepEqual([again.NotFoundUrl, again.RootUrl, again.ExpiredUrl, again.DateCreated], [null, null, 'https://www.example.com/gone', listed[2]!.DateCreated]);
    });

    test('add on the default domain\'s host (BASE_URL\'s) sets its fallbacks', async () => {
      const result = await runCli(['admin', 'domains', 'add', 'https://short.example', '--not-found-url', 'https://www.example.com/missing'], { env });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'The default domain short.example: https://short.example, not found → https://www.example.com/missing (holds 0 links).\n');
      assert.equal((await list())[0]!.NotFoundUrl, 'https://www.example.com/missing');
      assert.equal((await runCli(['admin', 'domains', 'add', 'https://short.example'], { env })).code, 0);
      assert.equal((await list())[0]!.NotFoundUrl, null);
    });

    test('add refuses a bad origin or fallback (exit 1) and a missing ORIGIN (exit 2)', async () => {
      const path = await runCli(['admin', 'domains', 'add', 'https://bad.example/path'], { env });
      assert.equal(path.code, 1);
      assert.match(path.stderr, /shortlink admin domains: the parameter "origin" must be a scheme, a host/);
      const fallback = await runCli(['admin', 'domains', 'add', 'https://bad.example', '--root-url', 'ftp://files.example/'], { env });
      assert.equal(fallback.code, 1);
      assert.match(fallback.stderr, /"root_url" must use http or https/);
      const missing = await runCli(['admin', 'domains', 'add'], { env });
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /missing ORIGIN/);
      const unknown = await runCli(['admin', 'domains', 'rename'], { env });
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /unknown action "rename"/);
      assert.equal((await list()).some((domain) => domain.Host === 'bad.example'), false);
    });

    test('remove refuses a domain in use, an unknown host and the default domain; removes a free one', async () => {
      assert.equal((await runCli(['admin', 'domains', 'add', 'https://busy.example'], { env })).code, 0);
      await withLinkRow(database.url, linkKey('busy.example', 'busy1'), uid, async () => {
        assert.equal((await list()).find((domain) => domain.Host === 'busy.example')!.Links, 1);
        const inUse = await runCli(['admin', 'domains', 'remove', 'busy.example'], { env });
        assert.equal(inUse.code, 1);
        assert.match(inUse.stderr, /the domain still has links/);
      });
      const unknown = await runCli(['admin', 'domains', 'remove', 'nowhere.example'], { env });
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /no domain has this host/);
      const defaultDomain = await runCli(['admin', 'domains', 'remove', 'short.example'], { env });
      assert.equal(defaultDomain.code, 1);
      assert.match(defaultDomain.stderr, /the default domain cannot be removed/);
      const removed = await runCli(['admin', 'domains', 'remove', 'BUSY.example'], { env });
      assert.equal(removed.code, 0, removed.stderr);
      assert.equal(removed.stdout, 'Removed the domain busy.example.\n');
      assert.equal((await list()).some((domain) => domain.Host === 'busy.example'), false);
    });
  });
}

domainSuite('SQLite', async () => {
  const folder = tempFolder();
  return { url: folder.file('domains.db'), remove: async () => folder.remove() };
});

domainSuite('PostgreSQL', async () => {
  const created = await createPostgresDatabase(gate.value!);
  return { url: created.url, remove: () => created.drop() };
}, gate.skip);
