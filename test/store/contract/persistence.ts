/**
 * The store contract (test/store/contract.ts) on persistence: what a store wrote, even with
 * resolutions in flight at close, is there when its database is reopened.
 */
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Store } from '../../../src/store/store.ts';
import { plain, plainAll, type ContractFixture, type OpenedStore } from './helpers.ts';

export function persistenceContract(fixture: ContractFixture): void {
  const { code, createAccount, link } = fixture;
  describe('persistence', () => {
    let store: Store;
    let opened: OpenedStore;
    beforeEach(() => {
      ({ store, opened } = fixture);
    });

    test('close() writes resolutions still in flight before it settles', async (t) => {
      if (opened.reopen === undefined) return t.skip('this backend cannot reopen its database');
      const account = await createAccount();
      const shortCode = code('inflight');
      await store.createLink(link(account.uid, shortCode));
      const pending = Array.from({ length: 25 }, () => store.resolveLink(shortCode));
      await store.close();
      const counts = (await Promise.all(pending)).map((row) => row?.accesses);
      assert.deepEqual(counts.sort((a, b) => a! - b!), Array.from({ length: 25 }, (_, i) => i + 1));
      const again = await opened.reopen();
      assert.equal((await again.findLink(shortCode))?.accesses, 25);
    });

    test('a closed and reopened store keeps accounts, links, counts and slots', async (t) => {
      if (opened.reopen === undefined) return t.skip('this backend cannot reopen its database');
      const codeHash = randomBytes(32).toString('hex');
      const account = await store.createAccount({ codeHash, dateCreated: '2026-01-02T03:04:05.678Z', maxLinks: 2 });
      await store.createLink(link(account.uid, code('keep1'), 'https://one.example/'));
      await store.createLink(link(account.uid, code('keep2'), 'https://two.example/'));
      await store.resolveLink(code('keep2'));
      await store.resolveLink(code('keep2'));
      await store.close();

      const again = await opened.reopen();
      assert.deepEqual(plain(await again.findAccountByCodeHash(codeHash)), plain(account));
      assert.deepEqual(plainAll(await again.listLinks(account.uid)), [
        { shortCode: code('keep1'), pointsTo: 'https://one.example/', createdBy: account.uid, accesses: 0 },
        { shortCode: code('keep2'), pointsTo: 'https://two.example/', createdBy: account.uid, accesses: 2 },
      ]);
      assert.equal((await again.resolveLink(code('keep2')))?.accesses, 3);
      assert.equal(await again.createLink(link(account.uid, code('keep3'))), 'cap_reached');
      assert.equal(await again.createLink(link(account.uid, code('keep1'))), 'cap_reached');
      assert.equal((await createAccount(20, again)).uid > account.uid, true);
    });
  });
}
