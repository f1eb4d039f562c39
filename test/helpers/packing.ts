/**
 * Packing the two packages as `npm pack` would for a registry, from a copy of the sources in a
 * temp folder (its node_modules a link to the repository's), so that the working tree is never
 * touched: no dist/ left behind, and package.json never rewritten under other running tests.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './working-tree.ts';

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** PATH with the project's Node 24 first, as npm scripts have it. */
export const PROJECT_PATH = `${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`;

/** The machine's own Node (older than 24 on the project's machines), if there is one. */
export const SYSTEM_NODE = ['/usr/bin/node', '/usr/local/bin/node'].find((path) => {
  try {
    readdirSync(path);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOTDIR';
  }
});

/** Runs a command to its end (killed after `timeoutMs`), collecting its output. */
export function run(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? REPO_ROOT,
      env: options.env ?? { ...process.env, PATH: PROJECT_PATH },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: `${stderr}spawn failed: ${error.message}\n` });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Fails with the command's output unless it exited 0. */
export function succeeded(result: RunResult, what: string): RunResult {
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`);
  return result;
}

/** A temp folder removed by `remove()`. */
export function scratch(prefix: string): { readonly path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

function copy(from: string, to: string, entries: readonly string[]): void {
  for (const entry of entries) cpSync(join(from, entry), join(to, entry), { recursive: true });
}

/** The one tarball named `<prefix><version>.tgz` in `folder` (the prepack's output rules out --json). */
function onlyTarball(folder: string, prefix: string): string {
  const found = readdirSync(folder).filter((name) => name.startsWith(prefix) && /^[a-z-]+\d[\w.-]*\.tgz$/.test(name));
  if (found.length !== 1) throw new Error(`expected one ${prefix}*.tgz in ${folder}, found ${JSON.stringify(found)}`);
  return join(folder, found[0]!);
}

/** `npm pack` of @shortlink/client (its prepack compiles it); answers the tarball's path. */
export async function packClient(workDir: string): Promise<string> {
  const source = join(workDir, 'client-source');
  mkdirSync(source, { recursive: true });
  copy(join(REPO_ROOT, 'packages', 'client'), source, ['package.json', 'README.md', 'tsconfig.build.json', 'src']);
  const out = join(workDir, 'packs');
  mkdirSync(out, { recursive: true });
  succeeded(await run('npm', ['pack', '--pack-destination', out], { cwd: source }), 'npm pack (client)');
  return onlyTarball(out, 'shortlink-client-');
}

/** `npm pack` of the server package (its prepack compiles src/ to dist/); answers the tarball's path. */
export async function packServer(workDir: string): Promise<string> {
  const source = join(workDir, 'server-source');
  mkdirSync(join(source, 'packages', 'client'), { recursive: true });
  copy(REPO_ROOT, source, ['package.json', 'README.md', 'tsconfig.json', 'tsconfig.build.json', 'bin', 'src', 'scripts']);
  copy(join(REPO_ROOT, 'packages', 'client'), join(source, 'packages', 'client'), ['package.json', 'src']);
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(source, 'node_modules'));
  const out = join(workDir, 'packs');
  mkdirSync(out, { recursive: true });
  succeeded(await run('npm', ['pack', '--pack-destination', out], { cwd: source }), 'npm pack (server)');
  return onlyTarball(out, 'shortlink-');
}

/** The paths inside a tarball, without npm's `package/` prefix. */
export async function tarballFiles(tarball: string): Promise<string[]> {
  const listed = succeeded(await run('tar', ['-tzf', tarball]), 'tar -t');
  return listed.stdout.split('\n').filter((line) => line !== '').map((line) => line.replace(/^package\//, ''));
}
