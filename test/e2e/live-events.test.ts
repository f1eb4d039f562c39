/**
 * The live stream across processes (ADR 19): a stream open on one process sees the events of
 * every other — WORKERS=2 on SQLite (through the primary), two instances on PostgreSQL
 * (LISTEN/NOTIFY) and two with Redis (pub/sub) — and SIGTERM with a stream open still exits
 * 0 at once (guarantee 6).
 *
 * Which process served a request is told by its X-Request-Id, whose prefix is per process. An
 * event published before the other process has heard that someone listens is not sent (live
 * only), so the test visits until a visit served elsewhere shows up, then holds every later
 * change to arriving.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, describe, test } from 'node:test';
import { openEventStream, type EventStream } from '../helpers/event-stream.ts';
import { cleanup, startServer, type ServerProcess } from '../helpers/process.ts';
import { createPostgresDatabase, postgresGate, redisGate, uniqueSuffix } from '../helpers/services.ts';
import { waitFor } from '../helpers/wait-for.ts';

after(cleanup);

interface Reply {
  status: number;
  body: string;
  servedBy: string;
}

/** One request on its own connection (so WORKERS hands each to the next worker). */
function fresh(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, agent: false, timeout: 10_000, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body, servedBy: String(response.headers['x-request-id']).split('-')[0]! }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

const visitedReferrers = (stream: EventStream) =>
  new Set(stream.events.filter((e) => e.event === 'link.visited')
    .flatMap((e) => (e.data.data.visits as { Referrer: string }[]).map((v) => v.Referrer)));

/**
 * The stream on `streamBase` sees visits served by another process than its own, then every
 * later visit and a link created on `otherBase`.
 */
async function seesOtherProcesses(streamBase: string, otherBase: string): Promise<void> {
  const tag = uniqueSuffix().replace(/_/g, '-');
  const account = JSON.parse((await fresh(streamBase, 'GET', '/v1/new_account')).body) as { AccessCode: string };
  const auth = { authorization: `Bearer ${account.AccessCode}` };
  const stream = await openEventStream(streamBase, auth);
  try {
    assert.equal(stream.status, 200);
    const own = String(stream.headers['x-request-id']).split('-')[0];
    const created = await fresh(otherBase, 'GET', `/v1/link?url=https://example.org/live&short=live-${tag}`, auth);
    assert.equal(created.status, 200, created.body);

    let n = 0;
    const servedElsewhere = new Set<string>();
    await waitFor(async () => {
      const referrer = `v${n++}.example`;
      const visit = await fresh(otherBase, 'GET', `/live-${tag}`, { referer: `https://${referrer}/` });
      assert.equal(visit.status, 302, visit.body);
      if (visit.servedBy !== own) servedElsewhere.add(referrer);
      const seen = visitedReferrers(stream);
      return [...servedElsewhere].some((r) => seen.has(r));
    }, 'a visit served by another process to reach the stream', { timeoutMs: 20_000, intervalMs: 50 });

    // From now on the other process knows: nothing is missed.
    const later = Array.from({ length: 6 }, (_, i) => `later${i}.example`);
    const servers = new Set<string>();
    for (const referrer of later) {
      const visit = await fresh(otherBase, 'GET', `/live-${tag}`, { referer: `https://${referrer}/` });
      assert.equal(visit.status, 302);
      servers.add(visit.servedBy);
    }
    await waitFor(() => later.every((r) => visitedReferrers(stream).has(r)), () => `all later visits (served by ${[...servers].join(', ')})`);
    // Over 8000 bytes as JSON: NOTIFY carries it in parts.
    const longUrl = `https://example.org/${'😀'.repeat(1975)}`;
    const second = await fresh(otherBase, 'POST', '/v1/link', { ...auth, 'content-type': 'application/json' }, JSON.stringify({ url: longUrl, short: `second-${tag}` }));
    assert.equal(second.status, 200, second.body);
    const event = await stream.next((e) => e.event === 'link.created' && e.data.data.ShortCode === `second-${tag}`, 'link.created from the other process');
    assert.equal(event.data.data.PointsTo, longUrl);
  } finally {
    stream.close();
  }
}

