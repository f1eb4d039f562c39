/**
 * `serve` runs the real server as `npm start` does, and `migrate` prepares a database and exits
 * (SQLite, and PostgreSQL when TEST_DATABASE_URL is set).
 */
import assert from 'node:assert/strict';
import { spawn as spawnProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import postgres from 'postgres';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.ts';
import { E2E_BASE_URL, REPO_ROOT } from '../helpers/process.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';
import type { Account } from '../../src/http/schemas.ts';
import { describeMigration } from '../../src/cli/commands/server-commands.ts';
import { CLI_ENTRY, cliEnvironment, runCli, tempFolder } from './support.ts';

describe('shortlink serve', () => {
  const folder = tempFolder();
  after(() => folder.remove());

  /** Waits for the server's "listening" line and returns its address. */
  function listeningUrl(child: ChildProcessWithoutNullStreams, exited: Promise<unknown>): Promise<string> {
    let output = '';
    return new Promise<string>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (match) resolve(match[1]!);
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
      });
      void exited.then(() => reject(new Error(`serve exited first:\n${output}`)));
    });
  }

  /** Runs `child` until it listens, creates an account and a link there, then stops it with SIGTERM. */
  async function exercise(child: ChildProcessWithoutNullStreams): Promise<void> {
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.once('close', (code, signal) => resolve({ code, signal })));
    try {
      const url = await listeningUrl(child, exited);
      const created = await fetch(`${url}/v1/new_account`, { signal: AbortSignal.timeout(10_000) });
      assert.equal(created.status, 200);
      const account = (await created.json()) as Account;
      const link = await fetch(`${url}/v1/link?url=https://example.com&short=served`, {
        headers: { authorization: `Bearer ${account.AccessCode}` },
        signal: AbortSignal.timeout(10_000),
      });
      assert.equal(await link.text(), `${E2E_BASE_URL}/served`);
      child.kill('SIGTERM');
      assert.deepEqual(await exited, { code: 0, signal: null });
    } finally {
      child.kill('SIGKILL');
    }
  }

  test('serves the API until SIGTERM, then exits 0', { timeout: 600_000 }, async () => {
    const child = spawnProcess(process.execPath, [CLI_ENTRY, 'serve'], {
      cwd: folder.path,
      env: cliEnvironment({ PORT: '0', HOST: '127.0.0.1', BASE_URL: E2E_BASE_URL, DATABASE_URL: folder.file('serve.db'), RATE_LIMIT: 'off' }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    await exercise(child);
  });

  test('takes its configuration from the environment the CLI is given, not the process\'s', { timeout: 600_000 }, async () => {
    // runCli with an environment of its own, in a process whose environment would not start
    // (a bad PORT, an unusable database): serve used to read process.env instead.
    const given = { PORT: '0', HOST: '127.0.0.1', BASE_URL: E2E_BASE_URL, DATABASE_URL: folder.file('given.db'), RATE_LIMIT: 'off' };
    const runModule = pathToFileURL(join(REPO_ROOT, 'src', 'cli', 'run.ts')).href;
    const script =
      `import { runCli } from ${JSON.stringify(runModule)};\n` +
      `process.exitCode = await runCli(['serve'], { env: ${JSON.stringify(given)}, stdout: process.stdout, stderr: process.stderr });\n`;
    const scriptPath = folder.file('serve-with-env.mjs');
    writeFileSync(scriptPath, script);
    const child = spawnProcess(process.execPath, [scriptPath], {
      cwd: folder.path,
      env: cliEnvironment({ PORT: 'eighty', DATABASE_URL: '/proc/version/unusable.db' }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    await exercise(child);
    assert.ok(existsSync(given.DATABASE_URL), 'the database is the one named in the given environment');
  });
});

describe('shortlink migrate', () => {
  const folder = tempFolder();
  after(() => folder.remove());

  test('creates a SQLite database with the whole schema, and is idempotent', async () => {
    const path = folder.file('nested/dir/migrated.db');
    const first = await runCli(['migrate'], { env: { DATABASE_URL: `sqlite:${path}` } });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, describeMigration(SQLITE_MIGRATIONS.length, `SQLite ${path}`));
    assert.ok(existsSync(path));
    const db = new DatabaseSync(path);
    try {
      const { user_version: version } = db.prepare('PRAGMA user_version').get() as { user_version: number };
      assert.equal(version, SQLITE_MIGRATIONS.length);
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all().map((row) => row.name);
      assert.ok(tables.includes('accounts') && tables.includes('links'), String(tables));
    } finally {
      db.close();
    }
    const second = await runCli(['migrate'], { env: { DATABASE_URL: path } });
    assert.equal(second.code, 0, second.stderr);
  });

  test('words what it did: the migrations it applied, or nothing to apply', () => {
    assert.equal(describeMigration(3, 'SQLite x.db'), 'Applied 3 migrations (SQLite x.db); the database is up to date.\n');
    assert.equal(describeMigration(1, 'SQLite x.db'), 'Applied 1 migration (SQLite x.db); the database is up to date.\n');
    assert.equal(describeMigration(0, 'SQLite x.db'), 'The database is up to date (SQLite x.db).\n');
  });

  test('says how many migrations it applied to a new database, and that a second run had nothing to apply', async () => {
    const path = folder.file('reported.db');
    const first = await runCli(['migrate'], { env: { DATABASE_URL: path } });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, describeMigration(SQLITE_MIGRATIONS.length, `SQLite ${path}`));
    const second = await runCli(['migrate'], { env: { DATABASE_URL: path } });
    assert.equal(second.stdout, `The database is up to date (SQLite ${path}).\n`);
  });

  test('bad configuration or an unopenable database is one line and exit 1', async () => {
    const badPort = await runCli(['migrate'], { env: { DATABASE_URL: folder.file('x.db'), PORT: 'eighty' } });
    assert.equal(badPort.code, 1);
    assert.match(badPort.stderr, /^shortlink migrate: bad configuration: PORT must be an integer/);
    const notADirectory = await runCli(['migrate'], { env: { DATABASE_URL: '/proc/version/db.sqlite' } });
    assert.equal(notADirectory.code, 1);
    assert.match(notADirectory.stderr, /^shortlink migrate: cannot open the database \(/);
    assert.equal(notADirectory.stderr.trim().split('\n').length, 1);
  });

  const gate = postgresGate();
  test('applies the PostgreSQL migrations once', { skip: gate.skip }, async () => {
    const database = await createPostgresDatabase(gate.value!);
    try {
      for (let run = 0; run < 2; run++) {
        const result = await runCli(['migrate'], { env: { DATABASE_URL: database.url } });
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stdout, run === 0 ? new RegExp(`^Applied ${POSTGRES_MIGRATIONS.length} migrations? \\(PostgreSQL postgres://`) : /^The database is up to date \(PostgreSQL postgres:\/\//);
      }
      const sql = postgres(database.url, { max: 1, onnotice: () => {} });
      try {
        const [row] = await sql`SELECT max(version)::int AS version, count(*)::int AS runs FROM schema_migrations`;
        assert.deepEqual({ ...row }, { version: POSTGRES_MIGRATIONS.length, runs: POSTGRES_MIGRATIONS.length });
      } finally {
        await sql.end();
      }
    } finally {
      await database.drop();
    }
  });
});
