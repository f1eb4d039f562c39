/**
 * CONTRACT §7.2-7.3 across processes: two instances on one PostgreSQL database, each with
 * WORKERS=2 (four processes, each with its own account cache). After a rotation, a deletion
 * or an administrator's disable answered by one process, the old state must be refused by
 * every process within 1 s. Every worker's cache is warmed with the old state first. Live
 * event streams opened with the old state end on every process, and their per-account cap
 * counts the streams of all four.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openEventStream, type EventStream } from '../helpers/event-stream.ts';
import { cleanup, startServer, type ServerProcess } from '../helpers/process.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';
import { waitFor } from '../helpers/wait-for.ts';

const ADMIN_TOKEN = 'e2e-admin-token-0123456789abcdefghijkl';
const WINDOW_MS = 1000;

const postgres = postgresGate();

async function status(server: ServerProcess, path: string, init: RequestInit = {}): Promise<number> {
  // A fresh connection per request, so the cluster hands requests to both workers.
  const response = await fetch(`${server.url}${path}`, { ...init, headers: { connection: 'close', ...init.headers }, signal: AbortSignal.timeout(10_000) });
  await response.arrayBuffer();
  return response.status;
}

async function newAccount(server: ServerProcess): Promise<{ uid: number; code: string }> {
  const response = await fetch(`${server.url}/v1/new_account`, { method: 'POST' });
  const body = (await response.json()) as { Uid: number; AccessCode: string };
  return { uid: body.Uid, code: body.AccessCode };
}

/** Lists links with `code` on every server often enough that every worker has it cached. */
async function warm(servers: readonly ServerProcess[], code: string, expected: number): Promise<void> {
  const statuses = await Promise.all(servers.flatMap((server) => Array.from({ length: 8 }, () => status(server, '/v1/links', { headers: { authorization: `Bearer ${code}` } }))));
  assert.deepEqual([...new Set(statuses)], [expected]);
}

/**
 * After `change` is answered, keeps asking every server with `code` for 1.5 s and returns the
 * latest moment (ms after the answer) at which one still answered `before`, and every status
 * seen after the 1 s window.
 */
async function watch(servers: readonly ServerProcess[], code: string, before: number, change: () => Promise<void>): Promise<{ lastOld: number; late: number[] }> {
  await change();
  const started = performance.now();
  let lastOld = -1;
  const late: number[] = [];
  while (performance.now() - started < WINDOW_MS + 500) {
    const round = await Promise.all(servers.flatMap((server) => [0, 1].map(async () => {
      const answer = await status(server, '/v1/links', { headers: { authorization: `Bearer ${code}` } });
      return { answer, at: performance.now() - started };
    })));
    for (const { answer, at } of round) {
      if (answer === before) lastOld = Math.max(lastOld, at);
      if (at > WINDOW_MS) late.push(answer);
    }
  }
  return { lastOld, late };
}

