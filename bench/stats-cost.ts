/**
 * `node bench/stats-cost.ts`: what recording statistics costs, measured as the server's CPU
 * time per request (a shared machine disturbs it far less than req/s), STATS=on against
 * STATS=off, rounds alternating between two servers on two copies of the same SQLite
 * database, with realistic visitors (bench/visitors.ts). Then the storage statistics take:
 * bytes of rollups per link and day of traffic, after folding. The full same-run ratios
 * against bare node:http are `npm run bench`'s; this is the quick, focused check.
 *
 * Environment: BENCH_DURATION (seconds per round, default 5), BENCH_ROUNDS (default 3),
 * BENCH_CONNECTIONS (default 50), BENCH_LINKS (default 10,000).
 */
import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { openSqliteStore } from '../src/store/sqlite/store.ts';
import { createLoadGenerator, type LoadResult } from './load.ts';
import { preloadSqlite } from './preload.ts';
import { startProcess, type RunningProcess } from './processes.ts';
import { visitorHeaders } from './visitors.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const LINKS = Number(process.env.BENCH_LINKS ?? 10_000);
const pinned = spawnSync('taskset', ['-V']).status === 0 && cpus().length >= 2;
const load = createLoadGenerator();
const visitors = visitorHeaders();

const on = await preloadSqlite(LINKS);
const off = await preloadSqlite(LINKS);
const env = { RATE_LIMIT: 'off', BASE_URL: 'http://127.0.0.1', TRUST_PROXY: '127.0.0.1' };
const start = (path: string, stats: string) =>
  startProcess({ script: 'src/server.ts', cwd: ROOT, env: { ...env, DATABASE_URL: path, STATS: stats }, cpu: pinned ? 0 : undefined });
const servers = { on: await start(on.path, 'on'), off: await start(off.path, 'off') };

interface Tally { requests: number; cpu: number; rounds: LoadResult[] }

async function round(server: RunningProcess, paths: readonly string[], tally: Tally): Promise<void> {
  const before = server.cpuSeconds();
  const result = await load.run({ base: server.url, paths, method: 'GET', headers: {}, visitors, connections: CONNECTIONS, seconds: DURATION });
  tally.cpu += server.cpuSeconds() - before;
  tally.requests += result.ok;
  tally.rounds.push(result);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const report: Record<string, unknown> = {};
for (const [scenario, pathsOf] of [
  ['redirect, uniform, visitors', (codes: readonly string[]) => codes.map((c) => `/${c}`)],
  ['resolve, uniform, visitors', (codes: readonly string[]) => codes.map((c) => `/v1/get/${c}`)],
  ['redirect, one hot link, visitors', (codes: readonly string[]) => [`/${codes[0]}`]],
] as const) {
  const tallies = { on: { requests: 0, cpu: 0, rounds: [] } as Tally, off: { requests: 0, cpu: 0, rounds: [] } as Tally };
  // Warm-up, then rounds alternating, so drift on the machine falls on both alike.
  await load.run({ base: servers.on.url, paths: pathsOf(on.codes), method: 'GET', headers: {}, visitors, connections: CONNECTIONS, seconds: 2 });
  await load.run({ base: servers.off.url, paths: pathsOf(off.codes), method: 'GET', headers: {}, visitors, connections: CONNECTIONS, seconds: 2 });
  for (let i = 0; i < ROUNDS; i++) {
    await round(servers.off, pathsOf(off.codes), tallies.off);
    await round(servers.on, pathsOf(on.codes), tallies.on);
  }
  const line = (name: 'on' | 'off') => {
    const t = tallies[name];
    const us = (t.cpu / t.requests) * 1e6;
    const rps = median(t.rounds.map((r) => r.rps));
    const p99 = median(t.rounds.map((r) => r.p99));
    return { cpuUsPerRequest: Math.round(us * 10) / 10, rps: Math.round(rps), p99, errors: t.rounds.reduce((s, r) => s + r.non2xx + r.errors, 0) };
  };
  const result = { on: line('on'), off: line('off') };
  report[scenario] = { ...result, cpuRatio: Math.round((result.off.cpuUsPerRequest / result.on.cpuUsPerRequest) * 100) / 100 };
  console.log(
    `${scenario.padEnd(34)} STATS=on ${result.on.cpuUsPerRequest} µs/req (${result.on.rps} req/s, p99 ${result.on.p99} ms)  ` +
      `STATS=off ${result.off.cpuUsPerRequest} µs/req (${result.off.rps} req/s, p99 ${result.off.p99} ms)  ` +
      `off/on CPU ${(result.off.cpuUsPerRequest / result.on.cpuUsPerRequest).toFixed(2)}`,
  );
}
await servers.on.stop();
await servers.off.stop();

// Storage: fold what is left (the hour of the run included: as if it were over), then the
// rollups' pages per link and day of traffic.
const store = await openSqliteStore({ path: on.path });
while (await store.foldStats({ hoursBefore: Math.floor(Date.now() / 3_600_000) + 1 }) > 0);
await store.close();
const db = new DatabaseSync(on.path);
const bytes = (db.prepare("SELECT coalesce(sum(pgsize), 0) AS bytes FROM dbstat WHERE name IN ('stats_rollups', 'stats_rollups_by_hour')").get() as { bytes: number }).bytes;
const { linkDays, rows, visits } = db.prepare(`SELECT count(DISTINCT link_id || '/' || (hour / 24)) AS linkDays, count(*) AS rows,
  (SELECT coalesce(sum(visits), 0) FROM stats_rollups WHERE dim = 0) AS visits FROM stats_rollups`).get() as { linkDays: number; rows: number; visits: number };
const hot = db.prepare(`SELECT count(*) AS rows, coalesce(sum(length(value)), 0) AS valueBytes FROM stats_rollups
  WHERE link_id = (SELECT id FROM links WHERE short_code = ?)`).get(on.codes[0]!) as { rows: number; valueBytes: number };
db.close();
report.storage = { bytes, rows, linkDays, visits, bytesPerLinkDay: Math.round(bytes / Math.max(1, linkDays)), hotLinkRows: hot.rows };
console.log(
  `storage: ${visits} visits of ${linkDays} link-days in ${rows} rollup rows, ${bytes} bytes: ${Math.round(bytes / Math.max(1, linkDays))} bytes per link-day ` +
    `(${(visits / Math.max(1, linkDays)).toFixed(1)} visits each); the hot link: ${hot.rows} rows for its day`,
);
console.log(JSON.stringify({ date: new Date().toISOString(), generator: load.name, pinned, connections: CONNECTIONS, rounds: ROUNDS, duration: DURATION, links: LINKS, ...report }));
await on.remove();
await off.remove();
