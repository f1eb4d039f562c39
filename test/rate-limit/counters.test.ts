/**
 * The rate-limit counters. One contract (`countersContract`) states what every counter store does —
 * a fixed window from a key's first event, reset once it ends, `peek` that never counts,
 * independent keys, distinct counts under concurrency — and runs against the memory counters
 * (with an injected clock) and the Redis counters (against TEST_REDIS_URL). Each has a few
 * tests of its own: the memory counters' bounded map, and Redis's shared count, key prefix
 * and fallback to memory.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { createMemoryCounters, type Counters, type WindowState } from '../../src/rate-limit/counters.ts';
import { createRedisClient, createRedisCounters } from '../../src/rate-limit/redis-counters.ts';
import { redisGate, uniqueSuffix } from '../helpers/services.ts';
import { waitFor } from '../helpers/wait-for.ts';

const MINUTE = 60_000;

/** What a backend hands the contract for one test. */
interface CountersHarness {
  readonly counters: Counters;
  /** Lets `ms` of time pass as far as the counters' windows are concerned. */
  elapse(ms: number): Promise<void>;
  /**
   * How far a reported `resetMs` may fall short of the exact value: 0 with an injected
   * clock; on a real server, real time passes between the call and the check.
   */
  readonly slackMs: number;
  close(): Promise<void>;
}

/** Asserts `state` is `count` events with `resetMs` remaining, give or take the harness's slack. */
function assertWindow(harness: CountersHarness, state: WindowState, count: number, resetMs: number, message?: string): void {
  assert.equal(state.count, count, message);
  assert.ok(
    state.resetMs <= resetMs && state.resetMs >= resetMs - harness.slackMs,
    `${message ?? 'window'}: resetMs ${state.resetMs} should be ${resetMs}${harness.slackMs > 0 ? ` (−${harness.slackMs})` : ''}`,
  );
}

