/**
 * Group commit (src/store/group-commit.ts, docs/adr/0002) against a fake writer: accesses
 * counted in one turn are written together, nobody is answered before the write commits, the
 * n callers of one link get n consecutive counts in arrival order, and a failed write fails
 * its whole batch and nothing else.
 */
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createGroupCommit, GROUP_COMMIT_CHANNEL, type BatchEvent, type CountedLink } from '../../src/store/group-commit.ts';

interface Row {
  readonly code: string;
  readonly total: number;
}

/**
 * A writer over an in-memory table of counts. Each write can be held open (`hold()`) until
 * the test lets it commit, or made to fail (`failNext()`), and every write is recorded.
 */
function createFakeWriter(initial: Record<string, number>) {
  const totals = new Map(Object.entries(initial));
  const writes: Record<string, number>[] = [];
  let committed = 0;
  let held: Promise<void> | undefined;
  let failure: Error | undefined;

  async function apply(increments: ReadonlyMap<string, number>): Promise<Map<string, CountedLink<Row>>> {
    writes.push(Object.fromEntries(increments));
    if (held !== undefined) await held;
    if (failure !== undefined) {
      const error = failure;
      failure = undefined;
      throw error; // atomic: nothing of this write is kept
    }
    const results = new Map<string, CountedLink<Row>>();
    for (const [code, n] of increments) {
      const before = totals.get(code);
      if (before === undefined) continue;
      totals.set(code, before + n);
      results.set(code, { row: { code, total: before + n }, accesses: before + n });
    }
    committed++;
    return results;
  }

  return {
    apply,
    totals,
    writes,
    /** Writes committed so far. */
    committed: () => committed,
    /** Holds every write from now on until the returned function is called. */
    hold(): () => void {
      const { promise, resolve } = Promise.withResolvers<void>();
      held = promise;
      return () => {
        held = undefined;
        resolve();
      };
    },
    failNext(error: Error) {
      failure = error;
    },
  };
}

