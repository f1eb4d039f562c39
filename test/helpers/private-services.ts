/**
 * Private PostgreSQL and Redis servers for fault tests: each on a spare loopback port, with
 * its files in a temp folder, so a test can stop, kill and restart it without touching the
 * shared services. Everything started here is tracked; `destroy()` (and, as a last resort,
 * an exit hook) stops it and removes its folder.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceGate } from './services.ts';
import { READY_BOUND_MS, waitFor } from './wait-for.ts';

const READY_TIMEOUT_MS = READY_BOUND_MS;

/** A TCP port free on 127.0.0.1 right now: bind port 0, note what the kernel gave, close. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Gates tests on a program being installed: skip on a laptop, fail under CI=true. */
export function programGate(found: boolean, what: string): ServiceGate {
  if (found) return { value: 'found', skip: false };
  if (process.env.CI === 'true') throw new Error(`${what} is not installed, and CI=true forbids skipping the tests that need it`);
  return { value: undefined, skip: `${what} is not installed` };
}

function onPath(program: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && existsSync(join(dir, program)));
}

// Last resort if a test file ends without destroying what it started.
const leftovers = new Set<() => void>();
process.once('exit', () => {
  for (const kill of leftovers) kill();
});

function run(command: string, args: readonly string[], timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

/** The newest installed PostgreSQL's binaries (Debian layout), if any. */
function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'bin', 'initdb')) && existsSync(join(root, name, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

const PG_BIN = postgresBinaries();

export const privatePostgresGate = (): ServiceGate => programGate(PG_BIN !== undefined, 'PostgreSQL (initdb, pg_ctl)');

export interface PrivatePostgres {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly adminUrl: string;
  /** The cluster's data directory (to damage files in it while the server is stopped). */
  readonly dataDir: string;
  /** Starts the server again on the same port and data, waiting until it accepts connections. */
  start(): Promise<void>;
  /** `fast`: clean shutdown (clients are told so). `immediate`: like a crash (recovery at the next start). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /**
   * `kill -STOP` of the postmaster and every backend: connections stay open and nothing
   * answers, as with a frozen VM or a stalled disk. Only this private server is signalled.
   */
  freeze(): void;
  /** `kill -CONT` of everything `freeze` stopped, and of the postmaster's children now. */
  thaw(): void;
  /** Stops the server (if running) and removes its folder. */
  destroy(): Promise<void>;
}

/** The processes whose parent is `pid`, from /proc (field 4 of /proc/<pid>/stat). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name (field 2) may hold spaces; fields after its closing parenthesis are plain.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === pid) children.push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return children;
}

/**
 * Creates a cluster in a temp folder and starts it on a spare port: trust authentication,
 * loopback only, fsync off (speed; nothing here must survive a power cut). PostgreSQL refuses
 * to run as root, so as root every command runs as the `postgres` user.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  if (PG_BIN === undefined) throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql');
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-pg-'));
  const data = join(dir, 'data');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const pg = (program: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(PG_BIN, program), ...args]) : run(join(PG_BIN, program), args);

  const killLeftover = () => {
    try {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0) process.kill(pid, 'SIGKILL');
    } catch {
      // Not running.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  leftovers.add(killLeftover);

  const port = await freePort();
  let running = false;
  const start = async () => {
    await pg('pg_ctl', [
      '-D', data, '-l', join(dir, 'server.log'), '-w', '-t', String(READY_TIMEOUT_MS / 1000),
      '-o', `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c max_connections=50`,
      'start',
    ]);
    running = true;
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    await pg('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', String(READY_TIMEOUT_MS / 1000), 'stop']);
    running = false;
  };

  try {
    await pg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '--no-instructions']);
    await start();
  } catch (error) {
    killLeftover();
    leftovers.delete(killLeftover);
    throw error;
  }

  const postmaster = () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const signal = (pids: readonly number[], name: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(pid, name);
      } catch {
        // Ended meanwhile.
      }
    }
  };
  const frozen = new Set<number>();
  const thaw = () => {
    signal([...frozen], 'SIGCONT');
    frozen.clear();
  };
  // A test that fails while the server is frozen must not leave it stopped for destroy().
  leftovers.add(thaw);

  return {
    port,
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir: data,
    start,
    stop,
    freeze() {
      // The postmaster first, so that it starts no new backend meanwhile.
      const main = postmaster();
      signal([main], 'SIGSTOP');
      frozen.add(main);
      const backends = childrenOf(main);
      signal(backends, 'SIGSTOP');
      for (const pid of backends) frozen.add(pid);
    },
    thaw,
    async destroy() {
      thaw();
      if (running) await stop('immediate').catch(() => undefined);
      killLeftover();
      leftovers.delete(killLeftover);
      leftovers.delete(thaw);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Redis

export const privateRedisGate = (): ServiceGate => programGate(onPath('redis-server'), 'redis-server');

export interface PrivateRedis {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** `kill -9`: the server is gone at once, with whatever it held. */
  kill9(): Promise<void>;
  /** Starts a fresh server (it keeps nothing on disk) on the same port. */
  start(): Promise<void>;
  /** Kills the server (if running) and removes its folder. */
  destroy(): Promise<void>;
}

/** Whether something on `port` answers PING with PONG right now. */
function answersPing(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.setTimeout(500, () => socket.destroy());
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) socket.end();
    });
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(reply.startsWith('+PONG')));
  });
}

/** Resolves once the server answers PING; rejects if it exits first or after the timeout. */
async function waitForPong(port: number, child: ChildProcess): Promise<void> {
  await waitFor(
    () => {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error('redis-server exited at start');
      return answersPing(port);
    },
    `redis-server to answer PING on port ${port}`,
    { timeoutMs: READY_TIMEOUT_MS, intervalMs: 20 },
  );
}

/** Starts `redis-server` on a spare port, persisting nothing. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const killLeftover = () => {
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  leftovers.add(killLeftover);

  const start = async () => {
    const server = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'warning'],
      { stdio: 'ignore' },
    );
    child = server;
    exited = new Promise((resolve) => server.once('exit', () => resolve()));
    try {
      await waitForPong(port, server);
    } catch (error) {
      server.kill('SIGKILL');
      await exited;
      throw error;
    }
  };
  const kill9 = async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  };

  try {
    await start();
  } catch (error) {
    killLeftover();
    leftovers.delete(killLeftover);
    throw error;
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill9,
    start,
    async destroy() {
      await kill9();
      killLeftover();
      leftovers.delete(killLeftover);
    },
  };
}
