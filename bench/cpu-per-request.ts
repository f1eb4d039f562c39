/**
 * `npm run bench:cpu -- [root ...]`: the server's CPU time per request, a measure that holds
 * on a busy machine where req/s does not. Other tenants slow the server down and the load
 * generator with it, but the work the server does for one request stays about the same.
 *
 * Each root is a checkout of this repository with its node_modules (default: this one); give
 * several to compare builds, e.g. `npm run bench:cpu -- . /work/base`. Every root gets its
 * own preloaded SQLite database (made by its own bench/preload.ts, so by its own schema) and
 * its own server (`src/server.ts`, as `npm start` runs it, request logging on). Then, round
 * after round, each scenario is driven against each server in turn (interleaved, so drift
 * over minutes hits every root alike): a fixed number of requests with autocannon, the
 * server's utime + stime read from /proc/<pid>/stat before and after. The bare node:http
 * server (bench/bare-server.ts) is measured the same way, first in every round: the CPU a
 * request costs still drifts with the machine's load (caches shared with other tenants), and
 * the ratio to the bare server's figure of the same round cancels most of that drift. The
 * first round warms the servers up and is not counted; the table shows medians of the others.
 *
 * Environment: CPU_REQUESTS (per measurement, default 20000), CPU_ROUNDS (counted rounds,
 * default 5), CPU_LINKS (default 100000), CPU_CONNECTIONS (default 10), CPU_SCENARIOS
 * (comma-separated, default "redirect,resolve"; see below), CPU_DATABASE (`sqlite`, the default, or
 * `postgres`: each root gets a fresh database on the server CPU_DATABASE_URL, else
 * BENCH_DATABASE_URL, else TEST_DATABASE_URL names, dropped at the end). The servers inherit
 * the rest of the environment, so `STATS=off npm run bench:cpu` measures without statistics.
 *
 * On PostgreSQL the server's CPU is only part of a request's cost: when the database runs on
 * this machine (its backends' /proc entries are readable), the CPU of the backends serving
 * each root's database is measured the same way and shown beside it ("+ db").
 *
 * Scenarios (CPU_SCENARIOS): `redirect` and `resolve` of the preloaded links, as before; and
 * those of issues 28 and 29 (bench/routed-links.ts adds their links to every root's database
 * after its own preload; a root whose schema lacks a feature gets plain rows instead and skips
 * the scenario, shown as "–"):
 *   - `domain-redirect`: `GET /{code}` with `Host: go.bench.example`, links on that registered
 *     domain; to set beside `redirect` (the default domain's, same codes, same headers);
 *   - `browser-redirect`: plain links, requested as the routed ones are (a desktop browser's
 *     User-Agent, `Accept-Language: en-US`, a query string): the row the next two compare with;
 *   - `rules-redirect`: links with three rules (os ios, os android, language de) that such a
 *     visitor falls through, so every rule is judged and PointsTo answers;
 *   - `query-redirect`: links with forward_query, the visitor's query appended to the target;
 * and `npm run bench`'s `list` (`GET /v1/links` of the preloaded account of 20 links, JSON) and
 * `create` (`GET /v1/link?url=…`, a generated code, by an account without a cap).
 * Before measuring, one request per scenario and root checks the answer is that set's link
 * (a domain not registered would silently answer the default domain's link of the same code).
 *
 * CPU_WEBHOOK=1 (SQLite): each root runs twice, on two databases preloaded alike: as it is, and
 * with one webhook subscribed to link.visited (the account of the first 20 links; its receiver,
 * in this process, answers 200). Every request then goes to those 20 links, on both servers,
 * so the second one batches every visit into deliveries: the two ratios of one run compare a
 * resolution with and without a webhook watching it (ADR 21).
 *
 * CPU_PIN=1 (with taskset and two CPUs or more): every server on CPU 0, this process (the load)
 * on CPU 1, so that a server never shares its core with the load: the one-core measure of
 * issue 27, steadier on a machine where the two would otherwise trade places.
 *
 * CPU_STATS_OFF=1: each root runs twice, on two databases preloaded alike: as it is, and with
 * `STATS=off`, in the same rounds; the summary adds what statistics cost per scenario (the
 * median of each round's on ÷ off), the issue 27 goal of at most 10 % more.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import postgres from 'postgres';
import type * as PreloadModule from './preload.ts';
import type { Preloaded } from './preload.ts';
import { startProcess, type RunningProcess } from './processes.ts';
import { addLinkSetsPostgres, addLinkSetsSqlite, BENCH_DOMAIN, keyOf, type LinkSet, type Support } from './routed-links.ts';
import { startWebhookReceiver, WEBHOOK_ENV } from './webhook-receiver.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const REQUESTS = Number(process.env.CPU_REQUESTS ?? 20_000);
const ROUNDS = Number(process.env.CPU_ROUNDS ?? 5);
const LINKS = Number(process.env.CPU_LINKS ?? 100_000);
const CONNECTIONS = Number(process.env.CPU_CONNECTIONS ?? 10);
const DATABASE = process.env.CPU_DATABASE ?? 'sqlite';
const POSTGRES_URL = process.env.CPU_DATABASE_URL ?? process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (DATABASE !== 'sqlite' && DATABASE !== 'postgres') throw new Error(`CPU_DATABASE must be sqlite or postgres, got ${DATABASE}`);
if (DATABASE === 'postgres' && POSTGRES_URL === undefined) throw new Error('CPU_DATABASE=postgres needs CPU_DATABASE_URL (or BENCH_DATABASE_URL, TEST_DATABASE_URL)');
const SCENARIOS = (process.env.CPU_SCENARIOS ?? 'redirect,resolve').split(',').map((s) => s.trim()).filter(Boolean);
const WEBHOOK = process.env.CPU_WEBHOOK === '1';
if (WEBHOOK && DATABASE !== 'sqlite') throw new Error('CPU_WEBHOOK=1 runs on SQLite only');
const STATS_OFF = process.env.CPU_STATS_OFF === '1';
const PIN = process.env.CPU_PIN === '1' && spawnSync('taskset', ['-V']).status === 0 && cpus().length >= 2;
if (PIN) spawnSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
const SERVER_CPU = PIN ? 0 : undefined;

/** The servers each root runs: as it is, and with CPU_WEBHOOK or CPU_STATS_OFF a second one. */
interface Variant {
  readonly suffix: string;
  readonly webhook: boolean;
  readonly env: Readonly<Record<string, string>>;
}
const VARIANTS: readonly Variant[] = [
  { suffix: '', webhook: false, env: {} },
  ...(WEBHOOK ? [{ suffix: ' + 1 webhook on link.visited', webhook: true, env: {} }] : []),
  ...(STATS_OFF ? [{ suffix: ' STATS=off', webhook: false, env: { STATS: 'off' } }] : []),
];
// Linux reports CPU time in clock ticks of 1/100 s (USER_HZ, the same on every architecture).
const TICK_MICROS = 10_000;