describe('live events across processes', { timeout: 600_000 }, () => {
  test('WORKERS=2 on SQLite: a stream on one worker sees the other worker\'s events; SIGTERM with a stream open exits 0', async () => {
    const server = await startServer({ env: { WORKERS: '2', RATE_LIMIT: 'off' } });
    const listening = () => new Set(server.logs().filter((line) => String(line.msg).startsWith('Server listening at ')).map((line) => line.pid));
    await waitFor(() => listening().size === 2, 'both workers to listen');
    await seesOtherProcesses(server.url, server.url);

    // A stream on each worker (connections go to the workers in turn), then SIGTERM to the primary.
    const account = JSON.parse((await fresh(server.url, 'GET', '/v1/new_account')).body) as { AccessCode: string };
    const streams = [
      await openEventStream(server.url, { authorization: account.AccessCode }),
      await openEventStream(server.url, { authorization: account.AccessCode }),
    ];
    const began = performance.now();
    process.kill(server.child.pid!, 'SIGTERM');
    const exit = await server.exited;
    const elapsedMs = performance.now() - began;
    assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null }, server.stdout());
    assert.ok(elapsedMs < 10_000, `took ${Math.round(elapsedMs)} ms`);
    assert.equal(server.logs().filter((line) => line.msg === 'stopped').length, 2, 'both workers stopped');
    await waitFor(() => streams.every((s) => s.ended()), 'both streams to end');
  });

  test('WORKERS=2 on SQLite: the cap of 10 streams per account counts both workers; a rotation ends them on both', async (t) => {
    const server = await startServer({ env: { WORKERS: '2', RATE_LIMIT: 'off' } });
    const listening = () => new Set(server.logs().filter((line) => String(line.msg).startsWith('Server listening at ')).map((line) => line.pid));
    await waitFor(() => listening().size === 2, 'both workers to listen');
    const account = JSON.parse((await fresh(server.url, 'GET', '/v1/new_account')).body) as { AccessCode: string };
    const streams: EventStream[] = [];
    try {
      // Each on its own connection: the workers take them in turn.
      for (let i = 0; i < 25; i++) streams.push(await openEventStream(server.url, { authorization: account.AccessCode }));
      const opened = streams.filter((s) => s.status === 200);
      assert.equal(opened.length, 10, `streams opened: ${opened.length} of 25`);
      assert.ok(streams.filter((s) => s.status !== 200).every((s) => s.status === 429));
      const servedBy = new Set(opened.map((s) => String(s.headers['x-request-id']).split('-')[0]));
      assert.equal(servedBy.size, 2, 'both workers hold streams');

      const began = performance.now();
      const rotated = await fresh(server.url, 'POST', '/v1/rotate_access_code', { authorization: `Bearer ${account.AccessCode}` });
      assert.equal(rotated.status, 200, rotated.body);
      await waitFor(() => opened.every((s) => s.ended()), 'every stream of the old code to end');
      t.diagnostic(`the rotated code's streams had all ended ${Math.round(performance.now() - began)} ms after the rotation`);
    } finally {
      streams.forEach((s) => s.close());
      assert.equal((await server.stop('SIGTERM')).code, 0, server.stdout());
    }
  });

  test('one process: SIGTERM with a stream open exits 0 at once', async () => {
    const server = await startServer({ env: { RATE_LIMIT: 'off' } });
    const account = JSON.parse((await fresh(server.url, 'GET', '/v1/new_account')).body) as { AccessCode: string };
    const stream = await openEventStream(server.url, { authorization: `Bearer ${account.AccessCode}` });
    const stopped = await server.stop('SIGTERM');
    assert.equal(stopped.code, 0, server.stdout());
    assert.ok(stopped.elapsedMs < 3000, `took ${Math.round(stopped.elapsedMs)} ms`);
    await waitFor(() => stream.ended(), 'the stream to end');
    assert.ok(stream.comments.includes('closing'));
  });

  const postgres = postgresGate();
  const redis = redisGate();
  for (const withRedis of [false, true]) {
    test(`two instances on PostgreSQL ${withRedis ? 'with Redis (pub/sub)' : '(LISTEN/NOTIFY)'}: each stream sees the other instance's events`,
      { skip: postgres.skip || (withRedis && redis.skip) }, async () => {
        const database = await createPostgresDatabase(postgres.value!);
        const servers: ServerProcess[] = [];
        try {
          const env = {
            RATE_LIMIT: 'off',
            ...(withRedis ? { REDIS_URL: redis.value!, REDIS_PREFIX: `shortlink:test:${uniqueSuffix()}:` } : {}),
          };
          servers.push(await startServer({ databasePath: database.url, env }));
          servers.push(await startServer({ databasePath: database.url, env }));
          const [a, b] = servers as [ServerProcess, ServerProcess];
          await seesOtherProcesses(a.url, b.url);
          await seesOtherProcesses(b.url, a.url);
          for (const server of servers) assert.equal((await server.stop('SIGTERM')).code, 0, server.stdout());
        } finally {
          for (const server of servers) if (server.isRunning()) await server.kill9();
          await database.drop();
        }
      });
  }
});
