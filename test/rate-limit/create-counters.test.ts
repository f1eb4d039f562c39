/**
 * createCounters is the one place that chooses where rate-limit windows are counted. These
 * tests need no Redis: an unreachable address shows the fallback and its warning.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createCounters, type CountersLog } from '../../src/rate-limit/create-counters.ts';

const PREFIX = 'shortlink:test:';
// Nothing listens on port 1: connecting is refused at once.
const UNREACHABLE = 'redis://127.0.0.1:1';

function recordingLog(): CountersLog & { readonly warnings: string[]; readonly infos: string[] } {
  const warnings: string[] = [];
  const infos: string[] = [];
  return { warnings, infos, warn: (_object, message) => void warnings.push(message), info: (message) => void infos.push(message) };
}

describe('createCounters', () => {
  test('counts nothing when rate limiting is off and there is no Redis', async () => {
    const set = createCounters({ rateLimit: false, redisUrl: undefined, redisPrefix: PREFIX });
    assert.equal(set.counters, undefined);
    assert.deepEqual(set.readiness, []);
    await set.close();
  });

  test('counts in this process\'s memory without Redis', async () => {
    const set = createCounters({ rateLimit: true, redisUrl: undefined, redisPrefix: PREFIX });
    try {
      assert.deepEqual(set.readiness, [], 'memory needs no readiness check');
      assert.equal((await set.counters!.hit('k', 60_000)).count, 1);
      assert.equal((await set.counters!.hit('k', 60_000)).count, 2);
    } finally {
      await set.close();
    }
  });

  for (const rateLimit of [true, false]) {
    test(`with REDIS_URL (rate limiting ${rateLimit ? 'on' : 'off'}) reports Redis to /readyz as optional, and falls back to memory while it is away`, async () => {
      const set = createCounters({ rateLimit, redisUrl: UNREACHABLE, redisPrefix: PREFIX });
      const log = recordingLog();
      try {
        assert.deepEqual(set.readiness.map(({ name, required }) => ({ name, required })), [{ name: 'redis', required: false }]);
        await set.connect(log);
        assert.deepEqual(log.warnings, ['Redis unavailable; using per-process rate limits'], 'one warning for the failed connection');
        await assert.rejects(set.readiness[0]!.check(), 'the readiness check fails while Redis is away');
        assert.equal((await set.counters!.hit('k', 60_000)).count, 1, 'counted in memory');
        assert.equal((await set.counters!.hit('k', 60_000)).count, 2);
        assert.equal(log.warnings.length, 1, 'warnings are spaced out while Redis stays away');
      } finally {
        await set.close();
      }
    });
  }
});