/** The routed scenarios' visitor: a desktop browser (no rule's OS), English, with a campaign query. */
const BROWSER = {
  'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'accept-language': 'en-US,en;q=0.9',
};
const QUERY = '?utm_source=newsletter&utm_medium=email';

interface Scenario {
  /** The link set its links come from (bench/routed-links.ts); none: the preloaded links. */
  readonly set?: LinkSet;
  /** What the root's schema must support; otherwise the scenario is skipped for that root. */
  readonly needs?: keyof Support;
  readonly path: (code: string) => string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Whether an answer's Location is the one this scenario's link gives (checked once per root before measuring). */
  readonly expect?: (location: string) => boolean;
  /**
   * Sent with the access code of the root's preloaded account: `list`, the account of 20
   * links (`accessCode`); `create`, the one with no cap that holds none (`bigAccessCode`).
   */
  readonly account?: 'list' | 'create';
}

const scenarios: Record<string, Scenario> = {
  redirect: { path: (code) => `/${code}` },
  resolve: { path: (code) => `/v1/get/${code}` },
  'domain-redirect': {
    set: 'domain', needs: 'domains', path: (code) => `/${code}`, headers: { host: BENCH_DOMAIN },
    expect: (location) => location.startsWith('https://example.com/domain/'),
  },
  'browser-redirect': { path: (code) => `/${code}${QUERY}`, headers: BROWSER },
  'rules-redirect': {
    set: 'rules', needs: 'routing', path: (code) => `/${keyOf('rules', code)}${QUERY}`, headers: BROWSER,
    expect: (location) => location.startsWith('https://example.com/rules/') && !location.includes('utm_medium'),
  },
  'query-redirect': {
    set: 'query', needs: 'routing', path: (code) => `/${keyOf('query', code)}${QUERY}`, headers: BROWSER,
    expect: (location) => location.startsWith('https://example.com/query/') && location.endsWith('?utm_source=bench&utm_source=newsletter&utm_medium=email'),
  },
  // `npm run bench`'s list and create rows, as CPU per request: the one path, whatever the code.
  list: { path: () => '/v1/links', account: 'list' },
  create: { path: () => '/v1/link?url=https%3A%2F%2Fexample.com%2Fnew', account: 'create' },
};
for (const scenario of SCENARIOS) if (scenarios[scenario] === undefined) throw new Error(`unknown scenario ${scenario}; one of ${Object.keys(scenarios).join(', ')}`);
const SETS = [...new Set(SCENARIOS.flatMap((name) => scenarios[name]!.set ?? []))];

