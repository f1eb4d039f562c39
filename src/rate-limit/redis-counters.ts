import { Redis } from 'ioredis';
import type { Counters, WindowState } from './counters.ts';

// INCR and the expiry of a new window in one atomic step, so every instance sees one count.
const HIT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`;

const PEEK = `
local count = redis.call('GET', KEYS[1])
if not count then return {0, 0} end
return {tonumber(count), redis.call('PTTL', KEYS[1])}`;

/**
 * Counters shared by every instance through Redis. When Redis cannot be reached the counters
 * falls back to `fallback` (this process's memory) instead of failing requests: limits then
 * hold per instance until Redis answers again.
 */
export function createRedisCounters(redis: Redis, prefix: string, fallback: Counters, onFallback: (error: unknown) => void): Counters {
  const toState = (reply: unknown): WindowState => {
    const [count, ttl] = reply as [number, number];
    return { count, resetMs: Math.max(0, ttl) };
  };
  return {
    async hit(key, windowMs) {
      try {
        return toState(await redis.eval(HIT, 1, prefix + key, windowMs));
      } catch (error) {
        onFallback(error);
        return fallback.hit(key, windowMs);
      }
    },
    async peek(key) {
      try {
        return toState(await redis.eval(PEEK, 1, prefix + key));
      } catch (error) {
        onFallback(error);
        return fallback.peek(key);
      }
    },
    async close() {
      await fallback.close();
    },
  };
}

/**
 * A Redis client that fails fast instead of queueing: when Redis is down, commands reject
 * at once (and the counters fall back to memory) while the client keeps reconnecting.
 */
export function createRedisClient(url: string): Redis {
  return new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(100 * attempt, 2000),
  });
}
