/**
 * `shortlink import`: files in the layouts of other shorteners (Shlink, YOURLS, Kutt, Bitly)
 * with conflicts and rejected rows reported by line, dry runs that write nothing, the cap and
 * the account's link count kept, and export → import round trips onto a fresh database that
 * reproduce every link and count (SQLite, and PostgreSQL when TEST_DATABASE_URL is set).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cleanup, startServer } from '../helpers/process.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';
import { databaseState, NO_DETAILS, portable, routingState, type DatabaseState, type LinkRow } from './database-state.ts';
import { CLI_ENTRY, jsonLines, openDatabase, runCli, seedAccount, tempFolder, type SeededAccount } from './support.ts';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const UUID_V4 = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/;

interface FixtureCase {
  readonly file: string;
  /** More arguments for the import. */
  readonly args?: readonly string[];
  readonly layout: string;
  /** What the report says about the rows it does not import, in line order. */
  readonly notes: readonly string[];
  readonly imported: readonly ({ shortCode: string; pointsTo: string; accesses: number; dateCreated: string } & Partial<LinkRow>)[];
  readonly rows: number;
  readonly conflicts: number;
  readonly rejected: number;
}

const TAKEN = 'conflict: the shortcode "taken-code" is already taken';
const AMBIGUOUS = 'is ambiguous (month/day or day/month?) and is not guessed: write it as ISO 8601, e.g. 2024-03-15T09:30:00Z';

const FIXTURE_CASES: readonly FixtureCase[] = [
  {
    file: 'shlink.csv',
    layout: 'Shlink layout: shortcode ← shortCode, url ← longUrl, accesses ← visits, date created ← createdAt, title ← title, tags ← tags, domain ← domain',
    notes: [`line 3: ${TAKEN}`],
    imported: [
      { shortCode: 'shlink-one', pointsTo: 'https://example.com/shlink/1', accesses: 12, dateCreated: '2023-05-01T08:00:00.000Z', title: 'Launch, part 1', tags: 'launch,2023' },
      // Three characters: kept, as Shlink gave it.
      { shortCode: 'abc', pointsTo: 'https://example.com/shlink/3', accesses: 0, dateCreated: '2023-05-03T08:00:00.000Z' },
      { shortCode: 'shlink-four', pointsTo: 'https://example.com/q?a=1,2&b="x"', accesses: 7, dateCreated: '2023-05-04T08:00:00.000Z', title: 'A "quoted", title' },
    ],
    rows: 4, conflicts: 1, rejected: 0,
  },
  {
    file: 'yourls.csv',
    layout: 'YOURLS layout: shortcode ← keyword, url ← url, accesses ← clicks, date created ← timestamp, title ← title',
    notes: [
      'line 5: rejected: url must use http or https',
      'line 6: conflict: the shortcode "yourls-1" appears earlier in the file (line 2)',
      `line 7: ${TAKEN}`,
    ],
    imported: [
      { shortCode: 'yourls-1', pointsTo: 'https://example.com/y/1', accesses: 42, dateCreated: '2022-01-02T03:04:05.000Z', title: 'Two lines' },
      { shortCode: '2', pointsTo: 'https://example.com/y/2', accesses: 1, dateCreated: '2022-01-02T03:04:05.000Z', title: 'Numeric keyword' },
      { shortCode: 'yourls-6', pointsTo: 'https://example.com/y/6', accesses: 0, dateCreated: '2022-01-05T00:00:00.000Z' },
    ],
    rows: 6, conflicts: 2, rejected: 1,
  },
  {
    file: 'kutt.csv',
    layout: 'Kutt layout: shortcode ← address, url ← target, accesses ← visit_count, date created ← created_at, title ← description',
    notes: [`line 3: ${TAKEN}`, 'line 4: rejected: url must not contain whitespace or control characters'],
    imported: [
      { shortCode: 'kutt-one', pointsTo: 'https://example.com/k/1', accesses: 5, dateCreated: '2024-02-03T04:05:06.789Z', title: 'First' },
      { shortCode: 'kutt-four', pointsTo: 'https://example.com/k/4', accesses: 0, dateCreated: '2024-02-04T00:00:00.000Z', title: 'Fourth, with "quotes"' },
    ],
    rows: 4, conflicts: 1, rejected: 1,
  },
  {
    file: 'kutt.jsonl',
    layout: 'Kutt layout: shortcode ← address, url ← target, accesses ← visit_count, date created ← created_at',
    notes: [`line 2: ${TAKEN}`, 'line 3: rejected: not valid JSON', 'line 4: rejected: not a JSON object'],
    imported: [
      { shortCode: 'kutt-json-1', pointsTo: 'https://example.com/kj/1', accesses: 3, dateCreated: '2024-03-01T00:00:00.000Z' },
      { shortCode: 'kutt-json-3', pointsTo: 'https://example.com/kj/3', accesses: 8, dateCreated: '2024-03-03T00:00:00.000Z' },
    ],
    rows: 5, conflicts: 1, rejected: 2,
  },
  {
    file: 'bitly.csv',
    // Its links are on bit.ly, which is Bitly's: they come to the default domain.
    args: ['--domain', 'localhost'],
    layout: 'Bitly layout: shortcode ← last segment of link, url ← long_url, accesses ← clicks, date created ← created_at, title ← title, domain the default (--domain)',
    notes: [`line 3: ${TAKEN}`, 'line 4: rejected: url must use http or https'],
    imported: [
      { shortCode: '3bitOne', pointsTo: 'https://example.com/b/1', accesses: 100, dateCreated: '2021-06-01T12:00:00.000Z', title: 'One' },
      { shortCode: '3bitFour', pointsTo: 'https://example.com/b/4', accesses: 4, dateCreated: '2021-06-04T12:00:00.000Z', title: 'Comma, "quote"' },
    ],
    rows: 4, conflicts: 1, rejected: 1,
  },
  {
    file: 'yourls-semicolon.csv',
    layout: 'YOURLS layout (semicolon-separated): shortcode ← keyword, url ← url, accesses ← clicks, date created ← timestamp, title ← title',
    notes: [
      'line 5: rejected: the shortcode "Docs" is a reserved path of this service (case-insensitively); rename it',
      `line 6: ${TAKEN}`,
      `line 7: rejected: the date created "03/15/2024" ${AMBIGUOUS}`,
      'line 8: rejected: the shortcode "." cannot be reached: clients remove "." and ".." path segments',
    ],
    imported: [
      { shortCode: '1', pointsTo: 'https://example.com/y/one', accesses: 1204, dateCreated: '2009-08-11T14:30:12.000Z', title: 'Our first link' },
      { shortCode: '2a', pointsTo: 'https://example.com/y/2a?a=1,2', accesses: 7, dateCreated: '2015-03-01T09:00:00.000Z', title: 'Price: 3,50 €; tax "included"' },
      { shortCode: 'ozh', pointsTo: 'https://example.com/y/ozh', accesses: 0, dateCreated: '2012-11-30T23:59:59.000Z', title: 'Ozh' },
    ],
    rows: 7, conflicts: 1, rejected: 3,
  },
  {
    file: 'shlink.tsv',
    layout: 'Shlink layout (tab-separated): shortcode ← shortCode, url ← longUrl, accesses ← visits, date created ← createdAt, title ← title, tags ← tags, domain ← domain',
    notes: [
      `line 4: rejected: the date created "15/03/2024" ${AMBIGUOUS}`,
      'line 5: rejected: the shortcode "healthz" is a reserved path of this service (case-insensitively); rename it',
    ],
    imported: [
      { shortCode: 'abc', pointsTo: 'https://example.com/shlink/abc', accesses: 12, dateCreated: '2023-05-01T08:00:00.000Z', title: 'Three letters', tags: 'launch' },
      { shortCode: 'x7Kd', pointsTo: 'https://example.com/shlink/x7Kd?q=a,b;c', accesses: 3, dateCreated: '2023-05-02T08:00:00.000Z', title: 'Tab inside' },
      { shortCode: 'Q', pointsTo: 'https://example.com/shlink/q', accesses: 0, dateCreated: '2023-05-05T08:00:00.000Z' },
    ],
    rows: 5, conflicts: 0, rejected: 2,
  },
  {
    file: 'kutt-api.json',
    layout: 'Kutt layout (JSON document, its "data"): shortcode ← address, url ← target, accesses ← visit_count, date created ← created_at, title ← description, expires ← expire_in, domain ← domain',
    notes: [
      `entry 3: ${TAKEN}`,
      'entry 4: rejected: the link is marked banned in the file (taken down by the other service)',
      'entry 5: rejected: the link is password-protected in the file, and no export carries its password, so it would open to anyone; ' +
        'create it again with a new password (shortlink shorten --password-file)',
    ],
    imported: [
      { shortCode: 'k1', pointsTo: 'https://example.com/kutt/1', accesses: 9, dateCreated: '2024-03-01T10:00:00.000Z', title: 'One character after the k' },
      { shortCode: 'Ab3', pointsTo: 'https://example.com/kutt/ab3', accesses: 0, dateCreated: '2024-03-05T08:30:00.000Z' },
      { shortCode: 'kutt-six', pointsTo: 'https://example.com/kutt/6', accesses: 1, dateCreated: '2024-03-10T12:00:00.000Z', expiresAt: '2025-01-01T00:00:00.000Z' },
    ],
    rows: 6, conflicts: 1, rejected: 2,
  },
];

