/**
 * The commands that go through a running server: account create/info, shorten, links,
 * resolve, delete, with the access code from the environment or a 0600 file, never argv.
 */
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../helpers/private-services.ts';
import { cleanup, E2E_BASE_URL, startServer, type ServerProcess } from '../helpers/process.ts';
import { databaseState, routingState } from './database-state.ts';
import { runCli, tempFolder, type RunOptions } from './support.ts';

const ADMIN_TOKEN = 'cli-api-commands-admin-token-0123456789';
/** A domain registered on the test server besides the default one. */
const DOMAIN = 'go.cli.test';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface AccountJson {
  Uid: number;
  AccessCode: string;
  DateCreated: string;
  MaxLinks: number;
}

describe('commands against a running server', () => {
  let server: ServerProcess;
  const folder = tempFolder();

  before(async () => {
    server = await startServer({
      env: { DEFAULT_MAX_LINKS: '5', WEBHOOK_SECRET_KEY: 'a-cli-webhook-key-of-at-least-32-chars', WEBHOOK_ALLOW_PRIVATE: 'true', ADMIN_TOKEN },
    });
    const registered = await fetch(`${server.url}/v1/admin/domain?origin=${encodeURIComponent(`https://${DOMAIN}`)}`, {
      method: 'PUT', headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    assert.equal(registered.status, 200, await registered.text());
  });
  after(async () => {
    await cleanup();
    folder.remove();
  });

  /** Runs a command against the test server (through SHORTLINK_SERVER unless --server is given). */
  function cli(args: string[], options: RunOptions = {}) {
    return runCli(args, { ...options, env: { SHORTLINK_SERVER: server.url, ...options.env } });
  }

  async function newAccount(): Promise<AccountJson> {
    const result = await cli(['account', 'create']);
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout) as AccountJson;
  }

  let files = 0;
  /** A code file holding the code, with the given mode. */
  function codeFile(code: string, mode = 0o600): string {
    const path = folder.file(`code-${++files}`);
    writeFileSync(path, `${code}\n`, { mode });
    chmodSync(path, mode);
    return path;
  }

  test('account create prints the new account as JSON and warns that the code is shown once', async () => {
    const result = await cli(['account', 'create', '--server', server.url], { env: { SHORTLINK_SERVER: 'http://127.0.0.1:1' } });
    assert.equal(result.code, 0, result.stderr);
    const account = JSON.parse(result.stdout) as AccountJson;
    assert.deepEqual(Object.keys(account), ['Uid', 'AccessCode', 'DateCreated', 'MaxLinks']);
    assert.match(account.AccessCode, UUID_V4);
    assert.equal(account.MaxLinks, 5);
    assert.match(result.stderr, /cannot be shown again/);
  });

  test('account create --save-code writes the code to a new 0600 file, and refuses an existing one', async () => {
    const path = folder.file('saved-code');
    const result = await cli(['account', 'create', '--save-code', path]);
    assert.equal(result.code, 0, result.stderr);
    const code = readFileSync(path, 'utf8').trim();
    assert.match(code, UUID_V4);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    // The code went to the file only: not to stdout, nor to stderr.
    const printed = JSON.parse(result.stdout) as Omit<AccountJson, 'AccessCode'>;
    assert.deepEqual(Object.keys(printed), ['Uid', 'DateCreated', 'MaxLinks']);
    assert.ok(!result.stdout.includes(code) && !result.stderr.includes(code));
    assert.match(result.stderr, /saved in .*not printed; use --code-file/);

    const info = await cli(['account', 'info', '--code-file', path]);
    assert.equal(info.code, 0, info.stderr);
    assert.deepEqual(JSON.parse(info.stdout), { Uid: printed.Uid, AccessCode: code, DateCreated: printed.DateCreated, MaxLinks: printed.MaxLinks });

    const again = await cli(['account', 'create', '--save-code', path]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists/);
    assert.equal(again.stdout, '', 'no account is created when its code could not be kept');
  });

  test('account info reads the code from SHORTLINK_ACCESS_CODE or --code-file', async () => {
    const account = await newAccount();
    const fromEnv = await cli(['account', 'info'], { env: { SHORTLINK_ACCESS_CODE: account.AccessCode } });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.deepEqual(JSON.parse(fromEnv.stdout), account);
    // The file wins over the environment.
    const fromFile = await cli(['account', 'info', '--code-file', codeFile(account.AccessCode)], {
      env: { SHORTLINK_ACCESS_CODE: '0b8e6f0e-5d9c-4a51-9f7e-3c2d1b0a9f88' },
    });
    assert.equal(fromFile.code, 0, fromFile.stderr);
    assert.deepEqual(JSON.parse(fromFile.stdout), account);
    // --json is taken by every command, and changes nothing where the output is JSON already.
    const withFlag = await cli(['account', 'info', '--json'], { env: { SHORTLINK_ACCESS_CODE: account.AccessCode } });
    assert.equal(withFlag.stdout, fromEnv.stdout);
  });

  test('a code file that others may read or write is refused, naming the fix', async () => {
    const account = await newAccount();
    for (const mode of [0o644, 0o640, 0o604, 0o660, 0o602]) {
      const path = codeFile(account.AccessCode, mode);
      const result = await cli(['links', '--code-file', path]);
      assert.equal(result.code, 1, `mode ${mode.toString(8)}`);
      assert.match(result.stderr, new RegExp(`its mode is 0${mode.toString(8)}.*chmod 600`));
      assert.equal(result.stdout, '');
    }
    const ownerOnly = await cli(['links', '--code-file', codeFile(account.AccessCode, 0o400)]);
    assert.equal(ownerOnly.code, 0, ownerOnly.stderr);
  });

  test('a code file that is a symbolic link, missing or empty is refused', async () => {
    const account = await newAccount();
    const link = folder.file('code-link');
    symlinkSync(codeFile(account.AccessCode), link);
    const cases: [string, RegExp][] = [
      [link, /symbolic link/],
      [folder.file('missing'), /cannot read the code file .*ENOENT/],
      [codeFile('   '), /is empty/],
      [folder.path, /not a regular file/],
    ];
    for (const [path, message] of cases) {
      const result = await cli(['account', 'info', '--code-file', path]);
      assert.equal(result.code, 1, path);
      assert.match(result.stderr, message);
    }
  });

  test('without an access code, a protected command says where to put one', async () => {
    const result = await cli(['links']);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^shortlink links: no access code: set SHORTLINK_ACCESS_CODE or pass --code-file PATH/);
  });

  test('shorten prints the short URL, with a chosen or generated shortcode', async () => {
    const account = await newAccount();
    const env = { SHORTLINK_ACCESS_CODE: account.AccessCode };
    const chosen = await cli(['shorten', 'https://example.com/chosen', '--short', 'cli-chosen'], { env });
    assert.equal(chosen.code, 0, chosen.stderr);
    assert.equal(chosen.stdout, `${E2E_BASE_URL}/cli-chosen\n`);
    const generated = await cli(['shorten', 'https://example.com/generated'], { env });
    assert.equal(generated.code, 0, generated.stderr);
    assert.match(generated.stdout, new RegExp(`^${E2E_BASE_URL}/[A-Za-z0-9]{6}\\n$`));
  });

  test('shorten takes a title, tags, an expiry and a visit limit; --json prints the short URL and the LinkDetails', async () => {
    const account = await newAccount();
    const env = { SHORTLINK_ACCESS_CODE: account.AccessCode };
    const expires = '2099-01-02T03:04:05.000Z';
    const result = await cli([
      'shorten', 'https://example.com/detailed', '--short', 'cli-detailed', '--title', 'Launch page', '--tags', 'Alpha, beta',
      '--expires', expires, '--max-visits', '7', '--json',
    ], { env });
    assert.equal(result.code, 0, result.stderr);
    const created = JSON.parse(result.stdout) as Record<string, unknown>;
    assert.deepEqual(created, {
      ShortUrl: `${E2E_BASE_URL}/cli-detailed`, ShortCode: 'cli-detailed', PointsTo: 'https://example.com/detailed', CreatedBy: account.Uid,
      Accesses: 0, DateCreated: created.DateCreated, Title: 'Launch page', Tags: ['alpha', 'beta'], ExpiresAt: expires, MaxVisits: 7,
      Domain: null, ForwardQuery: false, Protected: false, Rules: [],
    });
    const badLimit = await cli(['shorten', 'https://example.com/x', '--max-visits', 'many'], { env });
    assert.equal(badLimit.code, 2);
    assert.match(badLimit.stderr, /--max-visits must be a whole number/);
  });

  test('edit changes a link and an empty value clears a field; --json prints the LinkDetails', async () => {
    const account = await newAccount();
    const env = { SHORTLINK_ACCESS_CODE: account.AccessCode };
    await cli(['shorten', 'https://example.com/before', '--short', 'cli-edit', '--title', 'Old', '--tags', 'a,b', '--max-visits', '1'], { env });
    await cli(['resolve', 'cli-edit']);
    const gone = await cli(['resolve', 'cli-edit']);
    assert.match(gone.stderr, /reached its visit limit \(HTTP 410\)/);

    const changed = await cli(['edit', 'cli-edit', '--url', 'https://example.com/after', '--title', 'New', '--max-visits', '', '--json'], { env });
    assert.equal(changed.code, 0, changed.stderr);
    const details = JSON.parse(changed.stdout) as Record<string, unknown>;
    assert.deepEqual(
      { ...details, DateCreated: undefined },
      { ShortCode: 'cli-edit', PointsTo: 'https://example.com/after', CreatedBy: account.Uid, Accesses: 1, DateCreated: undefined,
        Title: 'New', Tags: ['a', 'b'], ExpiresAt: null, MaxVisits: null, Domain: null, ForwardQuery: false, Protected: false, Rules: [] },
    );
    assert.equal((await cli(['resolve', 'cli-edit'])).code, 0, 'clearing the limit makes it resolve again');

    const cleared = await cli(['edit', 'cli-edit', '--title', '', '--tags', ''], { env });
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.match(cleared.stdout, /^ShortCode {5}cli-edit\nDomain {8}- \(the default domain\)\nPointsTo {6}https:\/\/example\.com\/after\n[\s\S]*Title {9}-\nTags {10}-\n/);

    const nothing = await cli(['edit', 'cli-edit'], { env });
    assert.equal(nothing.code, 2);
    assert.match(nothing.stderr, /nothing to change/);
    const unknown = await cli(['edit', 'cli-edit-none', '--title', 'x'], { env });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /\(HTTP 404\)/);
  });

  test('shorten --domain, --forward-query, --rule and --password-file make a routed, protected link on that domain', async () => {
    const account = await newAccount();
    const env = { SHORTLINK_ACCESS_CODE: account.AccessCode };
    const passwordFile = folder.file('link-password');
    writeFileSync(passwordFile, 'correct horse battery\n');
    const created = await cli([
      'shorten', 'https://example.com/app', '--short', 'cli-routed', '--domain', DOMAIN, '--forward-query',
      '--rule', '{"if":{"os":"ios"},"to":"https://apps.example.com/ios"}',
      '--rule', '{"if":{"device":["mobile","tablet"],"query":{"ref":"qr"}},"to":"https://example.com/qr"}',
      '--password-file', passwordFile, '--json',
    ], { env });
    assert.equal(created.code, 0, created.stderr);
    const details = JSON.parse(created.stdout) as Record<string, unknown>;
    assert.equal(details.ShortUrl, `https://${DOMAIN}/cli-routed`);
    assert.deepEqual(
      { Domain: details.Domain, ForwardQuery: details.ForwardQuery, Protected: details.Protected, Rules: details.Rules },
      {
        Domain: DOMAIN, ForwardQuery: true, Protected: true,
        Rules: [
          { If: { os: ['ios'] }, To: 'https://apps.example.com/ios' },
          { If: { device: ['mobile', 'tablet'], query: { ref: ['qr'] } }, To: 'https://example.com/qr' },
        ],
      },
    );
    assert.ok(!created.stdout.includes('correct horse'), 'the password is never printed');

    // The same shortcode is free on the default domain.
    assert.equal((await cli(['shorten', 'https://example.com/plain', '--short', 'cli-routed'], { env })).code, 0);
    // Resolving on the domain needs the password; on the default domain it does not.
    const locked = await cli(['resolve', 'cli-routed', '--domain', DOMAIN]);
    assert.equal(locked.code, 1);
    assert.match(locked.stderr, /a password is required \(HTTP 401\)/);
    const wrong = await cli(['resolve', 'cli-routed', '--domain', DOMAIN, '--password-file', '-'], { input: 'not the password\n' });
    assert.match(wrong.stderr, /the password is wrong \(HTTP 401\)/);
    const unlocked = await cli(['resolve', 'cli-routed', '--domain', DOMAIN, '--password-file', '-'], { input: 'correct horse battery\n' });
    assert.equal(unlocked.code, 0, unlocked.stderr);
    assert.equal((JSON.parse(unlocked.stdout) as { PointsTo: string }).PointsTo, 'https://example.com/app');
    const plain = await cli(['resolve', 'cli-routed']);
    assert.equal((JSON.parse(plain.stdout) as { PointsTo: string }).PointsTo, 'https://example.com/plain');

    const listed = await cli(['links'], { env });
    assert.match(listed.stdout, new RegExp(`^${DOMAIN.replaceAll('.', '\\.')}/cli-routed +1 PRQ  https://example\\.com/app$`, 'm'));
    assert.match(listed.stdout, /^cli-routed +1 {6}https:\/\/example\.com\/plain$/m);
    const onDomain = await cli(['links', '--domain', DOMAIN, '--json'], { env });
    assert.deepEqual((JSON.parse(onDomain.stdout) as { Domain: string }[]).map((link) => link.Domain), [DOMAIN]);

    const stats = await cli(['stats', 'cli-routed', '--domain', DOMAIN], { env });
    assert.equal(stats.code, 0, stats.stderr);
    assert.match(stats.stdout, new RegExp(`^${DOMAIN.replaceAll('.', '\\.')}/cli-routed: \\d+ visits`));

    const deleted = await cli(['delete', 'cli-routed', '--domain', DOMAIN], { env });
    assert.equal(deleted.stdout, `Deleted ${DOMAIN}/cli-routed\n`);
    const left = JSON.parse((await cli(['links', '--json'], { env })).stdout) as { ShortCode: string; Domain: string | null }[];
    assert.deepEqual(left.map((link) => [link.ShortCode, link.Domain]), [['cli-routed', null]]);
  });

  test('edit changes forwarding, rules and the password, and --no-rules / --no-password remove them', async () => {
    const account = await newAccount();
    const env = { SHORTLINK_ACCESS_CODE: account.AccessCode };
    assert.equal((await cli(['shorten', 'https://example.com/e', '--short', 'cli-route-edit', '--domain', DOMAIN], { env })).code, 0);
    const changed = await cli([
      'edit', 'cli-route-edit', '--domain', DOMAIN, '--forward-query', '--rules', '[{"if":{"language":"de"},"to":"https://example.com/de"}]',
      '--password', 'a password on argv',
    ], { env });
    assert.equal(changed.code, 0, changed.stderr);
    assert.match(changed.stdout, new RegExp(`^Domain {8}${DOMAIN.replaceAll('.', '\\.')}$`, 'm'));
    assert.match(changed.stdout, /^ForwardQuery {2}yes\nProtected {5}yes \(a password\)\nRules {9}1\. language=de → https:\/\/example\.com\/de\n$/m);
    assert.ok(!changed.stdout.includes('a password on argv'));

    const cleared = await cli(['edit', 'cli-route-edit', '--domain', DOMAIN, '--no-forward-query', '--no-rules', '--no-password', '--json'], { env });
    assert.equal(cleared.code, 0, cleared.stderr);
    const details = JSON.parse(cleared.stdout) as Record<string, unknown>;
    assert.deepEqual([details.ForwardQuery, details.Protected, details.Rules], [false, false, []]);

    // Without --domain the link is looked for on the default domain, where there is none.
    const elsewhere = await cli(['edit', 'cli-route-edit', '--title', 'x'], { env });
    assert.match(elsewhere.stderr, /\(HTTP 404\)/);
    const cases: [string[], RegExp][] = [
      [['--rule', 'not json'], /--rule 1 is not JSON/],
      [['--rule', '[]'], /--rule 1 must be one rule/],
      [['--rules', '{}'], /--rules must be a JSON array/],
      [['--rule', '{}', '--no-rules'], /exclude each other/],
      [['--password', 'x', '--no-password'], /exclude each other/],
      [['--forward-query', '--no-forward-query'], /exclude each other/],
    ];
    for (const [args, message] of cases) {
      const result = await cli(['edit', 'cli-route-edit', '--domain', DOMAIN, ...args], { env });
      assert.equal(result.code, 2, args.join(' '));
      assert.match(result.stderr, message);
    }
    const refused = await cli(['edit', 'cli-route-edit', '--domain', DOMAIN, '--rule', '{"if":{"os":"beos"},"to":"https://example.com/"}'], { env });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /beos.*\(HTTP 400\)/);
    const unknownDomain = await cli(['shorten', 'https://example.com/u', '--domain', 'nowhere.test'], { env });
    assert.match(unknownDomain.stderr, /not registered \(HTTP 400\)/);
  });

  test('shorten --from-file gives every link of the file the shared options', async () => {
    const account = await newAccount();
    const env = { SHORTLINK_ACCESS_CODE: account.AccessCode };
    const file = folder.file('bulk-routed.txt');
    writeFileSync(file, 'https://example.com/b1 cli-bulk-r1\nhttps://example.com/b2 cli-bulk-r2\n');
    const result = await cli(['shorten', '--from-file', file, '--domain', DOMAIN, '--tags', 'batch', '--no-forward-query'], { env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `https://${DOMAIN}/cli-bulk-r1\nhttps://${DOMAIN}/cli-bulk-r2\n`);
    const listed = JSON.parse((await cli(['links', '--json'], { env })).stdout) as { Domain: string; Tags: string[] }[];
    assert.deepEqual(listed.map((link) => [link.Domain, link.Tags]), [[DOMAIN, ['batch']], [DOMAIN, ['batch']]]);
    const both = await cli(['shorten', '--from-file', '-', '--password-file', '-'], { env });
    assert.equal(both.code, 2);
  });

  test('links filters by text and tags, and limits', async () => {
    const account = await newAccount();
    const env = { SHORTLINK_ACCESS_CODE: account.AccessCode };
    await cli(['shorten', 'https://example.com/f1', '--short', 'cli-filter-1', '--tags', 'red'], { env });
    await cli(['shorten', 'https://example.com/f2', '--short', 'cli-filter-2', '--tags', 'red,blue', '--title', 'Needle'], { env });
    await cli(['shorten', 'https://example.com/f3', '--short', 'cli-filter-3'], { env });
    const codes = async (...args: string[]) => {
      const result = await cli(['links', '--json', ...args], { env });
      assert.equal(result.code, 0, result.stderr);
      return (JSON.parse(result.stdout) as { ShortCode: string }[]).map((link) => link.ShortCode);
    };
    assert.deepEqual(await codes('--tag', 'red'), ['cli-filter-1', 'cli-filter-2']);
    assert.deepEqual(await codes('--tag', 'red,blue'), ['cli-filter-2']);
    assert.deepEqual(await codes('--search', 'needle'), ['cli-filter-2']);
    assert.deepEqual(await codes('--limit', '2'), ['cli-filter-1', 'cli-filter-2']);
    assert.deepEqual(await codes('--order', 'newest'), ['cli-filter-3', 'cli-filter-2', 'cli-filter-1']);
    const badOrder = await cli(['links', '--order', 'popular'], { env });
    assert.equal(badOrder.code, 2);
    assert.match(badOrder.stderr, /--order must be oldest, newest or visits/);
    const bad = await cli(['links', '--limit', '0'], { env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--limit must be a whole number ≥ 1/);
  });

  test('links --csv prints every field of every link, and import reads it back whole into another database', async () => {
    const account = await newAccount();
    const env = { SHORTLINK_ACCESS_CODE: account.AccessCode };
    await cli(['shorten', 'https://example.com/c1?a=1,2', '--short', 'cli-csv-1', '--title', 'Say "hi", ü', '--tags', 'x,y', '--max-visits', '4'], { env });
    await cli(['shorten', 'https://example.com/c2', '--short', 'cli-csv-2', '--expires', '2098-05-06T07:08:09Z'], { env });
    await cli(['shorten', 'https://example.com/c3', '--short', 'cli-csv-1', '--domain', DOMAIN, '--forward-query',
      '--rule', '{"if":{"country":["DE","AT"]},"to":"https://example.com/de"}'], { env });
    await cli(['resolve', 'cli-csv-1']);
    const csv = await cli(['links', '--csv'], { env });
    assert.equal(csv.code, 0, csv.stderr);
    assert.ok(csv.stdout.startsWith('ShortCode,PointsTo,CreatedBy,Accesses,DateCreated,Title,Tags,ExpiresAt,MaxVisits,Domain,ForwardQuery,Protected,Rules\n'), csv.stdout);
    assert.match(csv.stdout, new RegExp(`^cli-csv-1,https://example\\.com/c3,\\d+,0,[^,]+,,,,,${DOMAIN.replaceAll('.', '\\.')},true,false,` +
      '"\\[\\{""If"":\\{""country"":\\[""DE"",""AT""\\]\\},""To"":""https://example\\.com/de""\\}\\]"$', 'm'));
    const file = folder.file('links-export.csv');
    writeFileSync(file, csv.stdout);
    const database = folder.file('from-csv.db');
    const imported = await runCli(['import', file, '--create-domains'], { env: { DATABASE_URL: database } });
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stdout, /Imported 3 of 3 rows/);
    const { links: rows } = await databaseState(database);
    const routing = await routingState(database);
    const listed = JSON.parse((await cli(['links', '--json'], { env })).stdout) as Record<string, unknown>[];
    assert.deepEqual(rows.map((row, i) => ({
      ShortCode: row.shortCode.replace(/^.*\//, ''), PointsTo: row.pointsTo, Accesses: row.accesses, DateCreated: row.dateCreated, Title: row.title,
      Tags: row.tags === '' ? [] : row.tags.split(','), ExpiresAt: row.expiresAt, MaxVisits: row.maxVisits,
      Domain: row.shortCode.includes('/') ? row.shortCode.replace(/\/.*$/, '') : null, ForwardQuery: routing[i]!.forwardQuery, Protected: false,
      Rules: routing[i]!.rules === null ? [] : (JSON.parse(routing[i]!.rules!) as { if: unknown; to: string }[]).map((rule) => ({ If: rule.if, To: rule.to })),
    })), listed.map(({ CreatedBy: _owner, ...rest }) => rest));
    const both = await cli(['links', '--csv', '--json'], { env });
    assert.equal(both.code, 2);
  });

  test('account rotate prints the new code, or replaces the code file in use; the old code stops working', async () => {
    const path = folder.file('rotate-code');
    assert.equal((await cli(['account', 'create', '--save-code', path])).code, 0);
    const before = readFileSync(path, 'utf8').trim();
    const rotated = await cli(['account', 'rotate', '--code-file', path, '--save-code', path]);
    assert.equal(rotated.code, 0, rotated.stderr);
    const after = readFileSync(path, 'utf8').trim();
    assert.match(after, UUID_V4);
    assert.notEqual(after, before);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.ok(!rotated.stdout.includes(after));
    const old = await cli(['account', 'info'], { env: { SHORTLINK_ACCESS_CODE: before } });
    assert.match(old.stderr, /\(HTTP 401\)/);

    const printed = await cli(['account', 'rotate', '--code-file', path]);
    assert.equal(printed.code, 0, printed.stderr);
    const account = JSON.parse(printed.stdout) as AccountJson;
    assert.notEqual(account.AccessCode, after);
    const info = await cli(['account', 'info'], { env: { SHORTLINK_ACCESS_CODE: account.AccessCode } });
    assert.deepEqual(JSON.parse(info.stdout), account);
  });

  test('account delete asks for --yes, then removes the account and frees its shortcodes', async () => {
    const account = await newAccount();
    const env = { SHORTLINK_ACCESS_CODE: account.AccessCode };
    await cli(['shorten', 'https://example.com/d', '--short', 'cli-account-gone'], { env });
    const unconfirmed = await cli(['account', 'delete'], { env });
    assert.equal(unconfirmed.code, 2);
    assert.match(unconfirmed.stderr, /cannot be undone: add --yes/);
    const deleted = await cli(['account', 'delete', '--yes', '--json'], { env });
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.deepEqual(JSON.parse(deleted.stdout), { Deleted: account.Uid });
    assert.match((await cli(['account', 'info'], { env })).stderr, /\(HTTP 401\)/);
    assert.match((await cli(['resolve', 'cli-account-gone'])).stderr, /\(HTTP 404\)/);
  });

  test('shorten reports the service\'s refusal with its status and exits 1', async () => {
    const account = await newAccount();
    const env = { SHORTLINK_ACCESS_CODE: account.AccessCode };
    const cases: [string[], RegExp][] = [
      [['shorten', 'ftp://example.com'], /^shortlink shorten: Unable to create link: url must use http or https \(HTTP 400\)\n$/],
      [['shorten', 'https://example.com', '--short', 'ab'], /short must be 5 to 2000 characters long \(HTTP 400\)/],
      [['shorten', 'https://example.com', '--short', 'cli-chosen'], /already taken \(HTTP 409\)/],
    ];
    for (const [args, message] of cases) {
      const result = await cli(args, { env });
      assert.equal(result.code, 1, args.join(' '));
      assert.equal(result.stdout, '');
      assert.match(result.stderr, message);
    }
    const stranger = await cli(['shorten', 'https://example.com'], { env: { SHORTLINK_ACCESS_CODE: '0b8e6f0e-5d9c-4a51-9f7e-3c2d1b0a9f88' } });
    assert.equal(stranger.code, 1);
    assert.match(stranger.stderr, /\(HTTP 401\)/);
  });

  test('shorten past the cap answers 403', async () => {
    const account = await newAccount();
    const env = { SHORTLINK_ACCESS_CODE: account.AccessCode };
    for (let i = 0; i < 5; i++) assert.equal((await cli(['shorten', `https://example.com/${i}`], { env })).code, 0);
    const over = await cli(['shorten', 'https://example.com/over'], { env });
    assert.equal(over.code, 1);
    assert.match(over.stderr, /maximum of 5 links \(HTTP 403\)/);
  });

  test('links prints a table, or the JSON array with --json', async () => {
    const account = await newAccount();
    const env = { SHORTLINK_ACCESS_CODE: account.AccessCode };
    const empty = await cli(['links'], { env });
    assert.equal(empty.stdout, 'No links.\n');
    await cli(['shorten', 'https://example.com/one', '--short', 'cli-links-1'], { env });
    await cli(['shorten', 'https://example.com/two', '--short', 'cli-links-22'], { env });
    await cli(['resolve', 'cli-links-22']);

    const table = await cli(['links'], { env });
    assert.equal(table.code, 0, table.stderr);
    assert.equal(
      table.stdout,
      'SHORTCODE     ACCESSES  TARGET\n' +
        'cli-links-1          0  https://example.com/one\n' +
        'cli-links-22         1  https://example.com/two\n',
    );
    const json = await cli(['links', '--json'], { env });
    // The owner's view: LinkDetails (CONTRACT §7.1).
    const listed = JSON.parse(json.stdout) as { DateCreated: string }[];
    const none = { Title: null, Tags: [], ExpiresAt: null, MaxVisits: null, Domain: null, ForwardQuery: false, Protected: false, Rules: [] };
    assert.deepEqual(listed, [
      { ShortCode: 'cli-links-1', PointsTo: 'https://example.com/one', CreatedBy: account.Uid, Accesses: 0, DateCreated: listed[0]!.DateCreated, ...none },
      { ShortCode: 'cli-links-22', PointsTo: 'https://example.com/two', CreatedBy: account.Uid, Accesses: 1, DateCreated: listed[1]!.DateCreated, ...none },
    ]);
  });

  test('resolve prints the link as JSON and counts the access; an unknown code exits 1 with 404', async () => {
    const account = await newAccount();
    await cli(['shorten', 'https://example.com/r', '--short', 'cli-resolve'], { env: { SHORTLINK_ACCESS_CODE: account.AccessCode } });
    const first = await cli(['resolve', 'cli-resolve']);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(JSON.parse(first.stdout), { ShortCode: 'cli-resolve', PointsTo: 'https://example.com/r', CreatedBy: account.Uid, Accesses: 1 });
    assert.equal((JSON.parse((await cli(['resolve', 'cli-resolve'])).stdout) as { Accesses: number }).Accesses, 2);

    const unknown = await cli(['resolve', 'no-such-code']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^shortlink resolve: Unable to resolve link: .*\(HTTP 404\)\n$/);
  });

  test('stats shows totals, a chart and the top lists; --json and --csv print the API\'s answers', async () => {
    const account = await newAccount();
    const env = { SHORTLINK_ACCESS_CODE: account.AccessCode };
    await cli(['shorten', 'https://example.com/s', '--short', 'cli-stats'], { env });
    await cli(['resolve', 'cli-stats']);
    await cli(['resolve', 'cli-stats']);
    const report = await cli(['stats', 'cli-stats', '--interval', 'hour', '--from', new Date(Date.now() - 5 * 3_600_000).toISOString()], { env });
    assert.equal(report.code, 0, report.stderr);
    assert.match(report.stdout, /^cli-stats: 2 visits \(\d+ humans, \d+ bots\)\n/);
    assert.match(report.stdout, /\n\| {5}█\| max 2\n/);
    assert.match(report.stdout, /Referrers:\n +2 {2}\(direct\)\n/);
    const json = JSON.parse((await cli(['stats', '--json'], { env })).stdout) as { ShortCode: string | null; Visits: number };
    assert.deepEqual([json.ShortCode, json.Visits], [null, 2]);
    const csv = await cli(['stats', 'cli-stats', '--csv'], { env });
    assert.match(csv.stdout, /^time,visits,bots\n/);
    const bad = await cli(['stats', 'cli-stats', '--interval', 'week'], { env });
    assert.equal(bad.code, 2);
    const foreign = await cli(['stats', 'cli-stats'], { env: { SHORTLINK_ACCESS_CODE: (await newAccount()).AccessCode } });
    assert.equal(foreign.code, 1);
    assert.match(foreign.stderr, /Unable to get statistics: .*\(HTTP 403\)/);
  });

  test('events prints the account\'s events as JSON lines, and stops after --count', async () => {
    const account = await newAccount();
    const env = { SHORTLINK_ACCESS_CODE: account.AccessCode };
    let finished = false;
    const tail = cli(['events', '--count', '2'], { env }).finally(() => {
      finished = true;
    });
    const auth = { authorization: `Bearer ${account.AccessCode}` };
    // The command listens once it has started: change links until it has seen two events.
    for (let i = 0; i < 100 && !finished; i++) {
      const created = await fetch(`${server.url}/v1/link?url=https://example.com/e&short=cli-events-${i}`, { headers: auth });
      assert.equal(created.status, 200, await created.text());
      const deleted = await fetch(`${server.url}/v1/link?short=cli-events-${i}`, { method: 'DELETE', headers: auth });
      assert.equal(deleted.status, 200);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const result = await tail;
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { id: string; type: string; timestamp: string; data: { ShortCode: string } });
    assert.equal(lines.length, 2);
    assert.deepEqual(Object.keys(lines[0]!), ['id', 'type', 'timestamp', 'data']);
    assert.match(lines[0]!.id, /^msg_[0-9a-f]{32}$/, 'the id of its webhook deliveries (webhook-id)');
    const types = lines.map((line) => line.type);
    assert.ok(['link.created,link.deleted', 'link.deleted,link.created'].includes(types.join(',')), types.join(','));
    const unknown = await cli(['events'], { env: { SHORTLINK_ACCESS_CODE: crypto.randomUUID() } });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /Unable to handle request: the access code is not valid/);
  });

  test('delete removes your link; someone else\'s is 403 and an unknown one 404', async () => {
    const owner = await newAccount();
    const other = await newAccount();
    const ownerEnv = { SHORTLINK_ACCESS_CODE: owner.AccessCode };
    await cli(['shorten', 'https://example.com/d', '--short', 'cli-delete'], { env: ownerEnv });

    const foreign = await cli(['delete', 'cli-delete'], { env: { SHORTLINK_ACCESS_CODE: other.AccessCode } });
    assert.equal(foreign.code, 1);
    assert.match(foreign.stderr, /\(HTTP 403\)/);

    const deleted = await cli(['delete', 'cli-delete', '--code-file', codeFile(owner.AccessCode)]);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal(deleted.stdout, 'Deleted cli-delete\n');

    const again = await cli(['delete', 'cli-delete'], { env: ownerEnv });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /\(HTTP 404\)/);
  });

  test('webhooks add prints the webhook with its secret; list, deliveries and delete work on it', async () => {
    const owner = await newAccount();
    const env = { SHORTLINK_ACCESS_CODE: owner.AccessCode };
    const added = await cli(['webhooks', 'add', 'http://127.0.0.1:9/hook', 'link.created,link.deleted'], { env });
    assert.equal(added.code, 0, added.stderr);
    const webhook = JSON.parse(added.stdout) as { Id: string; Secret: string; Events: string[] };
    assert.match(webhook.Secret, /^whsec_/);
    assert.deepEqual(webhook.Events, ['link.created', 'link.deleted']);

    const listed = await cli(['webhooks', 'list'], { env });
    assert.equal(listed.stdout, `${webhook.Id}  link.created,link.deleted  http://127.0.0.1:9/hook\n`);
    assert.doesNotMatch(listed.stdout, /whsec_/);
    const deliveries = await cli(['webhooks', 'deliveries', webhook.Id, '--json'], { env });
    assert.equal(deliveries.code, 0, deliveries.stderr);
    assert.ok(Array.isArray(JSON.parse(deliveries.stdout)));

    const bad = await cli(['webhooks', 'add', 'ftp://example.com/'], { env });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /Unable to manage webhooks: url must use http or https \(HTTP 400\)/);

    const deleted = await cli(['webhooks', 'delete', webhook.Id], { env });
    assert.equal(deleted.stdout, `Deleted ${webhook.Id}\n`);
    assert.equal((await cli(['webhooks', 'list'], { env })).stdout, 'No webhooks.\n');
    const gone = await cli(['webhooks', 'delete', webhook.Id], { env });
    assert.match(gone.stderr, /\(HTTP 404\)/);
  });

  test('an unreachable server or a bad --server is one clear line', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const down = await runCli(['resolve', 'abcde', '--server', nobody]);
    assert.equal(down.code, 1);
    assert.equal(down.stderr, `shortlink resolve: cannot reach the server at ${nobody} (ECONNREFUSED)\n`);
    const bad = await runCli(['resolve', 'abcde', '--server', 'localhost:8080']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--server must be an http\(s\) URL/);
  });
});
