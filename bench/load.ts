/**
 * Load generation: wrk when it is installed (C, one thread pinned to its own core, the
 * higher ceiling on two cores), else autocannon. Both answer the same LoadResult.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

export interface LoadTarget {
  readonly base: string;
  /** Paths requested round-robin, starting at a random offset per connection. */
  readonly paths: readonly string[];
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Header sets added to `headers` in turn, one per request (realistic visitors: User-Agent,
   * Referer, X-Forwarded-For); none when omitted.
   */
  readonly visitors?: readonly Readonly<Record<string, string>>[];
  readonly connections: number;
  readonly seconds: number;
}

export interface LoadResult {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  /** Responses with a 2xx or 3xx status. */
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
}

export interface LoadGenerator {
  readonly name: string;
  run(target: LoadTarget): Promise<LoadResult>;
}

const pin = spawnSync('taskset', ['-V']).status === 0 && cpus().length >= 2 ? ['taskset', '-c', '1'] : [];

export function createLoadGenerator(): LoadGenerator {
  const forced = process.env.BENCH_LOAD;
  const hasWrk = spawnSync('wrk', ['-v']).error === undefined;
  if (forced !== 'autocannon' && hasWrk) return wrkGenerator();
  return autocannonGenerator();
}

function toMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text.trim());
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

function luaString(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * The Lua script wrk runs: requests go round-robin through the paths, each connection
 * starting at a random one. With many paths the script itself can become the bottleneck:
 * every request formatted in Lua is garbage, and each garbage collection walks every live
 * string, so a table of 100k paths made collections slow (measured: bare node:http fell
 * from ~35k to ~23k req/s). Paths of one length (the benchmark's shortcodes) are packed
 * into a single string instead, which the collector sees as one object.
 */
function wrkScript(target: LoadTarget): string {
  const method = luaString(target.method);
  const table = (set: Readonly<Record<string, string>>) => `{${Object.entries(set).map(([k, v]) => `[${luaString(k)}]=${luaString(v)}`).join(',')}}`;
  const headers = table(target.headers);
  const visitors = target.visitors ?? [];
  const width = target.paths[0]!.length;
  const packed = target.paths.every((path) => path.length === width);
  // With visitors, each request takes the next header set (the sets are built once, in init).
  const pick = visitors.length === 0 ? 'headers' : 'sets[(i % nv) + 1]';
  return [
    `local headers = ${headers}`,
    `local sets = {${visitors.map((v) => table({ ...target.headers, ...v })).join(',\n')}}`,
    `local nv = ${Math.max(1, visitors.length)}`,
    packed ? `local packed = ${luaString(target.paths.join(''))}` : `local paths = {${target.paths.map(luaString).join(',\n')}}`,
    `local n = ${target.paths.length}`,
    'local i = 0',
    'function init(args) i = math.random(n) - 1 end',
    packed
      ? `function request() local at = i * ${width}; i = (i + 1) % n; return wrk.format(${method}, string.sub(packed, at + 1, at + ${width}), ${pick}) end`
      : `function request() i = (i % n) + 1; return wrk.format(${method}, paths[i], ${pick}) end`,
  ].join('\n');
}

function wrkGenerator(): LoadGenerator {
  return {
    name: 'wrk',
    async run(target) {
      const dir = mkdtempSync(join(tmpdir(), 'shortlink-wrk-'));
      try {
        const script = join(dir, 'paths.lua');
        writeFileSync(script, wrkScript(target));
        const args = [...pin, 'wrk', '-t1', `-c${target.connections}`, `-d${target.seconds}s`, '--latency', '-s', script, target.base];
        const output = await new Promise<string>((resolve, reject) => {
          const child = spawn(args[0]!, args.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
          let text = '';
          child.stdout.on('data', (chunk: Buffer) => (text += chunk));
          child.on('error', reject);
          child.on('close', () => resolve(text));
        });
        const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? 0);
        const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
        const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
        const errors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
        return {
          rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? 0),
          p50: toMs(/\s50%\s+(\S+)/.exec(output)?.[1] ?? ''),
          p99: toMs(/\s99%\s+(\S+)/.exec(output)?.[1] ?? ''),
          ok: requests - non2xx,
          non2xx,
          errors,
        };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

function autocannonGenerator(): LoadGenerator {
  return {
    name: 'autocannon',
    async run(target) {
      let next = Math.floor(Math.random() * target.paths.length);
      const visitors = target.visitors ?? [];
      let visitor = 0;
      const result = await autocannon({
        url: target.base,
        connections: target.connections,
        duration: target.seconds,
        method: target.method as 'GET',
        headers: { ...target.headers },
        requests: [
          {
            setupRequest: (request) => {
              next = (next + 1) % target.paths.length;
              if (visitors.length === 0) return { ...request, path: target.paths[next]! };
              visitor = (visitor + 1) % visitors.length;
              return { ...request, path: target.paths[next]!, headers: { ...request.headers, ...visitors[visitor] } };
            },
          },
        ],
      });
      return {
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        ok: result['2xx'] + result['3xx'],
        // autocannon's non2xx counts redirects too; LoadResult's does not.
        non2xx: result.non2xx - result['3xx'],
        errors: result.errors + result.timeouts,
      };
    },
  };
}
