/**
 * Gathers calls into batches for a database that pays per round trip and per commit
 * (PostgreSQL). Calls made while no batch is running wait for the end of the current
 * event-loop turn; calls made while one is running form the next batch. So under load a
 * batch holds everything that arrived during the previous one, and a lone call waits for
 * nothing but its own turn.
 *
 * `runBatch` answers one result per item, in order, or throws; when a batch of several
 * throws, each item is run again on its own, so one bad item (or a deadlock with another
 * instance) costs only itself a failure.
 */
export interface Batcher<I, O> {
  run(item: I): Promise<O>;
  /** Settles once every call made so far has been answered. */
  drain(): Promise<void>;
}

interface Waiting<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

export function createBatcher<I, O>(runBatch: (items: readonly I[]) => Promise<readonly O[]>): Batcher<I, O> {
  let queue: Waiting<I, O>[] = [];
  let scheduled = false;
  let inFlight: Promise<void> | undefined;

  async function settle(batch: Waiting<I, O>[]): Promise<void> {
    try {
      const results = await runBatch(batch.map((waiting) => waiting.item));
      batch.forEach((waiting, i) => waiting.resolve(results[i]!));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      await Promise.all(batch.map((waiting) => settle([waiting])));
    }
  }

  function start(): void {
    scheduled = false;
    if (inFlight !== undefined || queue.length === 0) return;
    const batch = queue;
    queue = [];
    inFlight = settle(batch).finally(() => {
      inFlight = undefined;
      start();
    });
  }

  return {
    run(item) {
      return new Promise<O>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (!scheduled && inFlight === undefined) {
          scheduled = true;
          setImmediate(start);
        }
      });
    },
    async drain() {
      while (inFlight !== undefined || queue.length > 0) {
        if (inFlight === undefined) start();
        await inFlight;
      }
    },
  };
}
