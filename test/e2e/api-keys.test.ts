/**
 * API keys across instances (CONTRACT §8.5): three server processes on one PostgreSQL
 * database, each with its own key cache warmed first. A key deleted through one instance is
 * refused (401) by every instance within 1 s; a key works on every instance and its
 * LastUsed is written by the instances that saw it used (at the latest when they stop).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cleanup, startServer, type ServerProcess } from '../helpers/process.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';

const WINDOW_MS = 1000;
const postgres = postgresGate();

async function status(server: ServerProcess, path: string, init: RequestInit = {}): Promise<number> {
  const response = await fetch(`${server.url}${path}`, { ...init, signal: AbortSignal.timeout(10_000) });
  await response.arrayBuffer();
  return response.status;
}

describe('API keys across three instances on one PostgreSQL database', { skip: postgres.skip, timeout: 300_000 }, () => {
  let database: { url: string; drop(): Promise<void> };
  const servers: ServerProcess[] = [];

  before(async () => {
    database = await createPostgresDatabase(postgres.value!);
    const env = { RATE_LIMIT: 'off' };
    servers.push(...(await Promise.all([0, 1, 2].map(() => startServer({ databasePath: database.url, env, readyTimeoutMs: 90_000 })))));
  });

  after(async () => {
    try {
      const exits = await Promise.all(servers.filter((server) => server.isRunning()).map((server) => server.stop('SIGTERM')));
      for (const exit of exits) assert.equal(exit.code, 0, 'each instance stops cleanly');
    } finally {
      await cleanup();
      await database?.drop();
    }
  });

  async function keyOn(server: ServerProcess, scopes: string): Promise<{ code: string; id: string; key: string }> {
    const account = await fetch(`${server.url}/v1/new_account`, { method: 'POST' });
    const code = ((await account.json()) as { AccessCode: string }).AccessCode;
    const created = await fetch(`${server.url}/v1/keys?${new URLSearchParams({ name: 'e2e', scopes })}`, { method: 'POST', headers: { authorization: `Bearer ${code}` } });
    assert.equal(created.status, 200);
    const { Id, Key } = (await created.json()) as { Id: string; Key: string };
    return { code, id: Id, key: Key };
  }

  test('a deleted key is refused (401) by every instance within 1 s', { timeout: 60_000 }, async (t) => {
    const [a, , c] = servers as [ServerProcess, ServerProcess, ServerProcess];
    const { code, id, key } = await keyOn(a, 'links:read');
    const withKey = { headers: { authorization: `Bearer ${key}` } };
    // Every instance has the key cached.
    for (const server of servers) for (let i = 0; i < 3; i++) assert.equal(await status(server, '/v1/links', withKey), 200);

    assert.equal(await status(c, `/v1/keys?id=${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${code}` } }), 200);
    const started = performance.now();
    let lastOld = -1;
    const late: number[] = [];
    while (performance.now() - started < WINDOW_MS + 500) {
      const round = await Promise.all(servers.map(async (server) => ({ answer: await status(server, '/v1/links', withKey), at: performance.now() - started })));
      for (const { answer, at } of round) {
        if (answer === 200) lastOld = Math.max(lastOld, at);
        if (at > WINDOW_MS) late.push(answer);
      }
    }
    t.diagnostic(`the deleted key last answered 200 at ${lastOld < 0 ? 'never' : `${Math.round(lastOld)} ms`} after the deletion`);
    assert.ok(lastOld < WINDOW_MS, `the deleted key still worked ${Math.round(lastOld)} ms after the deletion`);
    assert.ok(late.length > 0 && late.every((answer) => answer === 401), `after 1 s: ${late.join(',')}`);
  });

  test('a key works on every instance within its scopes, and its use is recorded as LastUsed', { timeout: 60_000 }, async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess, ServerProcess];
    const { code, key } = await keyOn(a, 'links:write');
    for (const [i, server] of servers.entries()) {
      const created = await fetch(`${server.url}/v1/links`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify([{ url: `https://example.com/${i}` }]),
      });
      assert.equal(created.status, 200);
      assert.ok('ShortUrl' in ((await created.json()) as object[])[0]!);
      assert.equal(await status(server, '/v1/links', { headers: { authorization: `Bearer ${key}` } }), 403);
    }
    // Instance b used the key: listing there writes its pending uses first.
    const listed = await fetch(`${b.url}/v1/keys`, { headers: { authorization: `Bearer ${code}` } });
    const [only] = (await listed.json()) as { LastUsed: string | null }[];
    assert.match(String(only!.LastUsed), /^\d{4}-\d\d-\d\dT/);
  });
});