function countersContract(name: string, open: () => Promise<CountersHarness>, options: { skip?: string | false } = {}): void {
  describe(`counters contract: ${name}`, { skip: options.skip ?? false }, () => {
    /** Runs `body` with a fresh harness, closed afterwards whatever happens. */
    const withHarness = (body: (h: CountersHarness) => Promise<void>) => async () => {
      const harness = await open();
      try {
        await body(harness);
      } finally {
        await harness.close();
      }
    };

    test(
      'counts the events of a key from 1, within one window that starts at the first event',
      withHarness(async (h) => {
        assertWindow(h, await h.counters.hit('a', MINUTE), 1, MINUTE, 'first hit');
        assertWindow(h, await h.counters.hit('a', MINUTE), 2, MINUTE, 'second hit');
        assertWindow(h, await h.counters.hit('a', MINUTE), 3, MINUTE, 'third hit');
      }),
    );

    test(
      'keeps the window fixed: later hits neither extend nor restart it',
      withHarness(async (h) => {
        await h.counters.hit('a', MINUTE);
        await h.elapse(20_000);
        assertWindow(h, await h.counters.hit('a', MINUTE), 2, 40_000, 'twenty seconds in');
        // A longer window named by a later hit does not stretch the one already running.
        assertWindow(h, await h.counters.hit('a', 10 * MINUTE), 3, 40_000, 'with a longer window asked for');
        await h.elapse(39_000);
        assertWindow(h, await h.counters.hit('a', MINUTE), 4, 1000, 'one second before the end');
      }),
    );

    test(
      'starts a new window, counting from 1 again, once the old one has ended',
      withHarness(async (h) => {
        for (let i = 0; i < 5; i++) await h.counters.hit('a', MINUTE);
        await h.elapse(MINUTE);
        assert.deepEqual(await h.counters.peek('a'), { count: 0, resetMs: 0 }, 'nothing is left of the old window');
        assertWindow(h, await h.counters.hit('a', 30_000), 1, 30_000, 'the new window has the length asked for now');
        assertWindow(h, await h.counters.hit('a', 30_000), 2, 30_000);
      }),
    );

    test(
      'peek reads a window without counting',
      withHarness(async (h) => {
        assert.deepEqual(await h.counters.peek('a'), { count: 0, resetMs: 0 }, 'an unknown key is an empty window');
        assert.deepEqual(await h.counters.peek('a'), { count: 0, resetMs: 0 }, 'peeking did not start a window');
        await h.counters.hit('a', MINUTE);
        await h.counters.hit('a', MINUTE);
        await h.elapse(15_000);
        assertWindow(h, await h.counters.peek('a'), 2, 45_000, 'peek');
        assertWindow(h, await h.counters.peek('a'), 2, 45_000, 'peek again');
        assertWindow(h, await h.counters.hit('a', MINUTE), 3, 45_000, 'the next hit');
      }),
    );

    test(
      'counts every key on its own',
      withHarness(async (h) => {
        await h.counters.hit('acct:203.0.113.7', MINUTE);
        await h.counters.hit('acct:203.0.113.7', MINUTE);
        await h.elapse(10_000);
        assertWindow(h, await h.counters.hit('acct:203.0.113.8', MINUTE), 1, MINUTE, 'another address');
        assertWindow(h, await h.counters.hit('auth:203.0.113.7', MINUTE), 1, MINUTE, 'another policy');
        assertWindow(h, await h.counters.hit('acct:203.0.113.7', MINUTE), 3, 50_000, 'the first key');
      }),
    );

    test(
      'hands concurrent hits distinct counts',
      withHarness(async (h) => {
        const states = await Promise.all(Array.from({ length: 50 }, () => h.counters.hit('hot', MINUTE)));
        assert.deepEqual(
          states.map((state) => state.count).sort((x, y) => x - y),
          Array.from({ length: 50 }, (_, i) => i + 1),
        );
      }),
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Memory

/** Memory counters on a clock the test moves. */
function memoryHarness(maxKeys?: number): CountersHarness & { clock: { now: number } } {
  const clock = { now: 1_000_000 };
  const counters = createMemoryCounters({ now: () => clock.now, ...(maxKeys === undefined ? {} : { maxKeys }) });
  return {
    clock,
    counters,
    slackMs: 0,
    async elapse(ms) {
      clock.now += ms;
    },
    close: () => counters.close(),
  };
}

countersContract('memory', async () => memoryHarness());

describe('memory counters', () => {
  test('holds at most maxKeys windows, dropping the oldest window first', async () => {
    const h = memoryHarness(3);
    try {
      await h.counters.hit('a', MINUTE);
      await h.elapse(1);
      await h.counters.hit('b', MINUTE);
      await h.elapse(1);
      await h.counters.hit('c', MINUTE);
      // Another hit on `a` does not make its window any younger.
      await h.counters.hit('a', MINUTE);
      await h.counters.hit('d', MINUTE);
      assert.equal((await h.counters.peek('a')).count, 0, 'the oldest window was dropped');
      assert.equal((await h.counters.peek('b')).count, 1);
      assert.equal((await h.counters.peek('c')).count, 1);
      assert.equal((await h.counters.peek('d')).count, 1);
      // A thousand rotating keys later, the map still holds three.
      for (let i = 0; i < 1000; i++) await h.counters.hit(`rotating-${i}`, MINUTE);
      const held = ['b', 'c', 'd', 'rotating-996', 'rotating-997', 'rotating-998', 'rotating-999'];
      const counts = await Promise.all(held.map(async (key) => (await h.counters.peek(key)).count));
      assert.deepEqual(counts, [0, 0, 0, 0, 1, 1, 1]);
    } finally {
      await h.close();
    }
  });

  test('a key whose window ended takes a fresh place among the kept windows', async () => {
    const h = memoryHarness(2);
    try {
      await h.counters.hit('a', 1000);
      await h.counters.hit('b', MINUTE);
      await h.elapse(1000);
      // `a` ended: its next hit starts a window younger than b's, so c evicts b, not a.
      assertWindow(h, await h.counters.hit('a', MINUTE), 1, MINUTE);
      await h.counters.hit('c', MINUTE);
      assert.equal((await h.counters.peek('a')).count, 1);
      assert.equal((await h.counters.peek('b')).count, 0);
      assert.equal((await h.counters.peek('c')).count, 1);
    } finally {
      await h.close();
    }
  });

  test('sweeps ended windows once a minute, so they take no room from live ones', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const h = memoryHarness(2);
    try {
      await h.counters.hit('long', 10 * MINUTE);
      await h.counters.hit('short', 1000);
      await h.elapse(2000);
      t.mock.timers.tick(MINUTE);
      // Without the sweep the map would still be full, and `new` would evict `long`.
      await h.counters.hit('new', MINUTE);
      assert.equal((await h.counters.peek('long')).count, 1, 'the live window is kept');
      assert.equal((await h.counters.peek('new')).count, 1);
    } finally {
      await h.close();
    }
  });

  test('forgets every window on close', async () => {
    const h = memoryHarness();
    await h.counters.hit('a', MINUTE);
    await h.close();
    assert.deepEqual(await h.counters.peek('a'), { count: 0, resetMs: 0 });
  });
});

// ---------------------------------------------------------------------------------------------
// Redis

const gate = redisGate();
/** Every key this file writes starts with this; all of it is deleted at the end. */
const RUN_PREFIX = `shortlink:test:${uniqueSuffix()}:`;
const clients: Redis[] = [];
let harnesses = 0;

async function connectedClient(): Promise<Redis> {
  const client = createRedisClient(gate.value!);
  clients.push(client);
  await client.connect();
  return client;
}

/** Deletes every key under `prefix`. */
async function deleteKeys(client: Redis, prefix: string): Promise<number> {
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await client.del(...keys);
  } while (cursor !== '0');
  return deleted;
}

const refuseFallback = (error: unknown) => {
  throw new Error(`the Redis counters fell back to memory: ${String(error)}`);
};

/**
 * A Redis counters on its own prefix. Time is simulated by shortening every key's expiry
 * (the only clock a window has in Redis), so the contract runs without waiting.
 */
async function redisHarness(): Promise<CountersHarness> {
  const client = await connectedClient();
  const prefix = `${RUN_PREFIX}${++harnesses}:`;
  const fallback = createMemoryCounters();
  const counters = createRedisCounters(client, prefix, fallback, refuseFallback);
  return {
    counters,
    slackMs: 1000,
    async elapse(ms) {
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) {
          const ttl = await client.pttl(key);
          if (ttl < 0) continue;
          if (ttl - ms <= 0) await client.del(key);
          else await client.pexpire(key, ttl - ms);
        }
      } while (cursor !== '0');
    },
    async close() {
      await counters.close();
      await deleteKeys(client, prefix);
    },
  };
}

