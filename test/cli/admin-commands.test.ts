/**
 * `admin set-max-links` and `export`, straight on the database.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { parseCsv } from '../../src/cli/csv.ts';
import { databaseState } from './database-state.ts';
import { jsonLines, openDatabase, runCli, seedAccount, tempFolder, type SeededAccount } from './support.ts';

describe('admin commands on SQLite', () => {
  const folder = tempFolder();
  const database = folder.file('admin.db');
  const env = { DATABASE_URL: database };
  let full: SeededAccount;
  let empty: SeededAccount;

  before(async () => {
    const store = await openDatabase(database);
    try {
      full = await seedAccount(store, [
        { short: 'admin-one', url: 'https://example.com/1', resolutions: 3 },
        { short: 'admin-two', url: 'https://example.com/a,b?q="quoted"', resolutions: 1 },
        { short: 'admin-three', url: 'https://bücher.example/straße' },
      ], 5);
      empty = await seedAccount(store, []);
    } finally {
      await store.close();
    }
  });
  after(() => folder.remove());

  test('set-max-links changes the cap and reports the change', async () => {
    const result = await runCli(['admin', 'set-max-links', String(full.uid), '10'], { env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `Account ${full.uid}: MaxLinks 5 → 10 (holds 3 links).\n`);
    const account = (await databaseState(database)).accounts.find((a) => a.uid === full.uid)!;
    assert.equal(account.maxLinks, 10);
    // Down to exactly what it holds is allowed.
    assert.equal((await runCli(['admin', 'set-max-links', String(full.uid), '3'], { env })).code, 0);
    assert.equal((await runCli(['admin', 'set-max-links', String(empty.uid), '0'], { env })).code, 0);
  });

  test('set-max-links refuses a cap below the links held, and an unknown account', async () => {
    const below = await runCli(['admin', 'set-max-links', String(full.uid), '2'], { env });
    assert.equal(below.code, 1);
    assert.match(below.stderr, new RegExp(`account ${full.uid} holds 3 links; MaxLinks cannot go below that`));
    const unknown = await runCli(['admin', 'set-max-links', '999', '10'], { env });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /there is no account 999/);
    const state = await databaseState(database);
    assert.equal(state.accounts.find((a) => a.uid === full.uid)!.maxLinks, 3);
  });

  test('export writes every link as JSON lines with its owner, accesses and date', async () => {
    const result = await runCli(['export'], { env });
    assert.equal(result.code, 0, result.stderr);
    const state = await databaseState(database);
    const exported = jsonLines(result.stdout);
    assert.deepEqual(exported, state.links.map((link) => ({
      ShortCode: link.shortCode, PointsTo: link.pointsTo, CreatedBy: link.createdBy, Accesses: link.accesses, DateCreated: link.dateCreated,
      Title: null, Tags: [], ExpiresAt: null, MaxVisits: null, Domain: null, ForwardQuery: false, Protected: false, Rules: [],
    })));
    assert.deepEqual(exported.map((link) => [link.ShortCode, link.Accesses]), [['admin-one', 3], ['admin-two', 1], ['admin-three', 0]]);
    assert.match(result.stderr, /^Exported 3 links from SQLite .* as jsonl\.\n$/);
  });

  test('export --format csv quotes the fields that need it', async () => {
    const result = await runCli(['export', '--format', 'csv'], { env });
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.split('\n');
    assert.equal(lines[0], 'ShortCode,PointsTo,CreatedBy,Accesses,DateCreated,Title,Tags,ExpiresAt,MaxVisits,Domain,ForwardQuery,Protected,Rules');
    assert.match(lines[2]!, /^admin-two,"https:\/\/example\.com\/a,b\?q=""quoted""",\d+,1,[^,]+,,,,,,false,false,$/);
    const records = [];
    for await (const record of parseCsv([result.stdout])) records.push(record.fields);
    assert.equal(records.length, 4);
    assert.deepEqual(records[2]!.slice(0, 2), ['admin-two', 'https://example.com/a,b?q="quoted"']);
  });

  test('export --output writes a 0600 file, its format taken from the extension', async () => {
    const path = folder.file('links.csv');
    const result = await runCli(['export', '--output', path], { env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /Exported 3 links .* as csv to .*links\.csv/);
    assert.ok(readFileSync(path, 'utf8').startsWith('ShortCode,PointsTo,'));
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(folder.path).filter((name) => name.endsWith('.partial')), []);
  });

  test('export to a folder that does not exist fails without leaving a file', async () => {
    const result = await runCli(['export', '--output', folder.file('no/such/dir/links.jsonl')], { env });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /cannot write .*ENOENT/);
  });

  test('commands that read a database refuse to create one', async () => {
    const missing = folder.file('missing.db');
    for (const args of [['export'], ['admin', 'set-max-links', '1', '5']]) {
      const result = await runCli(args, { env: { DATABASE_URL: missing } });
      assert.equal(result.code, 1);
      assert.match(result.stderr, /there is no database at .*missing\.db/);
    }
    assert.equal(existsSync(missing), false);
  });
});
