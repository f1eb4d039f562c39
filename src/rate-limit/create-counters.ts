/**
 * The one place that decides where rate-limit windows are counted: Redis when REDIS_URL is
 * set (shared by every instance, with this process's memory as the fallback while Redis is
 * away), otherwise this process's memory, or nowhere when rate limiting is off.
 */
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { ReadinessCheck } from '../http/routes/health.ts';
import { createMemoryCounters, type Counters } from './counters.ts';
import { createRedisClient, createRedisCounters } from './redis-counters.ts';

/** Where the counters' connection reports: the app's logger. */
export interface CountersLog {
  info(message: string): void;
  warn(object: object, message: string): void;
}

/** The counters, what `/readyz` should ask about them, and their lifecycle. */
export interface RateLimitCounters {
  /** Undefined when nothing is counted (rate limiting off, no Redis). */
  readonly counters: Counters | undefined;
  /** Checks for `/readyz` besides the store's: Redis when configured. */
  readonly readiness: readonly ReadinessCheck[];
  /** Connects to Redis, if any; resolves even when Redis is down (the fallback then counts). */
  connect(log: CountersLog): Promise<void>;
  close(): Promise<void>;
}

/** Redis is reported away at most this often while it stays away. */
const WARNING_INTERVAL_MS = 10_000;

export function createCounters(config: Pick<Config, 'rateLimit' | 'redisUrl' | 'redisPrefix'>): RateLimitCounters {
  if (config.redisUrl === undefined) {
    const counters = config.rateLimit ? createMemoryCounters() : undefined;
    return { counters, readiness: [], connect: async () => {}, close: async () => counters?.close() };
  }
  return redisCounters(createRedisClient(config.redisUrl), config.redisPrefix);
}

/**
 * Redis is optional: when it is down at start or later, counts fall back to this process's
 * memory and the service keeps answering; the client reconnects on its own. It is created
 * even with rate limiting off, so that `/readyz` reports it the same way either way.
 */
function redisCounters(redis: Redis, prefix: string): RateLimitCounters {
  // Set by connect(): until the app's logger is known, a fallback goes unreported.
  let warn: (error: unknown) => void = () => {};
  const counters = createRedisCounters(redis, `${prefix}rl:`, createMemoryCounters(), (error) => warn(error));
  return {
    counters,
    // Reported, but only degrades the answer: the service works without it (ReadinessCheck.required).
    readiness: [{ name: 'redis', required: false, check: async () => void (await redis.ping()) }],
    async connect(log) {
      let lastWarning = 0;
      warn = (error) => {
        if (Date.now() - lastWarning < WARNING_INTERVAL_MS) return;
        lastWarning = Date.now();
        log.warn({ err: error }, 'Redis unavailable; using per-process rate limits');
      };
      redis.on('error', warn);
      redis.on('ready', () => log.info('Redis connected'));
      try {
        await redis.connect();
      } catch (error) {
        warn(error);
      }
    },
    async close() {
      redis.disconnect();
      await counters.close();
    },
  };
}

/** Counters the caller made and closes itself (tests: memory counters on a fake clock). */
export function givenCounters(counters: Counters): RateLimitCounters {
  return { counters, readiness: [], connect: async () => {}, close: async () => {} };
}
