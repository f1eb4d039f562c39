import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBatcher } from '../../src/store/batcher.ts';
import { StorageTimeoutError } from '../../src/store/deadline.ts';
import { DomainError, ErrorCode } from '../../src/errors.ts';

/** Asserts that `error` is the storage deadline's storage-unavailable error. */
function assertTimedOut(error: unknown): void {
  assert.ok(error instanceof DomainError, String(error));
  assert.equal(error.code, ErrorCode.StorageUnavailable);
  assert.equal(error.retryAfter, 1);
  assert.ok(error.cause instanceof StorageTimeoutError);
}

describe('createBatcher', () => {
  test('calls made in one turn run as one batch, answered in order', async () => {
    const batches: number[][] = [];
    const batcher = createBatcher<number, number>(async (items) => {
      batches.push([...items]);
      return items.map((n) => n * 10);
    });
    const answers = await Promise.all([1, 2, 3].map((n) => batcher.run(n)));
    assert.deepEqual(answers, [10, 20, 30]);
    assert.deepEqual(batches, [[1, 2, 3]]);
  });

  test('calls made while a batch runs form the next batch; one batch at a time', async () => {
    const batches: number[][] = [];
    let running = 0;
    let mostAtOnce = 0;
    const { promise: firstStarted, resolve: signalStart } = Promise.withResolvers<void>();
    const { promise: released, resolve: release } = Promise.withResolvers<void>();
    const batcher = createBatcher<number, number>(async (items) => {
      running++;
      mostAtOnce = Math.max(mostAtOnce, running);
      batches.push([...items]);
      signalStart();
      // The first batch stays open until 2 and 3 have been called, however slow the machine.
      await released;
      running--;
      return items;
    });
    const first = batcher.run(1);
    // Wait for the batch itself rather than a fixed delay: on a busy machine a 5 ms timer
    // could fire before the batch started, and 2 and 3 would join it.
    await firstStarted;
    const later = [batcher.run(2), batcher.run(3)];
    release();
    await Promise.all([first, ...later]);
    assert.deepEqual(batches, [[1], [2, 3]]);
    assert.equal(mostAtOnce, 1);
  });

  test('a failed batch fails every item, and is not run again, unless the error allows it', async () => {
    const batches: string[][] = [];
    const batcher = createBatcher<string, string>(async (items) => {
      batches.push([...items]);
      throw new Error('connection lost');
    });
    const results = await Promise.allSettled(['a', 'b'].map((item) => batcher.run(item)));
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected']);
    assert.deepEqual(batches, [['a', 'b']]);
  });

  test('when a batch is refused with a retryable error, each item runs alone and only the bad one fails', async () => {
    const batches: string[][] = [];
    const batcher = createBatcher<string, string>(async (items) => {
      batches.push([...items]);
      if (items.includes('bad')) throw new Error('refused');
      return items.map((item) => item.toUpperCase());
    }, { retryAlone: (error) => (error as Error).message === 'refused' });
    const results = await Promise.allSettled(['a', 'bad', 'c'].map((item) => batcher.run(item)));
    assert.deepEqual(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)), ['A', 'refused', 'C']);
    assert.deepEqual(batches[0], ['a', 'bad', 'c']);
    assert.deepEqual(batches.slice(1).sort(), [['a'], ['bad'], ['c']]);
  });

  test('drain settles only after every call made so far is answered', async () => {
    const answered: number[] = [];
    const { promise: released, resolve: release } = Promise.withResolvers<void>();
    const batcher = createBatcher<number, number>(async (items) => {
      await released;
      return items;
    });
    for (const n of [1, 2, 3]) void batcher.run(n).then((value) => answered.push(value));
    // The batch can only finish after drain() has been called.
    const drained = batcher.drain();
    release();
    await drained;
    await Promise.resolve(); // the .then callbacks above run after the answers
    assert.deepEqual(answered, [1, 2, 3]);
  });

  describe('with a storage deadline', () => {
    test('a call queued behind a batch that never ends answers 503 at the deadline and is never run', async () => {
      const batches: string[][] = [];
      const { promise: never } = Promise.withResolvers<string[]>();
      const { promise: firstStarted, resolve: signalStart } = Promise.withResolvers<void>();
      const batcher = createBatcher<string, string>((items) => {
        batches.push([...items]);
        signalStart();
        return never;
      }, { timeoutMs: 100 });
      const first = batcher.run('sent');
      await firstStarted;
      const started = performance.now();
      const queued = batcher.run('queued');
      const results = await Promise.allSettled([first, queued]);
      const waited = performance.now() - started;
      for (const result of results) {
        assert.equal(result.status, 'rejected');
        assertTimedOut(result.reason);
      }
      assert.ok(waited >= 90 && waited < 1000, `answered after ${waited.toFixed(0)} ms`);
      assert.deepEqual(batches, [['sent']], 'the queued call was withdrawn, not run');
    });

    test('a call whose batch is running answers 503 at the deadline; the batch is told, and its late result is dropped', async () => {
      let signal: AbortSignal | undefined;
      const { promise: release, resolve: finish } = Promise.withResolvers<void>();
      const batcher = createBatcher<string, string>(async (items, batchSignal) => {
        signal = batchSignal;
        await release;
        return items.map((item) => item.toUpperCase());
      }, { timeoutMs: 50 });
      const call = batcher.run('late');
      const outcome = await Promise.allSettled([call]);
      assert.equal(outcome[0]!.status, 'rejected');
      assertTimedOut((outcome[0] as PromiseRejectedResult).reason);
      assert.equal(signal?.aborted, true, "the running batch's signal is aborted");
      finish();
      await batcher.drain();
      // A call after the late batch is served normally.
      assert.equal(await batcher.run('next'), 'NEXT');
    });

    test('calls answered by the deadline are not run again one by one after a refused batch', async () => {
      const batches: string[][] = [];
      const { promise: release, resolve: finish } = Promise.withResolvers<void>();
      const batcher = createBatcher<string, string>(async (items) => {
        batches.push([...items]);
        if (items.length > 1) {
          await release;
          throw new Error('refused');
        }
        return items;
      }, { timeoutMs: 50, retryAlone: () => true });
      const results = await Promise.allSettled([batcher.run('a'), batcher.run('b')]);
      for (const result of results) assertTimedOut((result as PromiseRejectedResult).reason);
      finish();
      await batcher.drain();
      assert.deepEqual(batches, [['a', 'b']]);
    });

    test('calls answered in time are unaffected, and no timer keeps the process alive', async () => {
      const batcher = createBatcher<number, number>(async (items) => items.map((n) => n + 1), { timeoutMs: 5000 });
      assert.deepEqual(await Promise.all([1, 2, 3].map((n) => batcher.run(n))), [2, 3, 4]);
    });

    test('drain gives up on a batch that never ends once its calls are answered by their deadline (a frozen database at shutdown)', async () => {
      let release = (): void => undefined;
      const batcher = createBatcher<number, number>(
        (items) => new Promise((resolve) => { release = () => resolve(items.map((n) => n)); }),
        { timeoutMs: 30 },
      );
      const calls = [1, 2].map((n) => batcher.run(n).then(() => assert.fail('answered'), assertTimedOut));
      await batcher.drain();
      await Promise.all(calls);
      release();
    });

    test('drain still waits for a running batch whose calls are not answered yet', async () => {
      let release = (): void => undefined;
      const batcher = createBatcher<number, number>(
        (items) => new Promise((resolve) => { release = () => resolve(items.map((n) => n * 2)); }),
        { timeoutMs: 5000 },
      );
      const call = batcher.run(4);
      let drained = false;
      const draining = batcher.drain().then(() => { drained = true; });
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(drained, false);
      release();
      await draining;
      assert.equal(await call, 8);
    });
  });
});
