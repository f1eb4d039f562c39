/**
 * `npm run bench`: load benchmarks of the real server against a bare node:http baseline
 * measured in the same run: each measured round is paired with a baseline round just
 * before it, and the ratio is the median of the pairs. Never part of `npm test`.
 *
 * Environment: BENCH_DURATION (seconds per round, default 5), BENCH_ROUNDS (default 3),
 * BENCH_CONNECTIONS (default 50), BENCH_SCALE ("quick" skips the 1M-link point), BENCH_ONLY
 * ("list-page": only the filtered-list scenario; "webhook": only the one-account rows without
 * and with a webhook; "hot-link": only PostgreSQL's three-server rows below; "list-create": only
 * the list, create and new_account rows at 100k links on SQLite; to check them quickly).
 *
 * The "visitors" workloads send realistic User-Agent, Referer and X-Forwarded-For headers
 * (bench/visitors.ts; TRUST_PROXY=127.0.0.1), so statistics classify a real mix; they run
 * with statistics on (the default) and again in a server with STATS=off. Each row also shows
 * the server's CPU time per request, which a shared machine disturbs less than req/s.
 * The full tables also redirect the same codes on a registered domain (`Host: go.bench.example`,
 * bench/routed-links.ts: a second set of links as large as the first, keyed `host/code`), to
 * set beside the default domain's uniform redirect (issue 28: the same cost).
 * The "one account" rows resolve the 20 links of one account in a server without and then
 * with one webhook subscribed to link.visited (bench/webhook-receiver.ts).
 * On PostgreSQL, three servers share one database (none pinned, the connections split evenly
 * between them) and resolve, round after round, the 100,000 links uniformly and then one hot
 * link: every instance's count batches then wait on that one row's lock (issue 27). The rows
 * give the three servers' summed req/s; "hot ÷ uniform" is the median of the rounds' ratios.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLoadGenerator, type LoadResult } from './load.ts';
import { encodeCursor } from '../src/links/link-details.ts';
import {
  clearRedisPrefix, preloadListingPostgres, preloadListingSqlite, preloadPostgres, preloadSqlite, type Preloaded, type PreloadedListing,
} from './preload.ts';
import { startProcess, type RunningProcess } from './processes.ts';
import { addLinkSetsPostgres, addLinkSetsSqlite, BENCH_DOMAIN } from './routed-links.ts';
import { visitorHeaders } from './visitors.ts';
import { startWebhookReceiver, WEBHOOK_ENV } from './webhook-receiver.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const QUICK = process.env.BENCH_SCALE === 'quick';
const ONLY = process.env.BENCH_ONLY;

interface Row {
  scenario: string;
  links: number;
  rps: number;
  p50: number;
  p99: number;
  ratio: number;
  rssMb: number;
  errors: number;
  /** Server CPU time per answered request over the measured rounds, in microseconds. */
  cpuUs: number;
}

const VISITORS = visitorHeaders();

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const load = createLoadGenerator();
const pinned = spawnSync('taskset', ['-V']).status === 0 && cpus().length >= 2;
console.log(
  `Shortlink benchmark — ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, ` +
    `Node ${process.version}, load generator ${load.name}, ${CONNECTIONS} connections, ${ROUNDS} × ${DURATION} s` +
    (pinned ? ', server on CPU 0, load on CPU 1' : ', not pinned (no taskset)'),
);

// The baseline server runs for the whole benchmark, idle except while it is measured. Every
// measured round of a workload is paired with a round against it, right before, so the
// ratio compares two runs a few seconds apart: this machine's speed drifts by ±15% over
// minutes (other tenants), which a single baseline at the start would fold into every ratio.
const bare = await startProcess({ script: 'bench/bare-server.ts', cwd: ROOT, env: {}, cpu: pinned ? 0 : undefined });
const bareTarget = { base: bare.url, paths: ['/'], method: 'GET', headers: {}, connections: CONNECTIONS };
const bareRounds: LoadResult[] = [];

/** The round with the median req/s. */
function medianRound(rounds: LoadResult[]): LoadResult {
  const rps = median(rounds.map((r) => r.rps));
  return rounds.find((r) => r.rps === rps)!;
}

interface Measured extends LoadResult {
  all: LoadResult[];
  warmupOk: number;
  /** Median over the rounds of (round req/s ÷ its paired baseline round's req/s). */
  ratio: number;
  cpuUs: number;
}

interface MeasureOptions {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly visitors?: readonly Record<string, string>[];
  /** The server measured, for its CPU time per request. */
  readonly server?: RunningProcess;
}

