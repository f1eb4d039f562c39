/**
 * The server and CLI as a package: `npm pack` (whose prepack compiles to dist/), the tarball's
 * contents, a global install into a temporary prefix, `shortlink --help` and `shortlink serve`
 * on Node 24 from the installed JavaScript (Node will not strip types under node_modules), and
 * the same package installed and run by the machine's own Node 20 (`npm install -g` with its
 * npm): the commands that talk to a server work there, the server and the database commands
 * say in one line that they need Node 24.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { packServer, run, scratch, succeeded, SYSTEM_NODE, tarballFiles } from '../helpers/packing.ts';
import { cleanup, startServer } from '../helpers/process.ts';
import { REPO_ROOT } from '../helpers/working-tree.ts';
import { waitFor } from '../helpers/wait-for.ts';

const NODE_24_DIR = join(REPO_ROOT, 'node_modules', '.bin');

describe('the packed server package, installed globally', { timeout: 600_000 }, () => {
  const work = scratch('shortlink-server-package-');
  const prefix = join(work.path, 'prefix');
  const bin = join(prefix, 'bin', 'shortlink');
  let tarball: string;
  let installOutput: string;

  before(async () => {
    tarball = await packServer(work.path);
    // --prefer-offline: the dependencies come from npm's cache when they are there (they are
    // after `npm ci`), from the registry otherwise.
    const installed = succeeded(
      await run('npm', ['install', '--global', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], {
        env: { ...process.env, PATH: `${NODE_24_DIR}:${process.env.PATH ?? ''}` },
      }),
      'npm install --global of the tarball',
    );
    installOutput = installed.stdout + installed.stderr;
  });
  after(() => work.remove());

  test('holds compiled JavaScript, the UI\'s files and the bin; no TypeScript, tests, benches or CI', async () => {
    const files = await tarballFiles(tarball);
    assert.ok(files.includes('bin/shortlink.js'));
    assert.ok(files.includes('dist/src/cli/main.js'));
    assert.ok(files.includes('dist/src/server.js'));
    assert.ok(files.includes('dist/packages/client/src/index.js'));
    for (const asset of ['index.html', 'app.js', 'app.css', 'favicon.svg']) assert.ok(files.includes(`dist/src/web/${asset}`), asset);
    const unwanted = files.filter((file) => /\.ts$/.test(file) || /^(src|test|bench|docs|scripts|\.ci|packages)\//.test(file) || file.endsWith('.orig'));
    assert.deepEqual(unwanted, []);
  });

  test('states the Node it needs in the packed package.json, and only there', async () => {
    const packed = JSON.parse((await run('tar', ['-xOzf', tarball, 'package/package.json'])).stdout) as Record<string, unknown>;
    assert.deepEqual(packed.engines, { node: '>=20' });
    const repository = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(repository.engines, undefined, 'a clone is installed by any Node (it brings Node 24 itself)');
    assert.doesNotMatch(installOutput, /EBADENGINE[\s\S]*shortlink@/);
  });

  test('"shortlink --help" runs on Node 24 from the installed JavaScript', async () => {
    assert.ok(existsSync(bin));
    const result = succeeded(await run(bin, ['--help'], { env: { ...process.env, PATH: `${NODE_24_DIR}:/usr/bin:/bin` } }), 'shortlink --help');
    assert.match(result.stdout, /^Usage: shortlink <command>/);
    const version = succeeded(await run(bin, ['--version'], { env: { ...process.env, PATH: `${NODE_24_DIR}:/usr/bin:/bin` } }), 'shortlink --version');
    assert.match(version.stdout, /^shortlink \d+\.\d+\.\d+\n$/);
  });

  test('the installed package loads its PostgreSQL driver with the fix of ADR 23 (no install script needed)', async () => {
    const driver = join(prefix, 'lib', 'node_modules', 'shortlink', 'dist', 'src', 'store', 'postgres', 'driver.js');
    const script = `const m = await import(${JSON.stringify(pathToFileURL(driver).href)}); console.log(String(m.driverProblem()));`;
    const result = succeeded(
      await run(join(NODE_24_DIR, 'node'), ['--input-type=module', '-e', script], { env: { ...process.env, PATH: `${NODE_24_DIR}:/usr/bin:/bin` } }),
      'loading the installed driver',
    );
    assert.equal(result.stdout, 'undefined\n', 'no problem with the driver: the fix applied');
  });

  test('installed by the system Node\'s npm, it runs there: --help and the server commands; serve asks for Node 24', {
    skip: SYSTEM_NODE === undefined ? 'no system Node' : false,
  }, async (t) => {
    const systemPath = `${join(SYSTEM_NODE!, '..')}:/usr/bin:/bin`;
    const systemEnv = { ...process.env, PATH: systemPath };
    const version = succeeded(await run('node', ['--version'], { env: systemEnv }), 'node --version');
    assert.doesNotMatch(version.stdout, /^v24\./, 'the system Node is an older one');
    const olderPrefix = join(work.path, 'prefix-system-node');
    succeeded(
      await run('npm', ['install', '--global', '--prefix', olderPrefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], { env: systemEnv }),
      'npm install --global with the system Node',
    );
    const olderBin = join(olderPrefix, 'bin', 'shortlink');
    const help = succeeded(await run(olderBin, ['--help'], { env: systemEnv }), `shortlink --help on Node ${version.stdout.trim()}`);
    assert.match(help.stdout, /^Usage: shortlink <command>/);

    t.after(cleanup);
    const server = await startServer();
    const created = succeeded(await run(olderBin, ['account', 'create', '--server', server.url], { env: systemEnv }), 'account create');
    assert.deepEqual(Object.keys(JSON.parse(created.stdout) as object), ['Uid', 'AccessCode', 'DateCreated', 'MaxLinks']);

    const serve = await run(olderBin, ['serve'], { env: { ...systemEnv, DATABASE_URL: join(work.path, 'never.db') } });
    assert.equal(serve.code, 1);
    assert.equal(serve.stdout, '');
    assert.match(serve.stderr, /^shortlink serve: needs Node 24 or newer \(it opens the database\), and this is Node \d+\.\d+\.\d+; the commands that talk to a server \(account, shorten, links, …\) run on this Node\n$/);
    assert.equal(existsSync(join(work.path, 'never.db')), false);
  });

  test('"shortlink serve" serves the API, the UI and the docs, and stops on SIGTERM', async () => {
    const child = spawn(bin, ['serve'], {
      cwd: work.path,
      env: {
        PATH: `${NODE_24_DIR}:/usr/bin:/bin`,
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: join(work.path, 'served.db'),
        RATE_LIMIT: 'off',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    try {
      const port = await waitFor(
        () => /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout)?.[1],
        () => `the "listening" line\n${stdout}\n${stderr}`,
        { timeoutMs: 30_000, intervalMs: 50 },
      );
      const base = `http://127.0.0.1:${port}`;
      assert.equal(await (await fetch(`${base}/healthz`)).text(), 'ok');
      const account = (await (await fetch(`${base}/v1/new_account`, { method: 'POST' })).json()) as { AccessCode: string };
      const created = await fetch(`${base}/v1/link?url=${encodeURIComponent('https://example.com/')}`, { headers: { authorization: account.AccessCode } });
      assert.equal(created.status, 200);
      const page = await (await fetch(`${base}/`)).text();
      const css = /href="(\/assets\/[^"]+\.css)"/.exec(page)?.[1];
      assert.ok(css, 'the page names its stylesheet');
      assert.equal((await fetch(`${base}${css}`)).status, 200);
      assert.equal((await fetch(`${base}/docs/`)).status, 200);
      const document = (await (await fetch(`${base}/openapi.json`)).json()) as { info: { version: string } };
      assert.match(document.info.version, /^\d+\.\d+\.\d+$/);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, stderr);
  });
});
