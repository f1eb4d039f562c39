/**
 * The server against a private PostgreSQL that goes away and comes back. While it is down
 * every operation that needs it answers 503 `Unable to <operation>: storage unavailable`
 * with Retry-After, quickly, and the process stays up; once it is back the same process
 * serves again without a restart, with everything written before the outage intact, and every
 * resolution answered 200 around the outage counted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cleanup, E2E_BASE_URL, startServer, type ServerProcess } from '../helpers/process.ts';
import { privatePostgresGate, startPrivatePostgres, type PrivatePostgres } from '../helpers/private-services.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';
import { waitFor } from '../helpers/wait-for.ts';

const TEXT = 'text/plain; charset=utf-8';
const REQUEST_TIMEOUT_MS = 10_000;
/** Longest a 503 may take while the database is down: nothing should wait for a timeout. */
const FAST_FAILURE_MS = 1000;
const RECOVERY_TIMEOUT_MS = 15_000;

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  ms: number;
}

interface LinkJson {
  ShortCode: string;
  PointsTo: string;
  CreatedBy: number;
  Accesses: number;
}

async function call(server: ServerProcess, path: string, init: RequestInit = {}): Promise<Reply> {
  const started = performance.now();
  const response = await fetch(`${server.url}${path}`, { redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...init });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, ms: performance.now() - started };
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Every request that needs the database, with the operation its error names. */
function storageRequests(code: string, short: string): Array<[string, RequestInit, string]> {
  const auth = { authorization: `Bearer ${code}` };
  return [
    [`/v1/get/${short}`, {}, 'resolve link'],
    [`/${short}`, {}, 'resolve link'],
    [`/v1/get/${short}`, { method: 'HEAD' }, 'resolve link'],
    ['/v1/link?url=https://example.org/during&short=during-outage', { headers: auth }, 'create link'],
    ['/v1/new_account', {}, 'create account'],
    ['/v1/new_account', { method: 'POST' }, 'create account'],
    ['/v1/links', { headers: auth }, 'list links'],
    ['/v1/get_account', { headers: auth }, 'get account information'],
    [`/v1/link?short=${short}`, { method: 'DELETE', headers: auth }, 'delete link'],
  ];
}

const gate = postgresGate();
const programs = privatePostgresGate();

