/**
 * @shortlink/client as an integrator gets it: `npm pack`, installed from the tarball into a
 * fresh project, then the same calls against a live server from Node 24, from the machine's own
 * Node (20 here), from Deno and Bun (optional runtimes, given by DENO_PATH and BUN_PATH), from a
 * TypeScript program checked against the published declarations, and from a page on another
 * origin in Chromium (allowed by CORS_ORIGINS).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromiumGate, openBrowser } from '../browser/support.ts';
import { packClient, PROJECT_PATH, run, scratch, succeeded, SYSTEM_NODE, tarballFiles } from '../helpers/packing.ts';
import { cleanup, E2E_BASE_URL, startServer, type ServerProcess } from '../helpers/process.ts';
import { REPO_ROOT } from '../helpers/working-tree.ts';

/**
 * The calls, as one ES module that runs unchanged in Node and in the browser: the client's
 * classes come in as arguments. `follow` is left out in browsers, whose fetch hides a redirect.
 */
const SCENARIO = `
export async function scenario({ ShortlinkClient, ShortlinkError }, baseUrl, { follow }) {
  const anonymous = new ShortlinkClient({ baseUrl });
  const account = await anonymous.newAccount();
  const client = anonymous.withAccessCode(account.AccessCode);
  const shortUrl = await client.createLink('https://example.com/from/the/client');
  const code = shortUrl.slice(shortUrl.lastIndexOf('/') + 1);
  const custom = await client.createLink('https://example.com/custom', { short: 'custom-' + account.Uid });
  const listed = (await client.listLinks()).map((link) => link.ShortCode);
  const resolved = await anonymous.resolve(code);
  const followed = follow ? await anonymous.follow(code) : null;
  const me = await client.getAccount();
  await client.deleteLink(code);
  let gone = null;
  try {
    await anonymous.resolve(code);
  } catch (error) {
    gone = { shortlinkError: error instanceof ShortlinkError, status: error.status, message: error.message };
  }
  let refused = null;
  try {
    await anonymous.withAccessCode('00000000-0000-4000-8000-000000000000').listLinks();
  } catch (error) {
    refused = { status: error.status, message: error.message };
  }
  return { keys: Object.keys(account), sameAccount: me.Uid === account.Uid, shortUrl, code, custom, listed, accesses: resolved.Accesses, followed, gone, refused };
}
`;

const RUNNER = `
import * as client from '@shortlink/client';
import { scenario } from './scenario.js';
const result = await scenario(client, process.argv[2], { follow: true });
const runtime = typeof Deno === 'object' ? 'deno ' + Deno.version.deno : typeof Bun === 'object' ? 'bun ' + Bun.version : 'node ' + process.version;
process.stdout.write(JSON.stringify({ runtime, ...result }));
`;

/**
 * Deno and Bun are optional runtimes: each runs only when its binary is given (DENO_PATH,
 * BUN_PATH; .ci/run installs both from the npm registry when it can), and is skipped with a
 * notice otherwise, on CI too.
 */
function optionalRuntime(variable: string, what: string): { path: string | undefined; skip: string | false } {
  const path = process.env[variable]?.trim() || undefined;
  if (path !== undefined) return { path, skip: false };
  return { path: undefined, skip: `${what}: set ${variable} to run this test (an optional runtime: skipped under CI=true too)` };
}
const deno = optionalRuntime('DENO_PATH', 'Deno');
const bun = optionalRuntime('BUN_PATH', 'Bun');

/** The runtime's own version line, for the test's diagnostic. */
async function versionOf(binary: string): Promise<string> {
  return succeeded(await run(binary, ['--version']), `${binary} --version`).stdout.split('\n')[0]!.trim();
}

interface Outcome {
  /** `node v24.…`, `deno 2.…` or `bun 1.…`: the runtime that ran the script (not set in browsers). */
  runtime?: string;
  keys: string[];
  sameAccount: boolean;
  shortUrl: string;
  code: string;
  custom: string;
  listed: string[];
  accesses: number;
  followed: string | null;
  gone: { shortlinkError: boolean; status: number; message: string } | null;
  refused: { status: number; message: string } | null;
}

function assertOutcome(outcome: Outcome, { follow }: { follow: boolean }): void {
  assert.deepEqual(outcome.keys, ['Uid', 'AccessCode', 'DateCreated', 'MaxLinks']);
  assert.ok(outcome.sameAccount);
  assert.match(outcome.shortUrl, new RegExp(`^${E2E_BASE_URL}/[A-Za-z0-9]{6}$`));
  assert.match(outcome.custom, new RegExp(`^${E2E_BASE_URL}/custom-\\d+$`));
  assert.deepEqual(outcome.listed, [outcome.code, outcome.custom.slice(E2E_BASE_URL.length + 1)]);
  assert.equal(outcome.accesses, 1);
  assert.equal(outcome.followed, follow ? 'https://example.com/from/the/client' : null);
  assert.deepEqual(outcome.gone, { shortlinkError: true, status: 404, message: 'Unable to resolve link: no link has this shortcode' });
  assert.equal(outcome.refused?.status, 401);
  assert.match(outcome.refused?.message ?? '', /^Unable to list links: /);
}

