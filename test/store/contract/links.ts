/**
 * The store contract (test/store/contract.ts) on links: creating under the cap and the
 * shortcode's uniqueness, deleting (the removed link answered), listing.
 */
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Store } from '../../../src/store/store.ts';
import { plain, plainAll, type ContractFixture } from './helpers.ts';

export function linkContract(fixture: ContractFixture): void {
  const { code, createAccount, link } = fixture;
  describe('createLink', () => {
    let store: Store;
    let tag: string;
    beforeEach(() => {
      ({ store, tag } = fixture);
    });

    test('creates a link that findLink returns with zero accesses', async () => {
      const account = await createAccount();
      const shortCode = code('first');
      assert.equal(await store.createLink(link(account.uid, shortCode, 'https://example.com/a?b=c')), 'created');
      assert.deepEqual(plain(await store.findLink(shortCode)), {
        shortCode, pointsTo: 'https://example.com/a?b=c', createdBy: account.uid, accesses: 0,
      });
    });

    test('rejects a shortcode that is already taken by another account', async () => {
      const owner = await createAccount();
      const other = await createAccount();
      const shortCode = code('taken');
      assert.equal(await store.createLink(link(owner.uid, shortCode, 'https://owner.example/')), 'created');
      assert.equal(await store.createLink(link(other.uid, shortCode, 'https://other.example/')), 'taken');
      assert.deepEqual(plain(await store.findLink(shortCode)), {
        shortCode, pointsTo: 'https://owner.example/', createdBy: owner.uid, accesses: 0,
      });
      assert.deepEqual(await store.listLinks(other.uid), []);
    });

    test('rejects a shortcode that the same account already holds', async () => {
      const account = await createAccount();
      const shortCode = code('twice');
      assert.equal(await store.createLink(link(account.uid, shortCode)), 'created');
      assert.equal(await store.createLink(link(account.uid, shortCode, 'https://elsewhere.example/')), 'taken');
      assert.equal((await store.listLinks(account.uid)).length, 1);
    });

    test('a refused (taken) create does not use up a slot', async () => {
      const owner = await createAccount();
      const account = await createAccount(1);
      const shortCode = code('held');
      assert.equal(await store.createLink(link(owner.uid, shortCode)), 'created');
      for (let i = 0; i < 3; i++) assert.equal(await store.createLink(link(account.uid, shortCode)), 'taken');
      assert.equal(await store.createLink(link(account.uid, code('free'))), 'created');
    });

    test('refuses a link beyond MaxLinks', async () => {
      const account = await createAccount(3);
      for (const stem of ['a1', 'a2', 'a3']) assert.equal(await store.createLink(link(account.uid, code(stem))), 'created');
      assert.equal(await store.createLink(link(account.uid, code('a4'))), 'cap_reached');
      assert.equal(await store.findLink(code('a4')), undefined);
      assert.equal((await store.listLinks(account.uid)).length, 3);
    });

    test('refuses every link for an account with MaxLinks 0', async () => {
      const account = await createAccount(0);
      assert.equal(await store.createLink(link(account.uid, code('none'))), 'cap_reached');
      assert.deepEqual(await store.listLinks(account.uid), []);
    });

    test('checks the cap before uniqueness: a full account creating a taken code gets cap_reached', async () => {
      const owner = await createAccount();
      const full = await createAccount(1);
      const shortCode = code('wanted');
      assert.equal(await store.createLink(link(owner.uid, shortCode)), 'created');
      assert.equal(await store.createLink(link(full.uid, code('mine'))), 'created');
      assert.equal(await store.createLink(link(full.uid, shortCode)), 'cap_reached');
      // Its own code, taken by itself, also answers cap_reached while it is full.
      assert.equal(await store.createLink(link(full.uid, code('mine'))), 'cap_reached');
    });

    test('counts the links held at once: deleting one frees a slot', async () => {
      const account = await createAccount(2);
      assert.equal(await store.createLink(link(account.uid, code('s1'))), 'created');
      assert.equal(await store.createLink(link(account.uid, code('s2'))), 'created');
      assert.equal(await store.createLink(link(account.uid, code('s3'))), 'cap_reached');
      assert.equal((await store.deleteLink(code('s1'), account.uid)).status, 'deleted');
      assert.equal(await store.createLink(link(account.uid, code('s3'))), 'created');
      assert.equal(await store.createLink(link(account.uid, code('s4'))), 'cap_reached');
      // Many create/delete cycles never leak or gain slots.
      for (let i = 0; i < 10; i++) {
        assert.equal((await store.deleteLink(code('s3'), account.uid)).status, 'deleted');
        assert.equal(await store.createLink(link(account.uid, code('s3'))), 'created');
      }
      assert.equal(await store.createLink(link(account.uid, code('s5'))), 'cap_reached');
    });

    test('treats shortcodes case-sensitively: Abcde and abcde are two links', async () => {
      const first = await createAccount();
      const second = await createAccount();
      assert.equal(await store.createLink(link(first.uid, code('Abcde'), 'https://upper.example/')), 'created');
      assert.equal(await store.createLink(link(second.uid, code('abcde'), 'https://lower.example/')), 'created');
      assert.equal(await store.createLink(link(second.uid, code('ABCDE'), 'https://caps.example/')), 'created');
      assert.equal((await store.findLink(code('Abcde')))?.pointsTo, 'https://upper.example/');
      assert.equal((await store.findLink(code('abcde')))?.pointsTo, 'https://lower.example/');
      assert.equal((await store.findLink(code('ABCDE')))?.pointsTo, 'https://caps.example/');
      assert.equal(await store.findLink(code('aBcde')), undefined);
      assert.equal((await store.resolveLink(code('Abcde')))?.accesses, 1);
      assert.equal((await store.findLink(code('abcde')))?.accesses, 0);
    });

    test('lets a deleted shortcode be taken again, by anyone', async () => {
      const first = await createAccount();
      const second = await createAccount();
      const shortCode = code('reuse');
      assert.equal(await store.createLink(link(first.uid, shortCode, 'https://first.example/')), 'created');
      await store.resolveLink(shortCode);
      assert.equal((await store.deleteLink(shortCode, first.uid)).status, 'deleted');
      assert.equal(await store.createLink(link(second.uid, shortCode, 'https://second.example/')), 'created');
      // The new link starts from zero: it does not inherit the old one's accesses.
      assert.deepEqual(plain(await store.findLink(shortCode)), {
        shortCode, pointsTo: 'https://second.example/', createdBy: second.uid, accesses: 0,
      });
    });

    test('stores and returns a 2000-character shortcode and a 2000-code-point URL exactly', async () => {
      const account = await createAccount();
      const shortCode = `${tag}-`.padEnd(2000, 'Zz9-._~');
      const pointsTo = 'https://example.com/' + '😀'.repeat(1980);
      assert.equal(shortCode.length, 2000);
      assert.equal([...pointsTo].length, 2000);
      assert.equal(await store.createLink(link(account.uid, shortCode, pointsTo)), 'created');
      const expected = { shortCode, pointsTo, createdBy: account.uid, accesses: 0 };
      assert.deepEqual(plain(await store.findLink(shortCode)), expected);
      assert.deepEqual(plainAll(await store.listLinks(account.uid)), [expected]);
      assert.deepEqual(plain(await store.resolveLink(shortCode)), { ...expected, accesses: 1 });
      assert.equal(await store.findLink(shortCode.slice(0, -1)), undefined);
      assert.equal((await store.deleteLink(shortCode, account.uid)).status, 'deleted');
    });

    test('stores non-ASCII URLs byte for byte, without normalising them', async () => {
      const account = await createAccount();
      // NFC "é" and NFD "e\u0301" must stay distinct; IDN hosts stay in Unicode.
      const urls = ['https://bücher.example/straße?q=ü#ö', 'https://example.com/caf\u00e9', 'https://example.com/cafe\u0301'];
      for (const [i, pointsTo] of urls.entries()) {
        assert.equal(await store.createLink(link(account.uid, code(`u${i}xx`), pointsTo)), 'created');
      }
      assert.deepEqual((await store.listLinks(account.uid)).map((row) => row.pointsTo), urls);
    });
  });

  describe('deleteLink', () => {
    let store: Store;
    beforeEach(() => {
      ({ store } = fixture);
    });

    test('deletes the caller\'s own link', async () => {
      const account = await createAccount();
      const shortCode = code('gone');
      await store.createLink(link(account.uid, shortCode));
      assert.equal((await store.deleteLink(shortCode, account.uid)).status, 'deleted');
      assert.equal(await store.findLink(shortCode), undefined);
      assert.equal(await store.resolveLink(shortCode), undefined);
      assert.deepEqual(await store.listLinks(account.uid), []);
    });

    test('answers the removed link as it last stood, details and count included', async () => {
      const account = await createAccount();
      const shortCode = code('last');
      await store.createLink({
        ...link(account.uid, shortCode, 'https://example.com/last'), title: 'Last', tags: ['b', 'a'], expiresAt: '2999-01-01T00:00:00.000Z',
        maxVisits: 9, forwardQuery: true,
      });
      await store.resolveLink(shortCode);
      await store.resolveLink(shortCode);
      const [before] = (await store.listLinkDetails(account.uid)).links;
      assert.equal(before?.accesses, 2);
      const result = await store.deleteLink(shortCode, account.uid);
      assert.equal(result.status, 'deleted');
      assert.deepEqual(result.status === 'deleted' ? plain(result.link) : undefined, plain(before));
    });

    test('answers not_found for a shortcode no link has', async () => {
      const account = await createAccount();
      assert.equal((await store.deleteLink(code('never'), account.uid)).status, 'not_found');
    });

    test('answers not_found when deleting the same link twice', async () => {
      const account = await createAccount();
      await store.createLink(link(account.uid, code('once')));
      assert.equal((await store.deleteLink(code('once'), account.uid)).status, 'deleted');
      assert.equal((await store.deleteLink(code('once'), account.uid)).status, 'not_found');
    });

    test('matches the shortcode case-sensitively', async () => {
      const account = await createAccount();
      await store.createLink(link(account.uid, code('lower')));
      assert.equal((await store.deleteLink(code('LOWER'), account.uid)).status, 'not_found');
      assert.notEqual(await store.findLink(code('lower')), undefined);
    });

    test('answers not_owner for another account\'s link and leaves the link in place', async () => {
      const owner = await createAccount(1);
      const intruder = await createAccount(1);
      const shortCode = code('theirs');
      await store.createLink(link(owner.uid, shortCode, 'https://owner.example/'));
      await store.resolveLink(shortCode);
      assert.equal((await store.deleteLink(shortCode, intruder.uid)).status, 'not_owner');
      const expected = { shortCode, pointsTo: 'https://owner.example/', createdBy: owner.uid, accesses: 1 };
      assert.deepEqual(plain(await store.findLink(shortCode)), expected);
      assert.deepEqual(plainAll(await store.listLinks(owner.uid)), [expected]);
      // Neither account's slots moved: the owner is still full, the intruder still has one free.
      assert.equal(await store.createLink(link(owner.uid, code('more'))), 'cap_reached');
      assert.equal(await store.createLink(link(intruder.uid, code('own'))), 'created');
      assert.equal(await store.createLink(link(intruder.uid, code('own2'))), 'cap_reached');
    });

    test('answers not_found for an account that does not exist', async () => {
      const owner = await createAccount();
      await store.createLink(link(owner.uid, code('owned')));
      assert.equal((await store.deleteLink(code('missing'), owner.uid + 1_000_000)).status, 'not_found');
      assert.equal((await store.deleteLink(code('owned'), owner.uid + 1_000_000)).status, 'not_owner');
    });
  });

  describe('listLinks', () => {
    let store: Store;
    beforeEach(() => {
      ({ store } = fixture);
    });

    test('answers an empty list for an account without links', async () => {
      const account = await createAccount();
      assert.deepEqual(await store.listLinks(account.uid), []);
    });

    test('lists the account\'s links oldest first, not in shortcode order', async () => {
      const account = await createAccount();
      const stems = ['mmmmm', 'zzzzz', 'AAAAA', 'aaaaa', '00000', 'bbbbb'];
      for (const stem of stems) await store.createLink(link(account.uid, code(stem), `https://example.com/${stem}`));
      const listed = plainAll(await store.listLinks(account.uid));
      assert.deepEqual(
        listed,
        stems.map((stem) => ({ shortCode: code(stem), pointsTo: `https://example.com/${stem}`, createdBy: account.uid, accesses: 0 })),
      );
    });

    test('keeps creation order after a delete and a re-create', async () => {
      const account = await createAccount();
      for (const stem of ['one11', 'two22', 'three']) await store.createLink(link(account.uid, code(stem)));
      await store.deleteLink(code('one11'), account.uid);
      await store.createLink(link(account.uid, code('one11')));
      assert.deepEqual(
        (await store.listLinks(account.uid)).map((row) => row.shortCode),
        [code('two22'), code('three'), code('one11')],
      );
    });

    test('lists only the account\'s own links', async () => {
      const mine = await createAccount();
      const theirs = await createAccount();
      await store.createLink(link(mine.uid, code('mine1')));
      await store.createLink(link(theirs.uid, code('their')));
      await store.createLink(link(mine.uid, code('mine2')));
      assert.deepEqual((await store.listLinks(mine.uid)).map((row) => row.shortCode), [code('mine1'), code('mine2')]);
      assert.deepEqual((await store.listLinks(theirs.uid)).map((row) => row.shortCode), [code('their')]);
    });

    test('shows the current access counts', async () => {
      const account = await createAccount();
      await store.createLink(link(account.uid, code('hits1')));
      await store.createLink(link(account.uid, code('hits2')));
      await store.resolveLink(code('hits2'));
      await store.resolveLink(code('hits2'));
      assert.deepEqual((await store.listLinks(account.uid)).map((row) => row.accesses), [0, 2]);
    });
  });
}