/** The lines of a report that are about single rows. */
function notes(stdout: string): string[] {
  return stdout.split('\n').filter((line) => /^(line|entry) \d+: /.test(line));
}

function assertCountsConsistent(state: DatabaseState): void {
  for (const account of state.accounts) {
    assert.equal(account.linkCount, account.held, `account ${account.uid}: link_count ${account.linkCount}, holds ${account.held}`);
    assert.ok(account.held <= account.maxLinks, `account ${account.uid} holds ${account.held} > MaxLinks ${account.maxLinks}`);
  }
}

/** A fresh database (SQLite file, or a PostgreSQL database) holding one account with the link "taken-code". */
type Engine = { readonly name: string; fresh(): Promise<{ url: string; drop(): Promise<void> }> };

function engines(): Engine[] {
  const folder = tempFolder();
  after(() => folder.remove());
  let count = 0;
  const list: Engine[] = [{
    name: 'SQLite',
    fresh: async () => ({ url: folder.file(`db-${++count}.sqlite`), drop: async () => {} }),
  }];
  const gate = postgresGate();
  if (gate.value !== undefined) {
    list.push({ name: 'PostgreSQL', fresh: () => createPostgresDatabase(gate.value!) });
  }
  return list;
}

async function withTakenCode(url: string, maxLinks = 20): Promise<SeededAccount> {
  const store = await openDatabase(url);
  try {
    return await seedAccount(store, [{ short: 'taken-code', url: 'https://example.com/original', resolutions: 2 }], maxLinks);
  } finally {
    await store.close();
  }
}

const folder = tempFolder();
after(() => folder.remove());

