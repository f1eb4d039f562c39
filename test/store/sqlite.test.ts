import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { hashAccessCode } from '../../src/accounts/access-code.ts';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { openSqliteStore } from '../../src/store/sqlite/store.ts';
import type { Store } from '../../src/store/store.ts';
import { tempDir } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { reopenableStore, storeContract, type OpenedStore } from './contract.ts';

/** A SQLite file in its own temp folder; every store opened on it is closed by cleanup(). */
function sqliteFile(): {
  path: string;
  open(options?: { shareReads?: boolean; checkpointer?: boolean }): Promise<Store>;
  cleanup(): Promise<void>;
} {
  const dir = tempDir('shortlink-sqlite-');
  const path = join(dir.path, 'store.db');
  const stores: Store[] = [];
  return {
    path,
    async open(options = {}) {
      const store = await openSqliteStore({ path, ...options });
      stores.push(store);
      return store;
    },
    async cleanup() {
      for (const store of stores) await store.close();
      dir.remove();
    },
  };
}

storeContract('sqlite file', async (): Promise<OpenedStore> => {
  const file = sqliteFile();
  return { store: await file.open(), reopen: () => file.open(), cleanup: file.cleanup };
});

// As a WORKERS process opens it: every read its own transaction.
storeContract('sqlite file, reads not shared', async (): Promise<OpenedStore> => {
  const file = sqliteFile();
  const options = { shareReads: false, checkpointer: false };
  return { store: await file.open(options), reopen: () => file.open(options), cleanup: file.cleanup };
});

storeContract('sqlite in memory', async (): Promise<OpenedStore> => {
  const store = await openSqliteStore({ path: ':memory:' });
  return { store, cleanup: () => store.close() };
});

storeContract('sqlite file with synchronous=full', async (): Promise<OpenedStore> => {
  const dir = tempDir('shortlink-sqlite-full-');
  const path = join(dir.path, 'nested', 'folder', 'store.db');
  return reopenableStore(() => openSqliteStore({ path, synchronous: 'full', checkpointer: false }), dir.remove);
});

