/**
 * CONTRACT §8.1 across instances (issue 28): three real server processes on one PostgreSQL
 * database. A domain registered through the admin API of instance A can be used for a create
 * on instance B and answers a redirect by `Host` on instance C within 1 s; once its link and
 * then the domain are deleted on A, C resolves that Host in the default domain within 1 s.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { cleanup, startServer, type ServerProcess } from '../helpers/process.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';
import { waitFor } from '../helpers/wait-for.ts';

const ADMIN_TOKEN = 'e2e-domains-admin-token-0123456789abcdef';
const HOST = 'brand.example.com';
const SPREAD_MS = 1000;

interface Reply {
  status: number;
  location: string | undefined;
  text: string;
}

/** One request over a socket of its own, with the headers given (a `Host` of our choosing included). */
function call(server: ServerProcess, method: string, path: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: server.port, method, path, headers: { connection: 'close', ...headers }, agent: false, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

const postgres = postgresGate();

describe('domains across three instances on one PostgreSQL database', { skip: postgres.skip, timeout: 300_000 }, () => {
  let database: { url: string; drop(): Promise<void> };
  const servers: ServerProcess[] = [];

  before(async () => {
    database = await createPostgresDatabase(postgres.value!);
    const env = { ADMIN_TOKEN, RATE_LIMIT: 'off' };
    servers.push(...(await Promise.all([0, 1, 2].map(() => startServer({ databasePath: database.url, env })))));
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

  test('registered on A, used on B and C within 1 s; removed on A, gone from C within 1 s', async (t) => {
    const [a, b, c] = servers as [ServerProcess, ServerProcess, ServerProcess];
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const account = JSON.parse((await call(a, 'GET', '/v1/new_account')).text) as { AccessCode: string };
    const owner = { authorization: `Bearer ${account.AccessCode}` };
    // The same code on the default domain, so "resolves in the default domain" is visible.
    const onDefault = await call(a, 'GET', `/v1/link?${new URLSearchParams({ url: 'https://default-target.example/', short: 'brand1' })}`, owner);
    assert.equal(onDefault.status, 200, onDefault.text);
    // Warm C's view of the Host: before the domain exists it is the default domain.
    assert.equal((await call(c, 'GET', '/brand1', { host: HOST })).location, 'https://default-target.example/');
    assert.equal((await call(b, 'GET', `/v1/link?${new URLSearchParams({ url: 'https://x.example/', short: 'early1', domain: HOST })}`, owner)).status, 400);

    const put = await call(a, 'PUT', `/v1/admin/domain?${new URLSearchParams({ origin: `https://${HOST}` })}`, admin);
    assert.equal(put.status, 200, put.text);
    const registered = performance.now();

    const create = await waitFor(async () => {
      const reply = await call(b, 'GET', `/v1/link?${new URLSearchParams({ url: 'https://brand-target.example/', short: 'brand1', domain: HOST })}`, owner);
      if (reply.status === 400) return false;
      return reply;
    }, `instance B to accept domain=${HOST}`, { timeoutMs: 5000, intervalMs: 20 });
    const createdAfter = performance.now() - registered;
    assert.equal(create.status, 200, create.text);
    assert.equal(create.text, `https://${HOST}/brand1`);

    // Until C sees the domain, its Host resolves in the default domain: those polls count there.
    let polledOnDefault = 0;
    const redirect = await waitFor(async () => {
      const reply = await call(c, 'GET', '/brand1', { host: HOST });
      if (reply.location === 'https://default-target.example/') polledOnDefault++;
      return reply.location === 'https://brand-target.example/' ? reply : false;
    }, `instance C to redirect on ${HOST}`, { timeoutMs: 5000, intervalMs: 20 });
    const redirectedAfter = performance.now() - registered;
    assert.equal(redirect.status, 302);
    t.diagnostic(`create on B ${Math.round(createdAfter)} ms, redirect on C ${Math.round(redirectedAfter)} ms after the PUT on A`);
    assert.ok(createdAfter < SPREAD_MS, `B accepted the domain ${Math.round(createdAfter)} ms after it was registered`);
    assert.ok(redirectedAfter < SPREAD_MS, `C served the domain ${Math.round(redirectedAfter)} ms after it was registered`);
    // C's short URLs and lists name it too.
    const listed = await call(c, 'GET', '/v1/domains', owner);
    assert.deepEqual((JSON.parse(listed.text) as { Host: string }[]).map((d) => d.Host), ['short.test', HOST]);

    // Counted against the domain's link on every instance, never the default domain's.
    await call(a, 'GET', '/brand1', { host: HOST.toUpperCase() });
    const links = JSON.parse((await call(b, 'GET', '/v1/links', owner)).text) as { ShortCode: string; Domain: string | null; Accesses: number }[];
    assert.deepEqual(links.map((l) => [l.Domain, l.ShortCode, l.Accesses]), [[null, 'brand1', 1 + polledOnDefault], [HOST, 'brand1', 2]]);

    // In use: refused; after the link is deleted (on B), the domain goes (on A).
    assert.equal((await call(a, 'DELETE', `/v1/admin/domain?host=${HOST}`, admin)).status, 409);
    assert.equal((await call(b, 'DELETE', `/v1/link?short=brand1&domain=${HOST}`, owner)).status, 200);
    const removed = await call(a, 'DELETE', `/v1/admin/domain?host=${HOST}`, admin);
    assert.equal(removed.status, 200, removed.text);
    const removedAt = performance.now();
    await waitFor(async () => (await call(c, 'GET', '/brand1', { host: HOST })).location === 'https://default-target.example/',
      `instance C to resolve ${HOST} in the default domain`, { timeoutMs: 5000, intervalMs: 20 });
    const fellBack = performance.now() - removedAt;
    t.diagnostic(`C fell back to the default domain ${Math.round(fellBack)} ms after the DELETE on A`);
    assert.ok(fellBack < SPREAD_MS, `C still served the removed domain for ${Math.round(fellBack)} ms`);
    const refused = await waitFor(async () => {
      const reply = await call(b, 'GET', `/v1/link?${new URLSearchParams({ url: 'https://x.example/', short: 'late1', domain: HOST })}`, owner);
      return reply.status === 400 ? reply : false;
    }, `instance B to refuse domain=${HOST}`, { timeoutMs: 5000, intervalMs: 20 });
    assert.match(refused.text, /^Unable to create link: /);
    assert.ok(performance.now() - removedAt < SPREAD_MS + 500);
  });
});
