/**
 * `npm run bench:password`: does checking passwords hold up other visitors? (issue 29)
 *
 * A protected link's password is checked with scrypt (N=2^15, r=8: tens of milliseconds of
 * CPU each) on libuv's thread pool, so the event loop should keep answering other requests
 * while guesses are hashed. This starts the real server (`src/server.ts`, request logging on)
 * on a fresh SQLite database preloaded with plain links (bench/preload.ts), creates one
 * protected link through the API, and sends a steady open-loop stream of resolutions
 * (`GET /v1/get/{code}`) of the plain links: one request every 1/BURST_RATE s whatever the
 * previous ones are doing, so a stall shows up as latency instead of fewer requests.
 *
 * Then, round after round, the stream's latency is recorded in two phases of the same run:
 *   - quiet: the stream alone, for BURST_QUIET_MS;
 *   - burst: BURST_GUESSES wrong guesses (`POST /{code}`, form field `password`), all sent at
 *     once, while the stream goes on. A guess still waiting for the pool when its request's
 *     deadline passes (STORAGE_TIMEOUT + 1 s) is answered 503, but its hash still runs, so the
 *     phase ends only when a lone guess is answered about as fast as before the burst (at most
 *     twice the median of three lone guesses timed at the start).
 * It prints p50 / p99 / max of the resolutions of each phase (all rounds pooled), how the
 * guesses were answered and how long each burst kept the pool busy. Were the hashing on the event loop, every resolution arriving during a
 * burst would wait behind the hashes ahead of it (100 × tens of ms); on the pool it competes
 * only for the CPU, which on this 2-core machine the pool's 4 threads mostly take.
 *
 * Rate limits are on as by default, with limits far above what the run sends (every guess
 * goes through the password limiter's check and record, none is refused with 429).
 *
 * Environment: BURST_ROUNDS (default 3), BURST_GUESSES (default 100), BURST_RATE (resolutions
 * per second, default 200), BURST_QUIET_MS (default 3000), BURST_LINKS (plain links, default
 * 10000). The server inherits the rest of the environment (e.g. UV_THREADPOOL_SIZE).
 */
import { Agent, request as httpRequest } from 'node:http';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { preloadSqlite } from './preload.ts';
import { startProcess } from './processes.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.BURST_ROUNDS ?? 3);
const GUESSES = Number(process.env.BURST_GUESSES ?? 100);
const RATE = Number(process.env.BURST_RATE ?? 200);
const QUIET_MS = Number(process.env.BURST_QUIET_MS ?? 3000);
const LINKS = Number(process.env.BURST_LINKS ?? 10_000);
const PASSWORD = 'correct-horse-battery';
const PROTECTED = 'burst-lock';
const HIGH = '100000000/1h';

interface Answer {
  readonly status: number;
  readonly body: string;
}

// Keep-alive connections for the stream, as a browser's or a proxy's; the guesses get their own.
const streamAgent = new Agent({ keepAlive: true, maxSockets: 32 });
const guessAgent = new Agent({ keepAlive: true, maxSockets: GUESSES });

function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string; agent: Agent }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers, agent: options.agent }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

const data = await preloadSqlite(LINKS);
const server = await startProcess({
  script: 'src/server.ts',
  cwd: ROOT,
  env: {
    DATABASE_URL: data.path, BASE_URL: 'http://127.0.0.1', DEFAULT_MAX_LINKS: '1000000', RATE_LIMIT: 'on', RATE_LIMIT_EXEMPT: '',
    RATE_LIMIT_RESOLVE: HIGH, RATE_LIMIT_CREATE_LINK: HIGH, RATE_LIMIT_UNKNOWN_CODE: HIGH, RATE_LIMIT_FAILED_AUTH: HIGH, RATE_LIMIT_PASSWORD: HIGH,
  },
  cpu: undefined,
});

/** The stream of resolutions: latencies (ms) of the requests started while `phase` was set, per phase. */
const latencies: Record<'quiet' | 'burst', number[]> = { quiet: [], burst: [] };
let phase: 'quiet' | 'burst' | undefined;
let streaming = true;
let failures = 0;

async function stream(): Promise<void> {
  const interval = 1000 / RATE;
  const start = performance.now();
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; streaming; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const recordIn = phase;
    const code = data.codes[i % data.codes.length]!;
    // Timed from when it was due, so a late start (this process held up) is not hidden.
    const sent = send(`${server.url}/v1/get/${code}`, { agent: streamAgent }).then(
      (answer) => {
        if (answer.status !== 200) failures++;
        else if (recordIn !== undefined) latencies[recordIn].push(performance.now() - due);
      },
      () => void failures++,
    );
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
  }
  await Promise.all(inFlight);
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const burstMs: number[] = [];
const totals = { answered401: 0, answered503: 0 };
const calibration = { loneMs: 0 };

