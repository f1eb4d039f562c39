/**
 * Gates tests that need an outside service. With the variable set they run against it; on
 * a laptop without it they skip with a one-line reason; under CI=true a missing service is
 * a failure, never a skip.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

export interface ServiceGate {
  /** The variable's value, when set. */
  readonly value: string | undefined;
  /** Pass as node:test's `skip` option: false when the service is there. */
  readonly skip: string | false;
}

export function serviceGate(variable: string, what: string): ServiceGate {
  const value = process.env[variable]?.trim() || undefined;
  if (value !== undefined) return { value, skip: false };
  if (process.env.CI === 'true') {
    throw new Error(`${what} tests need ${variable}, and CI=true forbids skipping them`);
  }
  return { value: undefined, skip: `${what}: set ${variable} to run these tests` };
}

export const postgresGate = (): ServiceGate => serviceGate('TEST_DATABASE_URL', 'PostgreSQL');
export const redisGate = (): ServiceGate => serviceGate('TEST_REDIS_URL', 'Redis');

/** A short random name part, unique enough for parallel test files and runs. */
export function uniqueSuffix(): string {
  return `${process.pid}_${randomBytes(4).toString('hex')}`;
}

/**
 * A fresh database on the server named by `adminUrl`, for one test file or test.
 * `drop()` removes it, disconnecting anything still attached.
 */
export async function createPostgresDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `shortlink_test_${uniqueSuffix()}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async drop() {
      const cleaner = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await cleaner.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await cleaner.end();
      }
    },
  };
}
