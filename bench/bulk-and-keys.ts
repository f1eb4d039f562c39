/**
 * `npm run bench:keys`: the rows of issue 30, in one run per engine.
 *
 * - Bulk create: 100 links in one `POST /v1/links` against 100 single creates (`POST
 *   /v1/link`, 10 at a time, as a careful client would send them), each repeated BULK_ROUNDS
 *   times on a fresh account. Shown as links per second, wall time per 100 links and the
 *   server's CPU time per link.
 * - The account lookup: `GET /v1/links` (20 links) with the access code and with an API key,
 *   measured in the same server, one after the other, so the key's cost is read against the
 *   code's in the same conditions.
 *
 * Environment: BENCH_DURATION, BENCH_ROUNDS, BENCH_CONNECTIONS as for `npm run bench`;
 * BULK_ROUNDS (default 20); BENCH_DATABASE_URL (or TEST_DATABASE_URL) adds PostgreSQL.
 */
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLoadGenerator } from './load.ts';
import { preloadPostgres, preloadSqlite, type Preloaded } from './preload.ts';
import { startProcess, type RunningProcess } from './processes.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const BULK_ROUNDS = Number(process.env.BULK_ROUNDS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LINKS = 100;
const pinned = cpus().length >= 2;
const load = createLoadGenerator();

interface Row { scenario: string; value: string }
const rows: Row[] = [];
function record(scenario: string, value: string): void {
  rows.push({ scenario, value });
  console.log(`${scenario.padEnd(48)} ${value}`);
}

async function newAccount(base: string): Promise<string> {
  const response = await fetch(`${base}/v1/new_account`, { method: 'POST' });
  if (!response.ok) throw new Error(`new_account answered ${response.status}`);
  return ((await response.json()) as { AccessCode: string }).AccessCode;
}

function items(round: number): { url: string }[] {
  return Array.from({ length: LINKS }, (_, i) => ({ url: `https://example.com/bench/${round}/${i}` }));
}

async function singles(base: string, code: string, round: number): Promise<void> {
  const queue = items(round);
  await Promise.all(Array.from({ length: 10 }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
      const response = await fetch(`${base}/v1/link`, {
        method: 'POST', headers: { authorization: `Bearer ${code}`, 'content-type': 'application/json' }, body: JSON.stringify(item),
      });
      if (response.status !== 200) throw new Error(`create answered ${response.status}`);
      await response.text();
    }
  }));
}

async function bulk(base: string, code: string, round: number): Promise<void> {
  const response = await fetch(`${base}/v1/links`, {
    method: 'POST', headers: { authorization: `Bearer ${code}`, 'content-type': 'application/json' }, body: JSON.stringify(items(round)),
  });
  const results = (await response.json()) as { ShortUrl?: string }[];
  if (response.status !== 200 || results.some((result) => result.ShortUrl === undefined)) throw new Error('a bulk item failed');
}

/** Wall time and server CPU of BULK_ROUNDS rounds of 100 links, each on a fresh account. */
async function timeCreates(server: RunningProcess, way: typeof singles): Promise<{ wallMs: number; cpuUsPerLink: number }> {
  await way(server.url, await newAccount(server.url), -1); // warm-up
  let wall = 0;
  let cpu = 0;
  for (let round = 0; round < BULK_ROUNDS; round++) {
    const code = await newAccount(server.url);
    const cpuBefore = server.cpuSeconds();
    const started = performance.now();
    await way(server.url, code, round);
    wall += performance.now() - started;
    cpu += server.cpuSeconds() - cpuBefore;
  }
  return { wallMs: wall / BULK_ROUNDS, cpuUsPerLink: (cpu / (BULK_ROUNDS * LINKS)) * 1e6 };
}

/**
 * `GET /v1/links` (an account of 20 links) with the access code and with an API key, in
 * alternating rounds on one server: req/s (the median round) and server CPU per request.
 */
async function listWithCodeAndKey(label: string, server: RunningProcess, accessCode: string): Promise<void> {
  const created = await fetch(`${server.url}/v1/keys?name=bench&scopes=links:read`, { method: 'POST', headers: { authorization: `Bearer ${accessCode}` } });
  if (created.status !== 200) throw new Error(`POST /v1/keys answered ${created.status}`);
  const key = ((await created.json()) as { Key: string }).Key;
  const credentials = { 'access code': accessCode, 'API key': key };
  const results: Record<string, { rps: number[]; p99: number[]; cpu: number; ok: number; failed: number }> = {};
  for (const name of Object.keys(credentials)) results[name] = { rps: [], p99: [], cpu: 0, ok: 0, failed: 0 };
  const target = (credential: string) => ({ base: server.url, paths: ['/v1/links'], method: 'GET', headers: { authorization: `Bearer ${credential}` }, connections: CONNECTIONS });
  for (const credential of Object.values(credentials)) await load.run({ ...target(credential), seconds: Math.min(2, DURATION) });
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, credential] of Object.entries(credentials)) {
      const before = server.cpuSeconds();
      const result = await load.run({ ...target(credential), seconds: DURATION });
      const entry = results[name]!;
      entry.cpu += server.cpuSeconds() - before;
      entry.rps.push(result.rps);
      entry.p99.push(result.p99);
      entry.ok += result.ok;
      entry.failed += result.non2xx + result.errors;
    }
  }
  const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
  for (const [name, entry] of Object.entries(results)) {
    record(`${label}: list links (20), ${name}`,
      `${Math.round(median(entry.rps))} req/s, p99 ${median(entry.p99).toFixed(2)} ms, CPU ${Math.round((entry.cpu / Math.max(1, entry.ok)) * 1e6)} µs/req, non-2xx+errors ${entry.failed}`);
  }
}

async function benchmark(label: string, data: Preloaded): Promise<void> {
  const server = await startProcess({
    script: 'src/server.ts',
    cwd: ROOT,
    env: { RATE_LIMIT: 'off', DEFAULT_MAX_LINKS: '1000000', BASE_URL: 'http://127.0.0.1', DATABASE_URL: data.path },
    cpu: pinned ? 0 : undefined,
  });
  try {
    const single = await timeCreates(server, singles);
    const many = await timeCreates(server, bulk);
    record(`${label}: 100 single creates (10 at a time)`, `${single.wallMs.toFixed(1)} ms per 100 links, ${Math.round((LINKS * 1000) / single.wallMs)} links/s, CPU ${Math.round(single.cpuUsPerLink)} µs/link`);
    record(`${label}: 1 bulk create of 100`, `${many.wallMs.toFixed(1)} ms per 100 links, ${Math.round((LINKS * 1000) / many.wallMs)} links/s, CPU ${Math.round(many.cpuUsPerLink)} µs/link`);
    record(`${label}: bulk ÷ singles`, `wall ×${(many.wallMs / single.wallMs).toFixed(2)}, CPU ×${(many.cpuUsPerLink / single.cpuUsPerLink).toFixed(2)}`);
    await listWithCodeAndKey(label, server, data.accessCode);
  } finally {
    await server.stop();
    await data.remove();
  }
}

console.log(`Bulk create and API keys — ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, Node ${process.version}, load generator ${load.name}, ${CONNECTIONS} connections, ${DURATION} s rounds`);
await benchmark('sqlite', await preloadSqlite(1_000));
const postgresUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (postgresUrl) await benchmark('postgres', await preloadPostgres(postgresUrl, 1_000));

console.log('\n| Scenario | Result |');
console.log('|---|---|');
for (const row of rows) console.log(`| ${row.scenario} | ${row.value} |`);
