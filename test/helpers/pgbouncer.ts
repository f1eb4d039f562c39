/**
 * A private PgBouncer (Debian's `pgbouncer` package) in transaction pooling mode, on a spare
 * loopback port, in front of a PostgreSQL server: its ini and auth files live in a temp
 * folder, and the test that starts it stops it. Gated on the binary: skipped on a laptop
 * without it, a failure under CI=true (`.ci/run` installs it).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { freePort, programGate } from './private-services.ts';
import type { ServiceGate } from './services.ts';
import { READY_BOUND_MS } from './wait-for.ts';

const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((path) => existsSync(path));
const READY_TIMEOUT_MS = READY_BOUND_MS;

export const pgbouncerGate = (): ServiceGate => programGate(PGBOUNCER !== undefined, 'pgbouncer');

export interface PrivatePgbouncer {
  readonly port: number;
  /** `upstreamUrl` with PgBouncer's address in place of the server's. */
  readonly url: string;
  /** Stops PgBouncer and removes its folder. */
  destroy(): Promise<void>;
}

export interface PgbouncerOptions {
  /** A database URL on the server behind it (trust authentication, as the test servers use). */
  readonly upstreamUrl: string;
  /** Server connections per user and database (`default_pool_size`). */
  readonly poolSize?: number;
  /**
   * Seconds PgBouncer refuses logins after one to the server failed (`server_login_retry`,
   * its default 15): a test that restarts the server often wants it shorter.
   */
  readonly serverLoginRetrySeconds?: number;
}

/** Starts PgBouncer in transaction mode, forwarding every database name to `upstreamUrl`'s server. */
export async function startPgbouncer({ upstreamUrl, poolSize = 5, serverLoginRetrySeconds = 15 }: PgbouncerOptions): Promise<PrivatePgbouncer> {
  if (PGBOUNCER === undefined) throw new Error('pgbouncer is not installed');
  const upstream = new URL(upstreamUrl);
  const user = decodeURIComponent(upstream.username) || 'postgres';
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-pgbouncer-'));
  const port = await freePort();
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`);
  writeFileSync(join(dir, 'pgbouncer.ini'), [
    '[databases]',
    // The fallback entry: any database name the client asks for, on the upstream server.
    `* = host=${upstream.hostname} port=${upstream.port || '5432'}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'userlist.txt')}`,
    'pool_mode = transaction',
    `default_pool_size = ${poolSize}`,
    `server_login_retry = ${serverLoginRetrySeconds}`,
    'max_client_conn = 500',
    `logfile = ${join(dir, 'pgbouncer.log')}`,
    '',
  ].join('\n'));
  // PgBouncer refuses to run as root; it drops to another user by itself with -u.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    for (const name of ['', 'userlist.txt', 'pgbouncer.ini']) chownSync(join(dir, name), uid, gid);
  }
  const child: ChildProcess = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = new URL(upstreamUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);

  const destroy = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // SIGINT: PgBouncer's immediate shutdown, closing its server connections.
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const log = existsSync(join(dir, 'pgbouncer.log')) ? readFileSync(join(dir, 'pgbouncer.log'), 'utf8') : '';
      await destroy();
      throw new Error(`pgbouncer exited at start:\n${log}`);
    }
    const probe = postgres(url.href, { max: 1, prepare: false, connect_timeout: 1, onnotice: () => {} });
    const ok = await probe`SELECT 1`.then(() => true, () => false);
    await probe.end({ timeout: 1 });
    if (ok) break;
    if (Date.now() > deadline) {
      await destroy();
      throw new Error(`pgbouncer did not answer on port ${port} within ${READY_TIMEOUT_MS} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { port, url: url.href, destroy };
}
