/**
 * Gathers calls into batches, so that one commit (and on PostgreSQL one round trip) serves
 * many: access counts (group-commit.ts), SQLite writes (sqlite/write-batch.ts) and
 * PostgreSQL creates. Calls made while no batch is running wait for the end of the current
 * event-loop turn; calls made while one is running form the next batch. So under load a
 * batch holds everything that arrived during the previous one, and a lone call waits for
 * nothing but its own turn.
 *
 * `runBatch` answers one result per item, in order, or throws. A failure fails every item
 * of the batch, unless `retryAlone(error)` says the batch certainly left nothing behind
 * (the database refused it and rolled it back: a deadlock, a constraint): then each item
 * of a batch of several runs again on its own, so one bad item costs only itself a
 * failure. Never retry an error that leaves the outcome unknown (a connection lost around
 * COMMIT): the batch may have been applied, and running it again would apply it twice.
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

export function createBatcher<I, O>(
  runBatch: (items: readonly I[]) => Promise<readonly O[]>,
  { retryAlone = () => false }: { retryAlone?: (error: unknown) => boolean } = {},
): Batcher<I, O> {
  let queue: Waiting<I, O>[] = [];
  let scheduled = false;
  let inFlight: Promise<void> | undefined;

  async function settle(batch: Waiting<I, O>[]): Promise<void> {
    try {
      const results = await runBatch(batch.map((waiting) => waiting.item));
      batch.forEach((waiting, i) => waiting.resolve(results[i]!));
    } catch (error) {
      if (batch.length === 1 || !retryAlone(error)) {
        for (const waiting of batch) waiting.reject(error);
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
