/**
 * Runs the real server as a child process for end-to-end tests: `npm start` or
 * `node src/server.ts`, on a loopback port the kernel picks (PORT=0), with its own SQLite file.
 *
 * Readiness is read from the server's own log: pino writes one JSON line per event to stdout,
 * among them `Server listening at http://127.0.0.1:NNNN`, and every line carries the server's
 * `pid`. That pid is the one to signal: under `npm start` the direct child is npm, not the server.
 *
 * Every process started here is tracked; `cleanup()` (call it from `after`) kills whatever is
 * still running and removes the temp folders, and an exit hook kills leftovers as a last resort.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { READY_BOUND_MS, WAIT_BOUND_MS } from './wait-for.ts';
import { assertDatabaseOutsideWorkingTree, REPO_ROOT } from './working-tree.ts';

export { REPO_ROOT };
const SERVER_ENTRY = join(REPO_ROOT, 'src', 'server.ts');

// Variables the server reads; the parent's values (a developer's shell, CI) must not leak in.
const SERVER_VARIABLES = [
  'PORT', 'HOST', 'BASE_URL', 'DATABASE_URL', 'REDIS_URL', 'REDIS_PREFIX', 'DEFAULT_MAX_LINKS', 'RATE_LIMIT', 'LOG_LEVEL',
  'SQLITE_SYNCHRONOUS', 'RATE_LIMIT_EXEMPT', 'RATE_LIMIT_NEW_ACCOUNT', 'RATE_LIMIT_FAILED_AUTH', 'RATE_LIMIT_CREATE_LINK',
  'RATE_LIMIT_RESOLVE', 'RATE_LIMIT_UNKNOWN_CODE', 'RATE_LIMIT_CREATE_WEBHOOK', 'RATE_LIMIT_PASSWORD', 'RATE_LIMIT_IPV6_PREFIX', 'TRUST_PROXY', 'BLOCKED_HOSTS', 'BLOCKED_HOSTS_FILE', 'WORKERS',
  'REDIRECT_STATUS', 'METRICS_TOKEN', 'SELF_HOSTS', 'MAX_CONNECTIONS', 'SHUTDOWN_DELAY', 'STORAGE_TIMEOUT', 'CORS_ORIGINS',
];

/** The public address the test servers announce; short URLs start with it. */
export const E2E_BASE_URL = 'http://short.test';

// Bounds, not durations: each wait ends with its event (the "listening" line, the exit).
const READY_TIMEOUT_MS = READY_BOUND_MS;
const STOP_TIMEOUT_MS = WAIT_BOUND_MS;
const KILL_TIMEOUT_MS = 30_000;

/** One parsed pino line. */
export type LogLine = Record<string, unknown>;

export interface ExitResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface StopResult extends ExitResult {
  /** Milliseconds from sending the signal to the process having exited. */
  readonly elapsedMs: number;
}

export interface StartOptions {
  /** Overrides of the server's environment; `undefined` removes a variable. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Start through `npm start` (as an operator would) instead of `node src/server.ts`. */
  readonly viaNpm?: boolean;
  /** DATABASE_URL: a SQLite file or a postgres:// URL; a fresh temp folder (removed by cleanup()) when omitted. */
  readonly databasePath?: string;
  /** The bound on the wait for the "listening" line (default READY_BOUND_MS, two minutes). */
  readonly readyTimeoutMs?: number;
}

/** A running server. */
export interface ServerProcess {
  readonly child: ChildProcess;
  /**
   * The server's own pid (from its log), which differs from child.pid under npm; under
   * WORKERS, the primary's (signals go to it, never to a worker).
   */
  readonly pid: number;
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly databasePath: string;
  /** Settles when the spawned process has exited and its output is complete. */
  readonly exited: Promise<ExitResult>;
  stdout(): string;
  stderr(): string;
  /** Every JSON line written to stdout so far. */
  logs(): readonly LogLine[];
  /** Resolves with the first log line (past or future) that matches; rejects on timeout or exit. */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Sends `signal` to the server and waits for the exit; fails (after a kill -9) if it hangs. */
  stop(signal?: 'SIGTERM' | 'SIGINT', timeoutMs?: number): Promise<StopResult>;
  /** `kill -9` of the server; resolves once the process is gone (at once if it already is). */
  kill9(): Promise<ExitResult>;
  /** False once the spawned process has exited. */
  isRunning(): boolean;
}

