/**
 * Readiness from what the storage did (src/store/storage-health.ts): a failed write makes
 * the storage not ready until a write succeeds; which calls count as writes decides that.
 * End to end (a full disk, damaged pages) it is test/e2e/storage-faults.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { storageUnavailable } from '../../src/store/errors.ts';
import { trackStorageHealth } from '../../src/store/storage-health.ts';

/** A ping that succeeds as a read and fails as a write, as on a full disk. */
const fullDisk = {
  ping: async (options?: { write?: boolean }) => {
    if (options?.write === true) throw storageUnavailable(new Error('database or disk is full'));
  },
};

test('a failed write keeps the storage unready while writes fail, even when a read answers', async () => {
  const health = trackStorageHealth();
  await health.check(fullDisk);
  health.observe('createLink', storageUnavailable(new Error('database or disk is full')));
  health.observe('findLink');
  await assert.rejects(health.check(fullDisk));
  health.observe('createLink');
  await health.check(fullDisk);
});

test('a statistics fold that commits (usually with nothing to move) does not make a full disk ready', async () => {
  const health = trackStorageHealth();
  health.observe('resolveLink', storageUnavailable(new Error('database or disk is full')));
  health.observe('foldStats');
  await assert.rejects(health.check(fullDisk), /storage unavailable/);
});