for (const engine of engines()) {
  describe(`import from other shorteners (${engine.name})`, () => {
    for (const fixture of FIXTURE_CASES) {
      test(`${fixture.file}: a dry run reports conflicts and rejected rows and writes nothing`, async () => {
        const database = await engine.fresh();
        try {
          const owner = await withTakenCode(database.url);
          const before = await databaseState(database.url);
          const result = await runCli(['import', join(FIXTURES, fixture.file), '--account', String(owner.uid), '--dry-run', ...fixture.args ?? []], {
            env: { DATABASE_URL: database.url },
          });
          assert.equal(result.code, 0, result.stderr);
          assert.ok(result.stdout.startsWith(`Dry run (nothing is written). Reading ${fixture.layout}.\n`), result.stdout);
          assert.deepEqual(notes(result.stdout), fixture.notes);
          assert.match(result.stdout, new RegExp(
            `Would import ${fixture.imported.length} of ${fixture.rows} rows into account ${owner.uid}\\.\\n` +
              `Not imported: ${fixture.conflicts} conflicts \\(shortcode taken\\), ${fixture.rejected} rejected, 0 over the cap\\.\\n$`,
          ));
          assert.deepEqual(await databaseState(database.url), before);
        } finally {
          await database.drop();
        }
      });

      test(`${fixture.file}: imports the valid rows with their accesses and dates, keeping the taken code`, async () => {
        const database = await engine.fresh();
        try {
          const owner = await withTakenCode(database.url);
          const result = await runCli(['import', join(FIXTURES, fixture.file), '--account', String(owner.uid), ...fixture.args ?? []], {
            env: { DATABASE_URL: database.url },
          });
          assert.equal(result.code, 0, result.stderr);
          assert.deepEqual(notes(result.stdout), fixture.notes);
          assert.match(result.stdout, new RegExp(
            `Imported ${fixture.imported.length} of ${fixture.rows} rows into account ${owner.uid}, ` +
              `which now holds ${fixture.imported.length + 1} links \\(MaxLinks 20\\)\\.`,
          ));
          const state = await databaseState(database.url);
          assertCountsConsistent(state);
          assert.deepEqual(portable(state.links), [
            { shortCode: 'taken-code', pointsTo: 'https://example.com/original', accesses: 2, dateCreated: state.links[0]!.dateCreated, ...NO_DETAILS },
            ...fixture.imported.map((row) => ({ ...NO_DETAILS, ...row })),
          ]);
          assert.ok(state.links.every((link) => link.createdBy === owner.uid));
        } finally {
          await database.drop();
        }
      });
    }

    test('the cap is respected: rows past it are reported, and --raise-cap lifts it', async () => {
      const database = await engine.fresh();
      try {
        const owner = await withTakenCode(database.url, 3);
        const file = folder.file(`cap-${engine.name}.csv`);
        writeFileSync(file, `short,url\n${[1, 2, 3, 4].map((n) => `capped-${n},https://example.com/${n}`).join('\n')}\n`);
        const env = { DATABASE_URL: database.url };

        const dry = await runCli(['import', file, '--account', String(owner.uid), '--dry-run'], { env });
        assert.equal(dry.code, 0, dry.stderr);
        assert.deepEqual(notes(dry.stdout), [
          `line 4: over the cap: "capped-3" not imported; account ${owner.uid} already holds its maximum of 3 links (--raise-cap lifts it)`,
          `line 5: over the cap: "capped-4" not imported; account ${owner.uid} already holds its maximum of 3 links (--raise-cap lifts it)`,
        ]);

        const capped = await runCli(['import', file, '--account', String(owner.uid)], { env });
        assert.equal(capped.code, 0, capped.stderr);
        assert.match(capped.stdout, /Imported 2 of 4 rows into account \d+, which now holds 3 links \(MaxLinks 3\)\.\nNot imported: 0 conflicts \(shortcode taken\), 0 rejected, 2 over the cap\./);
        let state = await databaseState(database.url);
        assertCountsConsistent(state);
        assert.deepEqual(state.links.map((link) => link.shortCode), ['taken-code', 'capped-1', 'capped-2']);

        const raised = await runCli(['import', file, '--account', String(owner.uid), '--raise-cap'], { env });
        assert.equal(raised.code, 0, raised.stderr);
        assert.match(raised.stdout, /Imported 2 of 4 rows into account \d+, which now holds 5 links \(MaxLinks 5\)\.\nNot imported: 2 conflicts/);
        state = await databaseState(database.url);
        assertCountsConsistent(state);
        assert.equal(state.links.length, 5);
      } finally {
        await database.drop();
      }
    });

    test('without --account a new account receives the links, and its access code is printed once', async () => {
      const database = await engine.fresh();
      try {
        await withTakenCode(database.url);
        const env = { DATABASE_URL: database.url, DEFAULT_MAX_LINKS: '1' };
        const dry = await runCli(['import', join(FIXTURES, 'bitly.csv'), '--dry-run', '--domain', 'localhost'], { env });
        assert.equal(dry.code, 0, dry.stderr);
        assert.match(dry.stdout, /Would import 2 of 4 rows into a new account\./);
        assert.equal((await databaseState(database.url)).accounts.length, 1);

        const result = await runCli(['import', join(FIXTURES, 'bitly.csv'), '--domain', 'localhost'], { env });
        assert.equal(result.code, 0, result.stderr);
        const created = /Created account (\d+) for the import\. Its access code, shown only this once:\n {2}(\S+)\n/.exec(result.stdout);
        assert.ok(created, result.stdout);
        assert.match(created[2]!, UUID_V4);
        // DEFAULT_MAX_LINKS is 1, but an account made for an import holds all it brings.
        assert.match(result.stdout, new RegExp(`Imported 2 of 4 rows into account ${created[1]}, which now holds 2 links \\(MaxLinks 2\\)\\.`));
        const state = await databaseState(database.url);
        assertCountsConsistent(state);
        assert.deepEqual(state.links.filter((link) => link.createdBy === Number(created[1])).map((link) => link.shortCode), ['3bitOne', '3bitFour']);
      } finally {
        await database.drop();
      }
    });

    test('an import racing a server\'s creates for the same account never passes the cap', { timeout: 600_000 }, async () => {
      const database = await engine.fresh();
      try {
        const store = await openDatabase(database.url);
        let owner: SeededAccount;
        try {
          owner = await seedAccount(store, [], 1000);
        } finally {
          await store.close();
        }
        const server = await startServer({ databasePath: database.url });
        const file = folder.file(`race-${engine.name}.csv`);
        writeFileSync(file, `short,url\n${Array.from({ length: 1500 }, (_, i) => `race-file-${i},https://example.com/f/${i}`).join('\n')}\n`);

        const importing = runCli(['import', file, '--account', String(owner.uid)], { env: { DATABASE_URL: database.url } });
        const statuses: number[] = [];
        for (let wave = 0; wave < 15; wave++) {
          const replies = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
            const short = `race-http-${wave}-${i}`;
            const response = await fetch(`${server.url}/v1/link?${new URLSearchParams({ url: 'https://example.com/h', short })}`, {
              headers: { authorization: `Bearer ${owner.accessCode}` },
            });
            await response.body?.cancel();
            return response.status;
          }));
          statuses.push(...replies);
        }
        const result = await importing;
        assert.equal(result.code, 0, result.stderr);
        const imported = Number(/Imported (\d+) of 1500 rows/.exec(result.stdout)?.[1]);
        const created = statuses.filter((status) => status === 200).length;
        assert.deepEqual(new Set(statuses.filter((status) => status !== 200)), statuses.length === created ? new Set() : new Set([403]));
        assert.equal(imported + created, 1000, `imported ${imported}, created ${created}`);

        const state = await databaseState(database.url);
        assertCountsConsistent(state);
        assert.equal(state.links.length, 1000);
      } finally {
        await cleanup();
        await database.drop();
      }
    });

    test('imported codes of 1-4 characters resolve, redirect and delete through a running server', { timeout: 600_000 }, async () => {
      const database = await engine.fresh();
      try {
        await withTakenCode(database.url);
        const codeFile = folder.file(`short-codes-${engine.name}`);
        const imported = await runCli(['import', join(FIXTURES, 'yourls-semicolon.csv'), '--save-code', codeFile], {
          env: { DATABASE_URL: database.url },
        });
        assert.equal(imported.code, 0, imported.stderr);
        const uid = Number(/Imported 3 of 7 rows into account (\d+), which now holds 3 links/.exec(imported.stdout)?.[1]);
        assert.ok(uid > 0, imported.stdout);
        const code = readFileSync(codeFile, 'utf8').trim();
        const auth = { authorization: `Bearer ${code}` };
        const server = await startServer({ databasePath: database.url });

        // GET /v1/get/{code} counts on top of the imported clicks; HEAD does not.
        const head = await fetch(`${server.url}/v1/get/2a`, { method: 'HEAD' });
        assert.equal(head.status, 200);
        const resolved = await fetch(`${server.url}/v1/get/2a`);
        assert.equal(resolved.status, 200);
        assert.deepEqual(await resolved.json(), { ShortCode: '2a', PointsTo: 'https://example.com/y/2a?a=1,2', CreatedBy: uid, Accesses: 8 });

        // GET /{code} redirects, a 1-character code included; / stays the web UI.
        for (const [short, target] of [['1', 'https://example.com/y/one'], ['ozh', 'https://example.com/y/ozh']]) {
          const redirect = await fetch(`${server.url}/${short}`, { redirect: 'manual' });
          assert.equal(redirect.status, 302, short);
          assert.equal(redirect.headers.get('location'), target);
        }
        const home = await fetch(`${server.url}/`);
        assert.equal(home.status, 200);
        assert.match(home.headers.get('content-type') ?? '', /^text\/html/);
        await home.body?.cancel();
        const links = await (await fetch(`${server.url}/v1/links`, { headers: auth })).json() as { ShortCode: string; Accesses: number }[];
        assert.deepEqual(links.map((link) => [link.ShortCode, link.Accesses]), [['1', 1205], ['2a', 8], ['ozh', 1]]);

        // Its owner deletes it; then it is unknown everywhere.
        const deleted = await fetch(`${server.url}/v1/link?short=1`, { method: 'DELETE', headers: auth });
        assert.equal(deleted.status, 200);
        assert.equal(await deleted.text(), 'Success');
        assert.equal((await fetch(`${server.url}/v1/get/1`)).status, 404);
        const gone = await fetch(`${server.url}/1`, { redirect: 'manual' });
        assert.equal(gone.status, 404);
        assert.match(gone.headers.get('content-type') ?? '', /^text\/html/);
        await gone.body?.cancel();
      } finally {
        await cleanup();
        await database.drop();
      }
    });

    test('files it cannot read the way they are told are one line and no rows', async () => {
      const database = await engine.fresh();
      try {
        const owner = await withTakenCode(database.url);
        const env = { DATABASE_URL: database.url };
        const account = ['--account', String(owner.uid)];
        const notData = folder.file(`not-data-${engine.name}.json`);
        writeFileSync(notData, '{\n  "links": [{"url": "https://example.com"}]\n}\n');
        const brokenJson = folder.file(`broken-${engine.name}.json`);
        writeFileSync(brokenJson, '{\n  "data": [\n');
        const cases: [string[], number, RegExp][] = [
          // Told to split at commas, the semicolon file's header is one column without a url.
          [['import', join(FIXTURES, 'yourls-semicolon.csv'), '--delimiter', 'comma', ...account], 1, /line 1: no column holds the target URL .*found "keyword;url;title;timestamp;ip;clicks"/],
          [['import', join(FIXTURES, 'yourls-semicolon.csv'), '--delimiter', 'pipe', ...account], 2, /--delimiter must be comma, semicolon or tab/],
          [['import', join(FIXTURES, 'kutt-api.json'), '--delimiter', 'tab', '--format', 'json', ...account], 2, /--delimiter is for CSV files/],
          [['import', join(FIXTURES, 'kutt-api.json'), '--format', 'xml', ...account], 2, /--format must be csv, jsonl or json/],
          [['import', notData, ...account], 1, /a JSON document must be an array of links, or an object whose "data" is one \(Kutt's API answer\); found the keys "links"/],
          [['import', brokenJson, ...account], 1, /broken-.*\.json: not a valid JSON document/],
        ];
        for (const [args, status, message] of cases) {
          const result = await runCli(args, { env });
          assert.equal(result.code, status, `${args.join(' ')}\n${result.stdout}\n${result.stderr}`);
          assert.match(result.stderr, message);
        }
        assert.deepEqual((await databaseState(database.url)).links.map((link) => link.shortCode), ['taken-code']);
      } finally {
        await database.drop();
      }
    });

    test('--delimiter forces the separator; a one-line Kutt answer and a JSON array on stdin are documents too', async () => {
      const database = await engine.fresh();
      try {
        const owner = await withTakenCode(database.url);
        const env = { DATABASE_URL: database.url };
        const account = ['--account', String(owner.uid)];
        // A header with more commas than semicolons, but the file is semicolon-separated.
        const forced = folder.file(`forced-${engine.name}.txt`);
        writeFileSync(forced, 'code;url;note, with, some, commas\nf1;https://example.com/f?a=1,2;"x; y"\n');
        const semicolon = await runCli(['import', forced, '--delimiter', ';', ...account], { env });
        assert.equal(semicolon.code, 0, semicolon.stderr);
        assert.match(semicolon.stdout, /Reading generic layout \(semicolon-separated\): shortcode ← code, url ← url/);

        const kutt = JSON.stringify({ total: 1, limit: 10, skip: 0, data: [{ address: 'k9', target: 'https://example.com/k9', visit_count: 2, created_at: '2024-01-01T00:00:00.000Z', banned: false, password: false }] });
        const oneLine = await runCli(['import', '-', ...account], { env, input: `${kutt}\n` });
        assert.equal(oneLine.code, 0, oneLine.stderr);
        assert.match(oneLine.stdout, /Reading Kutt layout \(JSON document, its "data"\)/);

        const array = await runCli(['import', '-', ...account], {
          env,
          input: '[\n  {"ShortCode": "arr", "PointsTo": "https://example.com/arr", "Accesses": 3},\n  "not an object"\n]\n',
        });
        assert.equal(array.code, 0, array.stderr);
        assert.match(array.stdout, /Reading Shortlink layout \(JSON array\)/);
        assert.deepEqual(notes(array.stdout), ['entry 2: rejected: not a JSON object']);

        const state = await databaseState(database.url);
        assertCountsConsistent(state);
        assert.deepEqual(portable(state.links).slice(1).map((link) => [link.shortCode, link.pointsTo, link.accesses]), [
          ['f1', 'https://example.com/f?a=1,2', 0],
          ['k9', 'https://example.com/k9', 2],
          ['arr', 'https://example.com/arr', 3],
        ]);
      } finally {
        await database.drop();
      }
    });

    test('a domain column puts rows on their domain, refused while unregistered, registered by --create-domains', async () => {
      const database = await engine.fresh();
      try {
        const owner = await withTakenCode(database.url);
        const file = folder.file(`domains-${engine.name}.csv`);
        writeFileSync(file, [
          'shortCode,longUrl,domain,forwardQuery,visits',
          'taken-code,https://example.com/brand,go.brand.test,true,2',
          'shared,https://example.com/default,,true,1',
          'shared,https://example.com/dup,GO.brand.test:443,,0',
          'shared,https://example.com/brand-shared,https://go.brand.test/,no,0',
          'other,https://example.com/o,localhost,,0',
          'bad,https://example.com/b,not a host,,0',
          'loop,https://go.brand.test/x,,,0',
          'flag,https://example.com/f,,maybe,0',
          '',
        ].join('\n'));
        const env = { DATABASE_URL: database.url };
        const unregistered = 'rejected: the domain "go.brand.test" is not registered (register it with "shortlink admin domains add https://go.brand.test", ' +
          'or give --create-domains; --domain HOST puts every row on one domain)';
        const dry = await runCli(['import', file, '--account', String(owner.uid), '--dry-run'], { env });
        assert.equal(dry.code, 0, dry.stderr);
        assert.deepEqual(notes(dry.stdout).slice(0, 3), [`line 2: ${unregistered}`, `line 4: ${unregistered}`, `line 5: ${unregistered}`]);

        const result = await runCli(['import', file, '--account', String(owner.uid), '--create-domains'], { env });
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stdout, /domain ← domain, forward query ← forwardQuery\.\nRegistered the domain go\.brand\.test \(origin https:\/\/go\.brand\.test\)\.\n/);
        const reported = notes(result.stdout);
        assert.equal(reported.length, 4, result.stdout);
        assert.match(reported[0]!, /^line 5: conflict: the shortcode "go\.brand\.test\/shared" appears earlier in the file \(line 4\)$/);
        assert.equal(reported[1], 'line 7: rejected: the domain "not a host" is not a host name');
        assert.match(reported[2]!, /^line 8: rejected: url .*/);
        assert.equal(reported[3], 'line 9: rejected: forwardQuery must be true or false, got "maybe"');
        const routing = await routingState(database.url);
        assert.deepEqual(routing.map((link) => [link.shortCode, link.forwardQuery]), [
          ['taken-code', false], ['go.brand.test/taken-code', true], ['shared', true], ['go.brand.test/shared', false], ['other', false],
        ]);
        assertCountsConsistent(await databaseState(database.url));
      } finally {
        await database.drop();
      }
    });

    test('rows without a shortcode get generated ones', async () => {
      const database = await engine.fresh();
      try {
        const owner = await withTakenCode(database.url);
        const file = folder.file(`urls-${engine.name}.csv`);
        writeFileSync(file, 'url\nhttps://example.com/g/1\nhttps://example.com/g/2\n');
        const result = await runCli(['import', file, '--account', String(owner.uid)], { env: { DATABASE_URL: database.url } });
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stdout, /generic layout: shortcodes generated, url ← url, accesses 0, date created now/);
        const state = await databaseState(database.url);
        assertCountsConsistent(state);
        assert.deepEqual(state.links.slice(1).map((link) => link.pointsTo), ['https://example.com/g/1', 'https://example.com/g/2']);
        assert.ok(state.links.slice(1).every((link) => /^[A-Za-z0-9]{6}$/.test(link.shortCode)));
      } finally {
        await database.drop();
      }
    });
  });

  describe(`export → import round trip onto a fresh database (${engine.name})`, () => {
    for (const format of ['jsonl', 'csv'] as const) {
      test(`${format}: every link comes back with its target, accesses and date, and the counts hold`, async () => {
        const source = await engine.fresh();
        const target = await engine.fresh();
        try {
          const store = await openDatabase(source.url);
          try {
            await seedAccount(store, [
              { short: 'trip-plain', url: 'https://example.com/plain', resolutions: 3 },
              { short: 'trip-comma', url: 'https://example.com/a,b,c', resolutions: 1, title: 'Commas, "quotes" and ü', tags: ['alpha', 'b.c', 'd_e-f'] },
              { short: 'trip-quote', url: 'https://example.com/say?"hi"&x=\'y\'', tags: ['one'], expiresAt: '2099-12-31T23:59:59.999Z' },
              // Used up and expired: both come back as they were, not resolving.
              { short: 'trip.dots_and~tilde-', url: 'https://bücher.example/straße?q=ü', resolutions: 5, maxVisits: 5, title: '🚀 Start' },
              { short: 'trip-expired', url: 'https://example.com/old', expiresAt: '2001-01-01T00:00:00.000Z', maxVisits: 2_147_483_647 },
            ]);
            await seedAccount(store, [{ short: 'trip-other', url: 'https://example.org/', resolutions: 2 }]);
            // The same shortcode on another domain, forwarding the query and routed by a rule.
            await store.domains.putDomain({
              host: 'go.trip.test', origin: 'https://go.trip.test', notFoundUrl: null, rootUrl: null, expiredUrl: null, dateCreated: new Date().toISOString(),
            });
            await seedAccount(store, [{
              short: 'go.trip.test/trip-plain', url: 'https://example.com/on-domain', resolutions: 1, forwardQuery: true,
              rules: '[{"if":{"os":["ios"],"query":{"ref":["qr","nfc"]}},"to":"https://apps.example.com/ios"}]',
            }]);
          } finally {
            await store.close();
          }
          const file = folder.file(`trip-${engine.name}.${format}`);
          const exported = await runCli(['export', '--output', file], { env: { DATABASE_URL: source.url } });
          assert.equal(exported.code, 0, exported.stderr);

          assert.equal((await runCli(['migrate'], { env: { DATABASE_URL: target.url } })).code, 0);
          const refused = await runCli(['import', file, '--dry-run'], { env: { DATABASE_URL: target.url } });
          assert.equal(refused.code, 0, `${refused.stdout}\n${refused.stderr}`);
          assert.deepEqual(notes(refused.stdout), [
            'line 8: rejected: the domain "go.trip.test" is not registered (register it with "shortlink admin domains add https://go.trip.test", ' +
              'or give --create-domains; --domain HOST puts every row on one domain)',
          ].map((note) => (format === 'csv' ? note : note.replace('line 8', 'line 7'))));
          const imported = await runCli(['import', file, '--create-domains'], { env: { DATABASE_URL: target.url } });
          assert.equal(imported.code, 0, imported.stderr);
          assert.match(imported.stdout, /^Registered the domain go\.trip\.test \(origin https:\/\/go\.trip\.test\)\.$/m);
          assert.match(imported.stdout, /Imported 7 of 7 rows into account 1, which now holds 7 links/);
          assert.match(imported.stdout, new RegExp(
            'Reading Shortlink layout: .*title ← Title, tags ← Tags, expires ← ExpiresAt, visit limit ← MaxVisits, ' +
              'domain ← Domain, forward query ← ForwardQuery, rules ← Rules\\.',
          ));

          const before = await databaseState(source.url);
          const after = await databaseState(target.url);
          assert.ok(before.links.some((link) => link.title !== null && link.tags !== '' && link.maxVisits === null), 'the seed has details');
          assert.deepEqual(portable(after.links), portable(before.links));
          assertCountsConsistent(after);
          assert.deepEqual(after.accounts.map((a) => a.held), [7]);
          assert.deepEqual(await routingState(target.url), await routingState(source.url));
          assert.ok((await routingState(target.url)).some((link) => link.shortCode === 'go.trip.test/trip-plain' && link.forwardQuery && link.rules !== null));

          // A second export reads the same as the first, but for the owner.
          const again = await runCli(['export', '--format', format], { env: { DATABASE_URL: target.url } });
          const strip = (text: string) => text.replace(/("?CreatedBy"?:\d+)|(,\d+,(\d+),(\d{4}-))/g, (_m, json, csv, accesses, year) =>
            json !== undefined ? '"CreatedBy":0' : `,0,${accesses},${year}`);
          assert.equal(strip(again.stdout), strip(readFileSync(file, 'utf8')));
        } finally {
          await source.drop();
          await target.drop();
        }
      });
    }
  });
}

