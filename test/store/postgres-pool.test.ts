/**
 * The PostgreSQL connection budget (issue 13, item 7): PG_POOL_MAX bounds the connections
 * one process opens, requests beyond it wait instead of failing, and a server that refuses
 * a new connection for a connection limit makes requests wait for a pooled one, not 503.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/open-store.ts';
import { newAccount, testConfig } from '../helpers/app.ts';
import { createPostgresDatabase, postgresGate, uniqueSuffix } from '../helpers/services.ts';

const gate = postgresGate();

/** 50 requests at once through the app: creates, resolutions and account reads. */
async function fiftyAtOnce(url: string, poolMax: number, observe: () => Promise<void>) {
  const storage = { kind: 'postgres', url, poolMax, prepare: true } as const;
  const config = testConfig({ storage, defaultMaxLinks: 1000 });
  const store = await openStore(storage);
  const app = await buildApp({ config, store });
  try {
    await app.ready();
    const { code } = await newAccount(app);
    const auth = { authorization: `Bearer ${code}` };
    const first = await app.inject({ method: 'POST', url: '/v1/link?url=https://example.com/', headers: auth });
    assert.equal(first.statusCode, 200, first.body);
    const shortCode = new URL(first.body).pathname.slice(1);
    let done = false;
    const watching = (async () => {
      while (!done) {
        await observe();
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => {
      switch (i % 3) {
        case 0: return app.inject({ method: 'POST', url: `/v1/link?url=https://example.com/${i}`, headers: auth });
        case 1: return app.inject({ method: 'GET', url: `/v1/get/${shortCode}` });
        default: return app.inject({ method: 'GET', url: '/v1/get_account', headers: auth });
      }
    }));
    done = true;
    await watching;
    const failed = responses.filter((response) => response.statusCode >= 400).map((response) => `${response.statusCode} ${response.body}`);
    assert.deepEqual(failed, [], 'no request fails');
  } finally {
    await app.close();
    await store.close();
  }
}

describe('PostgreSQL connection budget', { skip: gate.skip }, () => {
  let database: { url: string; drop(): Promise<void> };
  let observer: postgres.Sql;
  before(async () => {
    database = await createPostgresDatabase(gate.value!);
    observer = postgres(gate.value!, { max: 1, onnotice: () => {} });
  });
  after(async () => {
    await observer?.end();
    await database?.drop();
  });

  test('with PG_POOL_MAX=2, 50 concurrent requests all succeed on at most 2 server connections', { timeout: 300_000 }, async () => {
    const name = new URL(database.url).pathname.slice(1);
    let most = 0;
    await fiftyAtOnce(database.url, 2, async () => {
      const [row] = await observer<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${name} AND application_name = 'shortlink'`;
      most = Math.max(most, row!.n);
    });
    assert.ok(most >= 1, 'the observer saw the pool');
    assert.ok(most <= 2, `at most 2 server connections, saw ${most}`);
  });

  test('a role connection limit below PG_POOL_MAX makes requests wait for a pooled connection, not fail', { timeout: 300_000 }, async () => {
    const role = `shortlink_limited_${uniqueSuffix()}`;
    const limited = await createPostgresDatabase(gate.value!);
    const name = new URL(limited.url).pathname.slice(1);
    await observer.unsafe(`CREATE ROLE "${role}" LOGIN CONNECTION LIMIT 2`);
    try {
      await observer.unsafe(`ALTER DATABASE "${name}" OWNER TO "${role}"`);
      const url = new URL(limited.url);
      url.username = role;
      let most = 0;
      // The pool would open 8; the server refuses the third with "too many connections for role".
      await fiftyAtOnce(url.href, 8, async () => {
        const [row] = await observer<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = ${role}`;
        most = Math.max(most, row!.n);
      });
      assert.ok(most <= 2, `the server never let the role hold more than 2, saw ${most}`);
    } finally {
      await limited.drop();
      await observer.unsafe(`DROP ROLE IF EXISTS "${role}"`);
    }
  });
});
