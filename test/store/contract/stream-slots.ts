/**
 * The store contract (test/store/contract.ts) on event stream slots (ADR 19): leased per
 * account, renewed, checked against the credential.
 */
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Store } from '../../../src/store/store.ts';
import { tally, type ContractFixture } from './helpers.ts';

export function streamSlotsContract(fixture: ContractFixture): void {
  const { code } = fixture;
  describe('event stream slots (ADR 19)', () => {
    let store: Store;
    beforeEach(() => {
      ({ store } = fixture);
    });

    const slot = (id: string, accountUid: number, codeHash: string, holder: string) => ({ id: code(id), accountUid, codeHash, holder: code(holder) });
    const NOW = 1_800_000_000_000;

    test('acquire takes at most perAccount unexpired slots per account, whoever holds them; release frees one', async () => {
      const codeHash = randomBytes(32).toString('hex');
      const account = await store.createAccount({ codeHash, dateCreated: new Date().toISOString(), maxLinks: 1 });
      const options = { now: NOW, leaseMs: 30_000, perAccount: 3 };
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => store.streamSlots.acquire(slot(`s${i}`, account.uid, codeHash, `p${i % 2}`), options)));
      assert.deepEqual(tally(results), { acquired: 3, full: 3 });
      const taken = results.flatMap((result, i) => (result === 'acquired' ? [code(`s${i}`)] : []));
      await store.streamSlots.release([taken[0]!]);
      assert.equal(await store.streamSlots.acquire(slot('again', account.uid, codeHash, 'p0'), options), 'acquired');
      assert.equal(await store.streamSlots.acquire(slot('more', account.uid, codeHash, 'p1'), options), 'full');
      // Another account's slots are its own.
      const otherHash = randomBytes(32).toString('hex');
      const other = await store.createAccount({ codeHash: otherHash, dateCreated: new Date().toISOString(), maxLinks: 1 });
      assert.equal(await store.streamSlots.acquire(slot('theirs', other.uid, otherHash, 'p1'), options), 'acquired');
    });

    test('a slot whose lease ran out stops counting; renewal keeps a holder\'s slots and sweeps the rest', async () => {
      const codeHash = randomBytes(32).toString('hex');
      const account = await store.createAccount({ codeHash, dateCreated: new Date().toISOString(), maxLinks: 1 });
      const take = (id: string, holder: string, now: number) => store.streamSlots.acquire(slot(id, account.uid, codeHash, holder), { now, leaseMs: 1000, perAccount: 2 });
      assert.equal(await take('a', 'alive', NOW), 'acquired');
      assert.equal(await take('b', 'dead', NOW), 'acquired');
      assert.equal(await take('c', 'alive', NOW + 999), 'full');
      // The living holder renews; the dead one does not, and its slot runs out.
      await store.streamSlots.renew(code('alive'), { now: NOW + 500, leaseMs: 1000 });
      assert.equal(await take('c', 'alive', NOW + 1000), 'acquired');
      assert.equal(await take('d', 'alive', NOW + 1200), 'full', 'the renewed slot still counts');
      await store.streamSlots.renew(code('other'), { now: NOW + 10_000, leaseMs: 1000 });
      assert.deepEqual(await store.streamSlots.current(code('alive')), [], 'every lapsed slot was swept');
    });

    test('acquire and current check the credential: the code as it stands, the account enabled and present', async () => {
      const codeHash = randomBytes(32).toString('hex');
      const account = await store.createAccount({ codeHash, dateCreated: new Date().toISOString(), maxLinks: 1 });
      const options = { now: Date.now(), leaseMs: 30_000, perAccount: 10 };
      assert.equal(await store.streamSlots.acquire(slot('wrong', account.uid, randomBytes(32).toString('hex'), 'p'), options), 'invalid');
      assert.equal(await store.streamSlots.acquire(slot('nobody', account.uid + 1_000_000, codeHash, 'p'), options), 'invalid');
      assert.equal(await store.streamSlots.acquire(slot('one', account.uid, codeHash, 'p'), options), 'acquired');
      assert.equal(await store.streamSlots.acquire(slot('two', account.uid, codeHash, 'p'), options), 'acquired');
      assert.deepEqual((await store.streamSlots.current(code('p'))).sort(), [code('one'), code('two')].sort());

      await store.updateAccount(account.uid, { disabled: true });
      assert.deepEqual(await store.streamSlots.current(code('p')), []);
      assert.equal(await store.streamSlots.acquire(slot('three', account.uid, codeHash, 'p'), options), 'disabled');
      await store.updateAccount(account.uid, { disabled: false });
      assert.equal((await store.streamSlots.current(code('p'))).length, 2);

      const newHash = randomBytes(32).toString('hex');
      await store.rotateAccessCode(account.uid, codeHash, newHash);
      assert.deepEqual(await store.streamSlots.current(code('p')), []);
      assert.equal(await store.streamSlots.acquire(slot('new', account.uid, newHash, 'p'), options), 'acquired');
      assert.deepEqual(await store.streamSlots.current(code('p')), [code('new')]);

      assert.equal(await store.deleteAccount(account.uid), true);
      assert.deepEqual(await store.streamSlots.current(code('p')), []);
    });
  });
}
