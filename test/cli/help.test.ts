/**
 * The command line itself: help on every command, usage mistakes (exit 2), access codes
 * refused on the command line, and the `shortlink` bin finding Node 24 whatever started it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { REPO_ROOT } from '../helpers/process.ts';
import { runCli, tempFolder } from './support.ts';

const COMMANDS = [
  'serve', 'migrate', 'account create', 'account info', 'account rotate', 'account delete', 'shorten', 'edit', 'links',
  'resolve', 'delete', 'stats', 'events', 'webhooks add', 'webhooks list', 'webhooks delete', 'webhooks deliveries',
  'admin set-max-links', 'admin domains', 'export', 'import',
];

describe('shortlink help and usage', () => {
  for (const command of COMMANDS) {
    test(`"${command} --help" prints the command's usage and exits 0`, async () => {
      for (const flag of ['--help', '-h']) {
        const result = await runCli([...command.split(' '), flag]);
        assert.equal(result.code, 0, result.stderr);
        assert.ok(result.stdout.startsWith(`Usage: shortlink ${command}`), result.stdout);
        assert.equal(result.stderr, '');
      }
    });
  }

  test('every command of the server API takes --json, printing JSON', async () => {
    const apiCommands = COMMANDS.filter((command) => !['serve', 'migrate', 'export', 'import'].includes(command) && !command.startsWith('admin '));
    for (const command of apiCommands) {
      const result = await runCli([...command.split(' '), '--help']);
      assert.match(result.stdout, /\[--json[\] ]/, `${command} --help names --json`);
    }
  });

  test('"--help" and "help" list every command', async () => {
    for (const args of [['--help'], ['help']]) {
      const result = await runCli(args);
      assert.equal(result.code, 0);
      for (const command of COMMANDS) assert.ok(result.stdout.includes(`  ${command} `), `${command} missing from\n${result.stdout}`);
      assert.match(result.stdout, /SHORTLINK_ACCESS_CODE or --code-file PATH/);
    }
  });

  test('the groups "account" and "admin" list their commands', async () => {
    const account = await runCli(['account', '--help']);
    assert.equal(account.code, 0);
    assert.match(account.stdout, /account create[\s\S]*account info/);
    const admin = await runCli(['admin']);
    assert.equal(admin.code, 2);
    assert.match(admin.stderr, /admin set-max-links/);
  });

  test('no command prints the usage to stderr and exits 2', async () => {
    const result = await runCli([]);
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^Usage: shortlink <command>/);
  });

  test('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    const result = await runCli(['--version']);
    assert.equal(result.code, 0);
    assert.equal(result.stdout, `shortlink ${version}\n`);
  });

  test('"import --help" names the formats, the delimiter, the short codes it keeps and the dates it refuses', async () => {
    const result = await runCli(['import', '--help']);
    assert.equal(result.code, 0, result.stderr);
    for (const wanted of [
      /^Usage: shortlink import FILE \[--format csv\|jsonl\|json\] \[--delimiter comma\|semicolon\|tab\]/,
      /CSV \(comma-, semicolon- or tab-separated\), JSON lines, or one JSON document/,
      /Kutt's API answer \{"data": \[…\]\}/,
      /--delimiter comma\|semicolon\|tab {2}the CSV field separator/,
      /any code of\s+1-2000 characters from A-Z a-z 0-9 - \. _ ~ is kept/,
      /only a reserved name \(docs, healthz, …, in any case\) is refused/,
      /taken as UTC/,
      /03\/15\/2024 or 15\/03\/2024 are refused as ambiguous, never guessed/,
    ]) {
      assert.match(result.stdout, wanted);
    }
  });

  test('an unknown command, an unknown option or a missing argument exits 2 with a pointer to --help', async () => {
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /unknown command "frobnicate"/],
      [['account', 'remove'], /unknown command "account remove"[\s\S]*shortlink account --help/],
      [['links', '--colour'], /Unknown option '--colour'[\s\S]*shortlink links --help/],
      [['shorten'], /missing URL/],
      [['resolve', 'a', 'b'], /unexpected argument "b"/],
      [['admin', 'set-max-links', '1'], /missing N/],
      [['admin', 'set-max-links', 'one', '5'], /UID must be a whole number/],
      [['export', '--format', 'xml'], /--format must be jsonl or csv/],
      [['import', 'x.csv', '--account', '-3'], /--account|Unknown option/],
      [['import', 'x.csv', '--delimiter', '|'], /--delimiter must be comma, semicolon or tab/],
      [['import', 'x.json', '--format', 'yaml'], /--format must be csv, jsonl or json/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
    }
  });

  test('an access code on the command line is refused, whatever the option is called', async () => {
    for (const option of ['--code=0b8e6f0e-5d9c-4a51-9f7e-3c2d1b0a9f88', '--auth', '--access-code']) {
      const result = await runCli(['links', option, 'x']);
      assert.equal(result.code, 2);
      assert.match(result.stderr, /access codes are never taken from the command line/);
      assert.match(result.stderr, /SHORTLINK_ACCESS_CODE or pass --code-file PATH/);
    }
  });
});

describe('the shortlink bin', () => {
  const bin = join(REPO_ROOT, 'bin', 'shortlink.js');

  test('is the package\'s bin, starts with a node shebang and runs the CLI', async () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    assert.equal(pkg.bin.shortlink, 'bin/shortlink.js');
    assert.ok(readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node\n'));
    const result = await runCli(['help'], { command: [process.execPath, bin] });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Usage: shortlink <command>/);
  });

  const systemNode = ['/usr/bin/node', '/usr/local/bin/node'].find((path) => existsSync(path));
  const systemMajor = systemNode === undefined
    ? undefined
    : Number(execFileSync(systemNode, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim());
  test(
    'started by an older Node, it re-runs itself under the project\'s Node 24 and passes the exit status on',
    { skip: systemMajor === undefined || systemMajor >= 24 ? 'no Node older than 24 on this machine' : false },
    async () => {
      const ok = await runCli(['--version'], { command: [systemNode!, bin] });
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, /^shortlink \d+\.\d+\.\d+\n$/);
      const usage = await runCli(['frobnicate'], { command: [systemNode!, bin] });
      assert.equal(usage.code, 2);
    },
  );

  test('"npx shortlink" in the project runs it without installing anything', { timeout: 600_000 }, async (t) => {
    // --no: never download; the command must come from this package's own bin.
    const folder = tempFolder();
    t.after(() => folder.remove());
    const result = await runCli(['--no', 'shortlink', 'help'], {
      command: ['npx'],
      cwd: REPO_ROOT,
      // help opens no database; should that change, it must not be the working tree's.
      env: { PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`, DATABASE_URL: folder.file('unused.db') },
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Usage: shortlink <command>/m);
  });
});
