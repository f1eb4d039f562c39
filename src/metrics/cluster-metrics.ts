/**
 * `/metrics` under `WORKERS=n`: a scrape reaches one worker, but must describe the whole
 * process group. The worker that got the scrape asks the primary, which collects every
 * worker's registry over the cluster channel (prom-client's AggregatorRegistry) and sums
 * them (counters and histogram buckets add up; each metric names its own aggregator).
 */
import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

const REQUEST = 'shortlink:metrics-request';
const ANSWER = 'shortlink:metrics-answer';
/** prom-client gives up on a worker after 5 s; the asking worker waits a little longer. */
const ANSWER_TIMEOUT_MS = 6_000;

interface MetricsRequest {
  readonly type: typeof REQUEST;
  readonly id: number;
}

interface MetricsAnswer {
  readonly type: typeof ANSWER;
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

/** In the primary: answers workers' requests for the whole group's exposition. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: MetricsRequest) => {
    if (message?.type !== REQUEST) return;
    const reply = (answer: Omit<MetricsAnswer, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: ANSWER, id: message.id, ...answer } satisfies MetricsAnswer);
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
    );
  });
}

/**
 * In a worker: offers `registry` to the primary's collection, and returns how to render the
 * group's exposition (through the primary).
 */
export function clusterExposition(registry: Registry): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one installs prom-client's listener that answers the primary's collection.
  new AggregatorRegistry();
  let next = 0;
  const pending = new Map<number, { resolve(text: string): void; reject(error: Error): void }>();
  process.on('message', (message: MetricsAnswer) => {
    if (message?.type !== ANSWER) return;
    const waiter = pending.get(message.id);
    if (waiter === undefined) return;
    pending.delete(message.id);
    if (message.text !== undefined) waiter.resolve(message.text);
    else waiter.reject(new Error(`the primary could not collect the workers' metrics: ${message.error ?? 'no answer'}`));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the primary did not answer for the workers' metrics within ${ANSWER_TIMEOUT_MS} ms`));
      }, ANSWER_TIMEOUT_MS);
      pending.set(id, {
        resolve: (text) => {
          clearTimeout(timer);
          resolve(text);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      process.send!({ type: REQUEST, id } satisfies MetricsRequest, undefined, undefined, (error: Error | null) => {
        if (error === null) return;
        const waiter = pending.get(id);
        pending.delete(id);
        waiter?.reject(new Error(`could not ask the primary for the workers' metrics: ${error.message}`));
      });
    });
}
