/**
 * What the real process says about its configuration at start (issue 13, items 15 and 17): a
 * DATABASE_URL that names no usable database stops it with one line instead of silently
 * starting an empty SQLite file elsewhere (or spinning), the start log names the database it
 * opened without a password, and an unset BASE_URL on a public address is warned about.
 */
import assert from 'node:assert/strict';
import { closeSync, existsSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import postgres from 'postgres';
import { pgbouncerGate, startPgbouncer } from '../helpers/pgbouncer.ts';
import { cleanup, runUntilExit, startServer, tempDatabase, type LogLine } from '../helpers/process.ts';
import { privatePostgresGate, startPrivatePostgres } from '../helpers/private-services.ts';
import { waitFor } from '../helpers/wait-for.ts';

describe('start checks of the server process', { timeout: 600_000 }, () => {
  after(cleanup);

  const refused: { name: string; url: (dir: string) => string; mentions: RegExp }[] = [
    { name: 'a misspelt postgres scheme', url: () => 'postgress://shortlink:hunter2@db/shortlink', mentions: /DATABASE_URL .*"postgress:\/\/" URL$/ },
    { name: 'another engine', url: () => 'mysql://root:hunter2@db/shortlink', mentions: /DATABASE_URL .*"mysql:\/\/" URL$/ },
    { name: 'a SQLite directory that does not exist', url: (dir) => join(dir, 'typo', 'db.sqlite'), mentions: /DATABASE_URL .*typo.*does not exist$/ },
    { name: 'a SQLite path under /proc', url: () => '/proc/shortlink.db', mentions: /DATABASE_URL .*"\/proc".*kernel file system/ },
    { name: 'a directory instead of a file', url: (dir) => dir, mentions: /DATABASE_URL .*not a regular file/ },
  ];
  for (const { name, url, mentions } of refused) {
    test(`refuses ${name} with one line on stderr, creating nothing`, async (t) => {
      const database = tempDatabase();
      t.after(() => database.remove());
      const databaseUrl = url(database.dir);
      const result = await runUntilExit({ databasePath: databaseUrl, env: { DATABASE_URL: databaseUrl } });
      assert.equal(result.signal, null);
      assert.notEqual(result.code, 0);
      const lines = result.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, `one line on stderr, got:\n${result.stderr}`);
      assert.match(lines[0]!, /^Unable to start: /);
      assert.match(lines[0]!, mentions);
      assert.doesNotMatch(result.stderr + result.stdout, /hunter2/, 'no password echoed');
      assert.equal(existsSync(join(database.dir, 'typo')), false, 'no directory created');
    });
  }

  test('refuses a short ADMIN_TOKEN with one line on stderr, never echoing it (CONTRACT §7.3)', async (t) => {
    const database = tempDatabase();
    t.after(() => database.remove());
    const result = await runUntilExit({ databasePath: database.path, env: { ADMIN_TOKEN: 'hunter2-too-short' } });
    assert.notEqual(result.code, 0);
    const lines = result.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, `one line on stderr, got:\n${result.stderr}`);
    assert.match(lines[0]!, /^Unable to start: ADMIN_TOKEN must be 32 to 256 printable ASCII characters/);
    assert.doesNotMatch(result.stderr + result.stdout, /hunter2/, 'the token is not echoed');
  });

  test('refuses a damaged SQLite file with one line naming the damage (issue 13, item 8)', async (t) => {
    const database = tempDatabase();
    t.after(() => database.remove());
    const db = new DatabaseSync(database.path);
    db.exec('CREATE TABLE filler (x TEXT)');
    const insert = db.prepare('INSERT INTO filler VALUES (?)');
    for (let i = 0; i < 200; i++) insert.run('x'.repeat(200));
    const { rootpage } = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'filler'").get() as { rootpage: number };
    db.close();
    const fd = openSync(database.path, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, (rootpage - 1) * 4096);
    closeSync(fd);
    const result = await runUntilExit({ databasePath: database.path });
    assert.notEqual(result.code, 0);
    const lines = result.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, `one line on stderr, got:\n${result.stderr}`);
    assert.match(lines[0]!, /^Unable to start: cannot open the database \(database damaged: .+; restore it from a backup/);
  });

  const opened = (line: LogLine) => line.msg === 'database opened';
  const baseUrlWarning = (line: LogLine) => line.level === 40 && String(line.msg).startsWith('BASE_URL is unset');

  test('behind PgBouncer with PostgreSQL down (server_login_retry), refuses with one line, no unhandled rejection (issue 23, item 19)',
    { skip: privatePostgresGate().skip || pgbouncerGate().skip }, async (t) => {
      const pg = await startPrivatePostgres();
      t.after(() => pg.destroy());
      const pooler = await startPgbouncer({ upstreamUrl: pg.adminUrl, serverLoginRetrySeconds: 60 });
      t.after(() => pooler.destroy());
      await pg.stop('fast');
      // A client's login makes PgBouncer try the server and fail; from then on it refuses
      // logins at once with server_login_retry (08P01) for the next minute.
      const clients: postgres.Sql[] = [];
      t.after(() => Promise.all(clients.map((sql) => sql.end({ timeout: 0 }).catch(() => undefined))));
      await waitFor(async () => {
        // No fetch of array types: unpatched, its failure here would be an unhandled rejection in this process.
        const sql = postgres(pooler.url, { max: 1, prepare: false, fetch_types: false, connect_timeout: 2, onnotice: () => {} });
        clients.push(sql);
        const outcome = await Promise.race([
          sql`SELECT 1`.then(() => 'answered', (error: { code?: string }) => error.code),
          new Promise((resolve) => setTimeout(resolve, 1000, 'waiting')),
        ]);
        // The refusal (08P01) reaches this client as its connection closing.
        return outcome === '08P01' || outcome === 'CONNECTION_CLOSED';
      }, 'PgBouncer to refuse logins with server_login_retry', { timeoutMs: 30_000, intervalMs: 100 });

      const result = await runUntilExit({ databasePath: pooler.url, env: { PG_PREPARE: 'false' } }, 20_000);
      assert.equal(result.signal, null);
      assert.equal(result.code, 1);
      const lines = result.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, `one line on stderr, got:\n${result.stderr}`);
      assert.match(lines[0]!, /^Unable to start: cannot open the database \(.*server_login_retry/);
    });

  test('logs the engine and place of the database it opened', async () => {
    const database = tempDatabase();
    const server = await startServer({ databasePath: database.path });
    const line = await server.waitForLog(opened);
    assert.equal(line.engine, 'sqlite');
    assert.equal(line.place, database.path);
    assert.equal(server.logs().some(baseUrlWarning), false, 'BASE_URL is set: no warning');
    await server.stop();
  });

  test('warns that short URLs read http://localhost when BASE_URL is unset on a public address', async () => {
    const server = await startServer({ env: { BASE_URL: undefined, HOST: '0.0.0.0' } });
    const warning = await server.waitForLog(baseUrlWarning);
    assert.match(String(warning.msg), /short URLs will read http:\/\/localhost:\d+\/…/);
    await server.stop();
  });

  test('does not warn when BASE_URL is unset but only this machine can connect', async () => {
    const server = await startServer({ env: { BASE_URL: undefined, HOST: '127.0.0.1' } });
    await server.waitForLog(opened);
    assert.equal(server.logs().some(baseUrlWarning), false);
    await server.stop();
  });
});
