import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import Fastify from 'fastify';
import { buildApp, type AppDeps } from '../../src/app.ts';
import type { Config } from '../../src/config.ts';
import { registerHealthRoutes } from '../../src/http/routes/health.ts';
import { storageDamaged, storageUnavailable } from '../../src/store/errors.ts';
import type { Store } from '../../src/store/store.ts';
import { openTestStore, testConfig } from '../helpers/app.ts';
import { appFor, assertError, TEXT } from './support.ts';

/**
 * An app on a real store (of the engine the suite runs on), changed by `wrap` (e.g. a ping that throws), with its own
 * log lines collected.
 */
async function appWithStore(
  t: TestContext,
  wrap: (store: Store) => Store,
  extra: Partial<AppDeps> = {},
  overrides: Partial<Config> = {},
) {
  const opened = await openTestStore();
  const { store } = opened;
  const chunks: string[] = [];
  const app = await buildApp({
    config: testConfig(overrides),
    store: wrap(store),
    logStream: { write: (chunk: string) => void chunks.push(chunk) },
    ...extra,
  });
  await app.ready();
  t.after(async () => {
    await app.close();
    await opened.close();
  });
  return { app, lines: () => chunks.join('').split('\n').filter((line) => line !== '') };
}

const failingPing = (store: Store): Store => ({
  ...store,
  ping: async () => {
    throw new Error('SQLITE_IOERR: disk I/O error at /secret/path');
  },
});

describe('GET /healthz', () => {
  test('answers 200 ok in plain text, never cached', async (t) => {
    const { app } = await appFor(t);
    const response = await app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], TEXT);
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.equal(response.body, 'ok');
    const head = await app.inject({ method: 'HEAD', url: '/healthz' });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
  });

  test('stays 200 while the storage is down: the process itself is alive', async (t) => {
    const { app } = await appWithStore(t, failingPing);
    assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  });
});

