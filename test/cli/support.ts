/**
 * Runs the CLI as a user would, in its own process (`node src/cli/main.ts …` on this Node), with
 * an environment of the test's choosing, and seeds databases through the server's own store.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashAccessCode, newAccessCode } from '../../src/accounts/access-code.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { READY_BOUND_MS } from '../helpers/wait-for.ts';
import { assertDatabaseOutsideWorkingTree, REPO_ROOT } from '../helpers/working-tree.ts';

export const CLI_ENTRY = join(REPO_ROOT, 'src', 'cli', 'main.ts');

// Variables the CLI (or the configuration it loads) reads: the parent's must not leak in.
const CLI_VARIABLES = [
  'PORT', 'HOST', 'BASE_URL', 'DATABASE_URL', 'REDIS_URL', 'REDIS_PREFIX', 'DEFAULT_MAX_LINKS', 'RATE_LIMIT', 'LOG_LEVEL',
  'SQLITE_SYNCHRONOUS', 'RATE_LIMIT_EXEMPT', 'RATE_LIMIT_NEW_ACCOUNT', 'RATE_LIMIT_FAILED_AUTH', 'RATE_LIMIT_CREATE_LINK',
  'RATE_LIMIT_RESOLVE', 'RATE_LIMIT_UNKNOWN_CODE', 'RATE_LIMIT_CREATE_WEBHOOK', 'RATE_LIMIT_PASSWORD', 'RATE_LIMIT_IPV6_PREFIX', 'TRUST_PROXY', 'BLOCKED_HOSTS', 'BLOCKED_HOSTS_FILE', 'WORKERS',
  'REDIRECT_STATUS', 'METRICS_TOKEN', 'MAX_CONNECTIONS', 'SHUTDOWN_DELAY', 'SHORTLINK_ACCESS_CODE', 'SHORTLINK_SERVER',
];

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  /** Added to a clean environment; `undefined` removes a variable. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where the CLI runs; by default a fresh empty temp folder, so that the default database
   * (./data/shortlinks.db) is never the working tree's. */
  readonly cwd?: string;
  /** Written to the CLI's stdin, which is then closed. */
  readonly input?: string;
  readonly timeoutMs?: number;
  /** Run this program with these leading arguments instead of `node src/cli/main.ts`. */
  readonly command?: readonly [string, ...string[]];
}

export function cliEnvironment(overrides: RunOptions['env'] = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CLI_VARIABLES) delete env[name];
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Runs `shortlink <args>` to completion. */
export function runCli(args: readonly string[], options: RunOptions = {}): Promise<CliResult> {
  const [program, ...leading] = options.command ?? [process.execPath, CLI_ENTRY];
  const scratch = options.cwd === undefined ? mkdtempSync(join(tmpdir(), 'shortlink-cli-cwd-')) : undefined;
  const cwd = options.cwd ?? scratch!;
  const env = cliEnvironment(options.env);
  assertDatabaseOutsideWorkingTree(env, cwd);
  return new Promise<CliResult>((resolve, reject) => {
    const child = spawn(program, [...leading, ...args], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`shortlink ${args.join(' ')} did not finish in time\n${stdout}\n${stderr}`));
    }, options.timeoutMs ?? READY_BOUND_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    // A command that fails before it reads its input closes the pipe: EPIPE here is its
    // answer, not the test's failure (the exit code and stderr say what happened).
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  }).finally(() => {
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  });
}

/** A temp folder removed by `remove()`. */
export function tempFolder(): { readonly path: string; file(name: string): string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), 'shortlink-cli-'));
  return { path, file: (name) => join(path, name), remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface SeedLink {
  readonly short: string;
  readonly url: string;
  /** Resolutions to count before the test looks. */
  readonly resolutions?: number;
  readonly title?: string;
  readonly tags?: readonly string[];
  readonly expiresAt?: string;
  readonly maxVisits?: number;
  readonly forwardQuery?: boolean;
  /** As stored: the `rules` parameter's JSON, e.g. `[{"if":{"os":["ios"]},"to":"https://…"}]`. */
  readonly rules?: string;
}

export interface SeededAccount {
  readonly uid: number;
  readonly accessCode: string;
}

/**
 * Opens the database named like DATABASE_URL (a SQLite path or postgres://…) with the server's
 * own store, so seeded data is exactly what the service would have written.
 */
export async function openDatabase(databaseUrl: string): Promise<Store> {
  return /^postgres(ql)?:/.test(databaseUrl)
    ? openStore({ kind: 'postgres', url: databaseUrl, poolMax: 10, prepare: true })
    : openStore({ kind: 'sqlite', path: databaseUrl, synchronous: 'normal' }, { checkpointer: false });
}

/** Creates an account holding the given links, with their accesses counted. */
export async function seedAccount(store: Store, links: readonly SeedLink[], maxLinks = 20): Promise<SeededAccount> {
  const accessCode = newAccessCode();
  const account = await store.createAccount({ codeHash: hashAccessCode(accessCode), dateCreated: new Date().toISOString(), maxLinks });
  for (const link of links) {
    const { title, tags, expiresAt, maxVisits, forwardQuery, rules } = link;
    const result = await store.createLink({
      shortCode: link.short, pointsTo: link.url, createdBy: account.uid, dateCreated: new Date().toISOString(), title, tags, expiresAt, maxVisits,
      forwardQuery, rules,
    });
    if (result !== 'created') throw new Error(`seeding ${link.short}: ${result}`);
    for (let i = 0; i < (link.resolutions ?? 0); i++) await store.resolveLink(link.short);
  }
  return { uid: account.uid, accessCode };
}

/** Parses JSONL output into objects. */
export function jsonLines<T = Record<string, unknown>>(text: string): T[] {
  return text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as T);
}