/** Runs a warm-up, then ROUNDS rounds each paired with a baseline round; keeps the median. */
async function measure(base: string, paths: string | readonly string[], options: MeasureOptions = {}): Promise<Measured> {
  const { method = 'GET', headers = {}, visitors, server } = options;
  const target = { base, paths: typeof paths === 'string' ? [paths] : paths, method, headers, connections: CONNECTIONS, ...(visitors ? { visitors } : {}) };
  const warmup = await load.run({ ...target, seconds: Math.min(2, DURATION) });
  const rounds: LoadResult[] = [];
  const ratios: number[] = [];
  let cpu = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const baseline = await load.run({ ...bareTarget, seconds: DURATION });
    bareRounds.push(baseline);
    const before = server?.cpuSeconds() ?? 0;
    const round = await load.run({ ...target, seconds: DURATION });
    cpu += (server?.cpuSeconds() ?? 0) - before;
    rounds.push(round);
    ratios.push(baseline.rps === 0 ? 0 : round.rps / baseline.rps);
  }
  const answered = rounds.reduce((sum, r) => sum + r.ok, 0);
  return { ...medianRound(rounds), all: rounds, warmupOk: warmup.ok, ratio: median(ratios), cpuUs: answered === 0 ? 0 : (cpu / answered) * 1e6 };
}

const rows: Row[] = [];
function record(scenario: string, links: number, result: LoadResult & { ratio: number; cpuUs?: number }, server: RunningProcess) {
  const row: Row = {
    scenario,
    links,
    rps: Math.round(result.rps),
    p50: result.p50,
    p99: result.p99,
    ratio: Math.round(result.ratio * 100) / 100,
    rssMb: Math.round(server.rssBytes() / 2 ** 20),
    errors: result.non2xx + result.errors,
    cpuUs: Math.round(result.cpuUs ?? 0),
  };
  rows.push(row);
  console.log(
    `${scenario.padEnd(28)} ${String(links).padStart(8)} ${String(row.rps).padStart(8)} req/s  p50 ${row.p50.toFixed(2)} ms  ` +
      `p99 ${row.p99.toFixed(2)} ms  ×${row.ratio.toFixed(2)}  RSS ${row.rssMb} MB  CPU ${row.cpuUs} µs/req  non-2xx/3xx+errors ${row.errors}`,
  );
}

// 1. The baseline, warmed up once; its rounds are interleaved with every workload's.
await load.run({ ...bareTarget, seconds: Math.min(2, DURATION) });

// 2. The service at several sizes; the full table at 100k links.
const results: Record<string, unknown> = {};