describe('the round trip through the server', () => {
  after(cleanup);

  test('imported links resolve with their counts carried on, under the printed access code', async () => {
    const source = folder.file('served-source.db');
    const store = await openDatabase(source);
    try {
      await seedAccount(store, [{ short: 'served-link', url: 'https://example.com/served', resolutions: 4 }]);
    } finally {
      await store.close();
    }
    const file = folder.file('served.jsonl');
    assert.equal((await runCli(['export', '--output', file], { env: { DATABASE_URL: source } })).code, 0);
    const target = folder.file('served-target.db');
    const codeFile = folder.file('import-code');
    const imported = await runCli(['import', file, '--save-code', codeFile], { env: { DATABASE_URL: target } });
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stdout, /Created account 1 for the import; its access code is in .*import-code \(mode 0600\)\./);
    assert.doesNotMatch(imported.stdout, UUID_V4);
    assert.equal(statSync(codeFile).mode & 0o777, 0o600);
    const code = readFileSync(codeFile, 'utf8').trim();

    const server = await startServer({ databasePath: target });
    const resolved = await (await fetch(`${server.url}/v1/get/served-link`)).json() as { Accesses: number };
    assert.equal(resolved.Accesses, 5);
    const links = await (await fetch(`${server.url}/v1/links`, { headers: { authorization: `Bearer ${code}` } })).json() as unknown[];
    assert.equal(links.length, 1);
  });
});

