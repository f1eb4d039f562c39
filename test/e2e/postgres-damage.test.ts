/**
 * A PostgreSQL database with a damaged page (issue 13, item 8): every call that reads it
 * fails with XX001 "invalid page in block …" forever. The service must say so, not "try again
 * in 1 s": 503 `storage damaged` without Retry-After, `/readyz` 503 for the same reason
 * (although `SELECT 1` answers), and one log line `database damaged: …`.
 */
import assert from 'node:assert/strict';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { buildApp } from '../../src/app.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import { newAccount, testConfig } from '../helpers/app.ts';
import { privatePostgresGate, startPrivatePostgres, type PrivatePostgres } from '../helpers/private-services.ts';
import { createPostgresDatabase } from '../helpers/services.ts';

const gate = privatePostgresGate();

describe('a PostgreSQL database with a damaged page', { skip: gate.skip, timeout: 600_000 }, () => {
  let pg: PrivatePostgres;
  before(async () => {
    pg = await startPrivatePostgres();
  });
  after(async () => {
    await pg?.destroy();
  });

  test('answers 503 "storage damaged" without Retry-After, /readyz says so, one log line', async (t) => {
    const database = await createPostgresDatabase(pg.adminUrl);
    const store = await openPostgresStore({ url: database.url, max: 2 });
    const chunks: string[] = [];
    const app = await buildApp({
      config: testConfig({ logLevel: 'error' }),
      store,
      logStream: { write: (chunk: string) => void chunks.push(chunk) },
    });
    t.after(async () => {
      await app.close();
      await store.close();
    });
    const { code } = await newAccount(app);
    const created = await app.inject({ method: 'POST', url: '/v1/link?url=https://example.com/&short=damaged1', headers: { authorization: `Bearer ${code}` } });
    assert.equal(created.statusCode, 200, created.body);
    assert.equal((await app.inject({ method: 'GET', url: '/v1/get/damaged1' })).statusCode, 200);

    // Garbage over the header of the links table's first page, written while the server is down.
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    const [row] = await sql<{ path: string }[]>`SELECT pg_relation_filepath('links') AS path`;
    await sql`CHECKPOINT`;
    await sql.end();
    await pg.stop('fast');
    const fd = openSync(join(pg.dataDir, row!.path), 'r+');
    writeSync(fd, Buffer.alloc(24, 0xa5), 0, 24, 0);
    closeSync(fd);
    await pg.start();

    for (let i = 0; i < 3; i++) {
      const response = await app.inject({ method: 'GET', url: '/v1/get/damaged1' });
      assert.equal(response.statusCode, 503);
      assert.equal(response.body, 'Unable to resolve link: storage damaged');
      assert.equal(response.headers['retry-after'], undefined, 'waiting will not cure it');
    }
    for (let i = 0; i < 2; i++) {
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 503);
      assert.equal(ready.body, 'Unable to handle request: storage damaged');
      assert.equal(ready.headers['retry-after'], undefined);
    }
    const lines = chunks.join('').split('\n').filter((line) => line.includes('database damaged: '));
    assert.equal(lines.length, 1, chunks.join(''));
    assert.match(lines[0]!, /database damaged: invalid page in block 0 of relation base\/\d+\/\d+/);
    await database.drop();
  });
});
