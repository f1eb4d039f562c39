/**
 * The entry point and the only place with side effects: read the configuration, open the
 * store (and Redis when configured), build the app, listen, and shut down cleanly on SIGTERM
 * or SIGINT. With WORKERS=n this process becomes a primary that runs n such servers.
 */
import cluster from 'node:cluster';
import type { Redis } from 'ioredis';
import { buildApp } from './app.ts';
import { runPrimary } from './cluster.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createMemoryCounters, type Counters } from './rate-limit/counters.ts';
import { createRedisClient, createRedisCounters } from './rate-limit/redis-counters.ts';
import { openStore } from './store/open-store.ts';
import type { Store } from './store/store.ts';

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  fail(error instanceof ConfigError ? error.message : `Unable to start: ${String(error)}`);
}

if (config.workers > 1 && cluster.isPrimary) {
  // Open once here, so that a bad database stops the start with one line and the schema
  // and WAL mode are in place before the workers race to open the same file.
  await (await openOrFail(config)).close();
  runPrimary(config);
} else {
  await serve(config);
}

async function openOrFail(config: Config): Promise<Store> {
  try {
    return await openStore(config.storage, { soleProcess: config.workers <= 1 });
  } catch (error) {
    fail(`Unable to start: cannot open the database (${(error as Error).message.split('\n')[0]})`);
  }
}

async function serve(config: Config): Promise<void> {
  const store = await openOrFail(config);

  // Redis is optional: when it is down at start or later, limits fall back to this process's
  // memory and the service keeps answering; the client reconnects on its own.
  let redis: Redis | undefined;
  let limiter: Counters | undefined;
  let warnRedis: (error: unknown) => void = () => {};
  if (config.redisUrl !== undefined) {
    redis = createRedisClient(config.redisUrl);
    limiter = createRedisCounters(redis, `${config.redisPrefix}rl:`, createMemoryCounters(), (error) => warnRedis(error));
  }

  // /readyz always asks the store; Redis is reported too, but only degrades the answer: the
  // service works without it (see ReadinessCheck.required).
  const readiness = redis === undefined ? [] : [{ name: 'redis', required: false, check: async () => void (await redis.ping()) }];
  const app = await buildApp({ config, store, readiness, ...(limiter === undefined ? {} : { limiter }) });

  if (redis !== undefined) {
    let lastWarning = 0;
    warnRedis = (error) => {
      // At most one line every 10 s while Redis is away.
      if (Date.now() - lastWarning < 10_000) return;
      lastWarning = Date.now();
      app.log.warn({ err: error }, 'Redis unavailable; using per-process rate limits');
    };
    redis.on('error', warnRedis);
    redis.on('ready', () => app.log.info('Redis connected'));
    try {
      await redis.connect();
    } catch (error) {
      warnRedis(error);
    }
  }

  let stopping = false;
  async function stop(signal: string): Promise<void> {
    if (stopping) {
      app.log.info({ signal }, 'already shutting down');
      return;
    }
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    // If something hangs, give up before the 10 s a supervisor typically allows.
    const deadline = setTimeout(() => {
      app.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    deadline.unref();
    try {
      await app.close();
      await store.close();
      redis?.disconnect();
      app.log.info('stopped');
      process.exitCode = 0;
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exitCode = 1;
    }
    clearTimeout(deadline);
    // Everything is closed and the process ends by itself, except that a cluster worker's
    // channel to its primary would keep it alive.
    if (cluster.isWorker) process.disconnect();
  }
  // `on`, not `once`: with no listener left, a repeated signal would take Node's default action
  // and kill the process in the middle of finishing its requests.
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await store.close();
    redis?.disconnect();
    fail(`Unable to start: cannot listen on ${config.host}:${config.port} (${(error as Error).message})`);
  }
}