describe('import input handling', () => {
  test('reads stdin with "-", guessing the format from the first character', async (t) => {
    // Without DATABASE_URL the CLI uses ./data/shortlinks.db of the folder it runs in: an
    // empty one here, never the working tree's (where `npm start` may have made one).
    const empty = tempFolder();
    t.after(() => empty.remove());
    const database = folder.file('stdin.db');
    const env = { DATABASE_URL: database };
    const csv = await runCli(['import', '-', '--dry-run'], { env: { ...env, DATABASE_URL: undefined }, cwd: empty.path, input: 'url\nhttps://example.com\n' });
    // The default database does not exist in a dry run: that is reported, not created.
    assert.equal(csv.code, 1);
    assert.match(csv.stderr, /there is no database/);
    assert.equal(existsSync(join(empty.path, 'data')), false, 'nothing created');

    const json = await runCli(['import', '-'], { env, input: '{"ShortCode":"stdin-json","PointsTo":"https://example.com/j","Accesses":2}\n' });
    assert.equal(json.code, 0, json.stderr);
    assert.match(json.stdout, /Reading Shortlink layout: shortcode ← ShortCode, url ← PointsTo, accesses ← Accesses, date created now/);
    const plain = await runCli(['import', '-', '--account', '1'], { env, input: '\ufeffshort,url\nstdin-csv,https://example.com/c\n' });
    assert.equal(plain.code, 0, plain.stderr);
    const state = await databaseState(database);
    assert.deepEqual(state.links.map((link) => [link.shortCode, link.accesses]), [['stdin-json', 2], ['stdin-csv', 0]]);
    assertCountsConsistent(state);
  });

  test('a file it cannot use is one line and exit 1', async () => {
    // Its own database and account: nothing carried over from the test before.
    const database = folder.file('unusable.db');
    const env = { DATABASE_URL: database };
    const owner = await withTakenCode(database);
    const noUrl = folder.file('no-url.csv');
    writeFileSync(noUrl, 'code,clicks\nabcde,1\n');
    const broken = folder.file('broken.csv');
    writeFileSync(broken, 'short,url\nbroken-1,https://example.com/1\n"broken-2"x,https://example.com/2\n');
    const cases: [string[], RegExp][] = [
      [['import', folder.file('absent.csv')], /cannot read .*absent\.csv \(ENOENT\)/],
      [['import', noUrl], /line 1: no column holds the target URL/],
      [['import', broken, '--account', String(owner.uid)], /broken\.csv: line 3: unexpected "x" after the closing quote/],
      [['import', noUrl, '--account', '999'], /there is no account 999/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args, { env });
      assert.equal(result.code, 1, `${args.join(' ')}\n${result.stdout}`);
      assert.match(result.stderr, message);
      if (args[1] === broken) {
        // The rows before the broken one are imported, and the report says so.
        assert.match(result.stdout, new RegExp(`Stopped after 1 rows\\.\nImported 1 of 1 rows into account ${owner.uid}\\b`));
      }
    }
    const state = await databaseState(database);
    assert.ok(state.links.some((link) => link.shortCode === 'broken-1'));
    assertCountsConsistent(state);
  });
});

