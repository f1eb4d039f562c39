import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { checkStoragePlace, loadConfig, startWarnings, storagePlace, type StorageConfig } from '../../src/config.ts';
import { tempDir } from '../helpers/app.ts';

const sqlite = (path: string): StorageConfig => ({ kind: 'sqlite', path, synchronous: 'normal' });

test('refuses a DATABASE_URL with a scheme other than postgres, postgresql or sqlite, without echoing the rest', () => {
  for (const url of ['postgress://u:hunter2@db/x', 'mysql://root:hunter2@db/x', 'file:///tmp/x.db', 'redis://cache']) {
    assert.throws(
      () => loadConfig({ DATABASE_URL: url }),
      (error: Error) => /^Unable to start: DATABASE_URL must start with postgres:\/\//.test(error.message) && !error.message.includes('hunter2'),
      url,
    );
  }
  assert.equal(loadConfig({ DATABASE_URL: 'PostgreSQL://db/x' }).storage.kind, 'postgres');
  assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:///tmp/x.db' }).storage, sqlite('/tmp/x.db'));
});

test('checkStoragePlace accepts an existing writable directory, the default ./data/ and PostgreSQL', () => {
  const dir = tempDir();
  try {
    assert.equal(checkStoragePlace(sqlite(join(dir.path, 'new.db'))), undefined);
    writeFileSync(join(dir.path, 'old.db'), '');
    assert.equal(checkStoragePlace(sqlite(join(dir.path, 'old.db'))), undefined);
    assert.equal(checkStoragePlace(sqlite('./data/shortlinks.db')), undefined);
    assert.equal(checkStoragePlace(sqlite(':memory:')), undefined);
    assert.equal(checkStoragePlace({ kind: 'postgres', url: 'postgres://db/x', poolMax: 10, prepare: true }), undefined);
  } finally {
    dir.remove();
  }
});

test('checkStoragePlace refuses a missing directory, a non-directory, a non-regular file and kernel file systems', () => {
  const dir = tempDir();
  try {
    writeFileSync(join(dir.path, 'plain'), '');
    mkdirSync(join(dir.path, 'folder.db'));
    const cases: Array<[string, RegExp]> = [
      [join(dir.path, 'missing', 'x.db'), /does not exist$/],
      [join(dir.path, 'plain', 'x.db'), /not a directory$/],
      [join(dir.path, 'folder.db'), /not a regular file/],
      ['/proc/x.db', /kernel file system/],
      ['/proc/self/x.db', /kernel file system/],
      ['/dev/null', /kernel file system/],
    ];
    for (const [path, problem] of cases) {
      const message = checkStoragePlace(sqlite(path));
      assert.match(message ?? '', problem, path);
      assert.match(message ?? '', /^DATABASE_URL names /);
      assert.doesNotMatch(message ?? '', /[\r\n]/);
    }
  } finally {
    dir.remove();
  }
});

test('storagePlace names the engine and the place, never a password or query', () => {
  assert.deepEqual(storagePlace(sqlite('data/x.db')), { engine: 'sqlite', place: resolve('data/x.db') });
  assert.deepEqual(storagePlace({ kind: 'postgres', url: 'postgres://user:secret@db.example:5432/links?password=secret&sslmode=require', poolMax: 10, prepare: true }), {
    engine: 'postgres',
    place: 'postgres://user@db.example:5432/links',
  });
  assert.deepEqual(storagePlace({ kind: 'postgres', url: 'postgresql://db/links', poolMax: 10, prepare: true }), { engine: 'postgres', place: 'postgresql://db/links' });
});

test('startWarnings warns about the default BASE_URL only when others can connect', () => {
  const warnings = (env: Record<string, string>) => startWarnings(loadConfig(env));
  assert.match(warnings({})[0] ?? '', /^BASE_URL is unset while listening on 0\.0\.0\.0: short URLs will read http:\/\/localhost:8080\/…/);
  assert.equal(warnings({ HOST: '::' }).length, 1);
  assert.equal(warnings({ HOST: '192.0.2.10' }).length, 1);
  for (const host of ['127.0.0.1', '::1', 'localhost', '127.0.0.53']) assert.deepEqual(warnings({ HOST: host }), [], host);
  assert.deepEqual(warnings({ BASE_URL: 'https://sho.rt' }), []);
});
