import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { Counters } from '../../src/rate-limit/counters.ts';
import { givenCounters } from '../../src/rate-limit/create-counters.ts';
import type { Account } from '../../src/http/schemas.ts';
import { openSqliteStore } from '../../src/store/sqlite/store.ts';
import type { Store } from '../../src/store/store.ts';

export const TEST_BASE_URL = 'http://sl.test';

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

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  config: Config;
  close(): Promise<void>;
}

/** An app on its own SQLite file in a temp folder; close() removes everything. */
export async function createTestApp(
  overrides: Partial<Config> = {},
  { counters, ...extra }: { clock?: () => Date; logStream?: { write(line: string): void }; counters?: Counters } = {},
): Promise<TestApp> {
  const dir = tempDir();
  const config = testConfig(overrides);
  const store = await openSqliteStore({ path: join(dir.path, 'test.db') });
  const app = await buildApp({ config, store, ...extra, ...(counters === undefined ? {} : { counters: givenCounters(counters) }) });
  await app.ready();
  return {
    app,
    store,
    config,
    async close() {
      await app.close();
      await store.close();
      dir.remove();
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
