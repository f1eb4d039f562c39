/**
 * The store contract (test/store/contract.ts) on the operator's calls: accounts paged and
 * updated, links searched and taken down.
 */
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Store } from '../../../src/store/store.ts';
import { plain, type ContractFixture } from './helpers.ts';

export function administrationContract(fixture: ContractFixture): void {
  const { code, createAccount, link } = fixture;
  describe('administration', () => {
    let store: Store;
    let tag: string;
    beforeEach(() => {
      ({ store, tag } = fixture);
    });

    test('listAccounts pages by uid with links held and the disabled flag', async () => {
      const first = await createAccount(5);
      const second = await createAccount(6);
      const third = await createAccount(7);
      await store.createLink(link(second.uid, code('held')));
      const page = (await store.listAccounts(first.uid - 1, 2)).map(plain);
      assert.deepEqual(page, [
        { ...plain(first), linkCount: 0 },
        { ...plain(second), linkCount: 1 },
      ]);
      const next = (await store.listAccounts(second.uid, 1000)).map((a) => a.uid);
      assert.ok(next.includes(third.uid) && !next.includes(second.uid));
    });

    test('updateAccount sets MaxLinks and Disabled, answering the account before and after', async () => {
      const codeHash = randomBytes(32).toString('hex');
      const account = await store.createAccount({ codeHash, dateCreated: new Date().toISOString(), maxLinks: 2 });
      const result = await store.updateAccount(account.uid, { disabled: true });
      assert.equal(result.outcome, 'updated');
      if (result.outcome !== 'updated') return;
      assert.equal(result.previous.disabled, false);
      assert.deepEqual(plain(result.account), { ...plain(account), disabled: true, linkCount: 0 });
      assert.equal((await store.findAccountByCodeHash(codeHash))?.disabled, true);
      const both = await store.updateAccount(account.uid, { maxLinks: 9, disabled: false });
      assert.deepEqual(both.outcome === 'updated' && plain(both.account), { ...plain(account), maxLinks: 9, disabled: false, linkCount: 0 });
      assert.deepEqual(plain(await store.findAccountByCodeHash(codeHash)), { ...plain(account), maxLinks: 9 });
    });

    test('updateAccount refuses a cap below the links held, and answers not_found for an unknown uid', async () => {
      const account = await createAccount(3);
      await store.createLink(link(account.uid, code('one')));
      await store.createLink(link(account.uid, code('two')));
      assert.deepEqual(await store.updateAccount(account.uid, { maxLinks: 1, disabled: true }), { outcome: 'below_held', linkCount: 2 });
      assert.equal((await store.listAccounts(account.uid - 1, 1))[0]?.disabled, false, 'nothing changed');
      assert.equal((await store.updateAccount(account.uid, { maxLinks: 2 })).outcome, 'updated');
      assert.equal(await store.createLink(link(account.uid, code('three'))), 'cap_reached');
      assert.deepEqual(await store.updateAccount(account.uid + 1_000_000, { maxLinks: 5 }), { outcome: 'not_found' });
    });

    test('searchLinks finds by text in shortcode or target, by target text, and pages by id', async () => {
      const account = await createAccount(10);
      const other = await createAccount(10);
      await store.createLink(link(account.uid, code('alpha'), `https://Phish-${tag}.example/login`));
      await store.createLink(link(other.uid, code('beta'), `https://ok-${tag}.example/`));
      await store.createLink(link(other.uid, code('gamma'), `https://sub.phish-${tag}.example/x`));
      const byText = await store.searchLinks({ after: 0, limit: 100, text: `phish-${tag}`.toLowerCase() });
      assert.deepEqual(byText.map((found) => found.link.shortCode), [code('alpha'), code('gamma')]);
      const details = byText[0]!.link;
      assert.deepEqual({ ...details }, {
        shortCode: code('alpha'), pointsTo: `https://Phish-${tag}.example/login`, createdBy: account.uid, accesses: 0,
        dateCreated: details.dateCreated, title: null, tags: [], expiresAt: null, maxVisits: null,
        forwardQuery: false, rules: null, protected: false,
      });
      const byCode = await store.searchLinks({ after: 0, limit: 100, text: code('beta').toLowerCase() });
      assert.deepEqual(byCode.map((found) => found.link.shortCode), [code('beta')]);
      const byTarget = await store.searchLinks({ after: 0, limit: 100, targetContains: [`ok-${tag}.example`.toLowerCase(), 'nothing-matches'] });
      assert.deepEqual(byTarget.map((found) => found.link.shortCode), [code('beta')]);
      const firstPage = await store.searchLinks({ after: 0, limit: 1, text: tag.toLowerCase() });
      assert.equal(firstPage.length, 1);
      const rest = await store.searchLinks({ after: firstPage[0]!.id, limit: 100, text: tag.toLowerCase() });
      assert.deepEqual([...firstPage, ...rest].map((found) => found.link.shortCode), [code('alpha'), code('beta'), code('gamma')]);
    });

    test('takeDownLink deletes any account\'s link, frees its slot and shortcode, and answers it', async () => {
      const account = await createAccount(1);
      const created = link(account.uid, code('bad'), 'https://bad.example/');
      await store.createLink({ ...created, tags: ['x'] });
      const removed = await store.takeDownLink(code('bad'));
      assert.deepEqual(plain(removed), {
        shortCode: code('bad'), pointsTo: 'https://bad.example/', createdBy: account.uid, accesses: 0,
        dateCreated: created.dateCreated, title: null, tags: ['x'], expiresAt: null, maxVisits: null,
        forwardQuery: false, rules: null, protected: false,
      }, 'its last state, details included');
      assert.equal(await store.findLink(code('bad')), undefined);
      assert.equal(await store.takeDownLink(code('bad')), undefined);
      assert.equal(await store.createLink(link(account.uid, code('good'))), 'created');
    });
  });
}
