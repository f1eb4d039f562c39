/**
 * SIGTERM in the middle of mixed load (resolutions, redirects, creates, deletes, lists,
 * account creation on keep-alive connections), with a dozen requests of three kinds
 * certainly in flight: their headers were read (the server answered `100 Continue`) and their
 * bodies come only after the signal. lifecycle.test.ts covers one request in flight and a
 * create-only load; this adds the mix and the counts:
 *
 * - every request in flight at the signal is answered 200, with `Connection: close`;
 * - no answered request fails (no 5xx, no 503 while closing); the only failures are refused
 *   or closed connections after the signal;
 * - the process exits 0 within 10 s of the signal;
 * - after a restart every acknowledged create and delete holds, and each link's stored
 *   Accesses equals the resolutions answered (bounded above by those plus the ones whose
 *   connection failed).
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Agent, request as httpRequest } from 'node:http';
import { test } from 'node:test';
import { cleanup, E2E_BASE_URL, startServer, tempDatabase, type ServerProcess } from '../helpers/process.ts';
import { acceptsConnections, waitFor } from '../helpers/wait-for.ts';

const REQUEST_TIMEOUT_MS = 10_000;
const SHUTDOWN_LIMIT_MS = 10_000;
const ENV = { DEFAULT_MAX_LINKS: '1000000' };

interface LinkJson {
  ShortCode: string;
  PointsTo: string;
  CreatedBy: number;
  Accesses: number;
}

async function call(url: string, init: RequestInit = {}) {
  const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...init });
  return { status: response.status, body: await response.text(), connection: response.headers.get('connection') };
}

interface Held {
  /** Sends the body: the request completes. */
  finish(): void;
  readonly answer: Promise<{ status: number; body: string; connection: string | undefined }>;
}

/** A request whose headers the server has read (it said 100 Continue) and whose body is held back. */
async function holdInFlight(server: ServerProcess, agent: Agent, method: string, path: string, headers: Record<string, string>, body: string): Promise<Held> {
  const request = httpRequest(`${server.url}${path}`, {
    agent,
    method,
    timeout: REQUEST_TIMEOUT_MS,
    headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), expect: '100-continue' },
  });
  request.on('timeout', () => request.destroy(new Error('request timed out')));
  const answer = new Promise<{ status: number; body: string; connection: string | undefined }>((resolve, reject) => {
    request.on('error', reject);
    request.on('response', (reply) => {
      let text = '';
      reply.setEncoding('utf8');
      reply.on('data', (chunk: string) => (text += chunk));
      reply.on('end', () => resolve({ status: reply.statusCode!, body: text, connection: reply.headers.connection }));
    });
  });
  request.flushHeaders();
  await once(request, 'continue');
  return { finish: () => request.end(body), answer };
}