/** One storage configuration: preload, start the server, run the workloads, verify counts. */
async function benchmark(label: string, size: number, data: Preloaded, env: Record<string, string>, full: boolean | 'visitors' | 'one-account' | 'list-create', pin = pinned) {
  // The full table's registered-domain row: the same codes again on BENCH_DOMAIN.
  if (full === true) {
    if (data.path.startsWith('postgres')) await addLinkSetsPostgres(data.path, data.codes, ['domain']);
    else addLinkSetsSqlite(data.path, data.codes, ['domain']);
  }
  const server = await startProcess({
    script: 'src/server.ts',
    cwd: ROOT,
    env: { RATE_LIMIT: 'off', DEFAULT_MAX_LINKS: '1000000', BASE_URL: 'http://127.0.0.1', TRUST_PROXY: '127.0.0.1', ...env },
    cpu: pin ? 0 : undefined,
  });
  const resolvePaths = data.codes.map((code) => `/v1/get/${code}`);
  const redirectPaths = data.codes.map((code) => `/${code}`);
  let answeredResolutions = 0;
  let rounds = 0;
  const name = (scenario: string) => (label === 'sqlite' ? scenario : `${label}: ${scenario}`);

  if (full === 'visitors' || full === true) {
    // Statistics at work: every request a different-looking visitor.
    for (const [scenario, paths] of [['redirect, visitors', redirectPaths], ['resolve, visitors', resolvePaths], ['redirect, hot link, visitors', `/${data.codes[0]}`]] as const) {
      const result = await measure(server.url, paths, { visitors: VISITORS, server });
      answeredResolutions += result.all.reduce((sum, r) => sum + r.ok, 0) + result.warmupOk;
      rounds += ROUNDS + 1;
      record(name(scenario), size, result, server);
    }
  }
  if (full === 'one-account') {
    // The 20 links of the first account, the one a webhook may watch.
    const codes = data.codes.slice(0, 20);
    for (const [scenario, paths] of [['redirect, one account', codes.map((c) => `/${c}`)], ['resolve, one account', codes.map((c) => `/v1/get/${c}`)]] as const) {
      const result = await measure(server.url, paths, { server });
      answeredResolutions += result.all.reduce((sum, r) => sum + r.ok, 0) + result.warmupOk;
      rounds += ROUNDS + 1;
      record(name(scenario), size, result, server);
    }
  }
  if (full === 'list-create') await listAndCreate();
  if (full === 'visitors' || full === 'one-account' || full === 'list-create') {
    await server.stop();
    await verify();
    return;
  }

  const uniform = await measure(server.url, resolvePaths, { server });
  answeredResolutions += uniform.all.reduce((sum, r) => sum + r.ok, 0) + uniform.warmupOk;
  rounds += ROUNDS + 1;
  record(name('resolve, uniform'), size, uniform, server);

  if (full) {
    const hot = await measure(server.url, `/v1/get/${data.codes[0]}`, { server });
    answeredResolutions += hot.all.reduce((sum, r) => sum + r.ok, 0) + hot.warmupOk;
    record(name('resolve, one hot link'), size, hot, server);

    const redirect = await measure(server.url, redirectPaths, { server });
    answeredResolutions += redirect.all.reduce((sum, r) => sum + r.ok, 0) + redirect.warmupOk;
    rounds += 2 * (ROUNDS + 1);
    record(name('redirect, uniform'), size, redirect, server);

    // `Host` capitalised: wrk adds its own Host header unless one of that spelling is given.
    const onDomain = await measure(server.url, redirectPaths, { headers: { Host: BENCH_DOMAIN }, server });
    answeredResolutions += onDomain.all.reduce((sum, r) => sum + r.ok, 0) + onDomain.warmupOk;
    rounds += ROUNDS + 1;
    record(name('redirect, registered domain'), size, onDomain, server);

    await listAndCreate();
  }
  await server.stop();
  await verify();

  async function listAndCreate() {
    const auth = { authorization: `Bearer ${data.accessCode}` };
    record(name('list links (20 per account)'), size, await measure(server.url, '/v1/links', { headers: auth, server }), server);
    const create = await measure(server.url, '/v1/link?url=https%3A%2F%2Fexample.com%2Fnew', {
      headers: { authorization: `Bearer ${data.bigAccessCode}` }, server,
    });
    record(name('create link (generated code)'), size, create, server);
    record(name('new_account'), size, await measure(server.url, '/v1/new_account', { server }), server);
  }

  async function verify() {
    // Every answered resolution must be in the database; only requests cut off in flight at
    // the end of a round (at most one per connection per round) may be counted but unseen.
    const stored = await data.totalAccesses();
    const slack = CONNECTIONS * rounds;
    const ok = stored >= answeredResolutions && stored <= answeredResolutions + slack;
    const bytesPerLink = data.bytesPerLink;
    console.log(
      `  ${label} counts at ${size} links: ${answeredResolutions} resolutions answered, ${stored} stored ` +
        `(${ok ? 'consistent' : 'MISMATCH'}; in-flight slack ${slack}); ${bytesPerLink} bytes per link`,
    );
    results[`counts_${label}_${size}`] = { answered: answeredResolutions, stored, ok, bytesPerLink };
    await data.remove();
    if (!ok) process.exitCode = 1;
  }
}

const LIST_LARGE = 100_000;

/**
 * A filtered page (limit 50, by text or by tag) of an account holding 100,000 links against
 * the same of an account holding 20, on one database holding both: keyset paging on the
 * (created_by, id) index keeps the large account's pages near the small one's. The large
 * account's paths include cursors spread over its whole list (deep pages too).
 */
async function benchmarkListPage(label: string, data: PreloadedListing) {
  const server = await startProcess({
    script: 'src/server.ts',
    cwd: ROOT,
    env: { RATE_LIMIT: 'off', BASE_URL: 'http://127.0.0.1', DATABASE_URL: data.path },
    cpu: pinned ? 0 : undefined,
  });
  const name = (scenario: string) => (label === 'sqlite' ? scenario : `${label}: ${scenario}`);
  const pages = (filter: string, deep: boolean) => [
    `/v1/links?${filter}&limit=50`,
    ...(deep ? data.largeIds.map((id) => `/v1/links?${filter}&limit=50&cursor=${encodeCursor('oldest', { id })}`) : []),
  ];
  for (const [filter, title] of [['q=campaign', 'q'], ['tag=promo', 'tag']] as const) {
    const small = await measure(server.url, pages(filter, false), { headers: { authorization: `Bearer ${data.smallAccessCode}` }, server });
    record(name(`list page by ${title}, 20-link account`), 20, small, server);
    const large = await measure(server.url, pages(filter, true), { headers: { authorization: `Bearer ${data.largeAccessCode}` }, server });
    record(name(`list page by ${title}, 100k-link account`), LIST_LARGE, large, server);
    results[`list_page_${label}_${title}`] = { small: Math.round(small.rps), large: Math.round(large.rps), largeOverSmall: Math.round((large.rps / small.rps) * 100) / 100 };
  }
  await server.stop();
  await data.remove();
}

