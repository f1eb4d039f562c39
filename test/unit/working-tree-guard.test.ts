/**
 * The guards that keep tests out of the working tree's `data/` (test/helpers/working-tree.ts):
 * a process pointed at a database inside the checkout is refused before it starts, and a
 * change to the folder is seen (test-scripts.test.ts checks that every run installs the check).
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { openSqliteStore } from '../../src/store/sqlite/store.ts';
import { tempDir } from '../helpers/app.ts';
import { assertDatabaseOutsideWorkingTree, dataDirChanges, filesHeldOpen, REPO_ROOT, snapshotDataDir, watchDataDir } from '../helpers/working-tree.ts';

describe('assertDatabaseOutsideWorkingTree', () => {
  test('refuses a process that would open the default ./data/shortlinks.db in the checkout', () => {
    assert.throws(() => assertDatabaseOutsideWorkingTree({}, REPO_ROOT), /shortlinks\.db, inside the working tree/);
    assert.throws(() => assertDatabaseOutsideWorkingTree({ DATABASE_URL: '' }, REPO_ROOT), /inside the working tree/);
  });

  test('refuses any SQLite file inside the checkout, however it is spelled', (t) => {
    const elsewhere = tempDir();
    t.after(() => elsewhere.remove());
    for (const url of ['data/other.db', 'sqlite:./data/shortlinks.db', 'sqlite://test/x.db', join(REPO_ROOT, 'x.db')]) {
      assert.throws(() => assertDatabaseOutsideWorkingTree({ DATABASE_URL: url }, REPO_ROOT), /inside the working tree/, url);
    }
    assert.throws(() => assertDatabaseOutsideWorkingTree({ DATABASE_URL: join(REPO_ROOT, 'data', 'x.db') }, elsewhere.path), /inside the working tree/);
  });

  test('lets through temp files, the default database of a temp folder, and PostgreSQL', (t) => {
    const elsewhere = tempDir();
    t.after(() => elsewhere.remove());
    assertDatabaseOutsideWorkingTree({}, elsewhere.path);
    assertDatabaseOutsideWorkingTree({ DATABASE_URL: join(elsewhere.path, 'db.sqlite') }, REPO_ROOT);
    assertDatabaseOutsideWorkingTree({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' }, REPO_ROOT);
  });
});

describe('snapshotDataDir and dataDirChanges', () => {
  test('see a folder appear, a file change, and a file made and removed again', (t) => {
    const root = tempDir();
    t.after(() => root.remove());
    const data = join(root.path, 'data');
    const empty = snapshotDataDir(data);
    assert.deepEqual([...empty.keys()], [], 'absent');

    mkdirSync(data);
    writeFileSync(join(data, 'shortlinks.db'), 'one');
    utimesSync(data, new Date('2020-01-01T00:00:00Z'), new Date('2020-01-01T00:00:00Z'));
    const created = snapshotDataDir(data);
    assert.deepEqual(dataDirChanges(empty, created), ['created .', 'created shortlinks.db']);
    assert.deepEqual(dataDirChanges(created, snapshotDataDir(data)), [], 'nothing changed');

    writeFileSync(join(data, 'shortlinks.db'), 'longer');
    assert.match(dataDirChanges(created, snapshotDataDir(data)).join('\n'), /^changed shortlinks\.db \(3 bytes/);

    const before = snapshotDataDir(data);
    writeFileSync(join(data, 'shortlinks.db-journal'), '');
    rmSync(join(data, 'shortlinks.db-journal'));
    assert.match(dataDirChanges(before, snapshotDataDir(data)).join('\n'), /^changed \. \(folder/);

    rmSync(data, { recursive: true });
    assert.deepEqual(dataDirChanges(before, snapshotDataDir(data)), ['removed .', 'removed shortlinks.db']);
  });
});

describe('watchDataDir', { skip: process.platform === 'linux' ? false : 'reads /proc' }, () => {
  test('a server serving from data/ meanwhile is not the tests\' doing; a file a test leaves there is', async (t) => {
    const root = tempDir();
    t.after(() => root.remove());
    const data = join(root.path, 'data');
    // What `npm start` opens by default, in a folder of its own: the server's store, checkpointer thread and all.
    const server = await openSqliteStore({ path: join(data, 'shortlinks.db') });
    let open = true;
    t.after(async () => {
      if (open) await server.close();
    });
    const accounts = createAccountService({ store: server, clock: () => new Date(), defaultMaxLinks: 20 });
    await accounts.create();
    assert.deepEqual([...filesHeldOpen(data).keys()].sort(), ['shortlinks.db', 'shortlinks.db-shm', 'shortlinks.db-wal']);

    const watch = watchDataDir(data);
    for (let i = 0; i < 20; i++) await accounts.create();
    const serving = watch.changes();
    assert.deepEqual(serving.unexplained, []);
    assert.match(serving.explained.join('\n'), /^changed shortlinks\.db-wal .*, held open by \d+ \(/m, 'the writes are seen, and put down to the server');

    writeFileSync(join(data, 'from-a-test.db'), 'a test wrote here');
    assert.deepEqual(watch.changes().unexplained, ['created from-a-test.db']);
    rmSync(join(data, 'from-a-test.db'));

    // The server stops meanwhile: its WAL and shared-memory file go, which the start explains.
    await server.close();
    open = false;
    const stopped = watch.changes();
    assert.deepEqual(stopped.unexplained, []);
    assert.match(stopped.explained.join('\n'), /^removed shortlinks\.db-wal, held open by/m);
  });

  test('with no process holding anything there, every change counts', (t) => {
    const root = tempDir();
    t.after(() => root.remove());
    const data = join(root.path, 'data');
    const watch = watchDataDir(data);
    mkdirSync(data);
    writeFileSync(join(data, 'shortlinks.db'), 'a test opened the default database');
    assert.deepEqual(watch.changes(), { unexplained: ['created .', 'created shortlinks.db'], explained: [] });
  });
});
