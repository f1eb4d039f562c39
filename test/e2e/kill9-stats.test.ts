/**
 * Guarantee 8 (CONTRACT §6, §7.4): a link's statistics add up to exactly its Accesses, also
 * when processes are killed with `kill -9` in the middle of load. Visits are recorded in the
 * count's own transaction, so a resolution cut off by the kill is in both or in neither.
 * On SQLite (one process, killed three times; and WORKERS=2 sharing the file) and on
 * PostgreSQL (three instances, one of them killed and restarted twice while all three take
 * load).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanup, startServer, tempDatabase, type ServerProcess } from '../helpers/process.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';
import { waitFor } from '../helpers/wait-for.ts';

const REQUEST_TIMEOUT_MS = 15_000;
const LINKS = 6;
const WORKERS = 8;
const RESOLVES_PER_CYCLE = 300;
const ENV = { DEFAULT_MAX_LINKS: '1000', TRUST_PROXY: '127.0.0.1' };
const AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'curl/8.5.0',
];
const REFERERS = [undefined, 'https://news.example.com/a', 'https://social.example/p/1', 'android-app://com.example.app/'];
const ADDRESSES = ['8.8.8.8', '81.2.69.160', '1.1.1.1', '10.0.0.7'];

interface Account {
  auth: { authorization: string };
}

async function setUp(server: ServerProcess): Promise<{ account: Account; codes: string[] }> {
  const response = await fetch(`${server.url}/v1/new_account`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const { AccessCode } = (await response.json()) as { AccessCode: string };
  const account = { auth: { authorization: `Bearer ${AccessCode}` } };
  const codes: string[] = [];
  for (let i = 0; i < LINKS; i++) {
    const code = `stats-${i}`;
    const created = await fetch(`${server.url}/v1/link?${new URLSearchParams({ url: `https://example.org/${code}`, short: code })}`, {
      headers: account.auth, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    assert.equal(created.status, 200, await created.text());
    codes.push(code);
  }
  return { account, codes };
}

/** Resolves and redirects with varied clients on `servers` until stopped; counts the answers. */
function load(servers: () => readonly ServerProcess[], codes: readonly string[]) {
  let stopped = false;
  let answered = 0;
  const unexpected: string[] = [];
  async function worker(worker: number): Promise<void> {
    for (let n = 0; !stopped; n++) {
      const list = servers();
      const server = list[(n + worker) % list.length]!;
      const code = codes[(n * 7 + worker) % codes.length]!;
      const headers: Record<string, string> = {
        'user-agent': AGENTS[(n + worker) % AGENTS.length]!,
        'x-forwarded-for': ADDRESSES[n % ADDRESSES.length]!,
      };
      const referer = REFERERS[(n * 3 + worker) % REFERERS.length];
      if (referer !== undefined) headers.referer = referer;
      const path = n % 2 === 0 ? `/v1/get/${code}` : `/${code}`;
      try {
        const response = await fetch(`${server.url}${path}`, { headers, redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        await response.arrayBuffer();
        if (response.status === 200 || response.status === 302) answered++;
        else if (response.status !== 503) unexpected.push(`${path}: ${response.status}`);
      } catch {
        // Cut off by a kill: counted in both or in neither, which is what the test checks.
      }
    }
  }
  const workers = Array.from({ length: WORKERS }, (_, i) => worker(i));
  return {
    answered: () => answered,
    unexpected,
    async stop() {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

/** Every link's all-time statistics against its Accesses. */
async function checkExact(server: ServerProcess, account: Account, codes: readonly string[]): Promise<number> {
  const links = (await (await fetch(`${server.url}/v1/links`, { headers: account.auth })).json()) as { ShortCode: string; Accesses: number }[];
  let total = 0;
  for (const code of codes) {
    const accesses = links.find((link) => link.ShortCode === code)!.Accesses;
    const query = new URLSearchParams({ short: code, from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z', interval: 'month' });
    const response = await fetch(`${server.url}/v1/stats?${query}`, { headers: account.auth });
    assert.equal(response.status, 200);
    const stats = (await response.json()) as {
      Visits: number; Humans: number; Bots: number; Series: { Visits: number }[]; Referrers: { Visits: number }[]; Devices: { Visits: number }[];
    };
    assert.equal(stats.Visits, accesses, `${code}: Visits ${stats.Visits} against Accesses ${accesses}`);
    assert.equal(stats.Humans + stats.Bots, stats.Visits, code);
    const sum = (list: { Visits: number }[]) => list.reduce((s, item) => s + item.Visits, 0);
    assert.equal(sum(stats.Series), accesses, code);
    assert.equal(sum(stats.Referrers), accesses, code);
    assert.equal(sum(stats.Devices), accesses, code);
    total += accesses;
  }
  return total;
}

test('statistics add up to Accesses across kill -9 under load (SQLite, three kills)', { timeout: 600_000 }, async (t) => {
  const database = tempDatabase();
  t.after(async () => {
    await cleanup();
    database.remove();
  });
  let server = await startServer({ databasePath: database.path, env: ENV });
  const { account, codes } = await setUp(server);
  for (let cycle = 1; cycle <= 3; cycle++) {
    const running = load(() => [server], codes);
    await waitFor(() => running.answered() >= RESOLVES_PER_CYCLE, () => `cycle ${cycle}: ${running.answered()} answered`, { timeoutMs: 60_000 });
    await server.kill9();
    await running.stop();
    assert.deepEqual(running.unexpected, []);
    server = await startServer({ databasePath: database.path, env: ENV });
    await checkExact(server, account, codes);
  }
});

test('statistics add up to Accesses with WORKERS=2 on one SQLite file (two processes recording and folding)', { timeout: 600_000 }, async (t) => {
  const database = tempDatabase();
  t.after(async () => {
    await cleanup();
    database.remove();
  });
  const server = await startServer({ databasePath: database.path, env: { ...ENV, WORKERS: '2' } });
  const { account, codes } = await setUp(server);
  const running = load(() => [server], codes);
  await waitFor(() => running.answered() >= RESOLVES_PER_CYCLE * 2, () => `${running.answered()} answered`, { timeoutMs: 60_000 });
  await running.stop();
  assert.deepEqual(running.unexpected, []);
  // Twice: right after the load (journal partly unfolded), and after both processes folded.
  assert.ok(await checkExact(server, account, codes) >= RESOLVES_PER_CYCLE * 2);
  await new Promise((resolve) => setTimeout(resolve, 2500));
  await checkExact(server, account, codes);
});

const gate = postgresGate();

test('statistics add up to Accesses with three PostgreSQL instances, one killed twice under load', { skip: gate.skip, timeout: 600_000 }, async (t) => {
  const database = await createPostgresDatabase(gate.value!);
  t.after(async () => {
    await cleanup();
    await database.drop();
  });
  const servers = [
    await startServer({ databasePath: database.url, env: ENV }),
    await startServer({ databasePath: database.url, env: ENV }),
    await startServer({ databasePath: database.url, env: ENV }),
  ];
  const { account, codes } = await setUp(servers[0]!);
  let alive = [...servers];
  for (let cycle = 1; cycle <= 2; cycle++) {
    const running = load(() => alive, codes);
    await waitFor(() => running.answered() >= RESOLVES_PER_CYCLE, () => `cycle ${cycle}: ${running.answered()} answered`, { timeoutMs: 60_000 });
    const victim = servers[cycle]!;
    alive = alive.filter((s) => s !== victim);
    await victim.kill9();
    const before = running.answered();
    await waitFor(() => running.answered() >= before + 50, () => 'load after the kill', { timeoutMs: 30_000 });
    await running.stop();
    assert.deepEqual(running.unexpected, []);
    servers[cycle] = await startServer({ databasePath: database.url, env: ENV });
    alive = [...servers];
    const total = await checkExact(servers[0]!, account, codes);
    assert.ok(total >= RESOLVES_PER_CYCLE * cycle, `total ${total}`);
  }
});
