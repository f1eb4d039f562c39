/**
 * The real process, as an operator runs it: `npm start` serves the API on a fresh database,
 * stops cleanly on SIGTERM/SIGINT (with idle keep-alive clients and requests in flight), keeps
 * everything across restarts, refuses bad configuration in one line, and never logs an
 * access code.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { after, describe, test, type TestContext } from 'node:test';
import {
  cleanup, E2E_BASE_URL, runUntilExit, startServer, tempDatabase, type ServerProcess, type StartOptions,
} from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SHUTDOWN_LIMIT_MS = 10_000;

interface Reply {
  status: number;
  headers: Headers;
  text: string;
}

interface AccountJson {
  Uid: number;
  AccessCode: string;
  DateCreated: string;
  MaxLinks: number;
}

interface LinkJson {
  ShortCode: string;
  PointsTo: string;
  CreatedBy: number;
  Accesses: number;
}

/** One request on a fresh fetch; redirects are returned, not followed. */
async function call(server: ServerProcess, path: string, init: RequestInit = {}): Promise<Reply> {
  const response = await fetch(`${server.url}${path}`, { redirect: 'manual', signal: AbortSignal.timeout(10_000), ...init });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function json<T>(server: ServerProcess, path: string, init: RequestInit = {}): Promise<T> {
  const reply = await call(server, path, init);
  assert.equal(reply.status, 200, `${path} answered ${reply.status}: ${reply.text}`);
  return JSON.parse(reply.text) as T;
}

async function newAccount(server: ServerProcess): Promise<AccountJson> {
  return json<AccountJson>(server, '/v1/new_account');
}

async function createLink(server: ServerProcess, code: string, params: Record<string, string>): Promise<string> {
  const reply = await call(server, `/v1/link?${new URLSearchParams(params)}`, { headers: { authorization: `Bearer ${code}` } });
  assert.equal(reply.status, 200, `create answered ${reply.status}: ${reply.text}`);
  return reply.text.slice(E2E_BASE_URL.length + 1);
}

/** Every account's own view of itself and of its links: what a restart must keep. */
async function snapshot(server: ServerProcess, codes: readonly string[]) {
  const accounts = [];
  for (const code of codes) {
    accounts.push({
      account: await json<AccountJson>(server, '/v1/get_account', { headers: { authorization: code } }),
      links: await json<LinkJson[]>(server, '/v1/links', { headers: { authorization: code } }),
    });
  }
  return accounts;
}

/** A request on a node:http agent (so the connection stays open afterwards when keepAlive is on). */
function agentRequest(
  agent: Agent,
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { agent, headers, timeout: 10_000 }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, text }));
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error('request timed out')));
    request.on('error', reject);
    request.end();
  });
}

/** Opens a keep-alive connection, uses it once and leaves it idle in the agent's pool. */
async function idleKeepAliveConnection(server: ServerProcess, code: string): Promise<{ agent: Agent; socket: Socket }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const reply = await agentRequest(agent, `${server.url}/v1/get_account`, { authorization: code });
  assert.equal(reply.status, 200);
  // The socket goes back to the pool once the response has been consumed.
  const free = Object.values(agent.freeSockets).flat();
  assert.equal(free.length, 1, 'the connection is idle in the keep-alive pool');
  const socket = free[0]!;
  assert.ok(!socket.destroyed);
  return { agent, socket };
}

/** One database per test; every server the test starts is killed (if still up) and the folder removed. */
function fixture(t: TestContext) {
  const database = tempDatabase();
  const servers: ServerProcess[] = [];
  t.after(async () => {
    await Promise.all(servers.map((server) => server.kill9()));
    database.remove();
  });
  return {
    database,
    async start(options: Omit<StartOptions, 'databasePath'> = {}): Promise<ServerProcess> {
      const server = await startServer({ ...options, databasePath: database.path });
      servers.push(server);
      return server;
    },
  };
}

