/**
 * Two server instances sharing one SQLite file and a private Redis for their rate-limit
 * counters. With Redis up a limit is shared (six accounts in all, whichever instance serves
 * them); when Redis dies every request is still answered, counts stay exact (they never
 * lived in Redis), and each instance limits on its own; once Redis is back on the same port
 * the instances reconnect by themselves and the limit is shared again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { cleanup, startServer, tempDatabase, type ServerProcess } from '../helpers/process.ts';
import { privateRedisGate, startPrivateRedis, type PrivateRedis } from '../helpers/private-services.ts';
import { redisGate, uniqueSuffix } from '../helpers/services.ts';
import { waitFor } from '../helpers/wait-for.ts';

const TEXT = 'text/plain; charset=utf-8';
const REQUEST_TIMEOUT_MS = 10_000;
const RECONNECT_TIMEOUT_MS = 15_000;
const ACCOUNT_LIMIT = 6;
const ROOMY_LIMIT = '1000000/1m';

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  ms: number;
}

interface LinkJson {
  ShortCode: string;
  Accesses: number;
}

async function call(server: ServerProcess, path: string, init: RequestInit = {}): Promise<Reply> {
  const started = performance.now();
  const response = await fetch(`${server.url}${path}`, { redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...init });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, ms: performance.now() - started };
}

function assertLimited(reply: Reply): void {
  assert.equal(reply.status, 429, reply.text);
  assert.equal(reply.headers.get('content-type'), TEXT);
  assert.match(reply.text, /^Unable to create account: too many requests; try again in \d+ s$/);
  assert.match(reply.headers.get('retry-after') ?? '', /^\d+$/);
}

const connectedLines = (server: ServerProcess) => server.logs().filter((line) => line.msg === 'Redis connected').length;

const gate = redisGate();
const program = privateRedisGate();

describe('Redis dies and comes back under two instances', { skip: gate.skip || program.skip }, () => {
  let redis: PrivateRedis;
  let servers: [ServerProcess, ServerProcess];
  const prefix = `shortlink:test:${uniqueSuffix()}:`;

  before(async () => {
    redis = await startPrivateRedis();
    const database = tempDatabase();
    const env = {
      REDIS_URL: redis.url,
      REDIS_PREFIX: prefix,
      RATE_LIMIT: 'on',
      RATE_LIMIT_EXEMPT: '',
      RATE_LIMIT_NEW_ACCOUNT: `${ACCOUNT_LIMIT}/1m`,
      RATE_LIMIT_FAILED_AUTH: ROOMY_LIMIT,
      RATE_LIMIT_CREATE_LINK: ROOMY_LIMIT,
      RATE_LIMIT_RESOLVE: ROOMY_LIMIT,
      RATE_LIMIT_UNKNOWN_CODE: ROOMY_LIMIT,
    };
    // One after the other: the first creates the SQLite schema.
    const first = await startServer({ databasePath: database.path, env });
    const second = await startServer({ databasePath: database.path, env });
    servers = [first, second];
    for (const server of servers) await server.waitForLog((line) => line.msg === 'Redis connected');
  });

  after(async () => {
    await cleanup();
    await redis?.destroy();
  });

  test('a limit is shared while Redis is up, per instance while it is down, and shared again once it is back', async (t) => {
    const [a, b] = servers;

    // 1. Shared: six accounts in all, alternating between the instances; then both refuse.
    const codes: string[] = [];
    for (let i = 0; i < ACCOUNT_LIMIT; i++) {
      const reply = await call(servers[i % 2]!, '/v1/new_account');
      assert.equal(reply.status, 200, `account ${i + 1}: ${reply.text}`);
      codes.push((JSON.parse(reply.text) as { AccessCode: string }).AccessCode);
    }
    assertLimited(await call(a, '/v1/new_account'));
    assertLimited(await call(b, '/v1/new_account'));
    const auth = { authorization: `Bearer ${codes[0]}` };
    assert.equal((await call(a, '/v1/link?url=https://example.org/steady&short=steady', { headers: auth })).status, 200);
    assert.equal((JSON.parse((await call(b, '/v1/get/steady')).text) as LinkJson).Accesses, 1);

    // 2. Redis dies. Every request is still answered, and counts stay exact.
    await redis.kill9();
    const latencies: number[] = [];
    const counts: number[] = [];
    for (let i = 0; i < 60; i++) {
      const reply = await call(servers[i % 2]!, '/v1/get/steady');
      assert.equal(reply.status, 200, reply.text);
      counts.push((JSON.parse(reply.text) as LinkJson).Accesses);
      latencies.push(reply.ms);
    }
    assert.deepEqual(counts, Array.from({ length: 60 }, (_, i) => i + 2), 'each resolution has its own count, in order');
    const listed = JSON.parse((await call(b, '/v1/links', { headers: auth })).text) as LinkJson[];
    assert.equal(listed[0]!.Accesses, 61, 'every resolution is stored');
    t.diagnostic(
      `resolutions while Redis is down: max ${Math.max(...latencies).toFixed(1)} ms, ` +
        `median ${[...latencies].sort((x, y) => x - y)[30]!.toFixed(1)} ms`,
    );
    assert.ok(Math.max(...latencies) < 1000, 'no request waits long for the missing Redis');

    // Each instance now counts in its own memory: six accounts on each, then refusals.
    for (const server of servers) {
      for (let i = 0; i < ACCOUNT_LIMIT; i++) {
        const reply = await call(server, '/v1/new_account');
        assert.equal(reply.status, 200, `while Redis is down, account ${i + 1} on port ${server.port}: ${reply.text}`);
      }
      assertLimited(await call(server, '/v1/new_account'));
    }
    for (const server of servers) {
      assert.ok(
        server.logs().some((line) => line.level === 40 && line.msg === 'Redis unavailable; using per-process rate limits'),
        'each instance warns that it fell back',
      );
      assert.ok(server.isRunning());
    }

    // 3. Redis returns on the same port (empty: it keeps nothing). Both instances reconnect.
    const before = servers.map(connectedLines);
    await redis.start();
    const restarted = performance.now();
    await waitFor(() => servers.every((server, i) => connectedLines(server) > before[i]!), 'both instances to reconnect', { timeoutMs: RECONNECT_TIMEOUT_MS });
    t.diagnostic(`both instances reconnected ${Math.round(performance.now() - restarted)} ms after Redis was back`);

    // Shared again: six in all across both, then both refuse.
    for (let i = 0; i < ACCOUNT_LIMIT; i++) {
      const reply = await call(servers[i % 2]!, '/v1/new_account');
      assert.equal(reply.status, 200, `after Redis returned, account ${i + 1}: ${reply.text}`);
    }
    assertLimited(await call(b, '/v1/new_account'));
    assertLimited(await call(a, '/v1/new_account'));

    const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await client.connect();
    try {
      assert.equal(await client.get(`${prefix}rl:acct:127.0.0.1`), String(ACCOUNT_LIMIT + 2), 'one shared counter, refusals included');
      assert.deepEqual(
        (await client.keys('*')).filter((key) => !key.startsWith(`${prefix}rl:`)),
        [],
        'Redis holds rate-limit windows under the prefix, and nothing else',
      );
    } finally {
      client.disconnect();
    }

    // Resolutions carry on from the stored count.
    assert.equal((JSON.parse((await call(a, '/v1/get/steady')).text) as LinkJson).Accesses, 62);
    for (const server of servers) assert.equal((await server.stop('SIGTERM')).code, 0);
  });

  test('an instance started while Redis is down serves at once, and shares limits once Redis arrives', async (t) => {
    await redis.kill9();
    const database = tempDatabase();
    const env = {
      REDIS_URL: redis.url,
      REDIS_PREFIX: `${prefix}late:`,
      RATE_LIMIT: 'on',
      RATE_LIMIT_EXEMPT: '',
      RATE_LIMIT_NEW_ACCOUNT: `${ACCOUNT_LIMIT}/1m`,
    };
    const server = await startServer({ databasePath: database.path, env });
    assert.equal(connectedLines(server), 0);
    assert.equal((await call(server, '/v1/new_account')).status, 200, 'answers without Redis');

    await redis.start();
    const restarted = performance.now();
    await waitFor(() => connectedLines(server) === 1, 'the instance to connect', { timeoutMs: RECONNECT_TIMEOUT_MS });
    t.diagnostic(`connected ${Math.round(performance.now() - restarted)} ms after Redis appeared`);
    for (let i = 0; i < ACCOUNT_LIMIT; i++) assert.equal((await call(server, '/v1/new_account')).status, 200);
    assertLimited(await call(server, '/v1/new_account'));
    const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await client.connect();
    try {
      assert.equal(await client.get(`${prefix}late:rl:acct:127.0.0.1`), String(ACCOUNT_LIMIT + 1), 'counted in Redis');
    } finally {
      client.disconnect();
    }
    assert.equal((await server.stop('SIGTERM')).code, 0);
  });
});
