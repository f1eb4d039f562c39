/**
 * The SQLite file's filesystem misbehaving under a running server, on small filesystems
 * mounted for the test (root only):
 *
 * - **Disk full** (a 3 MiB tmpfs, then filled): writes answer 503 `Unable to <operation>:
 *   storage unavailable` with Retry-After, reads keep working, the process stays up, and
 *   writes succeed again by themselves once space returns. Afterwards `PRAGMA
 *   integrity_check` is ok, every acknowledged write is there, and stored Accesses equal the
 *   resolutions answered 200 exactly (a 503 counts nothing).
 * - **Filesystem gone read-only** (an ext4 image on a loop device, shut down with the
 *   EXT4_IOC_SHUTDOWN ioctl, as the kernel does with `errors=remount-ro` after I/O errors):
 *   every write answers 503, the process stays up and still stops on SIGTERM within 10 s;
 *   once the filesystem is mounted again the file is sound, holds every acknowledged write,
 *   and a restarted server serves it. (`mount -o remount,ro` cannot do this: Linux refuses
 *   to remount read-only while a process holds files open for writing, EBUSY; and a chmod
 *   changes nothing for a process that already has the file open, and nothing at all for
 *   root.)
 * - **Read-only at start** (the tmpfs remounted read-only while the server is stopped): the
 *   server refuses to start with one line on stderr, and starts normally once it is writable.
 *
 * Without root, or where mounting is not permitted, the tests skip with one line; under
 * CI=true that is a failure.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { programGate } from '../helpers/private-services.ts';
import type { ServiceGate } from '../helpers/services.ts';
import { cleanup, runUntilExit, startServer, tempDatabase, type ServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

const TEXT = 'text/plain; charset=utf-8';
const REQUEST_TIMEOUT_MS = 10_000;
const SHUTDOWN_LIMIT_MS = 10_000;

function run(command: string, args: readonly string[]): string {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
}

/** Root and a kernel that lets us mount: probe with a throwaway tmpfs. */
function mountGate(): ServiceGate {
  let reason: string | undefined;
  if (process.getuid?.() !== 0) {
    reason = 'mounting test filesystems needs root';
  } else {
    const probe = tempDatabase();
    try {
      run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe.dir]);
      run('umount', [probe.dir]);
    } catch (error) {
      reason = `mount is not permitted here (${(error as Error).message.split('\n')[0]})`;
    } finally {
      probe.remove();
    }
  }
  if (reason === undefined) return { value: 'root', skip: false };
  if (process.env.CI === 'true') throw new Error(`storage fault tests: ${reason}, and CI=true forbids skipping them`);
  return { value: undefined, skip: `storage fault tests: ${reason}` };
}

/** The read-only case also needs an ext4 image on a loop device, and python3 for the ioctl. */
function ext4Gate(): ServiceGate {
  if (gate.skip !== false) return gate;
  const missing = ['mkfs.ext4', 'python3', 'losetup'].filter((program) => {
    try {
      run('sh', ['-c', `command -v ${program}`]);
      return false;
    } catch {
      return true;
    }
  });
  let found = missing.length === 0;
  if (found) {
    try {
      run('losetup', ['-f']);
    } catch {
      found = false;
    }
  }
  return programGate(found, missing.length > 0 ? missing.join(', ') : 'a free loop device');
}

const mounted = new Set<string>();

function mountTmpfs(dir: string, size: string): void {
  run('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', dir]);
  mounted.add(dir);
}

function unmount(dir: string): void {
  if (!mounted.has(dir)) return;
  try {
    run('umount', [dir]);
  } catch {
    run('umount', ['-l', dir]); // something still holds it: detach now, free later
  }
  mounted.delete(dir);
}

/** Writes a file until the filesystem is full; returns its path. */
function fill(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  // The last bytes a short write could leave: fill them one by one.
  const tail = openSync(path, 'a');
  try {
    for (;;) writeSync(tail, Buffer.alloc(1));
  } catch {
    // full to the byte
  } finally {
    closeSync(tail);
  }
  return path;
}

/** EXT4_IOC_SHUTDOWN with EXT4_GOING_FLAGS_DEFAULT: flush, then refuse every further write. */
function shutDownFilesystem(dir: string): void {
  run('python3', [
    '-c',
    'import fcntl, os, struct, sys; fd = os.open(sys.argv[1], os.O_RDONLY); fcntl.ioctl(fd, 0x8004587D, struct.pack("I", 0))',
    dir,
  ]);
}

