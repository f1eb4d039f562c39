/**
 * `npm run soak`: a long run of mixed load at a fixed rate against the real server on a fresh
 * SQLite database, watching for slow leaks and drift. Never part of `npm test`.
 *
 * Load (open loop, SOAK_RATE requests per second, default 2000): 80% resolutions (half
 * `GET /v1/get/{code}`, half the `GET /{code}` redirect), 10% link creation, 5% listing,
 * 2.5% deletion and 2.5% account creation. Creations go to a pool of accounts whose links
 * are deleted again once an account nears its cap, so the data set stays about the same
 * size and RSS can be compared across the run. Rate limits are off.
 *
 * Alongside, pipelining clients on their own link: SOAK_PIPELINERS (default 4) hostile ones
 * that each write 5000 pipelined resolutions and never read an answer (the server must keep
 * memory flat and close them; they reconnect and start again), and as many well-behaved ones
 * that pipeline 50 resolutions at a time, read every answer and pause half a second.
 *
 * Checks, after the load stops and every request has been answered:
 * - no 5xx and no answer the contract does not allow for that request;
 * - RSS flat: the mean of the last minute within 10% of the mean of the second minute
 *   (for runs under 3 minutes: the last quarter against the second quarter);
 * - counts exact: for every live link, stored Accesses equals the resolutions answered
 *   200/302 (plus at most those that failed without an answer);
 * - pipelining: every batch of a reading pipeliner answered in full with 200s.
 *
 * SOAK_MINUTES (default 10) shortens the run, SOAK_RATE changes the rate, SOAK_PIN=1 pins
 * the server and the generator to a core each. Prints a summary and writes JSON under
 * bench/results/. Exits 1 when a check fails.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const RATE = Number(process.env.SOAK_RATE ?? 2000);
const SAMPLE_MS = 10_000;
const ACCOUNTS = 100;
const MAX_LINKS = 20;
const MAX_IN_FLIGHT = 2000;
const REQUEST_TIMEOUT_MS = 10_000;
const BASE_URL = 'http://soak.test';
const PIPELINERS = Number(process.env.SOAK_PIPELINERS ?? 4);
const HOSTILE_BATCH = 5000;
const READER_BATCH = 50;
/** Each reading pipeliner sends about READER_BATCH requests per this many ms. */
const READER_PAUSE_MS = 500;

if (!(MINUTES > 0) || !(RATE > 0)) {
  console.error('SOAK_MINUTES and SOAK_RATE must be positive numbers');
  process.exit(2);
}