countersContract('redis', redisHarness, { skip: gate.skip });

describe('redis counters', { skip: gate.skip }, () => {
  after(async () => {
    if (clients.length === 0) return;
    const leftover = await deleteKeys(clients[0]!, RUN_PREFIX);
    for (const client of clients) client.disconnect();
    assert.equal(leftover, 0, 'every test removed its own keys');
  });

  test('two counter stores on one prefix (two instances of the service) share one count', async () => {
    const prefix = `${RUN_PREFIX}shared:`;
    const [one, two] = [await connectedClient(), await connectedClient()];
    const first = createRedisCounters(one, prefix, createMemoryCounters(), refuseFallback);
    const second = createRedisCounters(two, prefix, createMemoryCounters(), refuseFallback);
    try {
      assert.equal((await first.hit('acct:203.0.113.7', MINUTE)).count, 1);
      assert.equal((await second.hit('acct:203.0.113.7', MINUTE)).count, 2);
      assert.equal((await first.hit('acct:203.0.113.7', MINUTE)).count, 3);
      assert.equal((await second.peek('acct:203.0.113.7')).count, 3);
      // Racing from both sides still hands out distinct counts.
      const racing = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? first : second).hit('acct:203.0.113.7', MINUTE)),
      );
      assert.deepEqual(
        racing.map((state) => state.count).sort((x, y) => x - y),
        Array.from({ length: 40 }, (_, i) => i + 4),
      );
      assert.equal((await first.peek('acct:203.0.113.7')).count, 43);
    } finally {
      await first.close();
      await second.close();
      await deleteKeys(one, prefix);
    }
  });

  test('counter stores on different prefixes (two deployments on one Redis) do not share counts', async () => {
    const client = await connectedClient();
    const blue = createRedisCounters(client, `${RUN_PREFIX}blue:`, createMemoryCounters(), refuseFallback);
    const green = createRedisCounters(client, `${RUN_PREFIX}green:`, createMemoryCounters(), refuseFallback);
    try {
      await blue.hit('k', MINUTE);
      await blue.hit('k', MINUTE);
      assert.equal((await green.hit('k', MINUTE)).count, 1);
      assert.equal(await client.get(`${RUN_PREFIX}blue:k`), '2', 'the key is the prefix followed by the counter key');
    } finally {
      await blue.close();
      await green.close();
      await deleteKeys(client, `${RUN_PREFIX}blue:`);
      await deleteKeys(client, `${RUN_PREFIX}green:`);
    }
  });

  test('a window ends by Redis\'s own expiry', async () => {
    const client = await connectedClient();
    const prefix = `${RUN_PREFIX}expiry:`;
    const counters = createRedisCounters(client, prefix, createMemoryCounters(), refuseFallback);
    try {
      await counters.hit('k', 300);
      await counters.hit('k', 300);
      const state = await waitFor(
        async () => {
          const now = await counters.peek('k');
          return now.count === 0 && now;
        },
        'the window to end by expiry',
        { timeoutMs: 5000, intervalMs: 25 },
      );
      assert.deepEqual(state, { count: 0, resetMs: 0 }, 'the window ended within 5 s');
      assert.equal((await counters.hit('k', MINUTE)).count, 1);
    } finally {
      await counters.close();
      await deleteKeys(client, prefix);
    }
  });

  test('a counter found without an expiry gets the window it should have had', async () => {
    const client = await connectedClient();
    const prefix = `${RUN_PREFIX}no-expiry:`;
    const counters = createRedisCounters(client, prefix, createMemoryCounters(), refuseFallback);
    try {
      // As a PERSIST, a restore from a dump or a hand edit could leave it.
      await client.set(`${prefix}k`, '7');
      const state = await counters.hit('k', MINUTE);
      assert.equal(state.count, 8);
      assert.ok(state.resetMs > MINUTE - 1000 && state.resetMs <= MINUTE, `resetMs ${state.resetMs}`);
      assert.ok((await client.pttl(`${prefix}k`)) > 0, 'the key expires');
    } finally {
      await counters.close();
      await deleteKeys(client, prefix);
    }
  });
});

describe('redis counters without a reachable Redis', () => {
  test('falls back to the memory counters at once, and reports why', async () => {
    // A port nobody listens on: bind one, note it, close it.
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address() as { port: number };
        server.close(() => resolve(address.port));
      });
    });
    const client = createRedisClient(`redis://127.0.0.1:${port}`);
    client.on('error', () => {}); // reconnect attempts report here; the counters reports below
    const reasons: unknown[] = [];
    const counters = createRedisCounters(client, 'shortlink:unreachable:', createMemoryCounters(), (error) => reasons.push(error));
    try {
      const started = performance.now();
      const counts = [];
      for (let i = 0; i < 3; i++) counts.push((await counters.hit('k', MINUTE)).count);
      assert.deepEqual(counts, [1, 2, 3], 'the fallback counts');
      assert.equal((await counters.peek('k')).count, 3, 'peek reads the fallback too');
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 400, `no waiting for Redis: four calls took ${Math.round(elapsed)} ms`);
      assert.equal(reasons.length, 4);
      assert.ok(reasons.every((reason) => reason instanceof Error));
    } finally {
      await counters.close();
      client.disconnect();
    }
  });
});