/** Reads the database with a second, independent connection. */
function inspect<R>(path: string, read: (db: DatabaseSync) => R): R {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

describe('sqlite store', () => {
  test('the visits of one link, second and classes wait for a link.visited webhook as one row, whatever the batches (ADR 24)', async () => {
    const file = sqliteFile();
    try {
      const store = await file.open();
      const account = await store.createAccount({ codeHash: 'w'.repeat(64), dateCreated: '2026-01-01T00:00:00.000Z', maxLinks: 20 });
      await store.webhooks.create({
        id: `wh_${'7'.repeat(24)}`, accountUid: account.uid, url: 'https://hooks.example/', events: ['link.visited'],
        dateCreated: '2026-01-01T00:00:00.000Z', sealedSecret: 'v1.x',
      });
      await store.createLink({ shortCode: 'busy', pointsTo: 'https://a.example/', createdBy: account.uid, dateCreated: '2026-01-01T00:00:00.000Z' });
      const hour = Math.floor(Date.now() / 3_600_000);
      const visit = { hour, key: 'k', bot: false, referrer: '(direct)', country: 'ZZ', browser: 'Chrome', os: 'Linux', device: 'desktop' } as const;
      const second = new Date().toISOString().slice(0, 19);
      // Three batches (each awaited) in one second, and one in the next.
      for (const ms of ['.100Z', '.500Z', '.900Z']) await store.resolveLink('busy', `${second}${ms}`, visit);
      const next = new Date(Date.parse(`${second}.000Z`) + 1000).toISOString();
      await store.resolveLink('busy', next, visit);
      assert.ok(await store.webhooks.collectVisits({ now: new Date().toISOString(), maxVisits: 100, foldAbove: 1000 }) >= 1);
      const [event] = await store.webhooks.claim({ now: Date.now(), leaseMs: 1000, owner: 't', limit: 10, busyWebhooks: [] });
      const stored = JSON.parse(event!.data) as { items: { Time: string }[]; counts: number[] };
      assert.deepEqual(stored.items.map((item) => item.Time), [`${second}.000Z`, next]);
      assert.deepEqual(stored.counts, [3, 1]);
    } finally {
      await file.cleanup();
    }
  });

  test('puts the database in WAL mode', async () => {
    const file = sqliteFile();
    try {
      await file.open();
      const mode = inspect(file.path, (db) => db.prepare('PRAGMA journal_mode').get() as { journal_mode: string });
      assert.equal(mode.journal_mode, 'wal');
    } finally {
      await file.cleanup();
    }
  });

  test('creates missing parent folders of the database file', async () => {
    const dir = tempDir('shortlink-sqlite-');
    const store = await openSqliteStore({ path: join(dir.path, 'a', 'b', 'c', 'store.db') });
    try {
      await store.ping();
      assert.deepEqual(readdirSync(join(dir.path, 'a', 'b', 'c')).includes('store.db'), true);
    } finally {
      await store.close();
      dir.remove();
    }
  });

  test('records the schema version and applies migrations only once when opened again', async () => {
    const file = sqliteFile();
    try {
      const first = await file.open();
      const account = await first.createAccount({ codeHash: 'a'.repeat(64), dateCreated: '2026-01-01T00:00:00.000Z', maxLinks: 20 });
      assert.equal(await first.createLink({ shortCode: 'kept1', pointsTo: 'https://a.example/', createdBy: account.uid, dateCreated: '2026-01-01T00:00:00.000Z' }), 'created');
      await first.close();

      // Opening an up-to-date database again, twice, must neither fail nor reset anything.
      for (let i = 0; i < 2; i++) {
        const again = await file.open();
        assert.equal((await again.findLink('kept1'))?.pointsTo, 'https://a.example/');
        await again.close();
      }
      const version = inspect(file.path, (db) => db.prepare('PRAGMA user_version').get() as { user_version: number });
      assert.equal(version.user_version, SQLITE_MIGRATIONS.length);
      const tables = inspect(file.path, (db) =>
        (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[])
          .map((row) => row.name));
      assert.deepEqual(tables, ['accounts', 'api_keys', 'domains', 'links', 'schema_migrations', 'stats_journal', 'stats_rollups', 'stats_tuples', 'stream_slots', 'webhook_deliveries', 'webhook_events', 'webhook_visits', 'webhooks']);
    } finally {
      await file.cleanup();
    }
  });

  test('refuses to open a damaged file, naming it and the first problem quick_check finds', async () => {
    const file = sqliteFile();
    try {
      const store = await file.open();
      const account = await store.createAccount({ codeHash: 'd'.repeat(64), dateCreated: '2026-01-01T00:00:00.000Z', maxLinks: 1000 });
      for (let i = 0; i < 300; i++) {
        await store.createLink({ shortCode: `dmg${i}`, pointsTo: `https://a.example/${i}/${'x'.repeat(100)}`, createdBy: account.uid, dateCreated: '2026-01-01T00:00:00.000Z' });
      }
      await store.close();
      // Garbage over the links table's root page, as a torn write or a bad disk leaves it.
      const { rootpage, size } = inspect(file.path, (db) => ({
        rootpage: (db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'links'").get() as { rootpage: number }).rootpage,
        size: (db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size,
      }));
      const fd = openSync(file.path, 'r+');
      writeSync(fd, Buffer.alloc(size, 0x5a), 0, size, (rootpage - 1) * size);
      closeSync(fd);
      await assert.rejects(file.open(), (error: Error) => {
        assert.equal(error.name, 'DatabaseDamagedError');
        assert.match(error.message, /^database damaged: .+store\.db: .+; restore it from a backup/);
        assert.doesNotMatch(error.message, /\n/, 'one line');
        return true;
      });
    } finally {
      await file.cleanup();
    }
  });

  test('two stores may open the same file at once (concurrent starts)', async () => {
    const file = sqliteFile();
    try {
      const [first, second] = await Promise.all([file.open(), file.open()]);
      await first.ping();
      await second.ping();
    } finally {
      await file.cleanup();
    }
  });

  test('reads of one event-loop turn share one snapshot; the next turn sees what others committed meanwhile', async () => {
    const file = sqliteFile();
    const other = new DatabaseSync(file.path, { timeout: 1000 });
    try {
      const store = await file.open();
      const account = await store.createAccount({ codeHash: 'a'.repeat(64), dateCreated: '2026-01-01T00:00:00.000Z', maxLinks: 5 });
      assert.equal(await store.createLink({ shortCode: 'snap1', pointsTo: 'https://one.example/', createdBy: account.uid, dateCreated: '2026-01-01T00:00:00.000Z' }), 'created');

      // One synchronous stretch: the store reads, another connection commits, the store reads again.
      const before = store.listLinks(account.uid);
      other.prepare('INSERT INTO links (short_code, points_to, created_by, date_created) VALUES (?, ?, ?, ?)')
        .run('snap2', 'https://two.example/', account.uid, '2026-01-01T00:00:00.000Z');
      const sameTurn = store.listLinks(account.uid);
      assert.deepEqual((await before).map((l) => l.shortCode), ['snap1']);
      assert.deepEqual((await sameTurn).map((l) => l.shortCode), ['snap1'], 'the open read transaction did not block the writer, nor see it');

      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual((await store.listLinks(account.uid)).map((l) => l.shortCode), ['snap1', 'snap2']);

      // A write ends the shared read first; what it wrote is seen right after.
      const reading = store.listLinks(account.uid);
      const created = store.createLink({ shortCode: 'snap3', pointsTo: 'https://three.example/', createdBy: account.uid, dateCreated: '2026-01-01T00:00:00.000Z' });
      assert.equal((await reading).length, 2);
      assert.equal(await created, 'created');
      assert.deepEqual((await store.listLinks(account.uid)).map((l) => l.shortCode), ['snap1', 'snap2', 'snap3']);
    } finally {
      other.close();
      await file.cleanup();
    }
  });

  test('with reads not shared (WORKERS), a read sees what another process committed just before it', async () => {
    const file = sqliteFile();
    const other = new DatabaseSync(file.path, { timeout: 1000 });
    try {
      const store = await file.open({ shareReads: false });
      const account = await store.createAccount({ codeHash: 'b'.repeat(64), dateCreated: '2026-01-01T00:00:00.000Z', maxLinks: 5 });
      // One synchronous stretch, as a request arriving in the same turn would see it.
      const before = store.findLink('fresh1');
      other.prepare('INSERT INTO links (short_code, points_to, created_by, date_created) VALUES (?, ?, ?, ?)')
        .run('fresh1', 'https://one.example/', account.uid, '2026-01-01T00:00:00.000Z');
      const after = store.findLink('fresh1');
      const accountSeen = store.findAccountByCodeHash('b'.repeat(64));
      assert.equal(await before, undefined);
      assert.equal((await after)?.pointsTo, 'https://one.example/');
      assert.equal((await accountSeen)?.uid, account.uid);
    } finally {
      other.close();
      await file.cleanup();
    }
  });

  test('two stores on one file share the cap, the shortcode space and the counts', async () => {
    // As two processes sharing the file would: nothing may be settled in process memory.
    const file = sqliteFile();
    try {
      const first = await file.open();
      const second = await file.open();
      const account = await first.createAccount({ codeHash: 'b'.repeat(64), dateCreated: '2026-01-01T00:00:00.000Z', maxLinks: 3 });
      const other = await second.createAccount({ codeHash: 'c'.repeat(64), dateCreated: '2026-01-01T00:00:00.000Z', maxLinks: 3 });
      assert.ok(other.uid > account.uid);
      const newLink = (shortCode: string, createdBy = account.uid) =>
        ({ shortCode, pointsTo: 'https://example.com/', createdBy, dateCreated: '2026-01-01T00:00:00.000Z' });

      const results = await Promise.all([
        first.createLink(newLink('share1')), second.createLink(newLink('share2')),
        first.createLink(newLink('share3')), second.createLink(newLink('share4')),
      ]);
      assert.deepEqual(results, ['created', 'created', 'created', 'cap_reached']);
      assert.equal(await second.createLink(newLink('share1', other.uid)), 'taken');

      const counts = await Promise.all(
        Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? first : second).resolveLink('share1')),
      );
      assert.deepEqual(
        counts.map((row) => row?.accesses).sort((a, b) => a! - b!),
        Array.from({ length: 50 }, (_, i) => i + 1),
      );
      assert.equal((await second.deleteLink('share1', account.uid)).status, 'deleted');
      assert.equal(await first.findLink('share1'), undefined);
      assert.equal(await first.createLink(newLink('share5')), 'created');
    } finally {
      await file.cleanup();
    }
  });

  test('keeps accounts, links and counts across close and reopen', async () => {
    const file = sqliteFile();
    try {
      const first = await file.open();
      const accounts = createAccountService({ store: first, clock: () => new Date(), defaultMaxLinks: 20 });
      const account = await accounts.create();
      await first.createLink({ shortCode: 'persist', pointsTo: 'https://p.example/', createdBy: account.uid, dateCreated: account.dateCreated });
      await Promise.all(Array.from({ length: 7 }, () => first.resolveLink('persist')));
      await first.close();

      const second = await file.open();
      const again = createAccountService({ store: second, clock: () => new Date(), defaultMaxLinks: 5 });
      const found = await again.authenticate(account.accessCode.toUpperCase());
      assert.deepEqual({ ...found }, { ...account });
      assert.deepEqual({ ...(await second.findLink('persist')) }, {
        shortCode: 'persist', pointsTo: 'https://p.example/', createdBy: account.uid, accesses: 7,
      });
    } finally {
      await file.cleanup();
    }
  });

  test('never stores an access code in plain text, only its SHA-256 hex digest', async () => {
    const file = sqliteFile();
    try {
      const store = await file.open();
      const accounts = createAccountService({ store, clock: () => new Date(), defaultMaxLinks: 20 });
      const created = await Promise.all(Array.from({ length: 5 }, () => accounts.create()));

      const forms = (code: string) => [code, code.toUpperCase(), code.replaceAll('-', ''), code.replaceAll('-', '').toUpperCase()];
      const scanFiles = (when: string) => {
        // The main file, and while open the WAL and shared-memory files too.
        const files = readdirSync(join(file.path, '..')).map((name) => join(file.path, '..', name));
        assert.ok(files.length > 0);
        const bytes = Buffer.concat(files.map((path) => readFileSync(path)));
        for (const { accessCode } of created) {
          for (const form of forms(accessCode)) {
            assert.equal(bytes.includes(form, 0, 'latin1'), false, `${when}: access code found in the database files`);
            assert.equal(bytes.includes(form, 0, 'utf16le'), false, `${when}: access code found as UTF-16`);
          }
          assert.equal(bytes.includes(Buffer.from(accessCode.replaceAll('-', ''), 'hex')), false, `${when}: raw UUID bytes found`);
        }
        return bytes;
      };

      // While open: the rows live in the WAL.
      const whileOpen = scanFiles('while open');
      assert.equal(created.every(({ accessCode }) => whileOpen.includes(hashAccessCode(accessCode))), true);

      const rows = inspect(file.path, (db) => db.prepare('SELECT * FROM accounts ORDER BY uid').all() as Record<string, unknown>[]);
      assert.equal(rows.length, 5);
      for (const [i, row] of rows.entries()) {
        const { accessCode } = created[i]!;
        assert.equal(row.code_hash, hashAccessCode(accessCode));
        assert.match(String(row.code_hash), /^[0-9a-f]{64}$/);
        for (const value of Object.values(row)) {
          for (const form of forms(accessCode)) {
            assert.equal(String(value).toLowerCase().includes(form.toLowerCase()), false);
          }
        }
      }

      // After close: everything has been checkpointed into the main file.
      await store.close();
      const afterClose = scanFiles('after close');
      assert.equal(created.every(({ accessCode }) => afterClose.includes(hashAccessCode(accessCode))), true);
    } finally {
      await file.cleanup();
    }
  });
});

describe('the WAL checkpointer', () => {
  test('runs on a thread of its own by default, and not at all with checkpointer: false', async (t) => {
    const threads: unknown[] = [];
    const onThread = (message: unknown) => threads.push(message);
    subscribe('worker_threads', onThread);
    t.after(() => unsubscribe('worker_threads', onThread));
    const file = sqliteFile();
    t.after(() => file.cleanup());

    await file.open({ checkpointer: false });
    assert.equal(threads.length, 0, 'checkpointer: false starts no thread');
    await file.open();
    assert.equal(threads.length, 1, 'the default starts one');
  });

  test('moves committed pages into the main file while the store is open', async (t) => {
    const file = sqliteFile();
    t.after(() => file.cleanup());
    const store = await file.open();
    const accounts = createAccountService({ store, clock: () => new Date(), defaultMaxLinks: 20 });
    const { accessCode } = await accounts.create();
    // SQLite's own automatic checkpoint waits for 20000 pages: only the thread gets it there this soon.
    await waitFor(() => readFileSync(file.path).includes(hashAccessCode(accessCode)), 'the row in the main file', { timeoutMs: 60_000, intervalMs: 50 });
  });
});