describe('account changes reach every process within 1 s (2 instances × WORKERS=2 on PostgreSQL)', { skip: postgres.skip, timeout: 600_000 }, () => {
  let database: { url: string; drop(): Promise<void> };
  const servers: ServerProcess[] = [];

  before(async () => {
    database = await createPostgresDatabase(postgres.value!);
    const env = { WORKERS: '2', ADMIN_TOKEN, RATE_LIMIT: 'off' };
    for (let i = 0; i < 2; i++) {
      const server = await startServer({ databasePath: database.url, env });
      servers.push(server);
      // Both workers, so that each has a cache of its own to warm and to outdate.
      const listening = () => new Set(server.logs().filter((line) => String(line.msg).startsWith('Server listening at ')).map((line) => line.pid));
      await waitFor(() => listening().size === 2, 'both workers to listen', { timeoutMs: 90_000, intervalMs: 50 });
    }
  });

  after(async () => {
    try {
      // The cluster's primary (the spawned process), not the worker whose pid the log shows first.
      for (const server of servers) if (server.isRunning()) process.kill(server.child.pid!, 'SIGTERM');
      const exits = await Promise.all(servers.map((server) => server.exited));
      for (const exit of exits) assert.equal(exit.code, 0, 'each instance stops cleanly');
    } finally {
      await cleanup();
      await database?.drop();
    }
  });

  /** Streams of `code` opened in turn on each server (each on its own connection, so on both workers). */
  async function openStreams(code: string, count: number): Promise<EventStream[]> {
    const streams: EventStream[] = [];
    for (let i = 0; i < count; i++) streams.push(await openEventStream(servers[i % servers.length]!.url, { authorization: `Bearer ${code}` }));
    return streams;
  }

  test('the cap of 10 event streams per account counts the streams of all four processes', { timeout: 600_000 }, async () => {
    const { code } = await newAccount(servers[0]!);
    const streams = await openStreams(code, 25);
    try {
      const opened = streams.filter((s) => s.status === 200);
      assert.equal(opened.length, 10, `streams opened: ${opened.length} of 25`);
      assert.ok(streams.filter((s) => s.status !== 200).every((s) => s.status === 429));
      assert.ok(new Set(opened.map((s) => String(s.headers['x-request-id']).split('-')[0])).size >= 3, 'streams held by several processes');
    } finally {
      streams.forEach((s) => s.close());
    }
  });

  for (const change of ['rotated', 'disabled', 'deleted'] as const) {
    test(`streams opened with a code whose account is then ${change} end on every process`, { timeout: 600_000 }, async (t) => {
      const [a, b] = servers as [ServerProcess, ServerProcess];
      const { uid, code } = await newAccount(a);
      const streams = await openStreams(code, 8);
      try {
        assert.deepEqual([...new Set(streams.map((s) => s.status))], [200]);
        const began = performance.now();
        if (change === 'rotated') {
          assert.equal(await status(b, '/v1/rotate_access_code', { method: 'POST', headers: { authorization: `Bearer ${code}` } }), 200);
        } else if (change === 'deleted') {
          assert.equal(await status(b, '/v1/account', { method: 'DELETE', headers: { authorization: `Bearer ${code}` } }), 200);
        } else {
          assert.equal(await status(b, `/v1/admin/account?uid=${uid}&disabled=true`, { method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }), 200);
        }
        await waitFor(() => streams.every((s) => s.ended()), `every stream of the ${change} account to end`, { timeoutMs: 20_000, intervalMs: 10 });
        t.diagnostic(`all 8 streams had ended ${Math.round(performance.now() - began)} ms after the change was answered`);
      } finally {
        streams.forEach((s) => s.close());
      }
    });
  }

  test('a rotated access code is refused everywhere within 1 s; the new one works everywhere', { timeout: 600_000 }, async (t) => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const { code } = await newAccount(a);
    await warm(servers, code, 200);
    let fresh = '';
    const { lastOld, late } = await watch(servers, code, 200, async () => {
      const response = await fetch(`${b.url}/v1/rotate_access_code`, { method: 'POST', headers: { authorization: `Bearer ${code}` } });
      assert.equal(response.status, 200);
      fresh = ((await response.json()) as { AccessCode: string }).AccessCode;
    });
    t.diagnostic(`old code last answered 200 at ${lastOld < 0 ? 'never' : `${Math.round(lastOld)} ms`} after the rotation`);
    assert.ok(lastOld < WINDOW_MS, `the old code still worked ${Math.round(lastOld)} ms after the rotation`);
    assert.ok(late.length > 0 && late.every((answer) => answer === 401), `after 1 s: ${late.join(',')}`);
    await warm(servers, fresh, 200);
  });

  test('a deleted account\'s code is refused everywhere within 1 s', { timeout: 600_000 }, async (t) => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const { code } = await newAccount(a);
    await warm(servers, code, 200);
    const { lastOld, late } = await watch(servers, code, 200, async () => {
      assert.equal(await status(b, '/v1/account', { method: 'DELETE', headers: { authorization: `Bearer ${code}` } }), 200);
    });
    t.diagnostic(`deleted account last answered 200 at ${lastOld < 0 ? 'never' : `${Math.round(lastOld)} ms`}`);
    assert.ok(lastOld < WINDOW_MS);
    assert.ok(late.length > 0 && late.every((answer) => answer === 401), `after 1 s: ${late.join(',')}`);
  });

  test('an account disabled by an administrator is refused (403) everywhere within 1 s, and enabled again', { timeout: 600_000 }, async (t) => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const { uid, code } = await newAccount(a);
    await warm(servers, code, 200);
    const admin = (disabled: boolean) => status(a, `/v1/admin/account?uid=${uid}&disabled=${disabled}`, {
      method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const disabled = await watch([b, a], code, 200, async () => assert.equal(await admin(true), 200));
    t.diagnostic(`disabled account last answered 200 at ${disabled.lastOld < 0 ? 'never' : `${Math.round(disabled.lastOld)} ms`}`);
    assert.ok(disabled.lastOld < WINDOW_MS);
    assert.ok(disabled.late.length > 0 && disabled.late.every((answer) => answer === 403), `after 1 s: ${disabled.late.join(',')}`);
    const enabled = await watch(servers, code, 403, async () => assert.equal(await admin(false), 200));
    assert.ok(enabled.lastOld < WINDOW_MS);
    assert.ok(enabled.late.every((answer) => answer === 200), `after 1 s: ${enabled.late.join(',')}`);
  });
});
