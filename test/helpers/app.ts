import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import postgres from 'postgres';
import { buildApp, type AppDeps } from '../../src/app.ts';
import { loadConfig, type Config, type StorageConfig } from '../../src/config.ts';
import type { Counters } from '../../src/rate-limit/counters.ts';
import { givenCounters } from '../../src/rate-limit/create-counters.ts';
import type { Account } from '../../src/http/schemas.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { serviceGate, uniqueSuffix } from './services.ts';

export const TEST_BASE_URL = 'http://sl.test';

/**
 * The engine under the in-process test apps: SQLite, unless SHORTLINK_TEST_ENGINE=postgres
 * (set by test/http/on-postgres-{1,2}.test.ts, which run the HTTP suite again that way), when
 * each app gets its own schema on the server named by TEST_DATABASE_URL.
 */
export const TEST_ENGINE: 'sqlite' | 'postgres' = (() => {
  const engine = process.env.SHORTLINK_TEST_ENGINE?.trim() || 'sqlite';
  if (engine !== 'sqlite' && engine !== 'postgres') {
    throw new Error(`SHORTLINK_TEST_ENGINE must be "sqlite" or "postgres", got ${JSON.stringify(engine)}`);
  }
  return engine;
})();

/** Defaults for tests: quiet, no rate limits, a fixed public address. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return Object.freeze({
    ...loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT: 'off', BASE_URL: TEST_BASE_URL }),
    ...overrides,
  });
}

/** A fresh folder under the system temp dir, removed by the returned function. */
export function tempDir(prefix = 'shortlink-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface TestDatabase {
  /** Where it is, as the configuration names a database. */
  readonly storage: StorageConfig;
  /** Removes it and everything in it. */
  remove(): Promise<void>;
}

/**
 * A fresh, empty database of TEST_ENGINE: a SQLite file in its own temp folder, or a
 * PostgreSQL schema of its own (the connection URL selects it through `search_path`, so the
 * store needs no knowledge of it), dropped with everything in it by remove().
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (TEST_ENGINE === 'sqlite') {
    const dir = tempDir();
    return {
      storage: { kind: 'sqlite', path: join(dir.path, 'test.db'), synchronous: 'normal' },
      remove: async () => dir.remove(),
    };
  }
  const serverUrl = serviceGate('TEST_DATABASE_URL', 'The HTTP suite on PostgreSQL').value;
  if (serverUrl === undefined) throw new Error('SHORTLINK_TEST_ENGINE=postgres needs TEST_DATABASE_URL');
  const schema = `shortlink_test_${uniqueSuffix()}`;
  await adminQuery(serverUrl, `CREATE SCHEMA "${schema}"`);
  const url = new URL(serverUrl);
  url.searchParams.set('search_path', schema);
  return {
    storage: { kind: 'postgres', url: url.href, poolMax: 10, prepare: true },
    remove: () => adminQuery(serverUrl, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`),
  };
}

async function adminQuery(serverUrl: string, statement: string): Promise<void> {
  const sql = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(statement);
  } finally {
    await sql.end();
  }
}

export interface TestStoreOptions {
  /**
   * SQLite: run the WAL checkpointer thread, as the server does (default false: a thread per
   * store was most of the CPU of the fast tests, and only the tests of the checkpointer need it).
   */
  readonly checkpointer?: boolean;
}

/**
 * A store on a fresh database of TEST_ENGINE, opened as the server opens it but for the
 * checkpointer (see TestStoreOptions); close() also removes the database.
 */
export async function openTestStore(
  { checkpointer = false }: TestStoreOptions = {},
): Promise<{ store: Store; storage: StorageConfig; close(): Promise<void> }> {
  const database = await createTestDatabase();
  let store: Store;
  try {
    store = await openStore(database.storage, { checkpointer });
  } catch (error) {
    await database.remove();
    throw error;
  }
  return {
    store,
    storage: database.storage,
    async close() {
      try {
        await store.close();
      } finally {
        await database.remove();
      }
    },
  };
}

export interface TestApp {
  app: FastifyInstance;
  /** The store as opened (without `wrapStore`'s changes). */
  store: Store;
  config: Config;
  close(): Promise<void>;
}

export interface TestAppExtras {
  readonly clock?: () => Date;
  readonly logStream?: { write(line: string): void };
  readonly counters?: Counters;
  /** Changes what the app sees of the store (a method that fails, say); closing stays with the real one. */
  readonly wrapStore?: (store: Store) => Store;
  /** Webhook delivery settings (a short poll, say). */
  readonly webhooks?: AppDeps['webhooks'];
  /** SQLite: run the WAL checkpointer thread (default false, see TestStoreOptions). */
  readonly checkpointer?: boolean;
  /** False: every request through Fastify, none through the short-URL fast path (AppDeps). */
  readonly fastPath?: boolean;
}

/** An app on its own fresh database (see createTestDatabase); close() removes everything. */
export async function createTestApp(overrides: Partial<Config> = {}, extra: TestAppExtras = {}): Promise<TestApp> {
  const { wrapStore = (unchanged: Store) => unchanged, counters, checkpointer, ...deps } = extra;
  const opened = await openTestStore({ checkpointer });
  const { store } = opened;
  const config = testConfig({ storage: opened.storage, ...overrides });
  let app: FastifyInstance;
  try {
    app = await buildApp({ config, store: wrapStore(store), ...deps, ...(counters === undefined ? {} : { counters: givenCounters(counters) }) });
    await app.ready();
  } catch (error) {
    await opened.close();
    throw error;
  }
  return {
    app,
    store,
    config,
    async close() {
      try {
        await app.close();
      } finally {
        await opened.close();
      }
    },
  };
}

/** Creates an account through the API and returns its access code and Uid. */
export async function newAccount(app: FastifyInstance): Promise<{ code: string; uid: number }> {
  const response = await app.inject({ method: 'GET', url: '/v1/new_account' });
  if (response.statusCode !== 200) throw new Error(`new_account answered ${response.statusCode}`);
  const body = response.json() as Account;
  return { code: body.AccessCode, uid: body.Uid };
}
