/**
 * The one place that chooses how live events cross processes (ADR 19): Redis pub/sub when
 * REDIS_URL is set, else PostgreSQL LISTEN/NOTIFY on PostgreSQL, else the cluster primary for
 * WORKERS > 1 on SQLite, else nothing (one process: in-process only).
 */
import cluster from 'node:cluster';
import type { Config } from '../config.ts';
import { createClusterTransport } from './cluster-transport.ts';
import { createLiveEvents, type LiveEventsHub, type LiveTransport } from './live-events.ts';
import { createPostgresTransport } from './postgres-transport.ts';
import { createRedisTransport } from './redis-transport.ts';

export function liveTransportFor(
  config: Pick<Config, 'redisUrl' | 'redisPrefix' | 'storage' | 'workers'>,
  onError: (error: unknown) => void,
): LiveTransport | undefined {
  if (config.redisUrl !== undefined) return createRedisTransport({ url: config.redisUrl, prefix: config.redisPrefix, onError });
  if (config.storage.kind === 'postgres') return createPostgresTransport({ url: config.storage.url, onError });
  if (config.workers > 1 && cluster.isWorker) return createClusterTransport();
  return undefined;
}

export function createLiveEventsFor(
  config: Pick<Config, 'redisUrl' | 'redisPrefix' | 'storage' | 'workers'>,
  onError: (error: unknown) => void,
): LiveEventsHub {
  return createLiveEvents({ transport: liveTransportFor(config, onError), onError });
}