describe('PostgreSQL goes away and comes back', { skip: gate.skip || programs.skip }, () => {
  let pg: PrivatePostgres;
  before(async () => {
    pg = await startPrivatePostgres();
  });
  after(async () => {
    await cleanup();
    await pg?.destroy();
  });

  /** A fresh database on the private server and a server process on it. */
  async function fixture(t: { after(fn: () => Promise<void>): void }, env: Record<string, string> = {}) {
    const database = await createPostgresDatabase(pg.adminUrl);
    t.after(async () => {
      await pg.start().catch(() => undefined); // dropping needs the server up (a no-op error if it is)
      await database.drop();
    });
    const server = await startServer({ databasePath: database.url, env: { DEFAULT_MAX_LINKS: '1000', ...env } });
    return server;
  }

  for (const mode of ['fast', 'immediate'] as const) {
    test(`answers 503 while it is down (${mode} shutdown), stays up, and recovers by itself with the data intact`, async (t) => {
      const server = await fixture(t);

      // Before the outage: an account, two links, three resolutions.
      const created = await call(server, '/v1/new_account');
      assert.equal(created.status, 200);
      const account = JSON.parse(created.text) as { Uid: number; AccessCode: string };
      const auth = { authorization: `Bearer ${account.AccessCode}` };
      for (const short of ['kept-link', 'other-link']) {
        const reply = await call(server, `/v1/link?url=https://example.org/${short}&short=${short}`, { headers: auth });
        assert.equal(reply.status, 200, reply.text);
      }
      for (let i = 1; i <= 3; i++) {
        assert.equal((JSON.parse((await call(server, '/v1/get/kept-link')).text) as LinkJson).Accesses, i);
      }

      await pg.stop(mode);

      // Down: three rounds of every storage operation, each a prompt 503 in the contract's form.
      const latencies: number[] = [];
      for (let round = 0; round < 3; round++) {
        for (const [path, init, operation] of storageRequests(account.AccessCode, 'kept-link')) {
          const reply = await call(server, path, init);
          const what = `${init.method ?? 'GET'} ${path}`;
          assert.equal(reply.status, 503, `${what}: ${reply.status} ${reply.text}`);
          assert.equal(reply.headers.get('content-type'), TEXT, what);
          assert.equal(reply.headers.get('retry-after'), '1', what);
          if (init.method !== 'HEAD') assert.equal(reply.text, `Unable to ${operation}: storage unavailable`, what);
          latencies.push(reply.ms);
        }
      }
      t.diagnostic(
        `${latencies.length} requests while down: 503 in median ${percentile(latencies, 50).toFixed(1)} ms, ` +
          `max ${Math.max(...latencies).toFixed(1)} ms`,
      );
      assert.ok(Math.max(...latencies) < FAST_FAILURE_MS, `every 503 came within ${FAST_FAILURE_MS} ms`);
      assert.ok(server.isRunning(), 'the server process is still running');
      const unknownRoute = await call(server, '/v1/no-such-route');
      assert.equal(unknownRoute.status, 404, 'requests that need no storage are still served');

      // Back: the same process serves again; poll until it does.
      await pg.start();
      const restarted = performance.now();
      let attempts = 0;
      const reply = await waitFor(
        async () => {
          attempts++;
          const answer = await call(server, `/v1/get_account`, { headers: auth });
          if (answer.status === 200) return answer;
          assert.equal(answer.status, 503, answer.text);
          return undefined;
        },
        `the server to answer 200 again (${RECOVERY_TIMEOUT_MS} ms allowed)`,
        { timeoutMs: RECOVERY_TIMEOUT_MS, intervalMs: 20 },
      );
      t.diagnostic(`recovered ${(performance.now() - restarted).toFixed(0)} ms after PostgreSQL was back (${attempts} attempt(s))`);

      // Everything from before is there, and every operation works again.
      assert.equal((JSON.parse(reply.text) as { Uid: number }).Uid, account.Uid);
      const links = JSON.parse((await call(server, '/v1/links', { headers: auth })).text) as LinkJson[];
      assert.deepEqual(links.map((l) => ({ ShortCode: l.ShortCode, PointsTo: l.PointsTo, CreatedBy: l.CreatedBy, Accesses: l.Accesses })), [
        { ShortCode: 'kept-link', PointsTo: 'https://example.org/kept-link', CreatedBy: account.Uid, Accesses: 3 },
        { ShortCode: 'other-link', PointsTo: 'https://example.org/other-link', CreatedBy: account.Uid, Accesses: 0 },
      ]);
      assert.equal((JSON.parse((await call(server, '/v1/get/kept-link')).text) as LinkJson).Accesses, 4);
      assert.equal((await call(server, '/kept-link')).status, 302);
      const during = await call(server, '/v1/link?url=https://example.org/during&short=during-outage', { headers: auth });
      assert.equal(during.status, 200, during.text);
      assert.equal(during.text, `${E2E_BASE_URL}/during-outage`);
      assert.equal((await call(server, '/v1/link?short=other-link', { method: 'DELETE', headers: auth })).text, 'Success');
      assert.equal((await call(server, '/v1/new_account')).status, 200);

      const stop = await server.stop('SIGTERM');
      assert.equal(stop.code, 0, 'shuts down cleanly after the outage');
      assert.doesNotMatch(server.stderr(), /\S/, 'nothing on stderr: no crash, no unhandled error');
    });
  }

  test('a crash of PostgreSQL under load: every resolution answered 200 is counted, the rest are 503', async (t) => {
    const server = await fixture(t);
    const created = JSON.parse((await call(server, '/v1/new_account')).text) as { AccessCode: string };
    const auth = { authorization: `Bearer ${created.AccessCode}` };
    assert.equal((await call(server, '/v1/link?url=https://example.org/load&short=load-link', { headers: auth })).status, 200);

    const answered = { ok: 0, unavailable: 0, okAfterRecovery: 0 };
    const seen = new Set<number>();
    const problems: string[] = [];
    let phase: 'before' | 'down' | 'back' = 'before';
    let stop = false;
    const client = async () => {
      while (!stop) {
        let reply: Reply;
        try {
          reply = await call(server, '/v1/get/load-link');
        } catch (error) {
          problems.push(`no answer: ${String(error)}`);
          return;
        }
        if (reply.status === 200) {
          const accesses = (JSON.parse(reply.text) as LinkJson).Accesses;
          if (seen.has(accesses)) problems.push(`Accesses ${accesses} answered twice`);
          seen.add(accesses);
          answered.ok++;
          if (phase === 'back') answered.okAfterRecovery++;
        } else if (reply.status === 503 && reply.text === 'Unable to resolve link: storage unavailable') {
          answered.unavailable++;
        } else {
          problems.push(`${reply.status} ${reply.text}`);
        }
        // Keep the loop from spinning flat out on instant 503s while the database is down.
        if (reply.status === 503) await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    const until = (condition: () => boolean, what: string) => waitFor(condition, what, { timeoutMs: RECOVERY_TIMEOUT_MS });

    const clients = Array.from({ length: 8 }, client);
    try {
      await until(() => answered.ok >= 200, '200 resolutions');
      phase = 'down';
      await pg.stop('immediate');
      await until(() => answered.unavailable >= 50, '50 answers of 503');
      await pg.start();
      phase = 'back';
      await until(() => answered.okAfterRecovery >= 200, '200 resolutions after the restart');
    } finally {
      stop = true;
      await Promise.all(clients);
    }

    const links = JSON.parse((await call(server, '/v1/links', { headers: auth })).text) as LinkJson[];
    const stored = links[0]!.Accesses;
    t.diagnostic(`${answered.ok} answered 200 (${answered.okAfterRecovery} after the restart), ${answered.unavailable} answered 503; stored ${stored}`);
    assert.deepEqual(problems, [], 'every request was answered 200 or 503, each 200 with its own count');
    assert.ok(stored >= answered.ok, `stored ${stored} >= ${answered.ok} answered 200`);
    // A 503 may hide a commit whose answer the crash cut off, never more than that.
    assert.ok(stored <= answered.ok + answered.unavailable, `stored ${stored} <= ${answered.ok} + ${answered.unavailable}`);
    assert.equal((await server.stop('SIGTERM')).code, 0);
  });

  test('frozen (kill -STOP): every request answers 503 within STORAGE_TIMEOUT and a margin, /healthz at once; after kill -CONT it serves again with nothing acknowledged lost', async (t) => {
    const STORAGE_TIMEOUT_MS = 1000;
    // STORAGE_TIMEOUT, then the whole-request deadline one second later at the latest.
    const LATEST_MS = STORAGE_TIMEOUT_MS + 1500;
    // Before the fixture's hook: after-hooks run in order, and dropping needs the server thawed.
    t.after(() => pg.thaw());
    const server = await fixture(t, { STORAGE_TIMEOUT: `${STORAGE_TIMEOUT_MS}ms` });

    const created = JSON.parse((await call(server, '/v1/new_account')).text) as { Uid: number; AccessCode: string };
    const auth = { authorization: `Bearer ${created.AccessCode}` };
    for (const short of ['kept-link', 'other-link', 'doomed-link']) {
      assert.equal((await call(server, `/v1/link?url=https://example.org/${short}&short=${short}`, { headers: auth })).status, 200);
    }
    let resolved = 0;
    for (let i = 1; i <= 3; i++) {
      assert.equal((JSON.parse((await call(server, '/v1/get/kept-link')).text) as LinkJson).Accesses, i);
      resolved++;
    }

    pg.freeze();
    let unavailableResolutions = 0;
    const latencies: number[] = [];
    const health: number[] = [];
    for (let round = 0; round < 2; round++) {
      // The delete goes to a link of its own: it may still be applied after the thaw.
      const requests = storageRequests(created.AccessCode, 'kept-link').map(([path, init, operation]): [string, RequestInit, string] =>
        init.method === 'DELETE' ? ['/v1/link?short=doomed-link', init, operation] : [path, init, operation]);
      const [replies, healthz] = await Promise.all([
        Promise.all(requests.map(([path, init]) => call(server, path, init))),
        call(server, '/healthz'),
      ]);
      assert.equal(healthz.status, 200);
      health.push(healthz.ms);
      replies.forEach((reply, i) => {
        const [path, init, operation] = requests[i]!;
        const what = `${init.method ?? 'GET'} ${path}`;
        assert.equal(reply.status, 503, `${what}: ${reply.status} ${reply.text}`);
        assert.equal(reply.headers.get('retry-after'), '1', what);
        if (init.method !== 'HEAD') assert.match(reply.text, new RegExp(`^Unable to ${operation}: `), what);
        if (operation === 'resolve link') unavailableResolutions++;
        latencies.push(reply.ms);
      });
    }
    t.diagnostic(
      `${latencies.length} requests while frozen: 503 after ${Math.min(...latencies).toFixed(0)}–${Math.max(...latencies).toFixed(0)} ms; ` +
        `/healthz ${health.map((ms) => ms.toFixed(0)).join(', ')} ms`,
    );
    assert.ok(Math.max(...latencies) < LATEST_MS, `every request answered within ${LATEST_MS} ms while frozen`);
    assert.ok(Math.max(...health) < 200, '/healthz answered at once');

    pg.thaw();
    const thawed = performance.now();
    let reply: Reply;
    do {
      reply = await call(server, '/v1/get_account', { headers: auth });
      if (reply.status === 200) break;
      assert.equal(reply.status, 503, reply.text);
      await new Promise((resolve) => setTimeout(resolve, 20));
    } while (performance.now() - thawed < RECOVERY_TIMEOUT_MS);
    assert.equal(reply.status, 200, `serves again within ${RECOVERY_TIMEOUT_MS} ms of kill -CONT`);
    t.diagnostic(`serving again ${(performance.now() - thawed).toFixed(0)} ms after kill -CONT`);

    // Everything acknowledged is there; a write answered 503 may or may not have been applied
    // (its batch was in flight when the deadline fired), but never twice.
    const links = JSON.parse((await call(server, '/v1/links', { headers: auth })).text) as LinkJson[];
    const byCode = new Map(links.map((link) => [link.ShortCode, link]));
    assert.ok(byCode.has('kept-link') && byCode.has('other-link'), JSON.stringify(links));
    const stored = byCode.get('kept-link')!.Accesses;
    assert.ok(stored >= resolved, `stored ${stored} >= ${resolved} answered`);
    // A batch sent before the freeze may commit only now, after the read above: the next count
    // goes on from everything answered, plus at most the resolutions answered 503.
    const next = (JSON.parse((await call(server, '/v1/get/kept-link')).text) as LinkJson).Accesses;
    assert.ok(
      next > stored && next >= resolved + 1 && next <= resolved + unavailableResolutions + 1,
      `next count ${next}: after ${resolved} answered and at most ${unavailableResolutions} answered 503`,
    );
    const after = await call(server, '/v1/link?url=https://example.org/after&short=after-thaw', { headers: auth });
    assert.equal(after.status, 200, after.text);

    const stop = await server.stop('SIGTERM');
    assert.equal(stop.code, 0, 'shuts down cleanly after the freeze');
    assert.doesNotMatch(server.stderr(), /\S/, 'nothing on stderr');
  });

  test('SIGTERM while it is frozen: the batch in flight is given up (its callers were answered 503) and the process exits 0', async (t) => {
    t.after(() => pg.thaw()); // before the fixture's hook, which needs the server thawed
    const server = await fixture(t);
    const created = JSON.parse((await call(server, '/v1/new_account')).text) as { AccessCode: string };
    const auth = { authorization: `Bearer ${created.AccessCode}` };
    assert.equal((await call(server, '/v1/link?url=https://example.org/frozen&short=frozen-link', { headers: auth })).status, 200);

    // Resolutions and creations under way when the server freezes: batches in flight on it.
    let stop = false;
    let answered = 0;
    const client = async (i: number) => {
      while (!stop) {
        const reply = await call(server, i % 2 === 0 ? '/v1/get/frozen-link' : '/v1/link?url=https://example.org/x', { headers: auth })
          .catch(() => undefined);
        if (reply !== undefined) answered++;
      }
    };
    const clients = Array.from({ length: 4 }, (_, i) => client(i));
    await waitFor(() => answered >= 40, '40 answers before the freeze');
    pg.freeze();
    const signalledAt = Date.now();
    const stopped = server.stop('SIGTERM', 15_000).then((r) => ({ ...r, signalledAt }));
    stop = true;
    const result = await stopped.catch((error: unknown) => {
      throw new Error(`${String(error)}\n${server.stdout().slice(-3000)}\n${server.stderr().slice(-2000)}`);
    });
    await Promise.all(clients);
    pg.thaw();
    const shutdown = server.logs().filter((l) => Number(l.time) >= result.signalledAt && l.msg !== 'request completed');
    for (const line of shutdown) t.diagnostic(JSON.stringify(line).slice(0, 300));
    t.diagnostic(`exit ${result.code} ${(result.elapsedMs / 1000).toFixed(1)} s after SIGTERM`);
    assert.equal(result.code, 0, `exit 0, not the shutdown timeout's 1\n${server.stdout().slice(-2000)}`);
    assert.doesNotMatch(server.stderr(), /\S/);
  });
});