test('SIGTERM under mixed load: requests in flight finish, nothing answered fails, exit 0 within 10 s, counts exact', { timeout: 600_000 }, async (t) => {
  const database = tempDatabase();
  const agent = new Agent({ keepAlive: true, maxSockets: 12 });
  t.after(async () => {
    agent.destroy();
    await cleanup();
    database.remove();
  });

  let server = await startServer({ databasePath: database.path, env: ENV });
  const base = server.url;
  const owners: { code: string; uid: number }[] = [];
  for (let i = 0; i < 3; i++) {
    const account = JSON.parse((await call(`${base}/v1/new_account`)).body) as { Uid: number; AccessCode: string };
    owners.push({ code: account.AccessCode, uid: account.Uid });
  }
  const created = new Map<string, number>();
  const deleted = new Set<string>();
  const answered = new Map<string, number>();
  const failedResolutions = new Map<string, number>();
  const resolvable: string[] = [];
  for (let i = 0; i < 10; i++) {
    const owner = owners[i % 3]!;
    const short = `steady-${i}`;
    assert.equal((await call(`${base}/v1/link?url=https://example.org/${short}&short=${short}`, { headers: { authorization: owner.code } })).status, 200);
    created.set(short, owner.uid);
    resolvable.push(short);
  }

  let signalled = false;
  const unexpected: string[] = [];
  const stats = { answered: 0, afterSignal: 0, connectionFailures: 0 };
  /** Requests each worker has had answered, by worker name. */
  const answeredBy = new Map<string, number>();

  /** Repeats `step` until a connection fails after the signal (the server no longer accepts). */
  async function worker(name: string, step: (n: number) => Promise<void>): Promise<void> {
    for (let n = 0; n < 100_000; n++) {
      try {
        await step(n);
        stats.answered++;
        answeredBy.set(name, (answeredBy.get(name) ?? 0) + 1);
        if (signalled) stats.afterSignal++;
      } catch (error) {
        if (!signalled) unexpected.push(`${name} failed before the signal: ${String(error)}`);
        stats.connectionFailures++;
        return;
      }
    }
  }

  const check = (what: string, ok: boolean, detail: string) => {
    if (!ok) unexpected.push(`${what}: ${detail}`);
  };

  const workers = [
    ...[0, 1, 2, 3].map((w) =>
      worker(`resolve ${w}`, async (n) => {
        // steady-0…3 are deleted by requests held in flight; resolve the others.
        const short = resolvable[4 + ((n * 7 + w) % (resolvable.length - 4))]!;
        const redirect = n % 2 === 0;
        try {
          const reply = await call(redirect ? `${base}/${short}` : `${base}/v1/get/${short}`);
          check(`resolve ${short}`, reply.status === (redirect ? 302 : 200), `${reply.status} ${reply.body}`);
          if (reply.status === 200 || reply.status === 302) answered.set(short, (answered.get(short) ?? 0) + 1);
        } catch (error) {
          failedResolutions.set(short, (failedResolutions.get(short) ?? 0) + 1);
          throw error;
        }
      }),
    ),
    ...[0, 1].map((w) =>
      worker(`create ${w}`, async (n) => {
        const owner = owners[(n + w) % 3]!;
        const short = `load-${w}-${n}`;
        const reply = await call(`${base}/v1/link?url=https://example.org/${short}&short=${short}`, { headers: { authorization: owner.code } });
        check(`create ${short}`, reply.status === 200 && reply.body === `${E2E_BASE_URL}/${short}`, `${reply.status} ${reply.body}`);
        if (reply.status !== 200) return;
        created.set(short, owner.uid);
        if (n % 2 === 1) return;
        const gone = await call(`${base}/v1/link?short=${short}`, { method: 'DELETE', headers: { authorization: owner.code } });
        check(`delete ${short}`, gone.status === 200 && gone.body === 'Success', `${gone.status} ${gone.body}`);
        if (gone.status === 200) deleted.add(short);
      }),
    ),
    worker('list', async (n) => {
      const reply = await call(`${base}/v1/links`, { headers: { authorization: owners[n % 3]!.code } });
      check('list', reply.status === 200, `${reply.status} ${reply.body}`);
    }),
    worker('new_account', async () => {
      const reply = await call(`${base}/v1/new_account`, { method: 'POST' });
      check('new_account', reply.status === 200, `${reply.status} ${reply.body}`);
    }),
  ];

  // Twelve requests of three kinds whose headers the server has read; bodies come after the signal.
  const held: { what: string; expect: (answer: { status: number; body: string }) => boolean; held: Held }[] = [];
  for (let i = 0; i < 4; i++) {
    const owner = owners[i % 3]!;
    const short = `in-flight-${i}`;
    held.push({
      what: `create ${short}`,
      expect: (a) => a.status === 200 && a.body === `${E2E_BASE_URL}/${short}`,
      held: await holdInFlight(server, agent, 'POST', '/v1/link', { authorization: `Bearer ${owner.code}` }, JSON.stringify({ url: `https://example.org/${short}`, short })),
    });
    created.set(short, owner.uid);
    const doomed = `steady-${i}`;
    const doomedOwner = owners[i % 3]!;
    held.push({
      what: `delete ${doomed}`,
      expect: (a) => a.status === 200 && a.body === 'Success',
      held: await holdInFlight(server, agent, 'DELETE', '/v1/link', { authorization: doomedOwner.code }, JSON.stringify({ short: doomed })),
    });
    held.push({
      what: 'new_account',
      expect: (a) => a.status === 200 && (JSON.parse(a.body) as { Uid: number }).Uid > 0,
      held: await holdInFlight(server, agent, 'POST', '/v1/new_account', {}, '{}'),
    });
  }

  // The signal comes once every worker is under way, not after a guess at how long that takes.
  await waitFor(
    () => answeredBy.size === workers.length && [...answeredBy.values()].every((n) => n >= 10),
    () => `every worker to have 10 requests answered (${JSON.stringify(Object.fromEntries(answeredBy))}; ${unexpected.length} unexpected)`,
    { timeoutMs: 20_000 },
  );
  const stopping = server.stop('SIGTERM');
  signalled = true;
  await server.waitForLog((line) => line.msg === 'shutting down');
  // The held requests complete only now, while the server is closing: it no longer accepts
  // connections.
  await waitFor(async () => !(await acceptsConnections(server.port)), 'the server to stop accepting connections', { intervalMs: 5 });
  for (const { held: request } of held) request.finish();
  for (const { what, expect, held: request } of held) {
    const answer = await request.answer;
    assert.ok(expect(answer), `${what} in flight at the signal: ${answer.status} ${answer.body}`);
    assert.equal(answer.connection, 'close', `${what}: the connection is not kept`);
  }
  for (let i = 0; i < 4; i++) deleted.add(`steady-${i}`);

  const result = await stopping;
  await Promise.all(workers);
  t.diagnostic(
    `SIGTERM under mixed load: exit ${result.code} after ${Math.round(result.elapsedMs)} ms; ${stats.answered} requests answered ` +
      `(${stats.afterSignal} after the signal), ${held.length} held in flight all answered, ` +
      `${stats.connectionFailures} connections refused or closed after the signal`,
  );
  assert.equal(result.signal, null);
  assert.equal(result.code, 0);
  assert.ok(result.elapsedMs < SHUTDOWN_LIMIT_MS, `exited within 10 s (${Math.round(result.elapsedMs)} ms)`);
  assert.deepEqual(unexpected, [], 'no answered request failed, and nothing failed before the signal');

  server = await startServer({ databasePath: database.path, env: ENV });
  const stored = new Map<string, LinkJson>();
  for (const owner of owners) {
    const list = JSON.parse((await call(`${server.url}/v1/links`, { headers: { authorization: owner.code } })).body) as LinkJson[];
    for (const link of list) stored.set(link.ShortCode, link);
  }
  let exact = 0;
  for (const [short, owner] of created) {
    if (deleted.has(short)) {
      assert.equal(stored.has(short), false, `acknowledged delete of ${short} holds`);
      continue;
    }
    assert.equal(stored.get(short)?.CreatedBy, owner, `acknowledged create of ${short} holds`);
  }
  for (const short of resolvable.slice(4)) {
    const accesses = stored.get(short)!.Accesses;
    const ok = answered.get(short) ?? 0;
    assert.ok(accesses >= ok && accesses <= ok + (failedResolutions.get(short) ?? 0), `${short}: stored ${accesses}, answered ${ok}`);
    if (accesses === ok) exact++;
  }
  t.diagnostic(`${exact} of ${resolvable.length - 4} links store exactly the resolutions answered`);
  assert.equal((await server.stop('SIGTERM')).code, 0);
});
