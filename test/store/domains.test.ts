/**
 * The domains port (CONTRACT §8.1) on each engine, through the server's Store and through the
 * CLI's AdminStore on the same database, the same assertions everywhere: a put inserts or
 * replaces every field but DateCreated, the list is by host (the default domain's row '' first),
 * links are counted by the host of their key, and a delete is refused while a link key lies in
 * the domain's range. Hosts carry a random tag, so a database shared between tests is fine.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import postgres from 'postgres';
import { DEFAULT_DOMAIN_ROW, type DomainRecord, type DomainStore } from '../../src/domains/domain-store.ts';
import { linkKey } from '../../src/links/link-key.ts';
import type { AdminStore } from '../../src/store/admin.ts';
import { openPostgresAdminStore } from '../../src/store/postgres/admin.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import { openSqliteAdminStore } from '../../src/store/sqlite/admin.ts';
import { openSqliteStore } from '../../src/store/sqlite/store.ts';
import type { Store } from '../../src/store/store.ts';
import { tempDir } from '../helpers/app.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';

interface OpenedDomains {
  /** The domains port under test. */
  readonly domains: DomainStore;
  /** The server's store on the same database, for accounts. */
  readonly store: Store;
  /**
   * Adds and removes a link row with this key on a connection of the test's own, so that these
   * tests hold whatever the link store's own calls do.
   */
  addLink(key: string, uid: number): Promise<void>;
  removeLink(key: string): Promise<void>;
  cleanup(): Promise<void>;
}

const DATE = '2026-11-26T10:00:00.000Z';

function domainContract(name: string, open: () => Promise<OpenedDomains>): void {
  describe(`domains in the store: ${name}`, () => {
    let domains: DomainStore;
    let store: Store;
    let opened: OpenedDomains;
    let tag: string;
    beforeEach(async () => {
      opened = await open();
      ({ domains, store } = opened);
      tag = randomBytes(5).toString('hex');
    });
    afterEach(() => opened.cleanup());

    const host = (label: string) => `${label}-${tag}.example`;
    const domain = (h: string, fields: Partial<DomainRecord> = {}): DomainRecord => ({
      host: h, origin: `https://${h}`, notFoundUrl: null, rootUrl: null, expiredUrl: null, dateCreated: DATE, ...fields,
    });
    const account = () => store.createAccount({ codeHash: randomBytes(32).toString('hex'), dateCreated: DATE, maxLinks: 100 });
    async function link(uid: number, domainHost: string | null, code: string): Promise<string> {
      const key = linkKey(domainHost, code);
      await opened.addLink(key, uid);
      return key;
    }
    const mine = (records: readonly DomainRecord[]) => records.filter((record) => record.host.endsWith(`-${tag}.example`)).map((record) => ({ ...record }));

    test('putDomain inserts a domain and answers it as stored; listDomains lists it by host', async () => {
      const b = domain(host('b'), { notFoundUrl: 'https://www.example/404', rootUrl: 'https://www.example/', expiredUrl: 'https://www.example/gone' });
      const a = domain(host('a'), { origin: `http://${host('a')}:8080` });
      assert.deepEqual({ ...await domains.putDomain(b) }, b);
      assert.deepEqual({ ...await domains.putDomain(a) }, a);
      assert.deepEqual(mine(await domains.listDomains()), [a, b]);
    });

    test('putDomain replaces every field of an existing domain but its DateCreated', async () => {
      const h = host('go');
      await domains.putDomain(domain(h, { notFoundUrl: 'https://www.example/404', rootUrl: 'https://www.example/' }));
      const replaced = await domains.putDomain(domain(h, { origin: `http://${h}`, expiredUrl: 'https://www.example/gone', dateCreated: '2027-01-01T00:00:00.000Z' }));
      const expected = domain(h, { origin: `http://${h}`, expiredUrl: 'https://www.example/gone' });
      assert.deepEqual({ ...replaced }, expected);
      assert.deepEqual(mine(await domains.listDomains()), [expected]);
    });

    test('the default domain\'s row (host \'\') is stored like any other and listed first', async () => {
      const fallbacks = { host: DEFAULT_DOMAIN_ROW, origin: '', notFoundUrl: `https://www.example/${tag}`, rootUrl: null, expiredUrl: null, dateCreated: null };
      await domains.putDomain(domain(host('z')));
      assert.deepEqual({ ...await domains.putDomain(fallbacks) }, fallbacks);
      const listed = await domains.listDomains();
      assert.deepEqual({ ...listed[0] }, fallbacks);
      assert.deepEqual(listed.map((record) => record.host), [...listed.map((record) => record.host)].sort());
    });

    test('countLinksByDomain counts the links of each host by their key; the default domain\'s under \'\'', async () => {
      const owner = await account();
      const before = (await domains.countLinksByDomain()).get(DEFAULT_DOMAIN_ROW) ?? 0;
      const [one, two, empty] = [host('one'), host('two'), host('empty')];
      await domains.putDomain(domain(one));
      await domains.putDomain(domain(two));
      await domains.putDomain(domain(empty));
      await link(owner.uid, one, `a${tag}`);
      await link(owner.uid, one, `b${tag}`);
      await link(owner.uid, two, `a${tag}`);
      await link(owner.uid, null, `a${tag}`);
      const counts = await domains.countLinksByDomain();
      assert.equal(counts.get(one), 2);
      assert.equal(counts.get(two), 1);
      assert.equal(counts.has(empty), false, 'a host without links is absent');
      assert.equal(counts.get(DEFAULT_DOMAIN_ROW), before + 1);
    });

    test('deleteDomain refuses while a link uses the domain, tells an unknown host apart, and deletes once free', async () => {
      const owner = await account();
      const h = host('busy');
      assert.equal(await domains.deleteDomain(h), 'not_found');
      await domains.putDomain(domain(h));
      const key = await link(owner.uid, h, `c${tag}`);
      assert.equal(await domains.deleteDomain(h), 'in_use');
      assert.equal(mine(await domains.listDomains()).length, 1, 'still registered');
      await opened.removeLink(key);
      assert.equal(await domains.deleteDomain(h), 'deleted');
      assert.deepEqual(mine(await domains.listDomains()), []);
      assert.equal(await domains.deleteDomain(h), 'not_found');
    });

    test('deleteDomain looks only at the domain\'s own keys, not at hosts it is a prefix of', async () => {
      const owner = await account();
      const h = host('pre');
      await domains.putDomain(domain(h));
      // Keys that sort next to `host/`: a longer host with '-', '.' or '0' after it, and a default-domain code.
      await link(owner.uid, `${h}-x`, `d${tag}`);
      await link(owner.uid, `${h}.org`, `d${tag}`);
      await link(owner.uid, `${h}0`, `d${tag}`);
      await link(owner.uid, null, `pre-${tag}`);
      assert.equal(await domains.deleteDomain(h), 'deleted');
    });
  });
}