describe('the packed @shortlink/client, installed into a fresh project', { timeout: 600_000 }, () => {
  const work = scratch('shortlink-client-package-');
  const project = join(work.path, 'project');
  let tarball: string;
  let server: ServerProcess;
  let page: Server;
  let pageOrigin: string;

  before(async () => {
    // The page's origin must be known before the server starts: the server allows it by CORS_ORIGINS.
    page = createServer((request, response) => {
      const url = request.url ?? '/';
      const file = url === '/' ? undefined : url === '/scenario.js' ? join(project, 'scenario.js') : url.startsWith('/client/')
        ? join(project, 'node_modules', '@shortlink', 'client', 'dist', url.slice('/client/'.length))
        : undefined;
      if (url === '/') {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(`<!doctype html><title>Another origin</title><script type="module">
          import * as client from '/client/index.js';
          import { scenario } from '/scenario.js';
          window.run = (baseUrl) => scenario(client, baseUrl, { follow: false });
          window.ready = true;
        </script>`);
        return;
      }
      try {
        const body = readFileSync(file!);
        response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
        response.end(body);
      } catch {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    server = await startServer({ env: { CORS_ORIGINS: pageOrigin } });
    tarball = await packClient(work.path);
  });
  after(async () => {
    await new Promise<void>((resolve) => page.close(() => resolve()));
    await cleanup();
    work.remove();
  });

  test('holds the compiled modules, their declarations and nothing else', async () => {
    const files = (await tarballFiles(tarball)).sort();
    assert.deepEqual(files, ['README.md', 'dist/index.d.ts', 'dist/index.js', 'dist/types.d.ts', 'dist/types.js', 'package.json']);
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'packages', 'client', 'package.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(manifest.dependencies, undefined);
    assert.deepEqual(manifest.engines, { node: '>=18' });
  });

  test('installs from the tarball alone, offline, adding no other package', async () => {
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'integrator', private: true, type: 'module' }));
    const installed = succeeded(
      await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: project }),
      'npm install of the tarball',
    );
    assert.doesNotMatch(installed.stderr, /EBADENGINE/);
    assert.deepEqual(readdirSync(join(project, 'node_modules')).filter((name) => !name.startsWith('.')), ['@shortlink']);
    writeFileSync(join(project, 'scenario.js'), SCENARIO);
    writeFileSync(join(project, 'run.js'), RUNNER);
  });

  test('works from Node 24 against a live server', async () => {
    const result = succeeded(await run(process.execPath, ['run.js', server.url], { cwd: project }), 'the script on Node 24');
    const outcome = JSON.parse(result.stdout) as Outcome;
    assert.match(outcome.runtime!, /^node v24\./);
    assertOutcome(outcome, { follow: true });
  });

  test('works from the machine\'s own Node', { skip: SYSTEM_NODE === undefined ? 'no system Node' : false }, async () => {
    const result = succeeded(await run(SYSTEM_NODE!, ['run.js', server.url], { cwd: project }), `the script on ${SYSTEM_NODE}`);
    const outcome = JSON.parse(result.stdout) as Outcome;
    assertOutcome(outcome, { follow: true });
  });

  test('works from Deno, importing the package from node_modules', { skip: deno.skip }, async (t) => {
    // package.json next to node_modules makes Deno resolve bare specifiers there, as Node does;
    // its cache goes to the scratch folder, and it must not reach for any registry.
    const env = { ...process.env, PATH: PROJECT_PATH, DENO_DIR: join(work.path, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
    const version = await versionOf(deno.path!);
    t.diagnostic(version);
    const result = succeeded(
      await run(deno.path!, ['run', '--no-prompt', '--no-lock', '--allow-net', '--allow-read', 'run.js', server.url], { cwd: project, env }),
      `the script on ${deno.path!}`,
    );
    const outcome = JSON.parse(result.stdout) as Outcome;
    // `deno --version` starts `deno 2.x.y (…)`; the script saw the same Deno.version.deno.
    assert.match(outcome.runtime!, /^deno \d+\./);
    assert.ok(version.startsWith(`${outcome.runtime!} `), `${outcome.runtime!} against ${version}`);
    assertOutcome(outcome, { follow: true });
  });

  test('works from Bun', { skip: bun.skip }, async (t) => {
    const env = { ...process.env, PATH: PROJECT_PATH, BUN_INSTALL_CACHE_DIR: join(work.path, 'bun-cache'), NO_COLOR: '1' };
    const version = await versionOf(bun.path!);
    t.diagnostic(`bun ${version}`);
    const result = succeeded(await run(bun.path!, ['run', 'run.js', server.url], { cwd: project, env }), `the script on ${bun.path!}`);
    const outcome = JSON.parse(result.stdout) as Outcome;
    assert.equal(outcome.runtime, `bun ${version}`);
    assertOutcome(outcome, { follow: true });
  });

  test('types a TypeScript program through its declarations', async () => {
    writeFileSync(join(project, 'check.ts'), `
      import { ShortlinkClient, ShortlinkError, type Account, type Link } from '@shortlink/client';
      const client = new ShortlinkClient({ baseUrl: 'http://localhost:8080', accessCode: 'x' });
      const account: Promise<Account> = client.getAccount();
      const links: Promise<Link[]> = client.listLinks();
      const uid: number = (null as unknown as Account).Uid;
      const code: string = (null as unknown as Link).ShortCode;
      // @ts-expect-error: Accesses is a number
      const wrong: string = (null as unknown as Link).Accesses;
      const error: number = new ShortlinkError(400, 'x').status;
      void account; void links; void uid; void code; void wrong; void error;
    `);
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'], types: [] },
      files: ['check.ts'],
    }));
    const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    succeeded(await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project }), 'tsc on a program using the package');
  });

  test('works from a page on another origin in Chromium, which the server allows', { skip: chromiumGate.skip }, async (t) => {
    const browser = await openBrowser(t, pageOrigin, { allowedOrigin: server.url });
    await browser.page.goto(`${pageOrigin}/`);
    await browser.page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    const outcome = await browser.page.evaluate((baseUrl) => (window as unknown as { run(url: string): Promise<Outcome> }).run(baseUrl), server.url);
    assertOutcome(outcome, { follow: false });
    assert.deepEqual(browser.pageErrors, []);
  });
});
