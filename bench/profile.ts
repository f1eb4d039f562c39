/**
 * `npm run profile -- <scenario>`: runs the real server under `node --cpu-prof` on a
 * preloaded SQLite database, drives one workload at it, and prints where the server's CPU
 * time went (self time per function, and per package). The raw profile is kept for Chrome
 * DevTools or speedscope.
 *
 * Scenarios: resolve, redirect, list, list_empty, create, new_account, get_account. Environment: PROFILE_SECONDS
 * (default 10), PROFILE_LINKS (default 100000), BENCH_CONNECTIONS (default 50), PROFILE_DATABASE_URL (a
 * PostgreSQL server: the server runs on a fresh database there, dropped at the end, instead of SQLite),
 * PROFILE_VISITORS=1 (realistic visitors, bench/visitors.ts, with TRUST_PROXY=127.0.0.1 so their
 * X-Forwarded-For counts). The server inherits the environment, so `STATS=off` applies to it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLoadGenerator, type LoadTarget } from './load.ts';
import { preloadPostgres, preloadSqlite } from './preload.ts';
import { startProcess } from './processes.ts';
import { visitorHeaders } from './visitors.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 10);
const LINKS = Number(process.env.PROFILE_LINKS ?? 100_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const scenario = process.argv[2] ?? 'resolve';
const VISITORS = process.env.PROFILE_VISITORS === '1' ? visitorHeaders() : undefined;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const POSTGRES_URL = process.env.PROFILE_DATABASE_URL;
const data = POSTGRES_URL === undefined ? await preloadSqlite(LINKS) : await preloadPostgres(POSTGRES_URL, LINKS);
const outDir = join(ROOT, 'bench', 'results', 'profiles');
mkdirSync(outDir, { recursive: true });
const before = new Set(readdirSync(outDir));
const pinned = spawnSync('taskset', ['-V']).status === 0 && cpus().length >= 2;
const server = await startProcess({
  script: 'src/server.ts',
  cwd: ROOT,
  env: {
    RATE_LIMIT: 'off', DEFAULT_MAX_LINKS: '1000000', BASE_URL: 'http://127.0.0.1', DATABASE_URL: data.path,
    ...(VISITORS === undefined ? {} : { TRUST_PROXY: '127.0.0.1' }),
  },
  cpu: pinned ? 0 : undefined,
  nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${outDir}`],
});

const targets: Record<string, Omit<LoadTarget, 'base' | 'connections' | 'seconds'>> = {
  resolve: { paths: data.codes.map((c) => `/v1/get/${c}`), method: 'GET', headers: {} },
  redirect: { paths: data.codes.map((c) => `/${c}`), method: 'GET', headers: {} },
  list: { paths: ['/v1/links'], method: 'GET', headers: { authorization: `Bearer ${data.accessCode}` } },
  create: {
    paths: ['/v1/link?url=https%3A%2F%2Fexample.com%2Fnew'],
    method: 'GET',
    headers: { authorization: `Bearer ${data.bigAccessCode}` },
  },
  new_account: { paths: ['/v1/new_account'], method: 'GET', headers: {} },
  get_account: { paths: ['/v1/get_account'], method: 'GET', headers: { authorization: `Bearer ${data.accessCode}` } },
  // The account used by `create` holds no links yet: the fixed cost of an authenticated call.
  list_empty: { paths: ['/v1/links'], method: 'GET', headers: { authorization: `Bearer ${data.bigAccessCode}` } },
};
const target = targets[scenario];
if (target === undefined) throw new Error(`unknown scenario ${scenario}; one of ${Object.keys(targets).join(', ')}`);

const load = createLoadGenerator();
const result = await load.run({ ...target, visitors: VISITORS, base: server.url, connections: CONNECTIONS, seconds: SECONDS });
await server.stop();
await data.remove();
console.log(`${scenario}: ${Math.round(result.rps)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx/3xx ${result.non2xx}, errors ${result.errors} (${load.name})`);
if (result.non2xx > 0) console.log('warning: some answers were errors; the profile shows their path too');

const file = readdirSync(outDir).find((name) => !before.has(name) && name.endsWith('.cpuprofile'));
if (file === undefined) throw new Error('the server wrote no profile');
const profile = JSON.parse(readFileSync(join(outDir, file), 'utf8')) as CpuProfile;

// Self time: each sample is charged to the node (function) on top of the stack.
const selfMicros = new Map<number, number>();
profile.samples.forEach((id, i) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);
/** Where a profile node's code lives, relative to the repository. */
const whereOf = (node: ProfileNode) => node.callFrame.url.replace(/^file:\/\//, '').replace(ROOT + '/', '');
/** A function's name and place, the key both tables use. */
const keyOf = (node: ProfileNode) => {
  const { functionName, lineNumber } = node.callFrame;
  const where = whereOf(node);
  return `${functionName || '(anonymous)'} ${where ? `${where}:${lineNumber + 1}` : ''}`.trim();
};
const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
for (const node of profile.nodes) {
  const micros = selfMicros.get(node.id) ?? 0;
  if (micros === 0) continue;
  const { functionName } = node.callFrame;
  const where = whereOf(node);
  const key = keyOf(node);
  byFunction.set(key, (byFunction.get(key) ?? 0) + micros);
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1]
    ?? (where.startsWith('src/') ? where.split('/').slice(0, 2).join('/') : where.startsWith('node:') ? 'node internals' : functionName.startsWith('(') ? functionName : 'native/other');
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + micros);
}
// Inclusive time: a function's own samples plus everything it called (recursion counted once).
const nodesById = new Map(profile.nodes.map((node) => [node.id, node]));
const inclusive = new Map<string, number>();
function walk(id: number, open: Set<string>): number {
  const node = nodesById.get(id)!;
  let micros = selfMicros.get(id) ?? 0;
  const key = keyOf(node);
  const outermost = !open.has(key);
  if (outermost) open.add(key);
  for (const child of node.children ?? []) micros += walk(child, open);
  if (outermost) {
    open.delete(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + micros);
  }
  return micros;
}
walk(profile.nodes[0]!.id, new Set());
const isRoot = (key: string) => /^\((root|program|idle|garbage collector)\)/.test(key);
for (const key of [...inclusive.keys()]) if (isRoot(key)) inclusive.delete(key);

const top = (map: Map<string, number>, n: number) =>
  [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([key, micros]) => `${((micros / total) * 100).toFixed(1).padStart(5)}%  ${key}`).join('\n');
console.log(`\nSelf time by package (${(total / 1e6).toFixed(1)} s sampled):\n${top(byPackage, 15)}`);
console.log(`\nSelf time by function:\n${top(byFunction, 30)}`);
console.log(`\nInclusive time (the function and what it called), project code first:\n${top(new Map([...inclusive].filter(([key]) => key.includes('src/'))), 25)}`);
console.log(`\nInclusive time, everything:\n${top(inclusive, 25)}`);
console.log(`\nProfile: ${join(outDir, file)}`);