function sqliteFile() {
  const dir = tempDir('shortlink-domains-');
  return { path: join(dir.path, 'store.db'), remove: dir.remove };
}

/** Link rows written on a SQLite connection of the test's own. */
function sqliteLinks(path: string) {
  const db = new DatabaseSync(path, { timeout: 5000 });
  const insert = db.prepare('INSERT INTO links (short_code, points_to, created_by, date_created) VALUES (?, ?, ?, ?)');
  const remove = db.prepare('DELETE FROM links WHERE short_code = ?');
  return {
    addLink: async (key: string, uid: number) => void insert.run(key, 'https://target.example/', uid, DATE),
    removeLink: async (key: string) => void remove.run(key),
    close: () => db.close(),
  };
}

domainContract('sqlite store', async () => {
  const file = sqliteFile();
  const store = await openSqliteStore({ path: file.path, checkpointer: false });
  const links = sqliteLinks(file.path);
  return { domains: store.domains, store, ...links, async cleanup() { links.close(); await store.close(); file.remove(); } };
});

domainContract('sqlite admin store', async () => {
  const file = sqliteFile();
  const admin: AdminStore = await openSqliteAdminStore({ path: file.path });
  const store = await openSqliteStore({ path: file.path, checkpointer: false });
  const links = sqliteLinks(file.path);
  return { domains: admin.domains, store, ...links, async cleanup() { links.close(); await admin.close(); await store.close(); file.remove(); } };
});

/** Link rows written on a PostgreSQL connection of the test's own. */
function postgresLinks(url: string) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  return {
    addLink: async (key: string, uid: number) => void await sql`
      INSERT INTO links (short_code, points_to, created_by, date_created) VALUES (${key}, 'https://target.example/', ${uid}, ${DATE})`,
    removeLink: async (key: string) => void await sql`DELETE FROM links WHERE short_code = ${key}`,
    close: () => sql.end(),
  };
}

const gate = postgresGate();
describe('PostgreSQL', { skip: gate.skip }, () => {
  let database: { url: string; drop(): Promise<void> };
  before(async () => {
    database = await createPostgresDatabase(gate.value!);
  });
  after(async () => {
    await database?.drop();
  });
  domainContract('postgres store', async () => {
    const store = await openPostgresStore({ url: database.url, max: 4 });
    const links = postgresLinks(database.url);
    return { domains: store.domains, store, ...links, async cleanup() { await links.close(); await store.close(); } };
  });
  domainContract('postgres admin store', async () => {
    const store = await openPostgresStore({ url: database.url, max: 4 });
    const admin = await openPostgresAdminStore({ url: database.url });
    const links = postgresLinks(database.url);
    return { domains: admin.domains, store, ...links, async cleanup() { await links.close(); await admin.close(); await store.close(); } };
  });
});