const postgresForLists = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (ONLY === undefined || ONLY === 'list-page') {
  await benchmarkListPage('sqlite', await preloadListingSqlite(LIST_LARGE));
  if (postgresForLists) await benchmarkListPage('postgres', await preloadListingPostgres(postgresForLists, LIST_LARGE));
}

// 2. SQLite (the default) at several sizes; the full table at 100k links.
for (const size of ONLY !== undefined ? [] : QUICK ? [1_000, 100_000] : [1_000, 100_000, 1_000_000]) {
  const data = await preloadSqlite(size);
  await benchmark('sqlite', size, data, { DATABASE_URL: data.path }, size === 100_000);
}

// Only the list, create and new-account rows (issue 27's goals for them), at 100k links.
if (ONLY === 'list-create') {
  const data = await preloadSqlite(100_000);
  await benchmark('sqlite', 100_000, data, { DATABASE_URL: data.path }, 'list-create');
}

// The same visitors with statistics off: what recording them costs.
if (ONLY === undefined) {
  const data = await preloadSqlite(100_000);
  await benchmark('sqlite STATS=off', 100_000, data, { DATABASE_URL: data.path, STATS: 'off' }, 'visitors');
}

// One webhook subscribed to link.visited (issue 16, ADR 21): the same account's links
// resolved by a server without and then with a webhook watching every visit.
if (ONLY === undefined || ONLY === 'webhook') {
  const receiver = await startWebhookReceiver();
  for (const watched of [false, true]) {
    const data = await preloadSqlite(100_000);
    if (watched) await receiver.subscribe(ROOT, data.path, data.codes[0]!);
    await benchmark(watched ? 'sqlite + 1 webhook on link.visited' : 'sqlite, no webhook', 100_000, data,
      { DATABASE_URL: data.path, ...WEBHOOK_ENV }, 'one-account');
  }
  console.log(`  the webhook's receiver got ${receiver.deliveries()} link.visited deliveries (at most one a second)`);
  await receiver.close();
}

// WORKERS=2 on this 2-core machine: the two server processes share both cores with the load
// generator (no pinning), which is what running them here would mean.
if (ONLY === undefined) {
  const data = await preloadSqlite(100_000);
  await benchmark('sqlite WORKERS=2', 100_000, data, { DATABASE_URL: data.path, WORKERS: '2' }, false, false);
}

/**
 * Three servers on one PostgreSQL database: uniform resolutions against one hot link's, each
 * round both, the connections split between the servers. What a viral link costs on
 * PostgreSQL, where every batch of every instance locks that link's row (issue 27).
 */