export interface FinishedProcess extends ExitResult {
  readonly stdout: string;
  readonly stderr: string;
}

interface Launched {
  readonly child: ChildProcess;
  readonly exited: Promise<ExitResult>;
  readonly output: { stdout: string; stderr: string };
  readonly lines: LogLine[];
  waitForLog(match: (line: LogLine) => boolean, timeoutMs: number): Promise<LogLine>;
  /** Pids to kill if the process is left behind (the child, and the server once known). */
  readonly pids: Set<number>;
  done: boolean;
}

const running = new Set<Launched>();
const tempFolders = new Set<string>();

function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

// Last resort if a test file ends without calling cleanup(): never leave servers behind.
process.once('exit', () => {
  for (const launched of running) for (const pid of launched.pids) killQuietly(pid, 'SIGKILL');
});

/** A temp folder holding `db.sqlite` (not created yet); removed by `remove()` or cleanup(). */
export function tempDatabase(): { readonly dir: string; readonly path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-'));
  tempFolders.add(dir);
  return {
    dir,
    path: join(dir, 'db.sqlite'),
    remove() {
      tempFolders.delete(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function serverEnvironment(databasePath: string, overrides: StartOptions['env'] = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SERVER_VARIABLES) delete env[name];
  Object.assign(env, {
    PORT: '0',
    HOST: '127.0.0.1',
    BASE_URL: E2E_BASE_URL,
    DATABASE_URL: databasePath,
    LOG_LEVEL: 'info',
    RATE_LIMIT: 'off',
  });
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

function launch(options: StartOptions, databasePath: string): Launched {
  const env = serverEnvironment(databasePath, options.env);
  assertDatabaseOutsideWorkingTree(env, REPO_ROOT);
  const child = options.viaNpm
    ? spawn('npm', ['start'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, [SERVER_ENTRY], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });

  const output = { stdout: '', stderr: '' };
  const lines: LogLine[] = [];
  const waiters = new Set<{ match: (line: LogLine) => boolean; settle: (line: LogLine | Error) => void }>();
  let partial = '';

  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    output.stdout += chunk;
    partial += chunk;
    let newline: number;
    while ((newline = partial.indexOf('\n')) !== -1) {
      const text = partial.slice(0, newline).trim();
      partial = partial.slice(newline + 1);
      if (!text.startsWith('{')) continue; // npm's banner, not a log line
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        continue;
      }
      lines.push(line);
      for (const waiter of waiters) if (waiter.match(line)) waiter.settle(line);
    }
  });
  child.stderr!.on('data', (chunk: string) => {
    output.stderr += chunk;
  });

  const launched: Launched = {
    child,
    output,
    lines,
    pids: new Set(child.pid === undefined ? [] : [child.pid]),
    done: false,
    exited: new Promise<ExitResult>((resolve) => {
      child.once('error', (error) => {
        output.stderr += `spawn failed: ${error.message}\n`;
        finish({ code: null, signal: null });
      });
      // 'close' rather than 'exit': all output has been read by then.
      child.once('close', (code, signal) => finish({ code, signal }));
      function finish(result: ExitResult) {
        if (launched.done) return;
        launched.done = true;
        running.delete(launched);
        for (const waiter of waiters) waiter.settle(new Error(`the server exited (${describeExit(result)}) first`));
        resolve(result);
      }
    }),
    waitForLog(match, timeoutMs) {
      const seen = lines.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      if (launched.done) return Promise.reject(new Error('the server has already exited'));
      return new Promise<LogLine>((resolve, reject) => {
        const waiter = {
          match,
          settle(line: LogLine | Error) {
            clearTimeout(timer);
            waiters.delete(waiter);
            if (line instanceof Error) reject(line);
            else resolve(line);
          },
        };
        const timer = setTimeout(() => waiter.settle(new Error(`no matching log line within ${timeoutMs} ms`)), timeoutMs);
        waiters.add(waiter);
      });
    },
  };
  running.add(launched);
  return launched;
}

function describeExit({ code, signal }: ExitResult): string {
  return signal === null ? `exit code ${code}` : `signal ${signal}`;
}

function timeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

async function killLaunched(launched: Launched): Promise<void> {
  for (const pid of launched.pids) killQuietly(pid, 'SIGKILL');
  await timeout(launched.exited, KILL_TIMEOUT_MS, 'a killed server did not go away').catch(() => undefined);
}

/** Starts the server and resolves once it listens; rejects (having killed it) if it does not. */
export async function startServer(options: StartOptions = {}): Promise<ServerProcess> {
  const databasePath = options.databasePath ?? tempDatabase().path;
  const launched = launch(options, databasePath);
  const readyTimeoutMs = options.readyTimeoutMs ?? READY_TIMEOUT_MS;

  let ready: LogLine;
  try {
    ready = await launched.waitForLog(
      (line) => typeof line.msg === 'string' && line.msg.startsWith('Server listening at '),
      readyTimeoutMs,
    );
  } catch (error) {
    await killLaunched(launched);
    throw new Error(
      `the server did not start: ${(error as Error).message}\n--- stdout ---\n${launched.output.stdout}` +
        `\n--- stderr ---\n${launched.output.stderr}`,
      { cause: error },
    );
  }
  const address = new URL((ready.msg as string).slice('Server listening at '.length));
  // Under WORKERS the listening line is a worker's: the process to signal is the primary,
  // which logs before it forks. A worker signalled alone stops and the primary replaces it,
  // so a SIGTERM meant for the server would never end it.
  const primary = launched.lines.find((line) => line.role === 'primary');
  const pid = (primary?.pid ?? ready.pid) as number;
  launched.pids.add(ready.pid as number);
  launched.pids.add(pid);

  const server: ServerProcess = {
    child: launched.child,
    pid,
    port: Number(address.port),
    url: `http://127.0.0.1:${address.port}`,
    databasePath,
    exited: launched.exited,
    stdout: () => launched.output.stdout,
    stderr: () => launched.output.stderr,
    logs: () => launched.lines,
    waitForLog: (match, timeoutMs = WAIT_BOUND_MS) => launched.waitForLog(match, timeoutMs),
    async stop(signal = 'SIGTERM', timeoutMs = STOP_TIMEOUT_MS) {
      if (launched.done) throw new Error(`cannot send ${signal}: the server has already exited`);
      const started = performance.now();
      killQuietly(pid, signal);
      try {
        const result = await timeout(launched.exited, timeoutMs, `the server did not exit within ${timeoutMs} ms of ${signal}`);
        return { ...result, elapsedMs: performance.now() - started };
      } catch (error) {
        await killLaunched(launched);
        throw error;
      }
    },
    isRunning: () => !launched.done,
    async kill9() {
      if (launched.done) return launched.exited;
      killQuietly(pid, 'SIGKILL');
      return timeout(launched.exited, STOP_TIMEOUT_MS, 'the server survived kill -9');
    },
  };
  return server;
}

/**
 * Starts the server expecting it to refuse to start (bad configuration): resolves with its exit
 * status and output. Fails if it starts listening instead, or hangs.
 */
export async function runUntilExit(options: StartOptions = {}, timeoutMs = READY_TIMEOUT_MS): Promise<FinishedProcess> {
  const databasePath = options.databasePath ?? tempDatabase().path;
  const launched = launch(options, databasePath);
  const listening = launched
    .waitForLog((line) => typeof line.msg === 'string' && line.msg.startsWith('Server listening at '), timeoutMs + 1000)
    .then(
      (): 'listening' => 'listening',
      () => launched.exited,
    );
  const outcome: ExitResult | 'listening' = await timeout(
    Promise.race([launched.exited, listening]),
    timeoutMs,
    `the server neither exited nor listened within ${timeoutMs} ms`,
  ).catch(async (error: unknown) => {
    await killLaunched(launched);
    throw error;
  });
  if (outcome === 'listening') {
    await killLaunched(launched);
    throw new Error(`the server started listening instead of refusing the configuration\n${launched.output.stdout}`);
  }
  return { ...outcome, stdout: launched.output.stdout, stderr: launched.output.stderr };
}

/** Kills every server still running and removes the temp folders; for `after` hooks. */
export async function cleanup(): Promise<void> {
  await Promise.all([...running].map((launched) => killLaunched(launched)));
  for (const dir of tempFolders) rmSync(dir, { recursive: true, force: true });
  tempFolders.clear();
}

/** Opens a raw TCP connection to the server and writes `text` (maybe nothing); resolves once connected. */
export async function openConnection(server: Pick<ServerProcess, 'port'>, text: string): Promise<Socket> {
  const socket = connect(server.port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  if (text !== '') socket.write(text);
  return socket;
}