/** One request as a scenario sends it: status and Location. */
function probe(base: string, path: string, headers: Readonly<Record<string, string>>): Promise<{ status: number; location: string }> {
  return new Promise((resolvePromise, reject) => {
    const request = httpRequest(new URL(path, base), { headers }, (response) => {
      response.resume();
      response.on('end', () => resolvePromise({ status: response.statusCode ?? 0, location: String(response.headers.location ?? '') }));
    });
    request.on('error', reject);
    request.end();
  });
}

/** Microseconds of CPU (user + system, every thread) the process has used so far; 0 once it is gone. */
function cpuMicros(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return 0;
  }
  // Fields after the command name (which may hold spaces) start at field 3: utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MICROS;
}

/** Drives `amount` requests over `paths` (round-robin from a random start); returns how many got a 2xx/3xx. */
async function drive(base: string, paths: readonly string[], headers: Readonly<Record<string, string>>, amount: number): Promise<number> {
  let next = Math.floor(Math.random() * paths.length);
  const result = await autocannon({
    url: base,
    connections: CONNECTIONS,
    amount,
    headers: { ...headers },
    requests: [{ setupRequest: (request) => ({ ...request, path: paths[(next = (next + 1) % paths.length)]! }) }],
  });
  return result['2xx'] + result['3xx'];
}

interface Target {
  readonly name: string;
  readonly server: RunningProcess;
  /** Per scenario; a scenario the root cannot serve has none. */
  readonly paths: Record<string, readonly string[] | undefined>;
  readonly data?: Preloaded;
  /** PostgreSQL: the pids of the backends serving this target's database now. */
  readonly backends?: () => Promise<number[]>;
}

/** The headers of `scenario`'s requests to `target`: its own, and its account's access code. */
function headersOf(target: Target, scenario: string): Record<string, string> {
  const { headers = {}, account } = scenarios[scenario]!;
  const code = account === undefined || target.data === undefined ? undefined
    : account === 'list' ? target.data.accessCode : target.data.bigAccessCode;
  return code === undefined ? { ...headers } : { ...headers, authorization: `Bearer ${code}` };
}

/** The database backends' CPU, µs, per pid: read before and after each measurement. */
function backendMicros(pids: readonly number[]): Map<number, number> {
  return new Map(pids.map((pid) => [pid, cpuMicros(pid)]));
}