interface Reply {
  status: number;
  headers: Headers;
  text: string;
}

async function call(server: ServerProcess, path: string, init: RequestInit = {}): Promise<Reply> {
  const response = await fetch(`${server.url}${path}`, { redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...init });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

function assertUnavailable(reply: Reply, operation: string, context: string): void {
  assert.equal(reply.status, 503, `${context}: ${reply.status} ${reply.text}`);
  assert.equal(reply.headers.get('content-type'), TEXT, context);
  assert.equal(reply.headers.get('retry-after'), '1', context);
  assert.equal(reply.text, `Unable to ${operation}: storage unavailable`, context);
}

/** What the clients were told, to compare with the file afterwards. */
interface Ledger {
  readonly links: Map<string, string>;
  readonly accounts: Set<number>;
  /** Resolutions answered 200/302, per shortcode. */
  readonly answered: Map<string, number>;
}

function newLedger(): Ledger {
  return { links: new Map(), accounts: new Set(), answered: new Map() };
}

async function createLink(server: ServerProcess, code: string, short: string, url: string): Promise<Reply> {
  return call(server, `/v1/link?${new URLSearchParams({ url, short })}`, { headers: { authorization: `Bearer ${code}` } });
}

async function resolveCounted(server: ServerProcess, ledger: Ledger, short: string): Promise<Reply> {
  const reply = await call(server, `/v1/get/${short}`);
  if (reply.status === 200) ledger.answered.set(short, (ledger.answered.get(short) ?? 0) + 1);
  return reply;
}

/** Opens the file directly and checks it against the ledger. */
function checkFile(path: string, ledger: Ledger): void {
  const db = new DatabaseSync(path);
  try {
    assert.deepEqual(db.prepare('PRAGMA integrity_check').all().map((row) => ({ ...row })), [{ integrity_check: 'ok' }]);
    const links = new Map(
      (db.prepare('SELECT short_code AS code, points_to AS target, accesses FROM links').all() as { code: string; target: string; accesses: number }[])
        .map((row) => [row.code, row]),
    );
    for (const [short, target] of ledger.links) assert.equal(links.get(short)?.target, target, `acknowledged create of ${short}`);
    for (const [short, count] of ledger.answered) assert.equal(links.get(short)?.accesses, count, `${short}: stored Accesses = answered resolutions`);
    const uids = new Set((db.prepare('SELECT uid FROM accounts').all() as { uid: number }[]).map((row) => row.uid));
    for (const uid of ledger.accounts) assert.ok(uids.has(uid), `acknowledged account ${uid}`);
    const counters = db.prepare(
      'SELECT a.uid, a.link_count AS held, (SELECT count(*) FROM links l WHERE l.created_by = a.uid) AS actual FROM accounts a',
    ).all() as { uid: number; held: number; actual: number }[];
    for (const row of counters) assert.equal(row.held, row.actual, `account ${row.uid}'s link counter`);
  } finally {
    db.close();
  }
}

/** An account with a few links, some resolved; everything recorded in the ledger. */
async function seed(server: ServerProcess, ledger: Ledger): Promise<{ code: string; uid: number; shorts: string[] }> {
  const account = JSON.parse((await call(server, '/v1/new_account')).text) as { Uid: number; AccessCode: string };
  ledger.accounts.add(account.Uid);
  const shorts: string[] = [];
  for (let i = 0; i < 3; i++) {
    const short = `before-${i}`;
    const url = `https://example.org/${short}`;
    assert.equal((await createLink(server, account.AccessCode, short, url)).status, 200);
    ledger.links.set(short, url);
    shorts.push(short);
    for (let r = 0; r <= i; r++) assert.equal((await resolveCounted(server, ledger, short)).status, 200);
  }
  return { code: account.AccessCode, uid: account.Uid, shorts };
}

const gate = mountGate();
const ext4 = ext4Gate();

describe('the SQLite filesystem misbehaves under a running server', { skip: gate.skip }, () => {
  after(async () => {
    await cleanup();
    for (const dir of [...mounted]) unmount(dir);
  });

  test('disk full: writes answer 503 with Retry-After, reads go on, and writes recover by themselves when space returns', { timeout: 600_000 }, async (t) => {
    const folder = tempDatabase();
    t.after(() => {
      unmount(folder.dir);
      folder.remove();
    });
    mountTmpfs(folder.dir, '3m');
    const server = await startServer({ databasePath: folder.path, env: { DEFAULT_MAX_LINKS: '100000' } });
    const ledger = newLedger();
    const { code, shorts } = await seed(server, ledger);

    const filler = fill(folder.dir);
    // Writes may still land in space SQLite already holds; keep writing 2000-character
    // targets until the filesystem refuses one.
    let refused: Reply | undefined;
    let acceptedWhileFilling = 0;
    for (let i = 0; i < 2000 && refused === undefined; i++) {
      const short = `fill-${i}`;
      const url = `https://example.org/${short}/${'x'.repeat(1950)}`;
      const reply = await createLink(server, code, short, url);
      if (reply.status === 200) {
        ledger.links.set(short, url);
        acceptedWhileFilling++;
      } else {
        refused = reply;
      }
    }
    assert.ok(refused !== undefined, 'a full disk refuses a write');
    assertUnavailable(refused, 'create link', 'create on a full disk');
    t.diagnostic(`${acceptedWhileFilling} creates fitted in space SQLite already held before the first 503`);
    // Readiness follows the writes, not a `SELECT 1` that a full disk still answers.
    const unready = await call(server, '/readyz');
    assert.equal(unready.status, 503, `readyz on a full disk: ${unready.text}`);
    assert.equal(unready.text, 'Unable to handle request: storage unavailable');

    // Further writes of every kind: each either fits in what the failed ones gave back (200,
    // recorded) or is refused the same way; never a 500, and the process stays up.
    const auth = { authorization: `Bearer ${code}` };
    let refusals = 1;
    for (let i = 0; i < 10; i++) {
      const short = `full-${i}`;
      const url = `https://example.org/${short}/${'y'.repeat(1900)}`;
      const reply = await createLink(server, code, short, url);
      if (reply.status === 200) ledger.links.set(short, url);
      else {
        assertUnavailable(reply, 'create link', short);
        refusals++;
      }
    }
    const account = await call(server, '/v1/new_account', { method: 'POST' });
    if (account.status === 200) ledger.accounts.add((JSON.parse(account.text) as { Uid: number }).Uid);
    else {
      assertUnavailable(account, 'create account', 'new_account');
      refusals++;
    }
    const removal = await call(server, `/v1/link?short=${shorts[2]}`, { method: 'DELETE', headers: auth });
    if (removal.status === 200) {
      ledger.links.delete(shorts[2]!);
      ledger.answered.delete(shorts[2]!);
    } else {
      assertUnavailable(removal, 'delete link', 'delete');
      refusals++;
    }
    t.diagnostic(`${refusals} of 13 writes on the full disk answered 503`);
    assert.ok(refusals >= 5, 'a full disk keeps refusing most writes');
    // A resolution is a write (its count): 503, or 200 if its few bytes still fit. Either
    // way the ledger knows, and the file must agree exactly.
    for (let i = 0; i < 5; i++) {
      const reply = await resolveCounted(server, ledger, shorts[1]!);
      if (reply.status !== 200) assertUnavailable(reply, 'resolve link', 'resolve on a full disk');
    }
    const listed = await call(server, '/v1/links', { headers: auth });
    assert.equal(listed.status, 200, 'reading the links needs no space');
    assert.equal((JSON.parse(listed.text) as unknown[]).length, ledger.links.size);
    assert.equal((await call(server, '/v1/get_account', { headers: auth })).status, 200);
    assert.ok(server.isRunning(), 'the process stays up');

    // Space returns: the same process writes again, without a restart.
    unlinkSync(filler);
    const started = performance.now();
    await waitFor(
      async () => {
        const reply = await createLink(server, code, 'after-space', 'https://example.org/after-space');
        if (reply.status === 200) return reply;
        assertUnavailable(reply, 'create link', 'create while recovering');
        return undefined;
      },
      'writes to succeed again once space returns',
      { timeoutMs: 15_000, intervalMs: 50 },
    );
    assert.equal((await call(server, '/readyz')).status, 200, 'ready again after a write succeeded');
    ledger.links.set('after-space', 'https://example.org/after-space');
    t.diagnostic(`first write after the space returned succeeded within ${Math.round(performance.now() - started)} ms`);
    assert.equal((await resolveCounted(server, ledger, 'after-space')).status, 200);
    assert.equal((await call(server, '/v1/new_account', { method: 'POST' })).status, 200);
    assert.equal((await call(server, `/v1/link?short=${shorts[0]}`, { method: 'DELETE', headers: auth })).status, 200);
    ledger.links.delete(shorts[0]!);
    ledger.answered.delete(shorts[0]!);

    const stop = await server.stop('SIGTERM');
    assert.equal(stop.code, 0);
    assert.ok(stop.elapsedMs < SHUTDOWN_LIMIT_MS);
    checkFile(folder.path, ledger);
  });

  test('filesystem gone read-only: writes answer 503, the process stays up and stops on SIGTERM, the file is sound', { timeout: 600_000, skip: ext4.skip }, async (t) => {
    const folder = tempDatabase();
    const image = join(folder.dir, 'ext4.img');
    const mountPoint = join(folder.dir, 'mnt');
    const path = join(mountPoint, 'db.sqlite');
    t.after(() => {
      unmount(mountPoint);
      folder.remove();
    });
    run('truncate', ['-s', '32M', image]);
    run('mkfs.ext4', ['-q', '-F', image]);
    mkdirSync(mountPoint);
    run('mount', ['-o', 'loop', image, mountPoint]);
    mounted.add(mountPoint);

    let server = await startServer({ databasePath: path });
    const ledger = newLedger();
    const { code, shorts } = await seed(server, ledger);
    const auth = { authorization: `Bearer ${code}` };

    shutDownFilesystem(mountPoint);
    for (const [path, init, operation] of [
      ['/v1/link?url=https://example.org/ro&short=read-only', { headers: auth }, 'create link'],
      ['/v1/new_account', { method: 'POST' }, 'create account'],
      [`/v1/link?short=${shorts[2]}`, { method: 'DELETE', headers: auth }, 'delete link'],
      [`/v1/get/${shorts[1]}`, {}, 'resolve link'],
      [`/${shorts[1]}`, {}, 'resolve link'],
    ] as const) {
      // Twice: the first failure must not leave the connection in a state that answers 500.
      for (let i = 0; i < 2; i++) assertUnavailable(await call(server, path, init), operation, `${path} (#${i + 1})`);
    }
    // Reads are served from what is cached, or refused the same way; never a 500.
    for (const path of ['/v1/links', '/v1/get_account']) {
      const reply = await call(server, path, { headers: auth });
      assert.ok(reply.status === 200 || reply.status === 503, `${path}: ${reply.status} ${reply.text}`);
    }
    assert.ok(server.isRunning(), 'the process stays up');

    const stop = await server.stop('SIGTERM');
    t.diagnostic(`SIGTERM on a dead filesystem: exit ${stop.code} after ${Math.round(stop.elapsedMs)} ms`);
    assert.ok(stop.elapsedMs < SHUTDOWN_LIMIT_MS, 'stops within 10 s');
    assert.equal(stop.signal, null, 'exits by itself');

    // An operator remounts the filesystem (the journal is replayed) and restarts.
    unmount(mountPoint);
    run('mount', ['-o', 'loop', image, mountPoint]);
    mounted.add(mountPoint);
    checkFile(path, ledger);
    server = await startServer({ databasePath: path });
    assert.equal((await call(server, '/v1/link?url=https://example.org/ro&short=read-only', { headers: auth })).status, 200);
    assert.equal((await call(server, `/v1/get/${shorts[1]}`)).status, 200);
    assert.equal((await server.stop('SIGTERM')).code, 0);
  });

  test('read-only at start: refused in one line, and served once writable again', { timeout: 600_000 }, async (t) => {
    const folder = tempDatabase();
    t.after(() => {
      unmount(folder.dir);
      folder.remove();
    });
    mountTmpfs(folder.dir, '4m');
    const first = await startServer({ databasePath: folder.path });
    const ledger = newLedger();
    await seed(first, ledger);
    assert.equal((await first.stop('SIGTERM')).code, 0);
    assert.equal(existsSync(`${folder.path}-wal`), false, 'a clean stop leaves no WAL behind');

    run('mount', ['-o', 'remount,ro', folder.dir]);
    const refused = await runUntilExit({ databasePath: folder.path });
    assert.notEqual(refused.code, 0);
    const lines = refused.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, refused.stderr);
    assert.match(lines[0]!, /^Unable to start: cannot open the database/);

    run('mount', ['-o', 'remount,rw', folder.dir]);
    const again = await startServer({ databasePath: folder.path });
    const reply = await call(again, '/v1/get/before-2');
    assert.equal(reply.status, 200);
    ledger.answered.set('before-2', (ledger.answered.get('before-2') ?? 0) + 1);
    assert.equal(JSON.parse(reply.text).Accesses, 4);
    assert.equal((await again.stop('SIGTERM')).code, 0);
    checkFile(folder.path, ledger);
  });
});

