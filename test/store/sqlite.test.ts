import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { hashAccessCode } from '../../src/accounts/access-code.ts';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { deleteTupleChunkSql, tupleChunkLinkHoursSql, tuplesToRollupsSql } from '../../src/store/stats-sql.ts';
import { openSqliteStore } from '../../src/store/sqlite/store.ts';
import { visitClassIds } from '../../src/store/sqlite/visit-classes.ts';
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
      assert.deepEqual(tables, ['accounts', 'api_keys', 'domains', 'links', 'schema_migrations', 'stats_journal', 'stats_rollups', 'stats_tuples', 'stream_slots', 'visit_classes', 'webhook_deliveries', 'webhook_events', 'webhook_visits', 'webhooks']);
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

describe('statistics of the hour in the link row (ADR 29)', () => {
  const HOUR = 500_000;
  const DAY = '2026-01-01T00:00:00.000Z';
  const visitOf = (hour: number, referrer: string, bot = false) =>
    ({ hour, key: `${hour}\n${referrer}\n${bot}`, bot, referrer, country: 'ZZ', browser: 'Chrome', os: 'Linux', device: bot ? 'bot' : 'desktop' }) as const;
  const CLASSES = (referrer: string, bot = false) => `${bot ? 1 : 0}\n${referrer}\nZZ\nChrome\nLinux\n${bot ? 'bot' : 'desktop'}`;
  /**
   * A row's tallies (`classes<TAB>visits<RS>` each, `classes<RS>` for one visit; classes by
   * their number in visit_classes, base 36), summed per classes in full.
   */
  const summed = (text: string, names: ReadonlyMap<string, string>) => {
    const sums: Record<string, number> = {};
    for (const entry of text.split('\u001e').filter(Boolean)) {
      const [id, visits = '1'] = entry.split('\t') as [string, string?];
      const key = names.get(id) ?? `unknown number ${id}`;
      sums[key] = (sums[key] ?? 0) + Number(visits);
    }
    return sums;
  };
  const textsOf = (path: string) => inspect(path, (db) =>
    (db.prepare('SELECT short_code, tallies_hour, hour_tallies FROM links ORDER BY id').all() as { short_code: string; tallies_hour: number | null; hour_tallies: string | null }[]));
  const namesOf = (path: string) => new Map(inspect(path, (db) =>
    (db.prepare('SELECT id, classes FROM visit_classes').all() as { id: number; classes: string }[]).map((row) => [row.id.toString(36), row.classes] as const)));
  const rowsOf = (path: string) => {
    const names = namesOf(path);
    return textsOf(path).map((row) => [row.short_code, row.tallies_hour, row.hour_tallies === null ? null : summed(row.hour_tallies, names)]);
  };
  const tuplesOf = (path: string) => inspect(path, (db) =>
    (db.prepare('SELECT hour, referrer, bot, visits FROM stats_tuples ORDER BY hour, referrer, bot').all() as object[]).map((row) => ({ ...row })));
  const seriesOf = async (store: Store, scope: { shortCode: string } | { accountUid: number }, from = HOUR - 24, to = HOUR + 24) =>
    (await store.readStats(scope, from, to)).series.map((row) => ({ ...row }));

  async function withLinks(codes: readonly string[], work: (store: Store, path: string, uid: number) => Promise<void>): Promise<void> {
    const file = sqliteFile();
    try {
      const store = await file.open();
      const account = await store.createAccount({ codeHash: 'h'.repeat(64), dateCreated: DAY, maxLinks: 100_000 });
      for (const shortCode of codes) await store.createLink({ shortCode, pointsTo: 'https://a.example/', createdBy: account.uid, dateCreated: DAY });
      await work(store, file.path, account.uid);
    } finally {
      await file.cleanup();
    }
  }

  test('a visit\'s classes wait in its link\'s row, written with the count, and every read adds them', async () => {
    await withLinks(['one', 'two'], async (store, path, uid) => {
      // Issued together: one count batch, each link's tallies summed per classes.
      const answered = await Promise.all([
        store.resolveLink('one', undefined, visitOf(HOUR, 'a.example')),
        store.resolveLink('one', undefined, visitOf(HOUR, 'a.example')),
        store.resolveLink('one', undefined, visitOf(HOUR, '(direct)', true)),
        store.resolveLink('two', undefined, visitOf(HOUR, 'b.example')),
        store.resolveLink('one'),
      ]);
      assert.deepEqual(answered.map((resolved) => resolved?.accesses).sort(), [1, 2, 3, 4, 1].sort());
      assert.deepEqual(rowsOf(path), [
        ['one', HOUR, { [CLASSES('a.example')]: 2, [CLASSES('(direct)', true)]: 1 }],
        ['two', HOUR, { [CLASSES('b.example')]: 1 }],
      ]);
      assert.deepEqual(tuplesOf(path), [], 'no tuple written');
      assert.deepEqual(await seriesOf(store, { shortCode: 'one' }), [{ hour: HOUR, visits: 3, bots: 1 }]);
      assert.deepEqual(await seriesOf(store, { accountUid: uid }), [{ hour: HOUR, visits: 4, bots: 1 }]);
      assert.deepEqual(await seriesOf(store, { accountUid: uid }, HOUR + 1, HOUR + 2), [], 'outside the hours asked for');
      const values = (await store.readStats({ accountUid: uid }, HOUR, HOUR + 1)).values.map((row) => ({ ...row }))
        .filter((row) => row.dimension === 1).sort((a, b) => a.value.localeCompare(b.value));
      assert.deepEqual(values, [
        { dimension: 1, value: '(direct)', visits: 1 },
        { dimension: 1, value: 'a.example', visits: 2 },
        { dimension: 1, value: 'b.example', visits: 1 },
      ]);
      assert.deepEqual(rowsOf(path)[0]![2], { [CLASSES('a.example')]: 2, [CLASSES('(direct)', true)]: 1 }, 'reading writes nothing');
    });
  });

  test('a visit of a later hour hands the row\'s earlier hour to the tuples; reads sum both', async () => {
    await withLinks(['one'], async (store, path) => {
      await store.resolveLink('one', undefined, visitOf(HOUR, 'a.example'));
      await store.resolveLink('one', undefined, visitOf(HOUR, 'a.example'));
      await store.resolveLink('one', undefined, visitOf(HOUR + 1, 'b.example'));
      assert.deepEqual(rowsOf(path), [['one', HOUR + 1, { [CLASSES('b.example')]: 1 }]]);
      assert.deepEqual(tuplesOf(path), [{ hour: HOUR, referrer: 'a.example', bot: 0, visits: 2 }]);
      assert.deepEqual(await seriesOf(store, { shortCode: 'one' }), [{ hour: HOUR, visits: 2, bots: 0 }, { hour: HOUR + 1, visits: 1, bots: 0 }]);
      // One batch with visits of two hours: the latest hour's in the row, the other's in the tuples.
      await Promise.all([
        store.resolveLink('one', undefined, visitOf(HOUR + 1, 'c.example')),
        store.resolveLink('one', undefined, visitOf(HOUR + 2, 'd.example')),
      ]);
      const [[, hour]] = rowsOf(path) as [[string, number]];
      assert.ok(hour === HOUR + 2 || hour === HOUR + 1, `row of hour ${hour}`);
      assert.deepEqual(await seriesOf(store, { shortCode: 'one' }), [
        { hour: HOUR, visits: 2, bots: 0 }, { hour: HOUR + 1, visits: 2, bots: 0 }, { hour: HOUR + 2, visits: 1, bots: 0 },
      ]);
      assert.equal((await store.findLink('one'))?.accesses, 5);
    });
  });

  test('a row appends each batch\'s tallies and sums them when long; a link with many kinds of visitor hands them to the tuples', async () => {
    await withLinks(['one'], async (store, path) => {
      // The same visitor 400 times, each its own batch: appended, then summed, never written to the tuples.
      for (let i = 0; i < 400; i++) await store.resolveLink('one', undefined, visitOf(HOUR, 'a.example'));
      const [row] = textsOf(path);
      assert.ok(row!.hour_tallies!.length <= 600, `${row!.hour_tallies!.length} characters`);
      assert.ok(row!.hour_tallies!.split('\u001e').filter(Boolean).length < 300, 'summed on the way');
      assert.deepEqual(rowsOf(path), [['one', HOUR, { [CLASSES('a.example')]: 400 }]]);
      assert.deepEqual(tuplesOf(path), []);
      // 200 kinds of visitor: summed they are still long, so they go to the tuples.
      for (let i = 0; i < 200; i++) await store.resolveLink('one', undefined, visitOf(HOUR, `r${String(i).padStart(3, '0')}.example`));
      const tuples = tuplesOf(path) as { referrer: string; visits: number }[];
      assert.ok(tuples.length > 0, 'some went to the tuples');
      const waiting = (rowsOf(path)[0]![2] ?? {}) as Record<string, number>;
      assert.equal(tuples.reduce((sum, tuple) => sum + tuple.visits, 0) + Object.values(waiting).reduce((sum, n) => sum + n, 0), 600);
      const rows = await store.readStats({ shortCode: 'one' }, HOUR, HOUR + 1);
      assert.deepEqual(rows.series.map((point) => ({ ...point })), [{ hour: HOUR, visits: 600, bots: 0 }]);
      assert.equal(rows.values.find((value) => value.dimension === 1 && value.value === 'a.example')?.visits, 400);
      assert.equal(rows.values.find((value) => value.dimension === 1 && value.value === 'r199.example')?.visits, 1);
      assert.equal(rows.values.filter((value) => value.dimension === 1).length, 201);
    });
  });

  test('the fold sweeps the rows of hours that are over into the tuples, 500 at a time, and every total holds', async () => {
    const codes = Array.from({ length: 620 }, (_, i) => `s${i}`);
    await withLinks(codes, async (store, path, uid) => {
      for (let i = 0; i < codes.length; i += 20) {
        await Promise.all(codes.slice(i, i + 20).map((code) => store.resolveLink(code, undefined, visitOf(HOUR, 'a.example'))));
      }
      const waiting = () => rowsOf(path).filter((row) => row[2] !== null).length;
      assert.equal(waiting(), 620);
      await store.foldStats({ hoursBefore: HOUR });
      assert.equal(waiting(), 620, 'the hour is not over');
      await store.foldStats({ hoursBefore: HOUR + 1 });
      assert.equal(waiting(), 120, 'one chunk');
      assert.deepEqual(await seriesOf(store, { accountUid: uid }), [{ hour: HOUR, visits: 620, bots: 0 }]);
      await store.foldStats({ hoursBefore: HOUR + 1 });
      assert.equal(waiting(), 0, 'the rest');
      while ((await store.foldStats({ hoursBefore: HOUR + 1 })) > 0);
      assert.deepEqual(tuplesOf(path), [], 'on to the rollups');
      assert.deepEqual(await seriesOf(store, { accountUid: uid }), [{ hour: HOUR, visits: 620, bots: 0 }]);
      assert.deepEqual(await seriesOf(store, { shortCode: 's619' }), [{ hour: HOUR, visits: 1, bots: 0 }]);
    });
  });

  test('a row names its visitors\' classes by number; another store on the file reads and reuses the numbers', async () => {
    const file = sqliteFile();
    try {
      const first = await file.open({ checkpointer: false });
      const account = await first.createAccount({ codeHash: 'h'.repeat(64), dateCreated: DAY, maxLinks: 10 });
      for (const shortCode of ['one', 'two']) await first.createLink({ shortCode, pointsTo: 'https://a.example/', createdBy: account.uid, dateCreated: DAY });
      await first.resolveLink('one', undefined, visitOf(HOUR, 'a.example'));
      await first.resolveLink('one', undefined, visitOf(HOUR, 'b.example'));
      await first.resolveLink('one', undefined, visitOf(HOUR, 'a.example'));
      assert.deepEqual({ ...textsOf(file.path)[0] }, { short_code: 'one', tallies_hour: HOUR, hour_tallies: '1\u001e2\u001e1\u001e' });
      assert.deepEqual([...namesOf(file.path)], [['1', CLASSES('a.example')], ['2', CLASSES('b.example')]]);
      // Another process's store: it finds the numbers in the table, assigns the next one, and
      // each store reads the other's.
      const second = await file.open({ checkpointer: false, shareReads: false });
      await second.resolveLink('two', undefined, visitOf(HOUR, 'b.example'));
      await second.resolveLink('two', undefined, visitOf(HOUR, 'c.example'));
      assert.deepEqual({ ...textsOf(file.path)[1] }, { short_code: 'two', tallies_hour: HOUR, hour_tallies: '2\u001e3\u001e' });
      assert.equal(namesOf(file.path).get('3'), CLASSES('c.example'));
      await first.resolveLink('two', undefined, visitOf(HOUR, 'c.example'));
      assert.equal(textsOf(file.path)[1]!.hour_tallies, '2\u001e3\u001e3\u001e');
      for (const store of [first, second]) {
        const referrers = (await store.readStats({ accountUid: account.uid }, HOUR, HOUR + 1)).values
          .filter((row) => row.dimension === 1).map((row) => [row.value, row.visits]).sort();
        assert.deepEqual(referrers, [['a.example', 2], ['b.example', 2], ['c.example', 2]]);
      }
    } finally {
      await file.cleanup();
    }
  });

  test('a number assigned by a count that rolls back is forgotten, and given to the next new classes', async () => {
    const file = sqliteFile();
    await (await file.open({ checkpointer: false })).close();
    const [mine, other] = [new DatabaseSync(file.path), new DatabaseSync(file.path)];
    try {
      const ids = visitClassIds(mine);
      // As the store's transaction runs the count: the work, then COMMIT or ROLLBACK.
      mine.exec('BEGIN IMMEDIATE');
      const lost = ids.assigning(() => {
        const id = ids.idOf(CLASSES('x.example'));
        assert.equal(ids.classesOf(id).referrer, 'x.example', 'known inside its transaction');
        return id;
      });
      mine.exec('ROLLBACK');
      // Another process assigns the same number to other classes and commits.
      other.prepare('INSERT INTO visit_classes (classes) VALUES (?)').run(CLASSES('y.example'));
      assert.equal(ids.classesOf(lost).referrer, 'y.example');
      mine.exec('BEGIN IMMEDIATE');
      const kept = ids.assigning(() => ids.idOf(CLASSES('x.example')));
      mine.exec('COMMIT');
      assert.notEqual(kept, lost);
      assert.equal(ids.idOf(CLASSES('x.example')), kept, 'cached once committed');
      assert.equal(ids.classesOf(kept).referrer, 'x.example');
      assert.equal(ids.idOf(CLASSES('y.example')), lost);
    } finally {
      mine.close();
      other.close();
      await file.cleanup();
    }
  });

  test('tallies the previous release left in visits_hour and hour_visits are read and swept, and never written again', async () => {
    await withLinks(['one', 'two'], async (store, path, uid) => {
      // As that release wrote them: classes in full. 'two' holds the next hour's, not over yet.
      const db = new DatabaseSync(path);
      try {
        db.prepare('UPDATE links SET visits_hour = ?, hour_visits = ? WHERE short_code = ?').run(HOUR, `${CLASSES('old.example')}\t3\u001e`, 'one');
        db.prepare('UPDATE links SET visits_hour = ?, hour_visits = ? WHERE short_code = ?').run(HOUR + 1, `${CLASSES('old.example', true)}\t2\u001e`, 'two');
      } finally {
        db.close();
      }
      await store.resolveLink('one', undefined, visitOf(HOUR, 'a.example'));
      await store.resolveLink('two', undefined, visitOf(HOUR, 'a.example'));
      const legacyOf = () => inspect(path, (d) => (d.prepare('SELECT visits_hour, hour_visits FROM links ORDER BY id').all() as object[]).map((row) => ({ ...row })));
      assert.deepEqual(legacyOf(), [
        { visits_hour: HOUR, hour_visits: `${CLASSES('old.example')}\t3\u001e` },
        { visits_hour: HOUR + 1, hour_visits: `${CLASSES('old.example', true)}\t2\u001e` },
      ], 'the count leaves them as they were');
      assert.deepEqual(await seriesOf(store, { accountUid: uid }), [{ hour: HOUR, visits: 5, bots: 0 }, { hour: HOUR + 1, visits: 2, bots: 2 }]);
      assert.deepEqual(await seriesOf(store, { shortCode: 'one' }), [{ hour: HOUR, visits: 4, bots: 0 }]);
      // The sweep of the hours before HOUR + 1 moves both pairs of 'one', and only this
      // release's pair of 'two'.
      await store.foldStats({ hoursBefore: HOUR + 1 });
      assert.deepEqual(legacyOf(), [{ visits_hour: null, hour_visits: null }, { visits_hour: HOUR + 1, hour_visits: `${CLASSES('old.example', true)}\t2\u001e` }]);
      assert.deepEqual(rowsOf(path), [['one', null, null], ['two', null, null]]);
      const referrers = (await store.readStats({ accountUid: uid }, HOUR, HOUR + 1)).values
        .filter((row) => row.dimension === 1).map((row) => [row.value, row.visits]).sort();
      assert.deepEqual(referrers, [['a.example', 2], ['old.example', 3]]);
      assert.deepEqual(await seriesOf(store, { accountUid: uid }), [{ hour: HOUR, visits: 5, bots: 0 }, { hour: HOUR + 1, visits: 2, bots: 2 }]);
      while ((await store.foldStats({ hoursBefore: HOUR + 2 })) > 0);
      assert.deepEqual(legacyOf(), [{ visits_hour: null, hour_visits: null }, { visits_hour: null, hour_visits: null }]);
      assert.deepEqual(await seriesOf(store, { accountUid: uid }), [{ hour: HOUR, visits: 5, bots: 0 }, { hour: HOUR + 1, visits: 2, bots: 2 }]);
    });
  });

  test('a fold chunk of the tuples reads the index range of its own rows, not every tuple left in the hour', async () => {
    const file = sqliteFile();
    try {
      await (await file.open()).close();
      // The second stage's three statements over a chunk: SQLite must bound the primary key's
      // range by the chunk's last (hour, link), else each chunk scans the rest of the hour.
      const plans = inspect(file.path, (db) => [tupleChunkLinkHoursSql, tuplesToRollupsSql, deleteTupleChunkSql].map((sql) =>
        (db.prepare(`EXPLAIN QUERY PLAN ${sql((n) => `?${n}`, 'sqlite')}`).all(HOUR + 1, HOUR, 7) as { detail: string }[])
          .map((row) => row.detail).join(' | ')));
      for (const plan of plans) assert.match(plan, /SEARCH (stats_tuples|t) USING PRIMARY KEY \(\(hour,link_id\)<\(\?,\?\)\)/, plan);
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