describe('GET /readyz', () => {
  test('answers 200 ok when the storage answers', async (t) => {
    const { app } = await appFor(t);
    const response = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], TEXT);
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.equal(response.body, 'ok');
    assert.equal((await app.inject({ method: 'HEAD', url: '/readyz' })).statusCode, 200);
  });

  test('answers 503 with Retry-After when the storage does not answer, without leaking the cause', async (t) => {
    const { app } = await appWithStore(t, failingPing);
    const response = await app.inject({ method: 'GET', url: '/readyz' });
    assertError(response, 503, 'handle request');
    assert.equal(response.body, 'Unable to handle request: storage unavailable');
    assert.equal(response.headers['retry-after'], '1');
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.equal((await app.inject({ method: 'HEAD', url: '/readyz' })).statusCode, 503);
  });

  test('recovers by itself once the storage answers again', async (t) => {
    let down = true;
    const { app } = await appWithStore(t, (store) => ({
      ...store,
      ping: async () => {
        if (down) throw new Error('down');
        return store.ping();
      },
    }));
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);
    down = false;
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  });

  test('is 503 after a write failed for the storage although reads answer, until the probe write succeeds', async (t) => {
    let full = true;
    const probes: boolean[] = [];
    const { app } = await appWithStore(t, (store) => ({
      ...store,
      // A full disk: reads (and `SELECT 1`) answer, every write fails.
      createAccount: async (account) => {
        if (full) throw storageUnavailable(Object.assign(new Error('database or disk is full'), { errcode: 13 }));
        return store.createAccount(account);
      },
      ping: async (options) => {
        probes.push(options?.write === true);
        if (full && options?.write === true) throw storageUnavailable(new Error('database or disk is full'));
        return store.ping(options);
      },
    }));
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, 'no write has failed yet');
    assertError(await app.inject({ method: 'GET', url: '/v1/new_account' }), 503, 'create account');
    const unready = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(unready.statusCode, 503);
    assert.equal(unready.body, 'Unable to handle request: storage unavailable');
    assert.equal(unready.headers['retry-after'], '1', 'a full disk may be cured: try again');
    full = false;
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, 'the probe write succeeded');
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    assert.deepEqual(probes, [false, true, true, false], 'a write probe only while a write failure is unresolved');
  });

  test('a successful real write makes it ready again without a probe', async (t) => {
    let full = true;
    const { app } = await appWithStore(t, (store) => ({
      ...store,
      createAccount: async (account) => {
        if (full) throw storageUnavailable(new Error('database or disk is full'));
        return store.createAccount(account);
      },
      ping: async (options) => {
        if (options?.write === true) throw storageUnavailable(new Error('still full'));
        return store.ping(options);
      },
    }));
    assertError(await app.inject({ method: 'GET', url: '/v1/new_account' }), 503, 'create account');
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);
    full = false;
    assert.equal((await app.inject({ method: 'GET', url: '/v1/new_account' })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  });

  test('damaged storage: the API answers 503 "storage damaged" without Retry-After, /readyz stays 503 saying so, one log line', async (t) => {
    const damage = () => storageDamaged(Object.assign(new Error('invalid page in block 0 of relation base/5/16384'), { code: 'XX001' }));
    const { app, lines } = await appWithStore(t, (store) => ({
      ...store,
      resolveLink: async () => {
        throw damage();
      },
      findLink: async () => {
        throw damage();
      },
    }), {}, { logLevel: 'error' });
    for (let i = 0; i < 3; i++) {
      const response = await app.inject({ method: 'GET', url: '/v1/get/anything' });
      assertError(response, 503, 'resolve link');
      assert.equal(response.body, 'Unable to resolve link: storage damaged');
      assert.equal(response.headers['retry-after'], undefined, 'waiting will not cure it');
    }
    for (let i = 0; i < 2; i++) {
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 503, 'although the trivial query answers');
      assert.equal(ready.body, 'Unable to handle request: storage damaged');
      assert.equal(ready.headers['retry-after'], undefined);
    }
    const damaged = lines().filter((line) => line.includes('database damaged: '));
    assert.equal(damaged.length, 1, lines().join('\n'));
    assert.match(damaged[0]!, /database damaged: invalid page in block 0 of relation base\/5\/16384/);
  });

  test('fails on a required extra check, naming it', async (t) => {
    const { app } = await appWithStore(t, (store) => store, {
      readiness: [{ name: 'queue', check: () => Promise.reject(new Error('refused')) }],
    });
    const response = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(response.statusCode, 503);
    assert.equal(response.body, 'Unable to handle request: queue unavailable');
  });

  test('stays ready when an optional dependency (Redis) is away, and says so', async (t) => {
    const { app } = await appWithStore(t, (store) => store, {
      readiness: [{ name: 'redis', required: false, check: () => Promise.reject(new Error('ECONNREFUSED')) }],
    });
    const response = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.body, 'ok (redis unavailable)');
  });

  test('names every failing dependency when the storage is down too', async (t) => {
    const { app } = await appWithStore(t, failingPing, {
      readiness: [{ name: 'redis', required: false, check: () => Promise.reject(new Error('ECONNREFUSED')) }],
    });
    const response = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(response.statusCode, 503);
    assert.equal(response.body, 'Unable to handle request: storage unavailable, redis unavailable');
  });

  test('counts a check that does not answer in time as failed', async (t) => {
    const app = Fastify({ exposeHeadRoutes: false });
    t.after(() => app.close());
    registerHealthRoutes(app, { checks: [{ name: 'storage', check: () => new Promise(() => {}) }], isClosing: () => false, timeoutMs: 50 });
    const started = performance.now();
    const response = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(response.statusCode, 503);
    assert.equal(response.body, 'Unable to handle request: storage unavailable');
    assert.ok(performance.now() - started < 1000);
  });

  test('answers 503 once shutdown has begun, so load balancers stop sending requests', async () => {
    const app = Fastify({ exposeHeadRoutes: false });
    let closing = false;
    registerHealthRoutes(app, { checks: [{ name: 'storage', check: async () => {} }], isClosing: () => closing });
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    closing = true;
    const response = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(response.statusCode, 503);
    assert.equal(response.body, 'Unable to handle request: shutting down');
    await app.close();
  });
});

describe('health endpoints', () => {
  test('are never rate limited, even for a client past every limit', async (t) => {
    const tiny = { limit: 1, windowMs: 60_000 };
    const { app } = await appFor(t, {
      rateLimit: true,
      rateLimitExempt: [],
      rateLimitPolicies: { newAccount: tiny, failedAuth: tiny, createLink: tiny, resolve: tiny, unknownCode: tiny, createWebhook: tiny, password: tiny },
    });
    // Use up the limits first.
    for (let i = 0; i < 3; i++) await app.inject({ method: 'GET', url: '/v1/get/nosuchcode' });
    assert.equal((await app.inject({ method: 'GET', url: '/v1/get/nosuchcode' })).statusCode, 429);
    for (let i = 0; i < 30; i++) {
      assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    }
  });

  test('log their requests at debug, not info: probes come every few seconds', async (t) => {
    const quiet = await appWithStore(t, (store) => store, {}, { logLevel: 'info' });
    await quiet.app.inject({ method: 'GET', url: '/healthz' });
    await quiet.app.inject({ method: 'GET', url: '/readyz' });
    assert.deepEqual(quiet.lines(), []);

    const verbose = await appWithStore(t, (store) => store, {}, { logLevel: 'debug' });
    await verbose.app.inject({ method: 'GET', url: '/readyz' });
    const entries = verbose.lines().map((line) => JSON.parse(line) as { level: number; url?: string; statusCode?: number });
    const request = entries.find((entry) => entry.url === '/readyz');
    assert.ok(request, 'the request is logged at debug');
    assert.equal(request.level, 20);
    assert.equal(request.statusCode, 200);
  });
});