describe('createGroupCommit', () => {
  test('accesses counted in one turn are written as one batch, one increment per link', async () => {
    const writer = createFakeWriter({ a: 0, b: 5 });
    const counter = createGroupCommit(writer.apply);
    const answers = await Promise.all(['a', 'b', 'a', 'a'].map((code) => counter.count(code)));
    assert.deepEqual(writer.writes, [{ a: 3, b: 1 }]);
    assert.deepEqual(answers.map((answer) => answer?.accesses), [1, 6, 2, 3]);
    assert.deepEqual(Object.fromEntries(writer.totals), { a: 3, b: 6 });
  });

  test('nobody is answered before the batch has committed', async () => {
    const writer = createFakeWriter({ a: 0 });
    const counter = createGroupCommit(writer.apply);
    const release = writer.hold();
    const committedWhenAnswered: number[] = [];
    const pending = [1, 2, 3].map(() => counter.count('a').then((answer) => {
      committedWhenAnswered.push(writer.committed());
      return answer;
    }));
    // The batch has started and is held open: give the event loop turns in which an early
    // answer would show.
    while (writer.writes.length === 0) await nextTurn();
    for (let turn = 0; turn < 5; turn++) await nextTurn();
    assert.deepEqual(committedWhenAnswered, [], 'no answer while the write is open');
    release();
    await Promise.all(pending);
    assert.deepEqual(committedWhenAnswered, [1, 1, 1]);
  });

  test('n callers of one link get n consecutive counts in arrival order, across batches', async () => {
    const writer = createFakeWriter({ hot: 41 });
    const counter = createGroupCommit(writer.apply);
    const release = writer.hold();
    const first = Array.from({ length: 5 }, () => counter.count('hot'));
    while (writer.writes.length === 0) await nextTurn();
    // These arrive while the first batch is being written: they form the next one.
    const second = Array.from({ length: 3 }, () => counter.count('hot'));
    release();
    const counts = (await Promise.all([...first, ...second])).map((answer) => answer?.accesses);
    assert.deepEqual(counts, [42, 43, 44, 45, 46, 47, 48, 49]);
    assert.deepEqual(writer.writes, [{ hot: 5 }, { hot: 3 }], 'two batches, one after the other');
    assert.equal(writer.totals.get('hot'), 49, 'the last count handed out is the stored total');
  });

  test('each answer carries the row as the batch left it', async () => {
    const writer = createFakeWriter({ a: 9 });
    const counter = createGroupCommit(writer.apply);
    const answers = await Promise.all([counter.count('a'), counter.count('a')]);
    assert.deepEqual(answers, [
      { row: { code: 'a', total: 11 }, accesses: 10 },
      { row: { code: 'a', total: 11 }, accesses: 11 },
    ]);
  });

  test('an unknown link answers undefined without disturbing the others in its batch', async () => {
    const writer = createFakeWriter({ known: 0 });
    const counter = createGroupCommit(writer.apply);
    const answers = await Promise.all([counter.count('known'), counter.count('gone'), counter.count('known')]);
    assert.deepEqual(answers.map((answer) => answer?.accesses), [1, undefined, 2]);
    assert.equal(writer.totals.has('gone'), false);
  });

  test('a failed write fails every access of its batch with its error, and is not retried', async () => {
    const writer = createFakeWriter({ a: 0, b: 0 });
    const counter = createGroupCommit(writer.apply);
    const lost = new Error('connection lost during COMMIT');
    writer.failNext(lost);
    const results = await Promise.allSettled(['a', 'b', 'a'].map((code) => counter.count(code)));
    assert.deepEqual(results.map((result) => result.status), ['rejected', 'rejected', 'rejected']);
    for (const result of results) assert.equal((result as PromiseRejectedResult).reason, lost);
    assert.equal(writer.writes.length, 1, 'one attempt: an unknown outcome is never written twice');
  });

  test('after a failed batch the next one counts on from what is stored', async () => {
    const writer = createFakeWriter({ a: 7 });
    const counter = createGroupCommit(writer.apply);
    writer.failNext(new Error('disk full'));
    await assert.rejects(counter.count('a'), /disk full/);
    const answers = await Promise.all([counter.count('a'), counter.count('a')]);
    assert.deepEqual(answers.map((answer) => answer?.accesses), [8, 9]);
  });

  test('a failure fails only its own batch, not the one gathered behind it', async () => {
    const writer = createFakeWriter({ a: 0 });
    const counter = createGroupCommit(writer.apply);
    const release = writer.hold();
    writer.failNext(new Error('refused'));
    const doomed = counter.count('a');
    while (writer.writes.length === 0) await nextTurn();
    const next = counter.count('a');
    release();
    await assert.rejects(doomed, /refused/);
    assert.equal((await next)?.accesses, 1);
  });

  test('drain settles once every access counted so far is written', async () => {
    const writer = createFakeWriter({ a: 0 });
    const counter = createGroupCommit(writer.apply);
    const release = writer.hold();
    const answered: number[] = [];
    for (let i = 0; i < 3; i++) void counter.count('a').then((answer) => answered.push(answer!.accesses));
    const drained = counter.drain();
    release();
    await drained;
    await Promise.resolve(); // the .then callbacks above run after the answers
    assert.deepEqual(answered, [1, 2, 3]);
    assert.equal(writer.totals.get('a'), 3);
  });

  test('publishes one event per batch on its diagnostics channel, failures included', async () => {
    const events: BatchEvent[] = [];
    const listener = (message: unknown) => void events.push(message as BatchEvent);
    subscribe(GROUP_COMMIT_CHANNEL, listener);
    try {
      const writer = createFakeWriter({ a: 0 });
      const counter = createGroupCommit(writer.apply);
      await Promise.all([counter.count('a'), counter.count('a')]);
      writer.failNext(new Error('lost'));
      await assert.rejects(counter.count('a'));
    } finally {
      unsubscribe(GROUP_COMMIT_CHANNEL, listener);
    }
    assert.deepEqual(events.map(({ accesses, ok }) => ({ accesses, ok })), [{ accesses: 2, ok: true }, { accesses: 1, ok: false }]);
    for (const event of events) assert.ok(event.durationMs >= 0);
  });
});
