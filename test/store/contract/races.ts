/**
 * The store contract (test/store/contract.ts) on races through the store: caps, shortcodes,
 * counts and deletes under concurrency.
 */
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Store } from '../../../src/store/store.ts';
import { plain, tally, type ContractFixture } from './helpers.ts';

export function raceContract(fixture: ContractFixture): void {
  const { code, createAccount, link } = fixture;
  describe('races through the store', () => {
    let store: Store;
    beforeEach(() => {
      ({ store } = fixture);
    });

    test('40 concurrent creates on an account with MaxLinks 20 create exactly 20', async () => {
      const account = await createAccount(20);
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => store.createLink(link(account.uid, code(`race${i}`)))),
      );
      assert.deepEqual(tally(results), { created: 20, cap_reached: 20 });
      const listed = await store.listLinks(account.uid);
      assert.equal(listed.length, 20);
      const createdCodes = new Set(results.flatMap((result, i) => (result === 'created' ? [code(`race${i}`)] : [])));
      assert.deepEqual(new Set(listed.map((row) => row.shortCode)), createdCodes);
    });

    test('20 concurrent creates of one shortcode from 20 accounts grant it exactly once', async () => {
      const accounts = await Promise.all(Array.from({ length: 20 }, () => createAccount(1)));
      const shortCode = code('contested');
      const results = await Promise.all(
        accounts.map((account) => store.createLink(link(account.uid, shortCode, `https://example.com/${account.uid}`))),
      );
      assert.deepEqual(tally(results), { created: 1, taken: 19 });
      const winner = accounts[results.indexOf('created')]!;
      assert.deepEqual(plain(await store.findLink(shortCode)), {
        shortCode, pointsTo: `https://example.com/${winner.uid}`, createdBy: winner.uid, accesses: 0,
      });
      // The losers' refused creates used up none of their single slot.
      const followUps = await Promise.all(
        accounts.map((account, i) => store.createLink(link(account.uid, code(`after${i}`)))),
      );
      assert.deepEqual(
        followUps,
        accounts.map((account) => (account.uid === winner.uid ? 'cap_reached' : 'created')),
      );
    });

    test('400 concurrent resolutions of one link answer the counts 1 to 400, each once', async () => {
      const account = await createAccount();
      const shortCode = code('popular');
      await store.createLink(link(account.uid, shortCode));
      const results = await Promise.all(Array.from({ length: 400 }, () => store.resolveLink(shortCode)));
      const counts = results.map((row) => {
        assert.ok(row !== undefined);
        assert.equal(row.shortCode, shortCode);
        return row.accesses;
      });
      assert.deepEqual(counts.sort((a, b) => a - b), Array.from({ length: 400 }, (_, i) => i + 1));
      assert.equal((await store.findLink(shortCode))?.accesses, 400);
    });

    test('concurrent deletes and creates on a full account never exceed MaxLinks', async () => {
      const account = await createAccount(5);
      for (let i = 0; i < 5; i++) await store.createLink(link(account.uid, code(`old${i}`)));
      const deletes = Array.from({ length: 5 }, (_, i) => store.deleteLink(code(`old${i}`), account.uid));
      const creates = Array.from({ length: 10 }, (_, i) => store.createLink(link(account.uid, code(`new${i}`))));
      const [deleted, created] = await Promise.all([Promise.all(deletes), Promise.all(creates)]);
      assert.deepEqual(deleted.map((result) => result.status), ['deleted', 'deleted', 'deleted', 'deleted', 'deleted']);
      const createdCount = created.filter((result) => result === 'created').length;
      assert.ok(createdCount <= 5, `${createdCount} created`);
      assert.equal((await store.listLinks(account.uid)).length, createdCount);
      // Whatever the interleaving, the account is back to holding what it may and no more.
      const fill = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.createLink(link(account.uid, code(`fill${i}`)))),
      );
      assert.equal(fill.filter((result) => result === 'created').length, 5 - createdCount);
      assert.equal((await store.listLinks(account.uid)).length, 5);
    });

    test('concurrent deletes of one link by its owner succeed exactly once, the others find nothing', async () => {
      // Several rounds: the losers of the race must answer not_found, never not_owner (on
      // PostgreSQL a delete that waited for the winner's row lock once said not_owner).
      for (let round = 0; round < 8; round++) {
        const account = await createAccount(1);
        await store.createLink(link(account.uid, code(`solo${round}`)));
        const results = await Promise.all(Array.from({ length: 10 }, () => store.deleteLink(code(`solo${round}`), account.uid)));
        assert.deepEqual(tally(results.map((result) => result.status)), { deleted: 1, not_found: 9 }, `round ${round}`);
        // Exactly one slot was freed, not ten.
        assert.equal(await store.createLink(link(account.uid, code(`next1r${round}`))), 'created');
        assert.equal(await store.createLink(link(account.uid, code(`next2r${round}`))), 'cap_reached');
      }
    });
  });
}
