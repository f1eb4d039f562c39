/**
 * The leases of a process's event streams (src/events/stream-leases.ts) on a slot store whose
 * answers the test controls: which streams a check ends, and what a failing check does.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createStreamLeases } from '../../src/events/stream-leases.ts';
import type { StreamSlotStore } from '../../src/store/stream-slots.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** Slots in memory; `valid` decides which of them a check answers as current. */
function memorySlots() {
  const taken = new Map<string, string>(); // id → codeHash
  let currentCalls = 0;
  let failing = false;
  let gate: Promise<void> | undefined;
  const released: string[] = [];
  const slots: StreamSlotStore = {
    async acquire(slot) {
      taken.set(slot.id, slot.codeHash);
      return 'acquired';
    },
    async current() {
      currentCalls++;
      // Read the slots as they are when the check begins, as a query would.
      const snapshot = [...taken].filter(([, codeHash]) => valid.has(codeHash)).map(([id]) => id);
      await gate;
      if (failing) throw new Error('storage away');
      return snapshot;
    },
    async renew() {},
    async release(ids) {
      for (const id of ids) taken.delete(id);
      released.push(...ids);
    },
  };
  const valid = new Set<string>();
  return {
    slots, valid, released,
    calls: () => currentCalls,
    fail: (value: boolean) => void (failing = value),
    hold: () => {
      let open!: () => void;
      gate = new Promise((resolve) => (open = resolve));
      return () => {
        gate = undefined;
        open();
      };
    },
  };
}

test('a check ends the streams whose credential is no longer current, and only those', async () => {
  const store = memorySlots();
  store.valid.add('old').add('other');
  const leases = createStreamLeases({ slots: store.slots, checkMs: 5 });
  const ended: string[] = [];
  const a = await leases.acquire(1, 'old', 10, () => ended.push('a'));
  const b = await leases.acquire(2, 'other', 10, () => ended.push('b'));
  assert.equal(a.result, 'acquired');
  assert.equal(b.result, 'acquired');
  store.valid.delete('old'); // rotated
  await waitFor(() => ended.length === 1, 'the old code\'s stream to end');
  assert.deepEqual(ended, ['a']);
  assert.equal(store.released.length, 1, 'its slot is given back');
  await leases.close();
  assert.equal(store.released.length, 2, 'close gives back the rest');
});

test('a stream whose slot was taken while a check was under way is not ended by that check', async () => {
  const store = memorySlots();
  store.valid.add('code');
  const leases = createStreamLeases({ slots: store.slots, checkMs: 5 });
  const ended: string[] = [];
  await leases.acquire(1, 'code', 10, () => ended.push('first'));
  const open = store.hold();
  const before = store.calls();
  await waitFor(() => store.calls() > before, 'a check to begin');
  // Taken after the check read the slots: its answer does not list this one.
  await leases.acquire(1, 'code', 10, () => ended.push('second'));
  open();
  const after = store.calls();
  await waitFor(() => store.calls() > after + 1, 'two more checks');
  assert.deepEqual(ended, []);
  await leases.close();
});

test('a check that fails ends nothing; the next one that answers does', async () => {
  const store = memorySlots();
  store.valid.add('code');
  const errors: unknown[] = [];
  const leases = createStreamLeases({ slots: store.slots, checkMs: 5, onError: (error) => errors.push(error) });
  const ended: string[] = [];
  await leases.acquire(1, 'code', 10, () => ended.push('s'));
  store.fail(true);
  store.valid.delete('code');
  await waitFor(() => errors.length >= 2, 'two failed checks');
  assert.deepEqual(ended, []);
  store.fail(false);
  await waitFor(() => ended.length === 1, 'the stream to end once checks answer');
  await leases.close();
});

test('checkSoon checks at once, without waiting for the next tick', async () => {
  const store = memorySlots();
  store.valid.add('code');
  const leases = createStreamLeases({ slots: store.slots, checkMs: 3_600_000 });
  const ended: string[] = [];
  await leases.acquire(1, 'code', 10, () => ended.push('s'));
  store.valid.delete('code');
  await leases.checkSoon();
  assert.deepEqual(ended, ['s'], 'ended by the time checkSoon resolves');
  await leases.close();
});

test('checkSoon while a check is under way waits for the next one, whose answer follows the change', async () => {
  const store = memorySlots();
  store.valid.add('code');
  const leases = createStreamLeases({ slots: store.slots, checkMs: 5 });
  const ended: string[] = [];
  await leases.acquire(1, 'code', 10, () => ended.push('s'));
  const open = store.hold();
  const before = store.calls();
  await waitFor(() => store.calls() > before, 'a check to begin');
  // The check under way read the slots before the change.
  store.valid.delete('code');
  const checked = leases.checkSoon();
  open();
  await checked;
  assert.deepEqual(ended, ['s']);
  await leases.close();
});
