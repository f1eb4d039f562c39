/**
 * A SQLite file damaged under a running server (issue 23, item 9): every call that reads the
 * damaged pages fails with SQLITE_CORRUPT "database disk image is malformed", and will forever.
 * The service must say so, as it does for PostgreSQL's XX001 (postgres-damage.test.ts): 503
 * `storage damaged` without Retry-After, `/readyz` 503 for the same reason (although
 * `SELECT 1` still answers), and one log line `database damaged: …`.
 */
import assert from 'node:assert/strict';
import { closeSync, openSync, writeSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { describe, test } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { openSqliteStore } from '../../src/store/sqlite/store.ts';
import { newAccount, testConfig } from '../helpers/app.ts';
import { tempDatabase } from '../helpers/process.ts';

describe('a SQLite file damaged under a running server', () => {
  test('answers 503 "storage damaged" without Retry-After, /readyz says so, one log line', async (t) => {
    const folder = tempDatabase();
    const store = await openSqliteStore({ path: folder.path });
    const chunks: string[] = [];
    const app = await buildApp({
      config: testConfig({ logLevel: 'error' }),
      store,
      logStream: { write: (chunk: string) => void chunks.push(chunk) },
    });
    t.after(async () => {
      await app.close();
      await store.close();
      folder.remove();
    });
    const { code } = await newAccount(app);
    const auth = { authorization: `Bearer ${code}` };
    for (let i = 0; i < 15; i++) {
      const created = await app.inject({ method: 'POST', url: `/v1/link?url=https://example.com/${'x'.repeat(500)}${i}&short=damaged-${i}`, headers: auth });
      assert.equal(created.statusCode, 200, created.body);
    }

    // Garbage over every page of the links table and its indexes (the header page and the
    // schema stay sound, so the file still opens and `SELECT 1` answers), after a checkpoint
    // so that the pages live in the main file; then a write elsewhere through another
    // connection, so that the server's connection drops its cached pages.
    const other = new DatabaseSync(folder.path);
    other.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    const pageSize = (other.prepare('PRAGMA page_size').get() as { page_size: number }).page_size;
    const pages = (other.prepare("SELECT pageno FROM dbstat WHERE name = 'links' OR name LIKE '%links%'").all() as { pageno: number }[])
      .map((row) => row.pageno);
    assert.ok(pages.length > 1, `pages of links: ${pages.join(', ')}`);
    const fd = openSync(folder.path, 'r+');
    for (const page of pages) writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (page - 1) * pageSize);
    closeSync(fd);
    other.exec('CREATE TABLE IF NOT EXISTS scratch (x INTEGER)');
    other.close();

    for (const [method, url, operation] of [
      ['GET', '/v1/links', 'list links'],
      ['POST', '/v1/link?url=https://example.com/after&short=after-damage', 'create link'],
      ['GET', '/v1/get/damaged-3', 'resolve link'],
    ] as const) {
      for (let i = 0; i < 2; i++) {
        const response = await app.inject({ method, url, headers: auth });
        assert.equal(response.statusCode, 503, `${method} ${url}: ${response.statusCode} ${response.body}`);
        assert.equal(response.body, `Unable to ${operation}: storage damaged`);
        assert.equal(response.headers['retry-after'], undefined, 'waiting will not cure it');
      }
    }
    for (let i = 0; i < 2; i++) {
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 503, ready.body);
      assert.equal(ready.body, 'Unable to handle request: storage damaged');
      assert.equal(ready.headers['retry-after'], undefined);
    }
    const lines = chunks.join('').split('\n').filter((line) => line.includes('database damaged: '));
    assert.equal(lines.length, 1, chunks.join(''));
    assert.match(lines[0]!, /database damaged: .*malformed/);
  });
});
