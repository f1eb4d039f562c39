import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isBusy, retryWhileBusy } from '../../src/store/sqlite/busy.ts';

/** What node:sqlite throws when another connection holds the lock. */
const busy = () => Object.assign(new Error('database is locked'), { errcode: 5 });

describe('retryWhileBusy', () => {
  test('tries again from timers while SQLite is busy, and answers once the lock is free', async () => {
    let attempts = 0;
    const result = await retryWhileBusy(() => {
      if (++attempts < 4) throw busy();
      return 'done';
    }, 1000);
    assert.equal(result, 'done');
    assert.equal(attempts, 4);
  });

  test('gives up at the deadline with the last busy error', async () => {
    const started = performance.now();
    await assert.rejects(retryWhileBusy(() => { throw busy(); }, 200), (error) => isBusy(error));
    const waited = performance.now() - started;
    assert.ok(waited >= 190 && waited < 600, `gave up after ${waited.toFixed(0)} ms`);
  });

  test('rethrows any other error at once, without trying again', async () => {
    let attempts = 0;
    await assert.rejects(retryWhileBusy(() => {
      attempts++;
      throw new Error('constraint');
    }, 1000), /constraint/);
    assert.equal(attempts, 1);
  });

  test('never tries again once aborted, even with a retry already scheduled', async () => {
    const controller = new AbortController();
    let attempts = 0;
    const outcome = retryWhileBusy(() => {
      attempts++;
      throw busy();
    }, 5000, controller.signal);
    await sleep(30);
    const before = attempts;
    controller.abort();
    await assert.rejects(outcome, (error) => isBusy(error));
    await sleep(100);
    assert.equal(attempts, before, 'no attempt after the abort');
  });
});
