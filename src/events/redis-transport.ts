/**
 * Live events across instances through Redis pub/sub (REDIS_URL set): one channel per
 * deployment (`REDIS_PREFIX` + `events`). Two connections, since a subscribed one can only
 * listen. Fire and forget: while Redis is away, streams see only this instance's events, and
 * the client reconnects (and resubscribes) by itself.
 */
import { Redis } from 'ioredis';
import type { LiveMessage, LiveTransport } from './live-events.ts';

export interface RedisTransportOptions {
  readonly url: string;
  /** The deployment's key prefix; the channel is `${prefix}events`. */
  readonly prefix: string;
  readonly onError?: (error: unknown) => void;
}

export function createRedisTransport({ url, prefix, onError = () => undefined }: RedisTransportOptions): LiveTransport {
  const channel = `${prefix}events`;
  const options = {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: (attempt: number) => Math.min(100 * attempt, 2000),
  } as const;
  const publisher = new Redis(url, options);
  // The subscriber queues its SUBSCRIBE until connected, and ioredis subscribes again after
  // a reconnect.
  const subscriber = new Redis(url, { ...options, enableOfflineQueue: true, autoResubscribe: true });
  publisher.on('error', onError);
  subscriber.on('error', onError);

  return {
    name: 'redis',
    async start(receive) {
      subscriber.on('message', (from: string, text: string) => {
        if (from !== channel) return;
        let message: LiveMessage;
        try {
          message = JSON.parse(text) as LiveMessage;
        } catch (error) {
          onError(error);
          return;
        }
        receive(message);
      });
      await Promise.all([
        publisher.connect().catch(onError),
        subscriber.connect().then(() => subscriber.subscribe(channel)).catch(onError),
      ]);
    },
    send(message) {
      if (publisher.status !== 'ready') return;
      publisher.publish(channel, JSON.stringify(message)).catch(onError);
    },
    async close() {
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}
