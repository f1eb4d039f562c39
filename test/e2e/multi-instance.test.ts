/**
 * Three real server processes sharing one PostgreSQL database, as behind a load balancer,
 * with requests racing across them: the guarantees of contract §6 must hold across
 * instances exactly as within one. Run twice: without Redis (per-process rate-limit
 * counters), and with REDIS_URL (shared counters). Rate limits are on, loopback included, with
 * roomy limits, so the limiter is on every request's path as in production.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { cleanup, E2E_BASE_URL, startServer, type ServerProcess } from '../helpers/process.ts';
import { createPostgresDatabase, postgresGate, redisGate, uniqueSuffix } from '../helpers/services.ts';
import { waitFor } from '../helpers/wait-for.ts';

const TEXT = 'text/plain; charset=utf-8';
const HTML = 'text/html; charset=utf-8';
const REQUEST_TIMEOUT_MS = 10_000;

interface Reply {
  status: number;
  headers: Headers;
  text: string;
}

interface LinkJson {
  ShortCode: string;
  PointsTo: string;
  CreatedBy: number;
  Accesses: number;
}

interface Account {
  uid: number;
  auth: { authorization: string };
}

async function call(server: ServerProcess, path: string, init: RequestInit = {}): Promise<Reply> {
  const response = await fetch(`${server.url}${path}`, { redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...init });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function newAccount(server: ServerProcess): Promise<Account> {
  const reply = await call(server, '/v1/new_account');
  assert.equal(reply.status, 200, reply.text);
  const body = JSON.parse(reply.text) as { Uid: number; AccessCode: string };
  return { uid: body.Uid, auth: { authorization: `Bearer ${body.AccessCode}` } };
}

function createLink(server: ServerProcess, account: Account, short: string, url = `https://example.org/${short}`): Promise<Reply> {
  return call(server, `/v1/link?${new URLSearchParams({ url, short })}`, { headers: account.auth });
}

async function listLinks(server: ServerProcess, account: Account): Promise<LinkJson[]> {
  const reply = await call(server, '/v1/links', { headers: account.auth });
  assert.equal(reply.status, 200, reply.text);
  return JSON.parse(reply.text) as LinkJson[];
}

function tally(statuses: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

const ROOMY_LIMIT = '1000000/1m';

const postgres = postgresGate();
const redis = redisGate();

for (const withRedis of [false, true]) {
  const skip = postgres.skip || (withRedis && redis.skip);
  describe(`three instances on one PostgreSQL database, ${withRedis ? 'with' : 'without'} Redis`, { skip }, () => {
    let database: { url: string; drop(): Promise<void> };
    const servers: ServerProcess[] = [];
    const redisPrefix = `shortlink:test:${uniqueSuffix()}:`;
    let redisClient: Redis | undefined;
    let env: Record<string, string>;

    const start = () => startServer({ databasePath: database.url, env });

    before(async () => {
      database = await createPostgresDatabase(postgres.value!);
      env = {
        DEFAULT_MAX_LINKS: '20',
        RATE_LIMIT: 'on',
        RATE_LIMIT_EXEMPT: '',
        RATE_LIMIT_NEW_ACCOUNT: ROOMY_LIMIT,
        RATE_LIMIT_FAILED_AUTH: ROOMY_LIMIT,
        RATE_LIMIT_CREATE_LINK: ROOMY_LIMIT,
        RATE_LIMIT_RESOLVE: ROOMY_LIMIT,
        RATE_LIMIT_UNKNOWN_CODE: ROOMY_LIMIT,
        ...(withRedis ? { REDIS_URL: redis.value!, REDIS_PREFIX: redisPrefix } : {}),
      };
      if (withRedis) {
        redisClient = new Redis(redis.value!, { lazyConnect: true, maxRetriesPerRequest: 1 });
        await redisClient.connect();
      }
      // All three start at once on the fresh database: the migrations race (advisory lock).
      servers.push(...(await Promise.all([start(), start(), start()])));
      if (withRedis) {
        for (const server of servers) await server.waitForLog((line) => line.msg === 'Redis connected');
      }
    });

    after(async () => {
      try {
        const exits = await Promise.all(servers.filter((server) => server.isRunning()).map((server) => server.stop('SIGTERM')));
        for (const exit of exits) assert.equal(exit.code, 0, 'each instance stops cleanly');
      } finally {
        await cleanup();
        await database?.drop();
        if (redisClient !== undefined) {
          const keys = await redisClient.keys(`${redisPrefix}*`);
          if (keys.length > 0) await redisClient.del(...keys);
          redisClient.disconnect();
        }
      }
    });

    test('60 creates racing on one account across the instances: exactly MaxLinks (20) succeed', async (t) => {
      const owner = await newAccount(servers[0]!);
      const started = performance.now();
      const replies = await Promise.all(
        Array.from({ length: 60 }, (_, i) => createLink(servers[i % 3]!, owner, `cap-${i}`)),
      );
      t.diagnostic(`60 racing creates answered in ${Math.round(performance.now() - started)} ms`);
      assert.deepEqual(tally(replies.map((reply) => reply.status)), { 200: 20, 403: 40 });
      const granted = new Set<string>();
      replies.forEach((reply, i) => {
        if (reply.status === 200) {
          assert.equal(reply.text, `${E2E_BASE_URL}/cap-${i}`);
          granted.add(`cap-${i}`);
        } else {
          assert.equal(reply.headers.get('content-type'), TEXT);
          assert.match(reply.text, /^Unable to create link: /);
        }
      });
      for (const server of servers) {
        const links = await listLinks(server, owner);
        assert.equal(links.length, 20, 'every instance lists the same 20 links');
        assert.deepEqual(new Set(links.map((link) => link.ShortCode)), granted, 'the listed links are the ones answered 200');
      }
    });

    test('30 accounts racing for one custom shortcode across the instances: one 200, 29 × 409', async () => {
      const accounts = await Promise.all(Array.from({ length: 30 }, (_, i) => newAccount(servers[i % 3]!)));
      assert.equal(new Set(accounts.map((account) => account.uid)).size, 30, 'Uids are unique across instances');
      const short = `contested-${uniqueSuffix()}`;
      const replies = await Promise.all(
        accounts.map((account, i) => createLink(servers[i % 3]!, account, short, `https://example.org/from/${account.uid}`)),
      );
      assert.deepEqual(tally(replies.map((reply) => reply.status)), { 200: 1, 409: 29 });
      for (const reply of replies.filter((r) => r.status === 409)) assert.match(reply.text, /^Unable to create link: /);
      const winner = accounts[replies.findIndex((reply) => reply.status === 200)]!;
      for (const server of servers) {
        const reply = await call(server, `/v1/get/${short}`);
        assert.equal(reply.status, 200);
        const link = JSON.parse(reply.text) as LinkJson;
        assert.equal(link.CreatedBy, winner.uid);
        assert.equal(link.PointsTo, `https://example.org/from/${winner.uid}`);
      }
    });

    test('600 resolutions of one link spread over the instances: Accesses answered are exactly 1..600, and 600 stored', async (t) => {
      const owner = await newAccount(servers[2]!);
      const short = `hot-${uniqueSuffix()}`;
      assert.equal((await createLink(servers[2]!, owner, short)).status, 200);
      const counts: number[] = [];
      const failures: string[] = [];
      // 30 clients resolving back to back, each moving from instance to instance: 600 in all.
      const started = performance.now();
      await Promise.all(
        Array.from({ length: 30 }, async (_, client) => {
          for (let n = 0; n < 20; n++) {
            const reply = await call(servers[(client + n) % 3]!, `/v1/get/${short}`);
            if (reply.status === 200) counts.push((JSON.parse(reply.text) as LinkJson).Accesses);
            else failures.push(`${reply.status} ${reply.text}`);
          }
        }),
      );
      const elapsed = performance.now() - started;
      t.diagnostic(`600 resolutions over 3 instances in ${Math.round(elapsed)} ms (${Math.round(600 / (elapsed / 1000))}/s)`);
      assert.deepEqual(failures, [], 'every resolution was answered 200');
      assert.deepEqual(
        counts.sort((a, b) => a - b),
        Array.from({ length: 600 }, (_, i) => i + 1),
        'each answer has its own count, and together they are 1..600',
      );
      for (const server of servers) assert.equal((await listLinks(server, owner))[0]!.Accesses, 600, 'stored: 600');
    });

    test('max_visits 50 with 300 resolutions and redirects racing over the instances: exactly 50 succeed (guarantee 7)', async () => {
      const owner = await newAccount(servers[1]!);
      const short = `limited-${uniqueSuffix()}`;
      const created = await call(servers[1]!, `/v1/link?${new URLSearchParams({ url: 'https://example.org/limited', short, max_visits: '50' })}`, { headers: owner.auth });
      assert.equal(created.status, 200, created.text);
      const replies = await Promise.all(
        Array.from({ length: 30 }, async (_, client) => {
          const mine: Reply[] = [];
          for (let n = 0; n < 10; n++) {
            const server = servers[(client + n) % 3]!;
            mine.push(await call(server, n % 2 === 0 ? `/v1/get/${short}` : `/${short}`));
          }
          return mine;
        }),
      );
      const all = replies.flat();
      const granted = all.filter((reply) => reply.status === 200 || reply.status === 302);
      assert.equal(granted.length, 50, JSON.stringify(tally(all.map((reply) => reply.status))));
      assert.ok(all.every((reply) => [200, 302, 410].includes(reply.status)), JSON.stringify(tally(all.map((reply) => reply.status))));
      for (const reply of all.filter((r) => r.status === 410)) {
        assert.ok(reply.text === 'Unable to resolve link: the link has reached its visit limit' || reply.headers.get('content-type') === HTML);
      }
      const counts = all.filter((reply) => reply.status === 200).map((reply) => (JSON.parse(reply.text) as LinkJson).Accesses);
      assert.equal(new Set(counts).size, counts.length, 'distinct counts');
      assert.ok(counts.every((count) => count >= 1 && count <= 50));
      for (const server of servers) assert.equal((await listLinks(server, owner))[0]!.Accesses, 50, 'stored: 50');
    });

    test('a delete answered by one instance is seen at once by the others', async () => {
      const owner = await newAccount(servers[0]!);
      const other = await newAccount(servers[2]!);
      const [a, b, c] = servers as [ServerProcess, ServerProcess, ServerProcess];
      for (let i = 0; i < 10; i++) {
        const short = `gone-${i}-${uniqueSuffix()}`;
        assert.equal((await createLink(a, owner, short)).status, 200);
        // B and C have served the link before (anything they might keep would be warm).
        for (const server of [b, c]) {
          assert.equal((await call(server, `/v1/get/${short}`)).status, 200);
          assert.equal((await call(server, `/${short}`)).status, 302);
        }
        const deleted = await call(a, `/v1/link?short=${short}`, { method: 'DELETE', headers: owner.auth });
        assert.equal(deleted.status, 200, deleted.text);
        assert.equal(deleted.text, 'Success');
        const [resolveB, redirectB, resolveC, redirectC] = await Promise.all([
          call(b, `/v1/get/${short}`),
          call(b, `/${short}`),
          call(c, `/v1/get/${short}`),
          call(c, `/${short}`),
        ]);
        for (const reply of [resolveB, resolveC]) {
          assert.equal(reply.status, 404, reply.text);
          assert.equal(reply.headers.get('content-type'), TEXT);
          assert.match(reply.text, /^Unable to resolve link: /);
        }
        for (const reply of [redirectB, redirectC]) {
          assert.equal(reply.status, 404);
          assert.equal(reply.headers.get('content-type'), HTML);
          assert.equal(reply.headers.get('location'), null);
        }
        // The shortcode is free again, for anyone, on any instance.
        assert.equal((await createLink(c, other, short, 'https://example.org/new-owner')).status, 200);
        const reborn = JSON.parse((await call(b, `/v1/get/${short}`)).text) as LinkJson;
        assert.deepEqual(reborn, { ShortCode: short, PointsTo: 'https://example.org/new-owner', CreatedBy: other.uid, Accesses: 1 });
      }
    });

    if (withRedis) {
      test('rate-limit counters are shared through Redis', async () => {
        const key = `${redisPrefix}rl:acct:127.0.0.1`;
        const before = Number((await redisClient!.get(key)) ?? 0);
        for (let i = 0; i < 6; i++) await newAccount(servers[i % 3]!);
        assert.equal(Number(await redisClient!.get(key)), before + 6, 'one counter, counted by all three instances');
      });
    }

    test('kill -9 of one instance while resolving: every answered resolution is stored', async (t) => {
      const owner = await newAccount(servers[0]!);
      const short = `survivor-${uniqueSuffix()}`;
      assert.equal((await createLink(servers[0]!, owner, short)).status, 200);
      const victim = servers[2]!;
      const answered = [0, 0, 0];
      const cutOff = [0, 0, 0];
      const seen = new Set<number>();
      const problems: string[] = [];
      let stop = false;
      let killing = false;

      const client = async (index: number) => {
        const server = servers[index]!;
        while (!stop) {
          let reply: Reply;
          const sentBeforeKill = !killing;
          try {
            reply = await call(server, `/v1/get/${short}`);
          } catch (error) {
            if (server === victim && killing) {
              // In flight when the kill landed (it may or may not have been counted), or refused after.
              if (sentBeforeKill) cutOff[index]!++;
              return;
            }
            problems.push(`instance ${index}: ${String(error)}`);
            return;
          }
          if (reply.status !== 200) {
            problems.push(`instance ${index}: ${reply.status} ${reply.text}`);
            continue;
          }
          const accesses = (JSON.parse(reply.text) as LinkJson).Accesses;
          if (seen.has(accesses)) problems.push(`Accesses ${accesses} answered twice`);
          seen.add(accesses);
          answered[index]!++;
        }
      };
      const clients = Array.from({ length: 24 }, (_, i) => client(i % 3));

      await waitFor(() => answered[2]! >= 150, 'the victim to answer 150 resolutions', { timeoutMs: 20_000 });
      killing = true;
      const exit = await victim.kill9();
      assert.equal(exit.signal, 'SIGKILL');
      const atKill = answered[0]! + answered[1]!;
      // The survivors keep answering.
      await waitFor(() => answered[0]! + answered[1]! >= atKill + 200, 'the survivors to answer 200 more', { timeoutMs: 20_000 });
      stop = true;
      await Promise.all(clients);

      const total = answered[0]! + answered[1]! + answered[2]!;
      const lost = cutOff[2]!;
      const [link] = await listLinks(servers[0]!, owner);
      t.diagnostic(
        `answered ${answered.join(' + ')} = ${total}; ${lost} cut off by the kill; stored ${link!.Accesses}`,
      );
      assert.deepEqual(problems, [], 'the surviving instances answered every request, each with its own count');
      assert.ok(link!.Accesses >= total, `stored ${link!.Accesses} >= ${total} answered`);
      assert.ok(link!.Accesses <= total + lost, `stored ${link!.Accesses} <= ${total} answered + ${lost} cut off`);

      // Bring the third instance back, so the suite again runs three.
      servers[2] = await start();
      const reply = await call(servers[2], `/v1/get/${short}`);
      assert.equal(reply.status, 200);
      assert.equal((JSON.parse(reply.text) as LinkJson).Accesses, link!.Accesses + 1, 'the new instance counts on from the stored value');
    });
  });
}
