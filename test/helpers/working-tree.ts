/**
 * Tests never use the working tree's `data/`: that is where `npm start` keeps a developer's
 * database, and a test that reads it passes or fails by what happens to be there. Two guards:
 *
 * - `assertDatabaseOutsideWorkingTree()`, called by every helper that spawns a server or the
 *   CLI, refuses to start a process whose database would lie inside the checkout;
 * - `data-dir-guard.ts` (the npm scripts' --test-global-setup) fails the run if `data/`
 *   changed while the tests ran, in files no running server holds (`watchDataDir()`): a
 *   developer's `npm start` may go on serving from `data/` while the tests run.
 */
import { readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config.ts';

/** The repository root, found from this file rather than the working directory. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where `npm start` keeps its database by default. */
export const DATA_DIR = join(REPO_ROOT, 'data');

function insideWorkingTree(path: string): boolean {
  const fromRoot = relative(REPO_ROOT, path);
  return !fromRoot.startsWith('..') && !isAbsolute(fromRoot);
}

/**
 * Throws unless the database a process started with `env` in `cwd` would open (DATABASE_URL,
 * or the default ./data/shortlinks.db) is a PostgreSQL URL or a file outside the checkout.
 */
export function assertDatabaseOutsideWorkingTree(env: Readonly<Record<string, string | undefined>>, cwd: string): void {
  let storage;
  try {
    // Only DATABASE_URL: whatever else is wrong with the environment does not matter here.
    ({ storage } = loadConfig({ DATABASE_URL: env.DATABASE_URL }));
  } catch {
    return; // it names no database: the process refuses to start without opening one
  }
  if (storage.kind !== 'sqlite') return;
  const path = resolve(cwd, storage.path);
  if (insideWorkingTree(path)) {
    throw new Error(
      `a test would start a process on the database ${path}, inside the working tree; ` +
        'give it a DATABASE_URL in a temp folder (or run it in one)',
    );
  }
}

/**
 * What `data/` holds: each file's and folder's path (relative to it), size and modification
 * time. A folder's time changes when an entry is added or removed, so a file made and
 * deleted again between two snapshots (a journal) shows too.
 */
export function snapshotDataDir(dir: string = DATA_DIR): ReadonlyMap<string, string> {
  const entries = new Map<string, string>();
  const walk = (folder: string) => {
    const stat = statSync(folder, { throwIfNoEntry: false });
    if (stat === undefined || !stat.isDirectory()) return;
    entries.set(relative(dir, folder) || '.', `folder, modified ${stat.mtime.toISOString()}`);
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      const entry = statSync(path, { throwIfNoEntry: false });
      if (entry === undefined) continue;
      if (entry.isDirectory()) walk(path);
      else entries.set(relative(dir, path), `${entry.size} bytes, modified ${entry.mtime.toISOString()}`);
    }
  };
  walk(dir);
  return entries;
}

interface Change {
  /** Relative to the folder; `.` is the folder itself. */
  readonly path: string;
  readonly line: string;
}

function snapshotChanges(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): Change[] {
  const changes: Change[] = [];
  for (const [path, state] of after) {
    const was = before.get(path);
    if (was === undefined) changes.push({ path, line: `created ${path}` });
    else if (was !== state) changes.push({ path, line: `changed ${path} (${was} → ${state})` });
  }
  for (const path of before.keys()) if (!after.has(path)) changes.push({ path, line: `removed ${path}` });
  return changes;
}

/** The differences between two snapshots, one line each; empty when nothing changed. */
export function dataDirChanges(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  return snapshotChanges(before, after).map((change) => change.line);
}

/** `dir` as the kernel names it in /proc (symbolic links resolved), whether or not it exists yet. */
function canonical(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    const parent = dirname(dir);
    return parent === dir ? dir : join(canonical(parent), basename(dir));
  }
}

/**
 * The files under `dir` that running processes hold open, by path relative to `dir`, with
 * the pids (and command names) holding each: a server's database, WAL and shared-memory file.
 * Read from Linux's /proc; empty where there is none (then nothing counts as a server's).
 */
export function filesHeldOpen(dir: string = DATA_DIR): ReadonlyMap<string, readonly string[]> {
  const root = canonical(dir);
  const held = new Map<string, string[]>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return held;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (!target.startsWith(root + sep)) continue;
      const path = relative(root, target.replace(/ \(deleted\)$/, ''));
      const holder = `${pid} (${commandOf(pid)})`;
      const holders = held.get(path) ?? [];
      if (!holders.includes(holder)) holders.push(holder);
      held.set(path, holders);
    }
  }
  return held;
}

function commandOf(pid: string): string {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return command.length > 80 ? `${command.slice(0, 79)}…` : command;
  } catch {
    return '?';
  }
}

export interface DataDirWatch {
  /**
   * What changed in the folder since watchDataDir(), split in two: `unexplained`, which
   * fails a test run, and `explained`, changes to files a running process held open at the
   * start or holds now (a developer's server: its database, WAL and shared-memory file, and
   * the folder itself, whose time changes when the server creates or removes the latter two).
   */
  changes(): { readonly unexplained: readonly string[]; readonly explained: readonly string[] };
}

/**
 * Starts watching `dir` (the working tree's data/ by default). A test run starts no process
 * before it begins and leaves none behind, so a process holding a file there at either end is
 * not the tests': its writes are explained. Anything else (a file a test created, or changed
 * and closed again) is not.
 */
export function watchDataDir(dir: string = DATA_DIR): DataDirWatch {
  const before = snapshotDataDir(dir);
  const heldBefore = filesHeldOpen(dir);
  return {
    changes() {
      const held = new Map([...heldBefore, ...filesHeldOpen(dir)]);
      const unexplained: string[] = [];
      const explained: string[] = [];
      for (const { path, line } of snapshotChanges(before, snapshotDataDir(dir))) {
        const holders = held.get(path);
        if (holders !== undefined) explained.push(`${line}, held open by ${holders.join(', ')}`);
        else if (path === '.' && held.size > 0) explained.push(`${line}, beside files a running process holds`);
        else unexplained.push(line);
      }
      return { unexplained, explained };
    },
  };
}
