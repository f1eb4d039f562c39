/**
 * Shared pieces of the security tests: an app on its own SQLite file whose contents can be
 * read behind the app's back (to prove that a refused request wrote nothing), the contract's
 * error form, and a raw socket for requests that `app.inject` cannot express.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { TestContext } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.ts';
import type { Config } from '../../src/config.ts';
import { openSqliteStore } from '../../src/store/sqlite/store.ts';
import type { Store } from '../../src/store/store.ts';
import { tempDir, testConfig } from '../helpers/app.ts';
import { WAIT_BOUND_MS } from '../helpers/wait-for.ts';
import type { Account } from '../../src/http/schemas.ts';

export const TEXT = 'text/plain; charset=utf-8';
export const HTML = 'text/html; charset=utf-8';

export interface SecurityApp {
  readonly app: FastifyInstance;
  readonly store: Store;
  readonly config: Config;
  /** The SQLite file behind the app, for reading it directly; undefined in memory. */
  readonly databasePath: string | undefined;
}

/** Where the clean-up of an app goes: a test's context, or a suite's list of them (see suiteCleanup). */
export type CleanupOwner = Pick<TestContext, 'after'>;

/**
 * For apps shared by the tests of a suite (built in its `before` hook): a CleanupOwner whose
 * clean-ups run, last registered first, when the returned function is called from its `after`.
 */
export function suiteCleanup(): { owner: CleanupOwner; run(): Promise<void> } {
  const cleanups: (() => unknown)[] = [];
  return {
    owner: { after: (fn) => void cleanups.push(fn as () => unknown) },
    async run() {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    },
  };
}

/**
 * A fresh app on its own SQLite database, closed and removed when the test (or suite, see
 * suiteCleanup) ends: a file by default, or `:memory:` (the same SQL, a fifth of the set-up
 * cost) when nothing needs to read the file from outside.
 */
export async function securityApp(
  t: CleanupOwner,
  overrides: Partial<Config> = {},
  { memory = false }: { memory?: boolean } = {},
): Promise<SecurityApp> {
  const dir = memory ? undefined : tempDir('shortlink-security-');
  const databasePath = dir === undefined ? undefined : join(dir.path, 'test.db');
  const config = testConfig(overrides);
  const store = await openSqliteStore({ path: databasePath ?? ':memory:', checkpointer: false });
  let app: FastifyInstance | undefined;
  // Registered before building, so a failing build still releases the store and its folder.
  t.after(async () => {
    await app?.close();
    await store.close();
    dir?.remove();
  });
  app = await buildApp({ config, store });
  await app.ready();
  return { app, store, config, databasePath };
}

/**
 * Everything the database holds, read over a second connection: the schema (names of tables
 * and indexes, so a dropped table shows), every account row and every link row. Two equal
 * snapshots mean nothing was written in between.
 */
export function snapshot(databasePath: string | undefined): string {
  if (databasePath === undefined) throw new Error('snapshot needs a database file');
  const db = new DatabaseSync(databasePath, { readOnly: true });
  try {
    const schema = db.prepare("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name").all();
    const accounts = db.prepare('SELECT uid, code_hash, date_created, max_links, link_count FROM accounts ORDER BY uid').all();
    const links = db.prepare('SELECT id, short_code, points_to, created_by, accesses, date_created FROM links ORDER BY id').all();
    return JSON.stringify({ schema, accounts, links });
  } finally {
    db.close();
  }
}

/** Table names in the database, for checking that nothing was dropped. */
export function tableNames(databasePath: string | undefined): string[] {
  if (databasePath === undefined) throw new Error('tableNames needs a database file');
  const db = new DatabaseSync(databasePath, { readOnly: true });
  try {
    return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[])
      .map((row) => row.name);
  } finally {
    db.close();
  }
}

/** Asserts the contract's error body: one line `Unable to <operation>: <reason>`, no stack. */
export function assertErrorBody(body: string, operation: string, context = ''): void {
  const prefix = `Unable to ${operation}: `;
  assert.ok(body.startsWith(prefix), `${context}: body ${JSON.stringify(body.slice(0, 200))} should start with ${JSON.stringify(prefix)}`);
  assert.ok(body.length > prefix.length, `${context}: the error names a reason`);
  assert.doesNotMatch(body, /[\r\n]/, `${context}: one line`);
  assert.doesNotMatch(body, /\bat .+:\d+:\d+|SQLITE|SELECT |INSERT |node_modules/, `${context}: no stack, no SQL`);
}

/** Asserts a plain-text contract error on an injected response (HEAD answers carry no body). */
export function assertInjectedError(
  response: LightMyRequestResponse,
  status: number,
  operation: string,
  context: string,
  method = 'GET',
): void {
  assert.ok(response.statusCode < 500, `${context}: never a 5xx, got ${response.statusCode}: ${response.body}`);
  assert.equal(response.statusCode, status, `${context}: expected ${status}, got ${response.statusCode}: ${response.body}`);
  assert.equal(response.headers['content-type'], TEXT, `${context}: plain text`);
  assert.equal(response.headers['x-content-type-options'], 'nosniff', `${context}: nosniff`);
  if (method !== 'HEAD') assertErrorBody(response.body, operation, context);
}

/** Asserts the short-URL space's HTML 404 page, with no redirect anywhere. */
export function assertNotFoundPage(status: number, headers: Record<string, unknown>, body: string, context: string): void {
  assert.equal(status, 404, `${context}: expected the HTML 404, got ${status}: ${body.slice(0, 200)}`);
  assert.equal(headers['content-type'], HTML, `${context}: HTML`);
  assert.equal(headers.location, undefined, `${context}: no redirect`);
  assert.match(body, /<html[\s>]/, `${context}: a page`);
  assert.doesNotMatch(body, /Unable to/, `${context}: not an error line`);
}

export interface RawReply {
  /** 0 when the server closed the connection without answering. */
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly elapsedMs: number;
}

/**
 * Writes `data` (already a whole request, or several) on a fresh connection and reads until
 * the server closes it. Headers are lower-cased; a repeated header keeps its last value. The
 * bound is generous (the 5 s it used to be is short on a loaded machine): no test waits it out.
 */
export function rawExchange(port: number, data: string | Buffer | readonly (string | Buffer)[], timeoutMs = WAIT_BOUND_MS): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => {
      for (const part of Array.isArray(data) ? data : [data]) socket.write(part);
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer and no close within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A reset after the answer (the server closing while the client still writes) is fine.
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ ...parseResponse(Buffer.concat(chunks).toString('latin1')), elapsedMs: performance.now() - started });
    });
  });
}

/** Parses one HTTP/1.1 response (body as UTF-8). */
export function parseResponse(raw: string): Omit<RawReply, 'elapsedMs'> {
  if (raw === '') return { status: 0, headers: {}, body: '' };
  const end = raw.indexOf('\r\n\r\n');
  const head = end === -1 ? raw : raw.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = end === -1 ? '' : Buffer.from(raw.slice(end + 4), 'latin1').toString('utf8');
  return { status: Number(statusLine.split(' ')[1] ?? 0), headers, body };
}

/** Listens on an ephemeral loopback port; the app's own close() stops it. */
export async function listenLocal(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as { port: number }).port;
}

/** Creates an account through the API. */
export async function account(app: FastifyInstance): Promise<{ code: string; uid: number }> {
  const response = await app.inject({ method: 'GET', url: '/v1/new_account' });
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json() as Account;
  return { code: body.AccessCode, uid: body.Uid };
}
