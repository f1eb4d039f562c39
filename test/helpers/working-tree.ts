/**
 * Tests never use the working tree's `data/`: that is where `npm start` keeps a developer's
 * database, and a test that reads it passes or fails by what happens to be there. Two guards:
 *
 * - `assertDatabaseOutsideWorkingTree()`, called by every helper that spawns a server or the
 *   CLI, refuses to start a process whose database would lie inside the checkout;
 * - `data-dir-guard.ts` (the npm scripts' --test-global-setup) fails the run if `data/`
 *   changed while the tests ran.
 */
import { readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
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

/** The differences between two snapshots, one line each; empty when nothing changed. */
export function dataDirChanges(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const changes: string[] = [];
  for (const [path, state] of after) {
    const was = before.get(path);
    if (was === undefined) changes.push(`created ${path}`);
    else if (was !== state) changes.push(`changed ${path} (${was} → ${state})`);
  }
  for (const path of before.keys()) if (!after.has(path)) changes.push(`removed ${path}`);
  return changes;
}