function assertCleanExit(result: { code: number | null; signal: NodeJS.Signals | null; elapsedMs: number }, what: string) {
  assert.equal(result.signal, null, `${what}: killed by a signal`);
  assert.equal(result.code, 0, `${what}: exit code`);
  assert.ok(result.elapsedMs < SHUTDOWN_LIMIT_MS, `${what}: took ${Math.round(result.elapsedMs)} ms`);
}

describe('the server process', { timeout: 600_000 }, () => {
  after(cleanup);

  test('npm start serves every endpoint on a fresh database', async (t) => {
    const { start } = fixture(t);
    const server = await start({ viaNpm: true });
    assert.ok(server.port > 0);
    assert.notEqual(server.pid, server.child.pid, 'under npm the server is not the direct child');

    const created = await call(server, '/v1/new_account');
    assert.equal(created.status, 200);
    assert.equal(created.headers.get('content-type'), JSON_TYPE);
    assert.equal(created.headers.get('cache-control'), 'no-store');
    const account = JSON.parse(created.text) as AccountJson;
    assert.deepEqual(Object.keys(account), ['Uid', 'AccessCode', 'DateCreated', 'MaxLinks']);
    assert.ok(Number.isSafeInteger(account.Uid) && account.Uid > 0);
    assert.match(account.AccessCode, UUID_V4);
    assert.equal(new Date(account.DateCreated).toISOString(), account.DateCreated);
    assert.equal(account.MaxLinks, 20);
    const code = account.AccessCode;

    const secondAccount = await json<AccountJson>(server, '/v1/new_account', { method: 'POST' });
    assert.ok(secondAccount.Uid > account.Uid, 'Uids increase');

    // Create with a generated shortcode (auth in the query) and a chosen one (JSON body, Bearer).
    const auto = await call(server, `/v1/link?${new URLSearchParams({ url: 'https://example.org/a?x=1', auth: code })}`);
    assert.equal(auto.status, 200);
    assert.equal(auto.headers.get('content-type'), TEXT);
    assert.match(auto.text, new RegExp(`^${E2E_BASE_URL.replaceAll('.', '\\.')}/[A-Za-z0-9]{6}$`));
    const autoCode = auto.text.slice(E2E_BASE_URL.length + 1);

    const target = 'https://example.com/docs/ünïcode?q=1#top';
    const custom = await call(server, '/v1/link', {
      method: 'POST',
      headers: { authorization: `Bearer ${code}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: target, short: 'my-link_1.x~' }),
    });
    assert.equal(custom.status, 200, custom.text);
    assert.equal(custom.text, `${E2E_BASE_URL}/my-link_1.x~`);

    const taken = await call(server, `/v1/link?${new URLSearchParams({ url: 'https://example.net/', short: 'my-link_1.x~', auth: code })}`);
    assert.equal(taken.status, 409);
    assert.equal(taken.headers.get('content-type'), TEXT);
    assert.match(taken.text, /^Unable to create link: /);

    const listed = await call(server, '/v1/links', { headers: { authorization: code } });
    assert.equal(listed.status, 200);
    assert.equal(listed.headers.get('content-type'), JSON_TYPE);
    const links = JSON.parse(listed.text) as (LinkJson & { DateCreated: string })[];
    // The owner's view: LinkDetails (CONTRACT §7.1).
    const none = { Title: null, Tags: [], ExpiresAt: null, MaxVisits: null, Domain: null, ForwardQuery: false, Protected: false, Rules: [] };
    assert.deepEqual(links, [
      { ShortCode: autoCode, PointsTo: 'https://example.org/a?x=1', CreatedBy: account.Uid, Accesses: 0, DateCreated: links[0]!.DateCreated, ...none },
      { ShortCode: 'my-link_1.x~', PointsTo: target, CreatedBy: account.Uid, Accesses: 0, DateCreated: links[1]!.DateCreated, ...none },
    ]);
    assert.deepEqual(Object.keys(links[0]!), ['ShortCode', 'PointsTo', 'CreatedBy', 'Accesses', 'DateCreated', 'Title', 'Tags', 'ExpiresAt', 'MaxVisits', 'Domain', 'ForwardQuery', 'Protected', 'Rules']);

    // Resolve (JSON) and redirect (302) both count; HEAD does not.
    const first = await call(server, '/v1/get/my-link_1.x~');
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('content-type'), JSON_TYPE);
    assert.deepEqual(JSON.parse(first.text), { ShortCode: 'my-link_1.x~', PointsTo: target, CreatedBy: account.Uid, Accesses: 1 });

    const redirect = await call(server, '/my-link_1.x~');
    assert.equal(redirect.status, 302);
    assert.equal(redirect.headers.get('location'), new URL(target).href);
    assert.equal(redirect.headers.get('cache-control'), 'private, no-cache');

    assert.equal((await call(server, '/v1/get/my-link_1.x~', { method: 'HEAD' })).status, 200);
    assert.equal((await json<LinkJson>(server, '/v1/get/my-link_1.x~')).Accesses, 3);

    const unknown = await call(server, '/v1/get/nothing-here');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.headers.get('content-type'), TEXT);
    assert.match(unknown.text, /^Unable to resolve link: /);
    const unknownShortUrl = await call(server, '/nothing-here');
    assert.equal(unknownShortUrl.status, 404);
    assert.match(unknownShortUrl.headers.get('content-type') ?? '', /^text\/html/);

    // Delete, with the code in the query.
    const deleted = await call(server, `/v1/link?${new URLSearchParams({ short: autoCode, auth: code })}`, { method: 'DELETE' });
    assert.equal(deleted.status, 200);
    assert.equal(deleted.headers.get('content-type'), TEXT);
    assert.equal(deleted.text, 'Success');
    assert.equal((await call(server, `/v1/get/${autoCode}`)).status, 404);
    assert.deepEqual((await json<LinkJson[]>(server, `/v1/links?auth=${code}`)).map(publicView), [
      { ShortCode: 'my-link_1.x~', PointsTo: target, CreatedBy: account.Uid, Accesses: 3 },
    ]);
    const foreign = await call(server, '/v1/link?short=my-link_1.x~', {
      method: 'DELETE',
      headers: { authorization: secondAccount.AccessCode },
    });
    assert.equal(foreign.status, 403);

    // Account information, under both names and with every credential form.
    for (const [path, init] of [
      [`/v1/get_account?auth=${code.toUpperCase()}`, {}],
      ['/v1/get_account', { headers: { authorization: `bearer ${code}` } }],
      ['/v1/user_info', { headers: { authorization: code } }],
    ] as const) {
      const reply = await call(server, path, init);
      assert.equal(reply.status, 200, `${path}: ${reply.text}`);
      assert.equal(reply.headers.get('cache-control'), 'no-store');
      assert.equal(reply.text, created.text, `${path} answers the account as created`);
    }

    const anonymous = await call(server, '/v1/links');
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get('www-authenticate'), 'Bearer realm="shortlink"');
    assert.equal((await call(server, '/v1/no-such-route')).status, 404);

    assertCleanExit(await server.stop('SIGTERM'), 'npm start, SIGTERM');
    assert.equal(server.stderr().includes('Error'), false, server.stderr());
  });

  test('SIGTERM and SIGINT exit 0 within 10 s with an idle keep-alive client, and a restart keeps everything', async (t) => {
    const { start } = fixture(t);
    let server = await start({ viaNpm: true });

    const codes: string[] = [];
    for (let a = 0; a < 3; a++) {
      const { AccessCode } = await newAccount(server);
      codes.push(AccessCode);
      for (let l = 0; l < 4; l++) {
        const short = await createLink(server, AccessCode, { url: `https://example.org/${a}/${l}`, short: `acct${a}-link${l}` });
        for (let r = 0; r < a + l; r++) await json(server, `/v1/get/${short}`);
      }
      await createLink(server, AccessCode, { url: `https://example.org/${a}/generated` });
    }
    await call(server, `/v1/link?short=acct2-link0&auth=${codes[2]}`, { method: 'DELETE' });
    const before = await snapshot(server, codes);
    assert.equal(before[2]!.links.length, 4);
    assert.equal(before[2]!.links.find((link) => link.ShortCode === 'acct2-link3')!.Accesses, 5);

    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const { agent, socket } = await idleKeepAliveConnection(server, codes[0]!);
      const socketClosed = once(socket, 'close');
      const result = await server.stop(signal);
      t.diagnostic(`${signal} with an idle keep-alive client: exited ${result.code} after ${Math.round(result.elapsedMs)} ms`);
      assertCleanExit(result, signal);
      await socketClosed;
      agent.destroy();
      assert.ok(server.logs().some((line) => line.msg === 'stopped'), 'logs that it stopped');

      server = await start();
      assert.deepEqual(await snapshot(server, codes), before, `everything survives a ${signal} restart`);
      // A new account still gets a larger Uid, and counts carry on from the stored value.
      const { Uid } = await newAccount(server);
      assert.ok(Uid > Math.max(...before.map((entry) => entry.account.Uid)));
      codes.push((await newAccount(server)).AccessCode);
      assert.equal((await json<LinkJson>(server, '/v1/get/acct1-link3')).Accesses, 4 + (signal === 'SIGTERM' ? 1 : 2));
      before.splice(0, before.length, ...(await snapshot(server, codes)));
    }
    assertCleanExit(await server.stop('SIGTERM'), 'final SIGTERM');
  });

  test('SIGTERM stops accepting connections but finishes the request in flight, even when signalled again', async (t) => {
    const { start } = fixture(t);
    let server = await start();
    const { AccessCode: code } = await newAccount(server);

    // The request is in flight once the server has read its headers: with `Expect:
    // 100-continue` the server says so (100 Continue), and the body is still to come.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    const body = JSON.stringify({ url: 'https://example.org/in-flight', short: 'in-flight' });
    const request = httpRequest(`${server.url}/v1/link`, {
      agent,
      method: 'POST',
      timeout: 10_000,
      headers: {
        authorization: `Bearer ${code}`,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        expect: '100-continue',
      },
    });
    request.on('timeout', () => request.destroy(new Error('request timed out')));
    const response = new Promise<{ status: number; headers: IncomingHttpHeaders; text: string }>((resolve, reject) => {
      request.on('error', reject);
      request.on('response', (reply) => {
        let text = '';
        reply.setEncoding('utf8');
        reply.on('data', (chunk: string) => (text += chunk));
        reply.on('end', () => resolve({ status: reply.statusCode!, headers: reply.headers, text }));
      });
    });
    request.flushHeaders();
    await once(request, 'continue');

    const stopping = server.stop('SIGTERM');
    await server.waitForLog((line) => line.msg === 'shutting down');

    // New connections are refused while the old request is still open.
    await waitFor(
      () => fetch(`${server.url}/v1/no-such-route`, { signal: AbortSignal.timeout(1000) }).then(() => false, () => true),
      'a new connection to be refused once shutdown has begun',
      { timeoutMs: 5000, intervalMs: 20 },
    );
    assert.ok(server.isRunning(), 'the server waits for the request in flight');

    // A second signal (an impatient operator, a supervisor repeating itself) changes nothing.
    process.kill(server.pid, 'SIGTERM');
    await server.waitForLog((line) => line.msg === 'already shutting down' && line.signal === 'SIGTERM');
    process.kill(server.pid, 'SIGINT');
    await server.waitForLog((line) => line.msg === 'already shutting down' && line.signal === 'SIGINT');

    request.end(body);
    const answered = await response;
    assert.equal(answered.status, 200, answered.text);
    assert.equal(answered.text, `${E2E_BASE_URL}/in-flight`);
    assert.equal(answered.headers.connection, 'close', 'the connection is not kept for another request');
    const result = await stopping;
    t.diagnostic(`SIGTERM with a request in flight: exited ${result.code} after ${Math.round(result.elapsedMs)} ms`);
    assertCleanExit(result, 'SIGTERM with a request in flight');

    server = await start();
    assert.deepEqual((await json<LinkJson[]>(server, '/v1/links', { headers: { authorization: code } })).map(publicView), [
      { ShortCode: 'in-flight', PointsTo: 'https://example.org/in-flight', CreatedBy: 1, Accesses: 0 },
    ]);
    assertCleanExit(await server.stop('SIGINT'), 'SIGINT');
  });

  test('SIGTERM under load from keep-alive clients exits 0 and keeps every answered create', async (t) => {
    const { start } = fixture(t);
    let server = await start({ env: { DEFAULT_MAX_LINKS: '100000' } });
    const { AccessCode: code } = await newAccount(server);
    const answered = new Set<string>();
    const failures: string[] = [];
    let stopping: Promise<{ code: number | null; signal: NodeJS.Signals | null; elapsedMs: number }> | undefined;
    let afterSignal = 0;

    // Each worker creates links back to back on its keep-alive connection; the signal goes
    // out from inside the load once 100 creates have been answered.
    async function worker(id: number): Promise<void> {
      for (let n = 0; n < 10_000; n++) {
        const short = `load-${id}-${n}`;
        try {
          const response = await fetch(`${server.url}/v1/link?${new URLSearchParams({ url: `https://example.org/${short}`, short })}`, {
            headers: { authorization: code },
            signal: AbortSignal.timeout(10_000),
          });
          const body = await response.text();
          if (response.status !== 200) failures.push(`${short}: ${response.status} ${body}`);
          else answered.add(short);
          if (stopping !== undefined) afterSignal++;
        } catch (error) {
          // Once the server stops accepting, new connections are refused: that ends the worker.
          if (stopping === undefined) failures.push(`${short}: ${String(error)}`);
          return;
        }
        if (answered.size >= 100 && stopping === undefined) stopping = server.stop('SIGTERM');
      }
    }
    await Promise.all(Array.from({ length: 6 }, (_, id) => worker(id)));
    assert.ok(stopping !== undefined, 'the load reached the signal');
    const result = await stopping;
    t.diagnostic(
      `SIGTERM under load: exited ${result.code} after ${Math.round(result.elapsedMs)} ms; ` +
        `${answered.size} creates answered, ${afterSignal} of them after the signal`,
    );
    assertCleanExit(result, 'SIGTERM under load');
    assert.deepEqual(failures, [], 'nothing failed before the signal, and nothing answered failed');

    server = await start();
    const stored = await json<LinkJson[]>(server, '/v1/links', { headers: { authorization: code } });
    const storedCodes = new Set(stored.map((link) => link.ShortCode));
    for (const short of answered) assert.ok(storedCodes.has(short), `answered create of ${short} survives`);
    assertCleanExit(await server.stop('SIGTERM'), 'SIGTERM');
  });

  describe('refuses bad configuration with one line on stderr and a non-zero exit', () => {
    const cases: { name: string; env: (dir: string) => Record<string, string>; mentions: RegExp }[] = [
      { name: 'an unparsable PORT', env: () => ({ PORT: 'abc' }), mentions: /PORT/ },
      { name: 'a BASE_URL that is not http(s)', env: () => ({ BASE_URL: 'ftp://x' }), mentions: /BASE_URL/ },
      { name: 'a REDIRECT_STATUS that is no redirect', env: () => ({ REDIRECT_STATUS: '303' }), mentions: /REDIRECT_STATUS/ },
      {
        name: 'a SQLite path that cannot be created',
        env: (dir) => {
          writeFileSync(join(dir, 'plain-file'), 'not a folder');
          return { DATABASE_URL: join(dir, 'plain-file', 'db.sqlite') };
        },
        mentions: /database/,
      },
      {
        name: 'an unreachable PostgreSQL',
        env: () => ({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/shortlink' }),
        mentions: /database/,
      },
    ];
    for (const { name, env, mentions } of cases) {
      test(name, async (t) => {
        const database = tempDatabase();
        t.after(() => database.remove());
        const result = await runUntilExit({ databasePath: database.path, env: env(database.dir) });
        assert.equal(result.signal, null);
        assert.notEqual(result.code, 0);
        assert.ok(result.stderr.endsWith('\n'), `stderr ends its line: ${JSON.stringify(result.stderr)}`);
        const lines = result.stderr.trimEnd().split('\n');
        assert.equal(lines.length, 1, `one line on stderr, got:\n${result.stderr}`);
        assert.match(lines[0]!, /^Unable to start: /);
        assert.match(lines[0]!, mentions);
        assert.doesNotMatch(lines[0]!, /\bat .*:\d+:\d+/, 'no stack trace');
      });
    }

    test('a port already in use', async (t) => {
      const { start, database } = fixture(t);
      const first = await start();
      const result = await runUntilExit({ databasePath: join(database.dir, 'other.sqlite'), env: { PORT: String(first.port) } });
      assert.notEqual(result.code, 0);
      const lines = result.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, `one line on stderr, got:\n${result.stderr}`);
      assert.match(lines[0]!, /^Unable to start: cannot listen on 127\.0\.0\.1:\d+/);
      assert.equal((await call(first, '/v1/no-such-route')).status, 404, 'the first server is unaffected');
      assertCleanExit(await first.stop(), 'SIGTERM');
    });
  });

  test('never writes an access code to stdout or stderr', async (t) => {
    const { start } = fixture(t);
    const server = await start();
    const { AccessCode: code } = await newAccount(server);
    const other = crypto.randomUUID();
    const upper = code.toUpperCase();
    const form = { 'content-type': 'application/x-www-form-urlencoded' };

    const requests: [string, RequestInit, number][] = [
      [`/v1/links?auth=${code}`, {}, 200],
      [`/v1/links?auth=${upper}&x=1`, {}, 200],
      [`/v1/link?url=https://example.org/&short=secret-1&auth=${code}`, {}, 200],
      [`/v1/link?url=https://example.org/&short=secret-1&%61uth=${code}`, {}, 409],
      ['/v1/link?short=secret-2', { method: 'POST', headers: { ...form, authorization: code }, body: 'url=https%3A%2F%2Fexample.org%2F' }, 200],
      ['/v1/get_account', { headers: { authorization: `Bearer ${code}` } }, 200],
      ['/v1/user_info', { headers: { authorization: code } }, 200],
      ['/v1/user_info', { headers: { authorization: `Basic ${code}` } }, 401],
      [`/v1/links?auth=${code}`, { headers: { authorization: `Bearer ${other}` } }, 400],
      ['/v1/link', { method: 'POST', headers: form, body: `url=https%3A%2F%2Fexample.org%2F&auth=${code}` }, 401],
      [`/v1/get/${code}`, {}, 404],
      [`/${code}?auth=${code}`, {}, 404],
      [`/v1/no-such-route/${code}?auth=${code}`, {}, 404],
      [`/v1/link?short=secret-1&auth=${code}`, { method: 'DELETE' }, 200],
    ];
    for (const [path, init, status] of requests) {
      const reply = await call(server, path, init);
      assert.equal(reply.status, status, `${init.method ?? 'GET'} ${path}: ${reply.text}`);
    }
    assertCleanExit(await server.stop(), 'SIGTERM');

    const output = `${server.stdout()}\n${server.stderr()}`.toLowerCase();
    const logged = server.logs().filter((line) => line.msg === 'request completed');
    assert.ok(logged.length >= requests.length, `every request is logged (${logged.length})`);
    assert.ok(logged.some((line) => String(line.url).includes('auth=[REDACTED]')), 'the logged URL shows where the code was');
    assert.equal(output.includes(code.toLowerCase()), false, 'the access code appears in the output');
    assert.equal(output.includes(other.toLowerCase()), false, 'a rejected code appears in the output');
  });
});

/** The spec's four keys of an owner's LinkDetails (the details are checked where they matter). */
function publicView(link: LinkJson): LinkJson {
  return { ShortCode: link.ShortCode, PointsTo: link.PointsTo, CreatedBy: link.CreatedBy, Accesses: link.Accesses };
}
