/**
 * The store contract (test/store/contract.ts) on counting: resolveLink counts one access,
 * findLink none; the ping and its write probe.
 */
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LinkRecord, Store } from '../../../src/store/store.ts';
import { plain, type ContractFixture } from './helpers.ts';

export function countingContract(fixture: ContractFixture): void {
  const { code, createAccount, link } = fixture;
  describe('resolveLink and findLink', () => {
    let store: Store;
    let tag: string;
    beforeEach(() => {
      ({ store, tag } = fixture);
    });

    test('resolveLink counts one access and returns the count after it', async () => {
      const account = await createAccount();
      const shortCode = code('count');
      await store.createLink(link(account.uid, shortCode, 'https://target.example/'));
      for (let expected = 1; expected <= 5; expected++) {
        assert.deepEqual(plain(await store.resolveLink(shortCode)), {
          shortCode, pointsTo: 'https://target.example/', createdBy: account.uid, accesses: expected,
        });
      }
      assert.equal((await store.findLink(shortCode))?.accesses, 5);
    });

    test('resolveLink answers undefined for an unknown shortcode and creates nothing', async () => {
      assert.equal(await store.resolveLink(code('nothing')), undefined);
      assert.equal(await store.findLink(code('nothing')), undefined);
    });

    test('findLink does not count an access', async () => {
      const account = await createAccount();
      const shortCode = code('peek');
      await store.createLink(link(account.uid, shortCode));
      for (let i = 0; i < 3; i++) assert.equal((await store.findLink(shortCode))?.accesses, 0);
      assert.equal((await store.resolveLink(shortCode))?.accesses, 1);
      assert.equal((await store.findLink(shortCode))?.accesses, 1);
    });

    test('findLink answers undefined for an unknown shortcode', async () => {
      assert.equal(await store.findLink(code('absent')), undefined);
    });

    test('counts concurrent resolutions of different links separately', async () => {
      const account = await createAccount();
      const codes = [code('multi1'), code('multi2'), code('multi3')];
      for (const shortCode of codes) await store.createLink(link(account.uid, shortCode));
      const calls: Promise<LinkRecord | undefined>[] = [];
      for (let i = 0; i < 30; i++) calls.push(store.resolveLink(codes[i % 3]!));
      calls.push(store.resolveLink(code('missing')));
      const results = await Promise.all(calls);
      assert.equal(results.pop(), undefined);
      for (const shortCode of codes) {
        const counts = results.filter((row) => row?.shortCode === shortCode).map((row) => row!.accesses);
        assert.deepEqual(counts.sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert.equal((await store.findLink(shortCode))?.accesses, 10);
      }
    });

    test('ping answers while the store is open', async () => {
      await store.ping();
    });

    test('ping with a write probe commits a write that changes nothing, between reads and writes of its own', async () => {
      const account = await store.createAccount({ codeHash: `probe-${tag}`.padEnd(64, '0'), dateCreated: '2026-01-01T00:00:00.000Z', maxLinks: 5 });
      await Promise.all([store.ping({ write: true }), store.listLinks(account.uid), store.ping({ write: true })]);
      assert.equal(await store.createLink({ shortCode: `probe${tag}`, pointsTo: 'https://a.example/', createdBy: account.uid, dateCreated: '2026-01-01T00:00:00.000Z' }), 'created');
      assert.equal((await store.resolveLink(`probe${tag}`))?.accesses, 1);
      await store.ping({ write: true });
      assert.equal((await store.findLink(`probe${tag}`))?.accesses, 1, 'nothing changed');
    });
  });
}