function guess(tag: string): Promise<Answer> {
  return send(`${server.url}/${PROTECTED}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `password=wrong-guess-${tag}`,
    agent: guessAgent,
  });
}

function count(values: readonly number[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
let streamDone: Promise<void> | undefined;
try {
  const created = await send(
    `${server.url}/v1/link?url=${encodeURIComponent('https://example.com/private.pdf')}&short=${PROTECTED}&password=${PASSWORD}`,
    { headers: { authorization: `Bearer ${data.bigAccessCode}` }, agent: guessAgent },
  );
  if (created.status !== 200) throw new Error(`creating the protected link answered ${created.status}: ${created.body}`);
  const right = await send(`${server.url}/v1/get/${PROTECTED}?password=${PASSWORD}`, { agent: guessAgent });
  if (right.status !== 200) throw new Error(`the right password answered ${right.status}: ${right.body}`);

  // How long one wrong guess takes alone (scrypt on an idle pool): what "the pool is idle again" means below.
  const lone: number[] = [];
  for (let i = 0; i < 3; i++) {
    const began = performance.now();
    const answer = await guess(`lone-${i}`);
    if (answer.status !== 401) throw new Error(`a wrong guess answered ${answer.status}: ${answer.body}`);
    lone.push(performance.now() - began);
  }
  calibration.loneMs = percentile(lone, 50);
  console.log(`One wrong guess alone: ${lone.map((ms) => ms.toFixed(0)).join(', ')} ms`);
  console.log(
    `Password burst: ${GUESSES} wrong guesses at once (POST /${PROTECTED}) against a stream of ${RATE} resolutions/s of ` +
      `${LINKS} plain links; ${ROUNDS} rounds of a ${QUIET_MS} ms quiet phase and a burst; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`,
  );
  streamDone = stream();
  await sleep(1000); // warm-up: connections open, the server's code hot
  for (let round = 1; round <= ROUNDS; round++) {
    phase = 'quiet';
    await sleep(QUIET_MS);
    phase = 'burst';
    const began = performance.now();
    const guesses = await Promise.all(Array.from({ length: GUESSES }, (_, i) => guess(`${round}-${i}`)));
    const answeredMs = performance.now() - began;
    const statuses = count(guesses.map((g) => g.status));
    // A guess answered 503 (past the request's deadline) is still hashed: the pool stays busy.
    // The phase lasts until a lone guess is answered as fast as before the burst.
    let probes = 0;
    for (;;) {
      const probeBegan = performance.now();
      const probe = await guess(`${round}-probe-${probes++}`);
      if (probe.status !== 401 && probe.status !== 503) throw new Error(`a wrong guess answered ${probe.status}: ${probe.body}`);
      if (probe.status === 401 && performance.now() - probeBegan <= 2 * calibration.loneMs) break;
    }
    burstMs.push(performance.now() - began);
    phase = undefined;
    for (const status of statuses.keys()) if (status !== 401 && status !== 503) throw new Error(`wrong guesses answered ${status}`);
    const by503 = statuses.get(503) ?? 0;
    totals.answered401 += statuses.get(401) ?? 0;
    totals.answered503 += by503;
    console.log(
      `round ${round}: ${GUESSES} wrong guesses answered in ${answeredMs.toFixed(0)} ms (${statuses.get(401) ?? 0} × 401, ${by503} × 503 ` +
        `past the request deadline); the pool idle again after ${burstMs.at(-1)!.toFixed(0)} ms (${probes} probe guesses)`,
    );
  }
} finally {
  streaming = false;
  await streamDone;
  streamAgent.destroy();
  guessAgent.destroy();
  await server.stop();
  await data.remove();
}

const row = (name: string, values: readonly number[]) =>
  `| ${name} | ${values.length} | ${percentile(values, 50).toFixed(2)} | ${percentile(values, 99).toFixed(2)} | ${Math.max(...values).toFixed(2)} |`;
console.log(`\nResolutions of plain links (GET /v1/get/{code}), latency in ms, ${ROUNDS} rounds pooled; load average now ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log('| Phase | resolutions | p50 ms | p99 ms | max ms |');
console.log('|---|---|---|---|---|');
console.log(row('quiet (no guesses)', latencies.quiet));
console.log(row(`during a burst of ${GUESSES} wrong passwords`, latencies.burst));
console.log(
  `Bursts (until the pool was idle again) took ${burstMs.map((ms) => ms.toFixed(0)).join(', ')} ms; one guess alone ${calibration.loneMs.toFixed(0)} ms; ` +
    `the guesses answered ${totals.answered401} × 401 and ${totals.answered503} × 503; ${failures} resolutions failed.`,
);
if (failures > 0) process.exitCode = 1;