// ------------------------------------------------------------------------------ the server

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// SOAK_PIN=1 puts the server on CPU 0 and this generator on CPU 1. Off by default: a soak
// looks for leaks, not peak throughput, and on a shared machine pinning starves the server.
const pinned = process.env.SOAK_PIN === '1' && spawnSync('taskset', ['-V']).status === 0 && cpus().length >= 2;
const dataDir = mkdtempSync(join(tmpdir(), 'shortlink-soak-'));
const port = await freePort();
const serverCommand = [process.execPath, join(ROOT, 'src', 'server.ts')];
// Request logs stay on (info), written to /dev/null: the server pays for them as in production.
const server = spawn(pinned ? 'taskset' : serverCommand[0]!, pinned ? ['-c', '0', ...serverCommand] : serverCommand.slice(1), {
  cwd: ROOT,
  env: {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL,
    DATABASE_URL: join(dataDir, 'soak.db'),
    RATE_LIMIT: 'off',
    DEFAULT_MAX_LINKS: String(MAX_LINKS),
    LOG_LEVEL: 'info',
    REDIS_URL: '',
    WORKERS: '1',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
if (pinned) spawnSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
let serverExited = false;
server.once('exit', () => (serverExited = true));

function serverPid(): number {
  // Under taskset the child execs node, keeping its pid.
  return server.pid!;
}

/** The database file and its WAL: their pages, cached or memory-mapped, count in the RSS. */
function databaseBytes(): number {
  let total = 0;
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      total += statSync(join(dataDir, `soak.db${suffix}`)).size;
    } catch {
      // not there (yet)
    }
  }
  return total;
}

function rssBytes(): number {
  try {
    const status = readFileSync(`/proc/${serverPid()}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

// ------------------------------------------------------------------------------ the client

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

interface Answer {
  status: number;
  body: string;
  ms: number;
}

function send(method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function waitForServer(): Promise<void> {
  for (let waited = 0; ; waited += 50) {
    if (serverExited) throw new Error('the server exited during start');
    if (waited > 30_000) throw new Error('the server did not answer within 30 s');
    try {
      await send('GET', '/v1/get/ready-probe');
      return;
    } catch {
      await sleep(50);
    }
  }
}

// ------------------------------------------------------------------------------ bookkeeping

interface Account {
  readonly uid: number;
  readonly code: string;
  /** Live links, oldest first. */
  readonly links: string[];
  /** Creates sent and not yet answered: they may take a slot. */
  pendingCreates: number;
  /** Deletes sent and not yet answered: their slot is not free yet. */
  pendingDeletes: number;
}

interface LinkState {
  readonly account: Account;
  /** Resolutions answered 200 or 302. */
  answered: number;
  /** Resolutions that failed without an answer: may or may not have counted. */
  unanswered: number;
  deleting: boolean;
}

const accounts: Account[] = [];
const links = new Map<string, LinkState>();
/** Live links not being deleted: what resolutions pick from. */
const resolvable: string[] = [];
const resolvableIndex = new Map<string, number>();

function addResolvable(code: string): void {
  resolvableIndex.set(code, resolvable.length);
  resolvable.push(code);
}
function removeResolvable(code: string): void {
  const index = resolvableIndex.get(code);
  if (index === undefined) return;
  const last = resolvable.pop()!;
  if (last !== code) {
    resolvable[index] = last;
    resolvableIndex.set(last, index);
  }
  resolvableIndex.delete(code);
}

type Op = 'resolve' | 'redirect' | 'create' | 'list' | 'delete' | 'new_account';
const OPS: readonly Op[] = ['resolve', 'redirect', 'create', 'list', 'delete', 'new_account'];

const stats = {
  sent: 0,
  skipped: 0,
  inFlight: 0,
  byStatus: new Map<string, number>(),
  latencies: new Map<Op, number[]>(OPS.map((op) => [op, []])),
  failures: new Map<Op, number>(),
  unexpected: [] as string[],
  fiveHundreds: 0,
};

function note(op: Op, answer: Answer, expected: readonly number[]): void {
  const key = `${op} ${answer.status}`;
  stats.byStatus.set(key, (stats.byStatus.get(key) ?? 0) + 1);
  const samples = stats.latencies.get(op)!;
  // A bounded reservoir per operation: enough for percentiles, no growth over the run.
  if (samples.length < 20_000) samples.push(answer.ms);
  else samples[Math.floor(Math.random() * samples.length)] = answer.ms;
  if (answer.status >= 500) stats.fiveHundreds++;
  if (!expected.includes(answer.status) && stats.unexpected.length < 50) {
    stats.unexpected.push(`${op}: ${answer.status} ${answer.body.slice(0, 120)}`);
  }
}

function failed(op: Op, error: unknown): void {
  stats.failures.set(op, (stats.failures.get(op) ?? 0) + 1);
  if (stats.unexpected.length < 50) stats.unexpected.push(`${op}: ${String(error)}`);
}

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;

async function newAccount(): Promise<Account | undefined> {
  const answer = await send('POST', '/v1/new_account');
  note('new_account', answer, [200]);
  if (answer.status !== 200) return undefined;
  const body = JSON.parse(answer.body) as { Uid: number; AccessCode: string };
  return { uid: body.Uid, code: body.AccessCode, links: [], pendingCreates: 0, pendingDeletes: 0 };
}

async function resolveOp(op: 'resolve' | 'redirect'): Promise<void> {
  if (resolvable.length === 0) return;
  const code = pick(resolvable);
  const state = links.get(code)!;
  let answer: Answer;
  try {
    answer = await send('GET', op === 'resolve' ? `/v1/get/${code}` : `/${code}`);
  } catch (error) {
    state.unanswered++;
    return failed(op, error);
  }
  const hit = op === 'resolve' ? 200 : 302;
  // A 404 is right only for a link being deleted meanwhile.
  note(op, answer, state.deleting ? [hit, 404] : [hit]);
  if (answer.status === hit) state.answered++;
}

let created = 0;
async function createOp(): Promise<void> {
  const account = pick(accounts);
  // Keep each account below its cap: free the oldest slot first when it is close.
  if (account.links.length + account.pendingCreates + account.pendingDeletes >= MAX_LINKS - 2) return deleteOp(account);
  const short = `s${(created++).toString(36)}-${Math.floor(Math.random() * 1e6).toString(36)}`;
  const target = `https://example.org/soak/${short}?n=${created}`;
  const chosen = created % 2 === 0;
  const path = `/v1/link?url=${encodeURIComponent(target)}${chosen ? `&short=${short}` : ''}`;
  account.pendingCreates++;
  let answer: Answer;
  try {
    answer = await send('GET', path, { authorization: `Bearer ${account.code}` });
  } catch (error) {
    return failed('create', error);
  } finally {
    account.pendingCreates--;
  }
  note('create', answer, [200]);
  if (answer.status !== 200) return;
  const code = answer.body.slice(BASE_URL.length + 1);
  account.links.push(code);
  links.set(code, { account, answered: 0, unanswered: 0, deleting: false });
  addResolvable(code);
}

async function deleteOp(account = pick(accounts)): Promise<void> {
  const code = account.links.shift();
  if (code === undefined) return;
  const state = links.get(code)!;
  state.deleting = true;
  removeResolvable(code);
  let answer: Answer;
  account.pendingDeletes++;
  try {
    answer = await send('DELETE', `/v1/link?short=${code}`, { authorization: account.code });
  } catch (error) {
    // Unknown outcome: the link may still be there; forget it (it is not checked).
    links.delete(code);
    return failed('delete', error);
  } finally {
    account.pendingDeletes--;
  }
  note('delete', answer, [200]);
  links.delete(code);
}

async function listOp(): Promise<void> {
  const account = pick(accounts);
  const answer = await send('GET', '/v1/links', { authorization: account.code });
  note('list', answer, [200]);
}

async function runOp(op: Op): Promise<void> {
  stats.inFlight++;
  try {
    if (op === 'resolve' || op === 'redirect') await resolveOp(op);
    else if (op === 'create') await createOp();
    else if (op === 'delete') await deleteOp();
    else if (op === 'list') await listOp();
    else await newAccount();
  } catch (error) {
    failed(op, error);
  } finally {
    stats.inFlight--;
  }
}

function chooseOp(): Op {
  const r = Math.random() * 100;
  if (r < 40) return 'resolve';
  if (r < 80) return 'redirect';
  if (r < 90) return 'create';
  if (r < 95) return 'list';
  if (r < 97.5) return 'delete';
  return 'new_account';
}

// ------------------------------------------------------------------------------ pipelining clients

const pipelining = { hostileConnections: 0, hostileClosedByServer: 0, readerBatches: 0, readerProblems: [] as string[] };

function pipelinedResolves(code: string, count: number): string {
  return `GET /v1/get/${code} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`.repeat(count);
}

/**
 * Writes batches and never reads; when the server closes the connection (its answers stalled
 * in full kernel buffers), starts again on a new one.
 */
async function hostilePipeliner(code: string, until: () => boolean): Promise<void> {
  const batch = pipelinedResolves(code, HOSTILE_BATCH);
  while (!until()) {
    pipelining.hostileConnections++;
    const socket = connect(port, '127.0.0.1');
    socket.pause();
    socket.on('error', () => undefined);
    // A paused socket notices the server's close only when it writes: keep writing, but
    // never pile up more than one batch here.
    while (!until() && !socket.destroyed) {
      if (socket.writableLength === 0) socket.write(batch, () => undefined);
      await sleep(1000);
    }
    if (!until()) pipelining.hostileClosedByServer++;
    socket.destroy();
  }
}

/** Pipelines a batch, reads every answer, pauses, repeats (paced: the mix, not a flood). */
async function readingPipeliner(code: string, until: () => boolean): Promise<void> {
  let socket: Socket | undefined;
  while (!until()) {
    if (socket === undefined || socket.destroyed) {
      socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.setEncoding('utf8');
    }
    const current = socket;
    const answers = await new Promise<string>((resolve) => {
      let text = '';
      const timer = setTimeout(() => done(), REQUEST_TIMEOUT_MS);
      const onData = (chunk: string) => {
        text += chunk;
        if ((text.match(/HTTP\/1\.1 \d{3} /g) ?? []).length >= READER_BATCH && text.endsWith('}')) done();
      };
      const done = () => {
        clearTimeout(timer);
        current.off('data', onData);
        current.off('close', done);
        resolve(text);
      };
      current.on('data', onData);
      current.once('close', done);
      current.write(pipelinedResolves(code, READER_BATCH));
    });
    const ok = (answers.match(/HTTP\/1\.1 200 /g) ?? []).length;
    pipelining.readerBatches++;
    if (ok !== READER_BATCH && pipelining.readerProblems.length < 20) pipelining.readerProblems.push(`a batch of ${READER_BATCH} got ${ok} answers 200`);
    await sleep(READER_PAUSE_MS);
  }
  socket?.destroy();
}

// ------------------------------------------------------------------------------ the run

function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

let exitCode = 0;
try {
  await waitForServer();
  console.log(
    `Shortlink soak — ${MINUTES} min at ${RATE} req/s, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}` +
      (pinned ? ', server on CPU 0, load on CPU 1' : ''),
  );
  for (let i = 0; i < ACCOUNTS; i++) {
    const account = await newAccount();
    if (account === undefined) throw new Error('cannot create the soak accounts');
    accounts.push(account);
  }
  // A starting set of links so that resolutions have targets from the first second.
  for (let i = 0; i < ACCOUNTS * 5; i++) await createOp();
  // The pipeliners' own link, outside the checked set: unread answers may or may not count.
  const pipelineOwner = await newAccount();
  const pipelined = await send('GET', '/v1/link?url=https%3A%2F%2Fexample.org%2Fpipelined&short=pipelined', { authorization: pipelineOwner?.code ?? '' });
  if (pipelined.status !== 200) throw new Error(`cannot create the pipeliners' link: ${pipelined.status} ${pipelined.body}`);

  const durationMs = MINUTES * 60_000;
  const started = performance.now();
  const samples: { atS: number; rssMb: number; databaseMb: number; sent: number; inFlight: number; links: number }[] = [];
  const sample = () => {
    const atS = Math.round((performance.now() - started) / 1000);
    samples.push({ atS, rssMb: mb(rssBytes()), databaseMb: mb(databaseBytes()), sent: stats.sent, inFlight: stats.inFlight, links: links.size });
    const last = samples.at(-1)!;
    console.log(
      `  ${String(atS).padStart(4)} s  RSS ${last.rssMb} MiB  database ${last.databaseMb} MiB  sent ${last.sent}  ` +
        `in flight ${last.inFlight}  live links ${last.links}`,
    );
  };
  sample();
  const sampler = setInterval(sample, SAMPLE_MS);

  let loadOver = false;
  const pipeliners = Array.from({ length: PIPELINERS }, () => [
    hostilePipeliner('pipelined', () => loadOver),
    readingPipeliner('pipelined', () => loadOver),
  ]).flat();

  // The client's own event-loop delay, to tell its stalls from the server's in the latencies.
  const clientDelay = monitorEventLoopDelay({ resolution: 10 });
  clientDelay.enable();
  // Open loop: every 5 ms, send what the fixed rate asks for by now.
  await new Promise<void>((resolve) => {
    const ticker = setInterval(() => {
      const elapsed = performance.now() - started;
      if (elapsed >= durationMs || serverExited) {
        clearInterval(ticker);
        resolve();
        return;
      }
      const due = Math.floor((elapsed / 1000) * RATE) - stats.sent - stats.skipped;
      for (let i = 0; i < due; i++) {
        if (stats.inFlight >= MAX_IN_FLIGHT) {
          stats.skipped++;
          continue;
        }
        stats.sent++;
        void runOp(chooseOp());
      }
    }, 5);
  });
  loadOver = true;
  await Promise.all(pipeliners);
  clearInterval(sampler);
  clientDelay.disable();
  sample();
  const loadSeconds = (performance.now() - started) / 1000;

  // Let everything in flight be answered before counting.
  for (let waited = 0; stats.inFlight > 0 && waited < 30_000; waited += 50) await sleep(50);
  if (serverExited) throw new Error('the server exited during the soak');

  // Counts: every live link's stored Accesses against the resolutions answered.
  let linksChecked = 0;
  let answeredTotal = 0;
  let storedTotal = 0;
  let unansweredTotal = 0;
  const countProblems: string[] = [];
  for (const account of accounts) {
    const answer = await send('GET', '/v1/links', { authorization: account.code });
    const stored = new Map((JSON.parse(answer.body) as { ShortCode: string; Accesses: number }[]).map((l) => [l.ShortCode, l.Accesses]));
    for (const code of account.links) {
      const state = links.get(code)!;
      const accesses = stored.get(code);
      linksChecked++;
      if (accesses === undefined) {
        countProblems.push(`${code}: acknowledged but not listed`);
        continue;
      }
      answeredTotal += state.answered;
      unansweredTotal += state.unanswered;
      storedTotal += accesses;
      if (accesses < state.answered || accesses > state.answered + state.unanswered) {
        if (countProblems.length < 20) countProblems.push(`${code}: stored ${accesses}, answered ${state.answered} (+${state.unanswered} unanswered)`);
      }
    }
  }

  // RSS: second minute against the last minute (quarters for short runs).
  const windowS = MINUTES >= 3 ? 60 : (MINUTES * 60) / 4;
  const referenceFrom = MINUTES >= 3 ? 60 : windowS;
  const totalS = samples.at(-1)!.atS;
  const inWindow = (from: number, to: number) => samples.filter((s) => s.atS >= from && s.atS <= to).map((s) => s.rssMb);
  const reference = mean(inWindow(referenceFrom, referenceFrom + windowS));
  const last = mean(inWindow(totalS - windowS, totalS));
  const growth = (last - reference) / reference;

  const sent = stats.sent;
  const fiveHundreds = stats.fiveHundreds;
  const latency = Object.fromEntries(
    OPS.map((op) => {
      const values = stats.latencies.get(op)!;
      return [op, { p50: Math.round(percentile(values, 50) * 100) / 100, p99: Math.round(percentile(values, 99) * 100) / 100 }];
    }),
  );
  const checks = {
    noServerErrors: fiveHundreds === 0,
    onlyExpectedAnswers: stats.unexpected.length === 0,
    rssFlat: Number.isFinite(growth) && Math.abs(growth) <= 0.1,
    countsExact: countProblems.length === 0,
    pipelinedAnswered: pipelining.readerProblems.length === 0 && (PIPELINERS === 0 || pipelining.readerBatches > 0),
  };
  const summary = {
    when: new Date().toISOString(),
    minutes: MINUTES,
    rate: RATE,
    achievedRate: Math.round(sent / loadSeconds),
    sent,
    // Not a check: on a shared machine the generator itself may fall behind.
    rateHeld: stats.skipped === 0,
    skippedClientSaturated: stats.skipped,
    byStatus: Object.fromEntries([...stats.byStatus].sort()),
    failuresWithoutAnswer: Object.fromEntries(stats.failures),
    fiveHundreds,
    unexpected: stats.unexpected,
    latencyMs: latency,
    clientEventLoopDelayMs: { p50: Math.round(clientDelay.percentile(50) / 1e4) / 100, p99: Math.round(clientDelay.percentile(99) / 1e4) / 100, max: Math.round(clientDelay.max / 1e4) / 100 },
    rss: {
      referenceWindowS: [referenceFrom, referenceFrom + windowS],
      lastWindowS: [totalS - windowS, totalS],
      referenceMeanMb: Math.round(reference * 10) / 10,
      lastMeanMb: Math.round(last * 10) / 10,
      growthPercent: Math.round(growth * 1000) / 10,
      minMb: Math.min(...samples.map((s) => s.rssMb)),
      maxMb: Math.max(...samples.map((s) => s.rssMb)),
      databaseMbAtStart: samples[0]!.databaseMb,
      databaseMbAtEnd: samples.at(-1)!.databaseMb,
    },
    pipelining,
    counts: { linksChecked, answered: answeredTotal, stored: storedTotal, unanswered: unansweredTotal, problems: countProblems },
    checks,
    samples,
    machine: { cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, pinned },
  };

  console.log(
    `\nSent ${sent} requests in ${Math.round(loadSeconds)} s (${summary.achievedRate} req/s; ${stats.skipped} skipped because ${MAX_IN_FLIGHT} were in flight)`,
  );
  console.log(`Answers: ${[...stats.byStatus].sort().map(([k, v]) => `${k}: ${v}`).join(', ')}`);
  console.log(`Latency p50/p99 ms: ${OPS.map((op) => `${op} ${latency[op]!.p50}/${latency[op]!.p99}`).join(', ')}`);
  console.log(
    `Load generator's own event-loop delay p50/p99/max ms: ${summary.clientEventLoopDelayMs.p50}/${summary.clientEventLoopDelayMs.p99}/` +
      `${summary.clientEventLoopDelayMs.max} (included in the latencies above)`,
  );
  console.log(
    `RSS: ${summary.rss.referenceMeanMb} MiB in s ${referenceFrom}–${referenceFrom + windowS}, ${summary.rss.lastMeanMb} MiB in the last ` +
      `${windowS} s (${summary.rss.growthPercent >= 0 ? '+' : ''}${summary.rss.growthPercent}%), range ${summary.rss.minMb}–${summary.rss.maxMb} MiB; ` +
      `database ${summary.rss.databaseMbAtStart} → ${summary.rss.databaseMbAtEnd} MiB`,
  );
  console.log(
    `Counts: ${linksChecked} live links, ${answeredTotal} resolutions answered, ${storedTotal} stored, ${unansweredTotal} without an answer; ` +
      `${countProblems.length} mismatches`,
  );
  console.log(
    `Pipelining: ${pipelining.readerBatches} read batches of ${READER_BATCH}; ${pipelining.hostileConnections} non-reading connections, ` +
      `${pipelining.hostileClosedByServer} closed by the server`,
  );
  if (stats.skipped > 0) console.log(`Note: the rate was not held (${stats.skipped} requests skipped); latencies include the backlog`);
  console.log(`Checks: ${Object.entries(checks).map(([name, ok]) => `${name} ${ok ? 'ok' : 'FAILED'}`).join(', ')}`);
  for (const line of stats.unexpected.slice(0, 10)) console.log(`  unexpected: ${line}`);
  for (const line of countProblems.slice(0, 10)) console.log(`  count: ${line}`);
  for (const line of pipelining.readerProblems.slice(0, 10)) console.log(`  pipelining: ${line}`);

  const resultsDir = join(ROOT, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `soak-${summary.when.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`Wrote ${file}`);
  if (!Object.values(checks).every(Boolean)) exitCode = 1;
} catch (error) {
  console.error(`soak failed: ${(error as Error).message}`);
  exitCode = 1;
} finally {
  agent.destroy();
  if (!serverExited) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await Promise.race([exited, sleep(15_000)]);
    if (!serverExited) server.kill('SIGKILL');
  }
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(exitCode);
