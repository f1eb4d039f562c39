/**
 * The guards that keep tests out of the working tree's `data/` (test/helpers/working-tree.ts):
 * a process pointed at a database inside the checkout is refused before it starts, and a
 * change to the folder is seen (test-scripts.test.ts checks that every run installs the check).
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { tempDir } from '../helpers/app.ts';
import { assertDatabaseOutsideWorkingTree, dataDirChanges, REPO_ROOT, snapshotDataDir } from '../helpers/working-tree.ts';

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
