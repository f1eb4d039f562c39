/**
 * The store contract (test/store/contract.ts) on accounts: creating and finding them, MaxLinks
 * per account, rotating the access code and deleting an account with its links.
 */
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Store } from '../../../src/store/store.ts';
import { plain, type ContractFixture } from './helpers.ts';

export function accountContract(fixture: ContractFixture): void {
  const { code, createAccount, link } = fixture;
  describe('accounts', () => {
    let store: Store;
    beforeEach(() => {
      ({ store } = fixture);
    });

    test('createAccount returns the account with a positive integer uid', async () => {
      const dateCreated = '2026-11-22T04:12:49.123Z';
      const account = await store.createAccount({ codeHash: randomBytes(32).toString('hex'), dateCreated, maxLinks: 7 });
      assert.ok(Number.isSafeInteger(account.uid) && account.uid > 0, `uid ${account.uid}`);
      assert.deepEqual(plain(account), { uid: account.uid, dateCreated, maxLinks: 7, disabled: false });
    });

    test('createAccount gives each account a larger uid than the one before', async () => {
      const uids: number[] = [];
      for (let i = 0; i < 10; i++) uids.push((await createAccount()).uid);
      for (let i = 1; i < uids.length; i++) assert.ok(uids[i]! > uids[i - 1]!, `uids ${uids.join(', ')}`);
    });

    test('createAccount gives concurrent accounts distinct uids', async () => {
      const accounts = await Promise.all(Array.from({ length: 50 }, () => createAccount()));
      assert.equal(new Set(accounts.map((account) => account.uid)).size, 50);
    });

    test('findAccountByCodeHash finds the account by its code hash', async () => {
      const codeHash = randomBytes(32).toString('hex');
      const created = await store.createAccount({ codeHash, dateCreated: new Date().toISOString(), maxLinks: 3 });
      await createAccount();
      assert.deepEqual(plain(await store.findAccountByCodeHash(codeHash)), plain(created));
    });

    test('findAccountByCodeHash answers undefined for an unknown hash', async () => {
      await createAccount();
      assert.equal(await store.findAccountByCodeHash(randomBytes(32).toString('hex')), undefined);
      assert.equal(await store.findAccountByCodeHash(''), undefined);
    });

    test('keeps MaxLinks per account, whatever later accounts get', async () => {
      const small = await createAccount(1);
      const large = await createAccount(50);
      assert.equal(small.maxLinks, 1);
      assert.equal(large.maxLinks, 50);
      assert.equal(await store.createLink(link(small.uid, code('one'))), 'created');
      assert.equal(await store.createLink(link(small.uid, code('two'))), 'cap_reached');
    });
  });

  describe('account control (rotate, delete)', () => {
    let store: Store;
    beforeEach(() => {
      ({ store } = fixture);
    });

    test('rotateAccessCode swaps the digest: the new one finds the account, the old one nothing', async () => {
      const codeHash = randomBytes(32).toString('hex');
      const newHash = randomBytes(32).toString('hex');
      const account = await store.createAccount({ codeHash, dateCreated: new Date().toISOString(), maxLinks: 4 });
      assert.deepEqual(plain(await store.rotateAccessCode(account.uid, codeHash, newHash)), plain(account));
      assert.equal(await store.findAccountByCodeHash(codeHash), undefined);
      assert.deepEqual(plain(await store.findAccountByCodeHash(newHash)), plain(account));
    });

    test('rotateAccessCode answers undefined once the old digest is gone, so racing rotations have one winner', async () => {
      const codeHash = randomBytes(32).toString('hex');
      const account = await store.createAccount({ codeHash, dateCreated: new Date().toISOString(), maxLinks: 4 });
      const hashes = Array.from({ length: 5 }, () => randomBytes(32).toString('hex'));
      const results = await Promise.all(hashes.map((hash) => store.rotateAccessCode(account.uid, codeHash, hash)));
      const winners = hashes.filter((_, i) => results[i] !== undefined);
      assert.equal(winners.length, 1);
      assert.equal((await store.findAccountByCodeHash(winners[0]!))?.uid, account.uid);
      assert.equal(await store.rotateAccessCode(account.uid + 1_000_000, codeHash, randomBytes(32).toString('hex')), undefined);
    });

    test('deleteAccount removes the account and its links; their shortcodes are free again', async () => {
      const codeHash = randomBytes(32).toString('hex');
      const account = await store.createAccount({ codeHash, dateCreated: new Date().toISOString(), maxLinks: 3 });
      const other = await createAccount(3);
      await store.createLink(link(account.uid, code('gone1')));
      await store.createLink(link(account.uid, code('gone2')));
      await store.createLink(link(other.uid, code('kept1')));
      assert.equal(await store.deleteAccount(account.uid), true);
      assert.equal(await store.findAccountByCodeHash(codeHash), undefined);
      assert.equal(await store.findLink(code('gone1')), undefined);
      assert.deepEqual(await store.listLinks(account.uid), []);
      assert.equal((await store.findLink(code('kept1')))?.createdBy, other.uid);
      assert.equal(await store.createLink(link(other.uid, code('gone1'))), 'created');
      assert.equal(await store.deleteAccount(account.uid), false);
      // A create for the deleted account finds no slot to take.
      assert.equal(await store.createLink(link(account.uid, code('late'))), 'cap_reached');
    });

    test('deleteAccount racing creates for the same account leaves no link behind', async () => {
      const account = await createAccount(50);
      const creates = Array.from({ length: 20 }, (_, i) => store.createLink(link(account.uid, code(`race${i}`))));
      const [deleted] = await Promise.all([store.deleteAccount(account.uid), ...creates]);
      assert.equal(deleted, true);
      await Promise.all(Array.from({ length: 5 }, (_, i) => store.createLink(link(account.uid, code(`after${i}`)))));
      assert.deepEqual(await store.listLinks(account.uid), []);
    });
  });
}
