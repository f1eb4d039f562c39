/**
 * Live events between the processes of WORKERS > 1 without Redis or PostgreSQL (SQLite):
 * each worker sends its messages to the primary over the cluster channel, and the primary
 * passes each on to every other worker (`relayLiveMessages`, cluster.ts).
 */
import cluster, { type Worker } from 'node:cluster';
import type { LiveMessage, LiveTransport } from './live-events.ts';

/** The envelope on the cluster channel, apart from the metrics' messages. */
interface Envelope {
  readonly type: 'shortlink:live';
  readonly message: LiveMessage;
}

function isEnvelope(value: unknown): value is Envelope {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'shortlink:live';
}

export function createClusterTransport(): LiveTransport {
  let listener: ((value: unknown) => void) | undefined;
  return {
    name: 'cluster',
    async start(receive) {
      listener = (value) => {
        if (isEnvelope(value)) receive(value.message);
      };
      process.on('message', listener);
    },
    send(message) {
      // Ignoring a failure: it means the primary is gone, and this worker goes with it.
      if (process.connected) process.send!({ type: 'shortlink:live', message } satisfies Envelope, undefined, undefined, () => undefined);
    },
    async close() {
      if (listener !== undefined) process.off('message', listener);
    },
  };
}

/** In the primary: passes every worker's live messages on to the other workers. */
export function relayLiveMessages(): void {
  cluster.on('message', (from: Worker, value: unknown) => {
    if (!isEnvelope(value)) return;
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker !== undefined && worker !== from && worker.isConnected()) worker.send(value);
    }
  });
}