describe('hostile import files', () => {
  const TOO_LONG = 'longer than 65,536 characters, far more than any link needs; it was not read';
  // A heap far smaller than the long line's text times the 35 copies the reader once made.
  const SMALL_HEAP = { command: [process.execPath, '--max-old-space-size=32', CLI_ENTRY] } as const;
  const LONG = 24 * 1024 * 1024;

  test('a CSV record or JSON line far past any link is refused on its own, in bounded memory', { timeout: 180_000 }, async () => {
    const database = folder.file('long-lines.db');
    const owner = await withTakenCode(database);
    const env = { DATABASE_URL: database };
    const csv = folder.file('long-line.csv');
    // The second record is one quoted field spanning lines: the record is bounded, not a line.
    writeFileSync(csv, `short,url\nlong-csv-1,https://example.com/1\nlong-csv-2,"https://example.com/${'a\n'.repeat(LONG / 2)}"\nlong-csv-3,https://example.com/3\n`);
    const jsonl = folder.file('long-line.jsonl');
    writeFileSync(jsonl, `{"short":"long-json-1","url":"https://example.com/1"}\n{"short":"long-json-2","url":"https://example.com/${'b'.repeat(LONG)}"}\n{"short":"long-json-3","url":"https://example.com/3"}\n`);
    for (const [file, note] of [[csv, `line 3: rejected: the record is ${TOO_LONG}`], [jsonl, `line 2: rejected: the line is ${TOO_LONG}`]] as const) {
      const result = await runCli(['import', file, '--account', String(owner.uid)], { env, ...SMALL_HEAP, timeoutMs: 150_000 });
      assert.equal(result.code, 0, `${file}\n${result.stdout}\n${result.stderr.slice(0, 2000)}`);
      assert.deepEqual(notes(result.stdout), [note]);
      assert.match(result.stdout, /Imported 2 of 3 rows/);
    }
    const codes = (await databaseState(database)).links.map((link) => link.shortCode).sort();
    assert.deepEqual(codes, ['long-csv-1', 'long-csv-3', 'long-json-1', 'long-json-3', 'taken-code']);
  });

  test('bytes that are not UTF-8 stop the import at their line instead of becoming U+FFFD', async () => {
    const database = folder.file('not-utf8.db');
    const owner = await withTakenCode(database);
    const env = { DATABASE_URL: database };
    const csv = folder.file('latin1.csv');
    writeFileSync(csv, Buffer.concat([
      Buffer.from('short,url\nutf8-ok,https://example.com/caf\u00e9\n'),
      Buffer.from('latin1-row,https://example.com/caf'), Buffer.from([0xe9]), Buffer.from('\n'),
    ]));
    const jsonl = folder.file('latin1.jsonl');
    writeFileSync(jsonl, Buffer.concat([Buffer.from('{"short":"j-latin1","url":"https://example.com/'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]));
    for (const [file, line] of [[csv, 3], [jsonl, 1]] as const) {
      const result = await runCli(['import', file, '--account', String(owner.uid)], { env });
      assert.equal(result.code, 1, `${file}\n${result.stdout}\n${result.stderr}`);
      assert.match(result.stderr, new RegExp(`latin1\\.(csv|jsonl): line ${line}: the file is not UTF-8 text there`));
    }
    const links = (await databaseState(database)).links;
    assert.deepEqual(links.map((link) => link.shortCode).sort(), ['taken-code', 'utf8-ok']);
    assert.ok(links.every((link) => !link.pointsTo.includes('\ufffd') && !link.pointsTo.includes('%EF%BF%BD')), JSON.stringify(links));
  });

  test('a JSON row whose target is an object, an array or a lone surrogate is reported, and the other rows are imported', async () => {
    const database = folder.file('object-target.db');
    const owner = await withTakenCode(database);
    const data = [1, 2, 3, 4, 5, 6].map((n) => ({ address: `obj-${n}`, target: `https://example.com/${n}`, visit_count: n, banned: false, password: false }));
    data[2]!.target = { toString: 'x' } as unknown as string;
    data[4]!.target = ['https://example.com/array'] as unknown as string;
    data[5]!.target = 'https://example.com/\ud800';
    const file = folder.file('object-target.json');
    writeFileSync(file, JSON.stringify({ total: 6, data }));
    const result = await runCli(['import', file, '--account', String(owner.uid)], { env: { DATABASE_URL: database } });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.deepEqual(notes(result.stdout), [
      'entry 3: rejected: the value of "target" is not text but an object',
      'entry 5: rejected: the value of "target" is not text but an array',
      'entry 6: rejected: the value of "target" is not well-formed Unicode text (it holds a lone surrogate)',
    ]);
    assert.match(result.stdout, /Imported 3 of 6 rows/);
  });
});

describe('long imports and exports', () => {
  test('show progress on stderr every 10,000 rows, and keep the cap across batches in a dry run', { timeout: 600_000 }, async () => {
    const database = folder.file('long.db');
    const owner = await withTakenCode(database, 11_500);
    const rows = 12_000;
    const lines = ['keyword,url,clicks'];
    for (let i = 0; i < rows; i++) lines.push(`long-${i},https://example.com/long/${i},${i}`);
    const file = folder.file('long.csv');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const env = { DATABASE_URL: database };

    const dry = await runCli(['import', file, '--account', String(owner.uid), '--dry-run'], { env });
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stderr, /^checked 10,000 rows \(/m);
    assert.match(dry.stdout, /Would import 11499 of 12000 rows .*\nNot imported: 0 conflicts \(shortcode taken\), 0 rejected, 501 over the cap\./);

    const real = await runCli(['import', file, '--account', String(owner.uid), '--raise-cap'], { env });
    assert.equal(real.code, 0, real.stderr);
    assert.match(real.stderr, /^read 10,000 rows \(/m);
    assert.match(real.stdout, /Imported 12000 of 12000 rows into account \d+, which now holds 12001 links \(MaxLinks 12001\)/);

    const exported = await runCli(['export'], { env });
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(exported.stderr, /^exported 10,000 rows \(/m);
    const links = jsonLines<{ ShortCode: string; Accesses: number }>(exported.stdout);
    assert.equal(links.length, rows + 1);
    assert.deepEqual(links.at(-1), { ...links.at(-1), ShortCode: `long-${rows - 1}`, Accesses: rows - 1 });
    assertCountsConsistent(await databaseState(database));
  });
});