const monitor = DATABASE === 'postgres' ? postgres(POSTGRES_URL!, { max: 1, onnotice: () => {} }) : undefined;
/** Pids of the backends connected to `database` (the bench's own monitor connection is elsewhere). */
async function backendsOf(database: string): Promise<number[]> {
  const rows = await monitor!<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE datname = ${database}`;
  return rows.map((row) => row.pid);
}

const roots = (process.argv.slice(2).length > 0 ? process.argv.slice(2) : [ROOT]).map((root) => resolve(root));
const targets: Target[] = [];
const bare = await startProcess({ script: 'bench/bare-server.ts', cwd: ROOT, env: {}, cpu: SERVER_CPU });
targets.push({ name: 'bare node:http', server: bare, paths: Object.fromEntries(SCENARIOS.map((s) => [s, [scenarios[s]!.path('')]])) });
// CPU_WEBHOOK: the receiver of the webhook server's deliveries.
const receiver = WEBHOOK ? await startWebhookReceiver() : undefined;

for (const root of roots) {
  // The root's own preload: its schema, its migrations.
  const { preloadSqlite, preloadPostgres } = (await import(pathToFileURL(join(root, 'bench', 'preload.ts')).href)) as typeof PreloadModule;
  for (const { suffix, webhook: withWebhook, env } of VARIANTS) {
    const data = DATABASE === 'postgres' ? await preloadPostgres(POSTGRES_URL!, LINKS) : await preloadSqlite(LINKS);
    // The routed scenarios' links, added here whatever the root (its schema decides how).
    const support = DATABASE === 'postgres'
      ? await addLinkSetsPostgres(data.path, data.codes, SETS)
      : addLinkSetsSqlite(data.path, data.codes, SETS);
    const served = SCENARIOS.filter((name) => scenarios[name]!.needs === undefined || support[scenarios[name]!.needs!]);
    const skipped = SCENARIOS.filter((name) => !served.includes(name));
    if (skipped.length > 0 && suffix === '') console.log(`${root}: its schema lacks what ${skipped.join(', ')} need; skipped there (its links were added as plain rows)`);
    // With CPU_WEBHOOK, both servers of the root resolve the webhook account's 20 links only.
    const codes = WEBHOOK ? data.codes.slice(0, 20) : data.codes;
    if (withWebhook) await receiver!.subscribe(root, data.path, data.codes[0]!);
    const server = await startProcess({
      script: 'src/server.ts',
      cwd: root,
      env: {
        RATE_LIMIT: 'off', DEFAULT_MAX_LINKS: '1000000', BASE_URL: 'http://127.0.0.1', DATABASE_URL: data.path,
        ...(WEBHOOK ? WEBHOOK_ENV : {}),
        ...env,
      },
      cpu: SERVER_CPU,
    });
    const database = DATABASE === 'postgres' ? new URL(data.path).pathname.slice(1) : undefined;
    targets.push({
      name: `${root}${suffix}`, server, data,
      paths: Object.fromEntries(served.map((s) => [s, codes.map((code) => scenarios[s]!.path(code))])),
      backends: database === undefined ? undefined : () => backendsOf(database),
    });
  }
}

console.log(
  `CPU per request: ${REQUESTS} requests per measurement, ${CONNECTIONS} connections, ${LINKS} links, 1 warm-up + ${ROUNDS} rounds, ` +
    `${DATABASE}, STATS=${process.env.STATS ?? 'on (default)'}${PIN ? ', servers on CPU 0, load on CPU 1' : ''}`,
);
// target → scenario → µs per request, one per counted round; the database backends' apart.
const samples = new Map<string, Map<string, number[]>>(targets.map((t) => [t.name, new Map(SCENARIOS.map((s) => [s, []]))]));
const dbSamples = new Map<string, Map<string, number[]>>(targets.map((t) => [t.name, new Map(SCENARIOS.map((s) => [s, []]))]));
try {
  // Each root answers each scenario with that scenario's link (and the routing it asked for).
  for (const target of targets.slice(1)) {
    for (const scenario of SCENARIOS) {
      const paths = target.paths[scenario];
      if (paths === undefined) continue;
      const { status, location } = await probe(target.server.url, paths[0]!, headersOf(target, scenario));
      const expected = scenarios[scenario]!.expect ?? (() => true);
      if (status < 200 || status >= 400 || (status >= 300 && !expected(location))) {
        throw new Error(`${target.name} ${scenario}: ${paths[0]} answered ${status} ${location}, not this scenario's link`);
      }
    }
  }
  for (let round = 0; round <= ROUNDS; round++) {
    for (const scenario of SCENARIOS) {
      for (const target of targets) {
        const paths = target.paths[scenario];
        if (paths === undefined) continue;
        const backendsBefore = target.backends === undefined ? undefined : backendMicros(await target.backends());
        const before = cpuMicros(target.server.pid);
        const answered = await drive(target.server.url, paths, headersOf(target, scenario), REQUESTS);
        const micros = (cpuMicros(target.server.pid) - before) / REQUESTS;
        let dbMicros: number | undefined;
        if (target.backends !== undefined) {
          // A backend that connected meanwhile counts from its start: a little too much, never too little.
          const after = backendMicros(await target.backends());
          dbMicros = [...after].reduce((sum, [pid, used]) => sum + used - (backendsBefore!.get(pid) ?? 0), 0) / REQUESTS;
        }
        if (answered !== REQUESTS) console.log(`warning: ${target.name} ${scenario}: ${REQUESTS - answered} requests not answered 2xx/3xx`);
        if (round > 0) {
          samples.get(target.name)!.get(scenario)!.push(micros);
          if (dbMicros !== undefined) dbSamples.get(target.name)!.get(scenario)!.push(dbMicros);
        }
        const db = dbMicros === undefined ? '' : ` + db ${dbMicros.toFixed(1).padStart(6)} µs`;
        console.log(`${round === 0 ? 'warm-up' : `round ${round}`}  ${scenario.padEnd(16)}  ${micros.toFixed(1).padStart(6)} µs${db}  ${target.name}`);
      }
    }
  }
} finally {
  for (const target of targets) {
    await target.server.stop();
    await target.data?.remove();
  }
  await monitor?.end();
  await receiver?.close();
}
if (receiver !== undefined) console.log(`\nThe webhook server's receiver got ${receiver.deliveries()} link.visited deliveries (at most one a second).`);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const bareSamples = samples.get(targets[0]!.name)!;
console.log(`\nServer CPU per request, µs: median (min–max) over ${ROUNDS} rounds; × bare: median of each round's ratio to the bare server's measurement just before it`);
for (const scenario of SCENARIOS) {
  for (const target of targets) {
    const values = samples.get(target.name)!.get(scenario)!;
    if (values.length === 0) {
      console.log(`  ${scenario.padEnd(16)}  –  (not served)   ${target.name}`);
      continue;
    }
    const ratios = values.map((micros, i) => micros / bareSamples.get(scenario)![i]!);
    const db = dbSamples.get(target.name)!.get(scenario)!;
    const dbCell = db.length === 0 ? '' : ` + db ${median(db).toFixed(1)} (${Math.min(...db).toFixed(1)}–${Math.max(...db).toFixed(1)})`;
    const cell = `${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}) ×${median(ratios).toFixed(2)}${dbCell}`;
    console.log(`  ${scenario.padEnd(16)}  ${cell.padEnd(28)}   ${target.name}`);
  }
}

if (STATS_OFF) {
  console.log('\nWhat statistics cost: median over rounds of (statistics on ÷ STATS=off), same round');
  for (const root of roots) {
    for (const scenario of SCENARIOS) {
      const on = samples.get(root)!.get(scenario)!;
      const off = samples.get(`${root} STATS=off`)!.get(scenario)!;
      if (on.length === 0 || off.length === 0) continue;
      const ratios = on.map((micros, i) => micros / off[i]!);
      console.log(`  ${scenario.padEnd(16)}  ×${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})   ${root}`);
    }
  }
}
