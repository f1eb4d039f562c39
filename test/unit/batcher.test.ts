import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBatcher } from '../../src/store/batcher.ts';

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
});