async function benchmarkHotLink(data: Preloaded) {
  const servers = await Promise.all([0, 1, 2].map(() => startProcess({
    script: 'src/server.ts',
    cwd: ROOT,
    env: { RATE_LIMIT: 'off', DEFAULT_MAX_LINKS: '1000000', BASE_URL: 'http://127.0.0.1', DATABASE_URL: data.path },
    cpu: undefined,
  })));
  const connections = Math.max(1, Math.round(CONNECTIONS / servers.length));
  const uniform = data.codes.map((code) => `/v1/get/${code}`);
  const hot = [`/v1/get/${data.codes[0]}`];
  /** All three servers loaded at once; their results summed. */
  const together = async (paths: readonly string[], seconds: number): Promise<LoadResult & { cpuUs: number }> => {
    const before = servers.map((server) => server.cpuSeconds());
    const each = await Promise.all(servers.map((server) => load.run({ base: server.url, paths, method: 'GET', headers: {}, connections, seconds })));
    const cpu = servers.reduce((sum, server, i) => sum + server.cpuSeconds() - before[i]!, 0);
    const ok = each.reduce((sum, r) => sum + r.ok, 0);
    return {
      rps: each.reduce((sum, r) => sum + r.rps, 0),
      p50: median(each.map((r) => r.p50)),
      p99: Math.max(...each.map((r) => r.p99)),
      ok,
      non2xx: each.reduce((sum, r) => sum + r.non2xx, 0),
      errors: each.reduce((sum, r) => sum + r.errors, 0),
      cpuUs: ok === 0 ? 0 : (cpu / ok) * 1e6,
    };
  };
  try {
    await together(uniform, Math.min(2, DURATION));
    await together(hot, Math.min(2, DURATION));
    const rounds: { uniform: LoadResult & { cpuUs: number }; hot: LoadResult & { cpuUs: number } }[] = [];
    for (let i = 0; i < ROUNDS; i++) rounds.push({ uniform: await together(uniform, DURATION), hot: await together(hot, DURATION) });
    const ratios = rounds.map((r) => (r.uniform.rps === 0 ? 0 : r.hot.rps / r.uniform.rps));
    const bareRps = median(bareRounds.map((r) => r.rps));
    for (const kind of ['uniform', 'hot'] as const) {
      const round = medianRound(rounds.map((r) => r[kind]));
      const cpuUs = median(rounds.map((r) => r[kind].cpuUs));
      record(`postgres ×3 servers: resolve, ${kind === 'hot' ? 'one hot link' : 'uniform'}`, kind === 'hot' ? 1 : data.codes.length,
        { ...round, ratio: bareRps === 0 ? 0 : round.rps / bareRps, cpuUs }, servers[0]!);
    }
    const hotOverUniform = Math.round(median(ratios) * 100) / 100;
    console.log(`  postgres ×3 servers: hot ÷ uniform ${hotOverUniform} (rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')}); × bare against the baseline rounds so far`);
    results.hot_link_postgres = {
      uniform: Math.round(median(rounds.map((r) => r.uniform.rps))), hot: Math.round(median(rounds.map((r) => r.hot.rps))), hotOverUniform,
    };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

// 3. PostgreSQL, and PostgreSQL with rate limits on and shared through Redis, when configured.
if (postgresForLists !== undefined && (ONLY === undefined || ONLY === 'hot-link')) {
  if (bareRounds.length === 0) bareRounds.push(await load.run({ ...bareTarget, seconds: DURATION }));
  const data = await preloadPostgres(postgresForLists, 100_000);
  await benchmarkHotLink(data);
  await data.remove();
}
const postgresUrl = ONLY !== undefined ? undefined : postgresForLists;
if (postgresUrl) {
  const data = await preloadPostgres(postgresUrl, 100_000);
  await benchmark('postgres', 100_000, data, { DATABASE_URL: data.path }, true);
  const off = await preloadPostgres(postgresUrl, 100_000);
  await benchmark('postgres STATS=off', 100_000, off, { DATABASE_URL: off.path, STATS: 'off' }, 'visitors');
  const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL;
  if (redisUrl) {
    const again = await preloadPostgres(postgresUrl, 100_000);
    const prefix = `shortlink:bench:${process.pid}:`;
    await benchmark('postgres+redis limits', 100_000, again, {
      DATABASE_URL: again.path, REDIS_URL: redisUrl, REDIS_PREFIX: prefix, RATE_LIMIT: 'on', RATE_LIMIT_EXEMPT: '',
      RATE_LIMIT_RESOLVE: '100000000/1h', RATE_LIMIT_NEW_ACCOUNT: '100000000/1h', RATE_LIMIT_CREATE_LINK: '100000000/1h',
    }, true);
    await clearRedisPrefix(redisUrl, prefix);
  }
} else if (postgresForLists === undefined) {
  console.log('PostgreSQL: set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to add its table.');
}

// The baseline's own row: the median of all its rounds.
record('bare node:http (all paired rounds)', 0, { ...medianRound(bareRounds), ratio: 1 }, bare);
rows.unshift(rows.pop()!);
await bare.stop();

const resultsDir = join(ROOT, 'bench', 'results');
mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(
  file,
  JSON.stringify(
    { date: new Date().toISOString(), node: process.version, cpu: cpus()[0]?.model, cores: cpus().length, pinned,
      generator: load.name, connections: CONNECTIONS, rounds: ROUNDS, duration: DURATION, rows, ...results },
    null,
    2,
  ),
);

console.log('\n| Scenario | Links | req/s | p50 ms | p99 ms | × bare | RSS MB | CPU µs/req |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| ${r.scenario} | ${r.links || '–'} | ${r.rps} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.ratio.toFixed(2)} | ${r.rssMb} | ${r.cpuUs || '–'} |`);
}
console.log(`\nResults written to ${file}`);
