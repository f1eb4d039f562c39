/**
 * The store contract (test/store/contract.ts) on link details and their lifecycle (CONTRACT
 * §7.1): titles, tags, expiry, visit limits, the list's filters, orders and pages, edits.
 */
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Store } from '../../../src/store/store.ts';
import { foldCase } from '../../../src/links/link-details.ts';
import type { LinkOrder, LinkPosition } from '../../../src/links/link-store.ts';
import { plain, type ContractFixture } from './helpers.ts';

export function detailsContract(fixture: ContractFixture): void {
  const { code, createAccount, link } = fixture;
  describe('link details and lifecycle (CONTRACT §7.1)', () => {
    let store: Store;
    beforeEach(() => {
      ({ store } = fixture);
    });

    const PAST = '2000-01-01T00:00:00.000Z';
    const FUTURE = '2999-01-01T00:00:00.000Z';

    test('createLink keeps the details and listLinkDetails answers them; none means null and []', async () => {
      const account = await createAccount();
      const dateCreated = '2026-03-04T05:06:07.089Z';
      await store.createLink({
        ...link(account.uid, code('full'), 'https://full.example/'), dateCreated,
        title: 'Spring sale', tags: ['promo', 'q_1'], expiresAt: FUTURE, maxVisits: 3,
      });
      await store.createLink({ ...link(account.uid, code('bare'), 'https://bare.example/'), dateCreated });
      const page = await store.listLinkDetails(account.uid);
      assert.equal(page.next, undefined);
      assert.deepEqual(page.links.map((row) => ({ ...row, tags: [...row.tags] })), [
        {
          shortCode: code('full'), pointsTo: 'https://full.example/', createdBy: account.uid, accesses: 0, dateCreated,
          title: 'Spring sale', tags: ['promo', 'q_1'], expiresAt: FUTURE, maxVisits: 3,
          forwardQuery: false, rules: null, protected: false,
        },
        {
          shortCode: code('bare'), pointsTo: 'https://bare.example/', createdBy: account.uid, accesses: 0, dateCreated,
          title: null, tags: [], expiresAt: null, maxVisits: null,
          forwardQuery: false, rules: null, protected: false,
        },
      ]);
      assert.deepEqual((await store.listLinkDetails(account.uid, { limit: 10 })).links.length, 2);
    });

    test('listLinkDetails filters by a lower-case substring of shortcode, target or title', async () => {
      const account = await createAccount();
      await store.createLink({ ...link(account.uid, code('AlphaOne'), 'https://one.example/') });
      await store.createLink({ ...link(account.uid, code('two'), 'https://Docs.Example/Guide') });
      await store.createLink({ ...link(account.uid, code('three'), 'https://three.example/'), title: 'Quarterly REPORT' });
      const matching = async (q: string) => (await store.listLinkDetails(account.uid, { q })).links.map((row) => row.shortCode);
      assert.deepEqual(await matching('alphaone'), [code('AlphaOne')]);
      assert.deepEqual(await matching('docs.example/guide'), [code('two')]);
      assert.deepEqual(await matching('report'), [code('three')]);
      assert.deepEqual(await matching('.example/'), [code('AlphaOne'), code('two'), code('three')]);
      assert.deepEqual(await matching('%'), []);
      assert.deepEqual(await matching('nothing-like-this'), []);
    });

    test('listLinkDetails folds the case of A–Z only, the same on every engine', async () => {
      const account = await createAccount();
      await store.createLink({ ...link(account.uid, code('umlaut'), 'https://example.com/Über'), title: 'Café ÉTÉ Straße' });
      const matching = async (q: string) => (await store.listLinkDetails(account.uid, { q: foldCase(q) })).links.map((row) => row.shortCode);
      assert.deepEqual(await matching('CAFé'), [code('umlaut')], 'A–Z folded');
      assert.deepEqual(await matching('CAFÉ'), [], 'É is not folded to é');
      assert.deepEqual(await matching('été'), [], 'nor é to É');
      assert.deepEqual(await matching('ÉTÉ'), [code('umlaut')]);
      assert.deepEqual(await matching('/Über'), [code('umlaut')]);
      assert.deepEqual(await matching('/über'), []);
      assert.deepEqual(await matching('STRASSE'), [], 'no full case folding: ß is not ss');
      assert.deepEqual(await matching('STRAßE'), [code('umlaut')]);
    });

    test('listLinkDetails keeps links carrying every given tag, whole tags only', async () => {
      const account = await createAccount();
      await store.createLink({ ...link(account.uid, code('t1')), tags: ['a_b', 'x'] });
      await store.createLink({ ...link(account.uid, code('t2')), tags: ['axb', 'x'] });
      await store.createLink({ ...link(account.uid, code('t3')), tags: ['a'] });
      await store.createLink({ ...link(account.uid, code('t4')) });
      const tagged = async (...tags: string[]) => (await store.listLinkDetails(account.uid, { tags })).links.map((row) => row.shortCode);
      assert.deepEqual(await tagged('a_b'), [code('t1')]);
      assert.deepEqual(await tagged('x'), [code('t1'), code('t2')]);
      assert.deepEqual(await tagged('x', 'axb'), [code('t2')]);
      assert.deepEqual(await tagged('a'), [code('t3')]);
      assert.deepEqual(await tagged('a', 'x'), []);
      assert.deepEqual(await tagged('b'), []);
    });

    test('listLinkDetails pages by position: every link once, in order, with next until the last page', async () => {
      const account = await createAccount(50);
      const other = await createAccount();
      for (let i = 0; i < 23; i++) {
        await store.createLink({ ...link(account.uid, code(`p${i}`)), tags: i % 2 === 0 ? ['even'] : [] });
        if (i % 5 === 0) await store.createLink(link(other.uid, code(`o${i}`)));
      }
      const walk = async (query: { tags?: string[]; limit: number; order?: LinkOrder }) => {
        const seen: string[] = [];
        let after: LinkPosition | undefined;
        for (let pages = 0; pages < 30; pages++) {
          const page = await store.listLinkDetails(account.uid, after === undefined ? query : { ...query, after });
          assert.ok(page.links.length <= query.limit);
          seen.push(...page.links.map((row) => row.shortCode));
          if (page.next === undefined) return { seen, pages: pages + 1 };
          assert.equal(page.links.length, query.limit, 'a page before the last one is full');
          after = page.next;
        }
        throw new Error('paging did not end');
      };
      const all = Array.from({ length: 23 }, (_, i) => code(`p${i}`));
      assert.deepEqual(await walk({ limit: 5 }), { seen: all, pages: 5 });
      assert.deepEqual(await walk({ limit: 23 }), { seen: all, pages: 1 });
      assert.deepEqual(await walk({ limit: 1000 }), { seen: all, pages: 1 });
      assert.deepEqual((await walk({ tags: ['even'], limit: 4 })).seen, all.filter((_, i) => i % 2 === 0));
      // A link deleted between pages is simply not there; nothing else shifts.
      const first = await store.listLinkDetails(account.uid, { limit: 3 });
      await store.deleteLink(code('p3'), account.uid);
      const second = await store.listLinkDetails(account.uid, { limit: 3, after: first.next! });
      assert.deepEqual(second.links.map((row) => row.shortCode), [code('p4'), code('p5'), code('p6')]);
      const kept = all.filter((shortCode) => shortCode !== code('p3'));
      assert.deepEqual(await walk({ limit: 4, order: 'newest' }), { seen: [...kept].reverse(), pages: 6 });
      assert.deepEqual((await walk({ tags: ['even'], limit: 5, order: 'newest' })).seen, all.filter((_, i) => i % 2 === 0).reverse());
    });

    test('listLinkDetails orders by visits, most first, ties newest first, and pages through that order', async () => {
      const account = await createAccount(50);
      const visits = [3, 0, 5, 3, 0, 1, 5, 2];
      for (const [i, count] of visits.entries()) {
        await store.createLink(link(account.uid, code(`v${i}`)));
        for (let n = 0; n < count; n++) await store.resolveLink(code(`v${i}`));
      }
      // Most visits first; equal counts newest (the later created) first.
      const expected = ['v6', 'v2', 'v3', 'v0', 'v7', 'v5', 'v4', 'v1'].map(code);
      const first = await store.listLinkDetails(account.uid, { order: 'visits' });
      assert.deepEqual(first.links.map((row) => row.shortCode), expected);
      assert.deepEqual(first.links.map((row) => row.accesses), [5, 5, 3, 3, 2, 1, 0, 0]);
      for (const limit of [1, 3, 8]) {
        const seen: string[] = [];
        let after: LinkPosition | undefined;
        do {
          const page = await store.listLinkDetails(account.uid, { order: 'visits', limit, ...(after === undefined ? {} : { after }) });
          seen.push(...page.links.map((row) => row.shortCode));
          after = page.next;
        } while (after !== undefined);
        assert.deepEqual(seen, expected, `pages of ${limit}`);
      }
    });

    test('updateLink changes only the fields given, clears with null or [], keeps the code and the count', async () => {
      const account = await createAccount();
      const shortCode = code('edit');
      await store.createLink({ ...link(account.uid, shortCode, 'https://before.example/'), title: 'Before', tags: ['old'] });
      await store.resolveLink(shortCode);
      const retarget = await store.updateLink(shortCode, account.uid, { pointsTo: 'https://after.example/' });
      assert.equal(retarget.status, 'updated');
      assert.ok(retarget.status === 'updated');
      assert.deepEqual(
        { ...retarget.link, tags: [...retarget.link.tags] },
        { ...(await store.listLinkDetails(account.uid)).links[0]!, tags: ['old'] },
      );
      assert.equal(retarget.link.pointsTo, 'https://after.example/');
      assert.equal(retarget.link.title, 'Before');
      assert.equal(retarget.link.accesses, 1);
      const details = await store.updateLink(shortCode, account.uid, { title: 'After', tags: ['n1', 'n2'], expiresAt: FUTURE, maxVisits: 9 });
      assert.ok(details.status === 'updated');
      assert.deepEqual([details.link.title, [...details.link.tags], details.link.expiresAt, details.link.maxVisits], ['After', ['n1', 'n2'], FUTURE, 9]);
      const cleared = await store.updateLink(shortCode, account.uid, { title: null, tags: [], expiresAt: null, maxVisits: null });
      assert.ok(cleared.status === 'updated');
      assert.deepEqual([cleared.link.title, [...cleared.link.tags], cleared.link.expiresAt, cleared.link.maxVisits], [null, [], null, null]);
      assert.equal(cleared.link.pointsTo, 'https://after.example/');
      assert.deepEqual(plain(await store.resolveLink(shortCode)), { shortCode, pointsTo: 'https://after.example/', createdBy: account.uid, accesses: 2 });
    });

    test('updateLink answers not_found and not_owner and changes nothing then', async () => {
      const owner = await createAccount();
      const stranger = await createAccount();
      await store.createLink(link(owner.uid, code('mine'), 'https://mine.example/'));
      assert.deepEqual(await store.updateLink(code('absent'), owner.uid, { title: 'x' }), { status: 'not_found' });
      assert.deepEqual(await store.updateLink(code('mine'), stranger.uid, { pointsTo: 'https://theirs.example/' }), { status: 'not_owner' });
      assert.equal((await store.findLink(code('mine')))?.pointsTo, 'https://mine.example/');
    });

    test('a link at its visit limit is refused and not counted; raising the limit lets it resolve again', async () => {
      const account = await createAccount();
      const shortCode = code('limited');
      await store.createLink({ ...link(account.uid, shortCode), maxVisits: 2 });
      assert.deepEqual(plain(await store.resolveLink(shortCode)), { shortCode, pointsTo: 'https://example.com/', createdBy: account.uid, accesses: 1 });
      assert.equal((await store.resolveLink(shortCode))?.accesses, 2);
      assert.equal((await store.findLink(shortCode))?.refused, 'visit_limit');
      const refused = await store.resolveLink(shortCode);
      assert.deepEqual(plain(refused), { shortCode, pointsTo: 'https://example.com/', createdBy: account.uid, accesses: 2, refused: 'visit_limit' });
      assert.equal((await store.findLink(shortCode))?.accesses, 2);
      await store.updateLink(shortCode, account.uid, { maxVisits: 3 });
      assert.equal((await store.findLink(shortCode))?.refused, undefined);
      assert.equal((await store.resolveLink(shortCode))?.accesses, 3);
      assert.equal((await store.resolveLink(shortCode))?.refused, 'visit_limit');
      // Lowering the limit below the count refuses at once; the count never goes back.
      await store.updateLink(shortCode, account.uid, { maxVisits: 1 });
      assert.deepEqual([(await store.resolveLink(shortCode))?.refused, (await store.findLink(shortCode))?.accesses], ['visit_limit', 3]);
      await store.updateLink(shortCode, account.uid, { maxVisits: null });
      assert.equal((await store.resolveLink(shortCode))?.accesses, 4);
    });

    test('an expired link is refused and not counted, judged at the time given; clearing the expiry revives it', async () => {
      const account = await createAccount();
      const shortCode = code('expiring');
      await store.createLink({ ...link(account.uid, shortCode), expiresAt: '2030-06-01T12:00:00.000Z' });
      assert.equal((await store.resolveLink(shortCode, '2030-06-01T11:59:59.999Z'))?.accesses, 1);
      assert.equal((await store.resolveLink(shortCode, '2030-06-01T12:00:00.000Z'))?.refused, 'expired');
      assert.equal((await store.findLink(shortCode, '2030-06-01T12:00:00.000Z'))?.refused, 'expired');
      assert.equal((await store.findLink(shortCode, '2030-06-01T11:00:00.000Z'))?.refused, undefined);
      await store.createLink({ ...link(account.uid, code('old')), expiresAt: PAST });
      assert.deepEqual(plain(await store.resolveLink(code('old'))), {
        shortCode: code('old'), pointsTo: 'https://example.com/', createdBy: account.uid, accesses: 0, refused: 'expired',
      });
      await store.updateLink(code('old'), account.uid, { expiresAt: null });
      assert.equal((await store.resolveLink(code('old')))?.accesses, 1);
      assert.equal((await store.findLink(shortCode, '2030-06-02T00:00:00.000Z'))?.accesses, 1);
    });

    test('with MaxVisits N, exactly N of many concurrent resolutions succeed, with the counts 1 to N', async () => {
      const account = await createAccount();
      for (const [limit, racers] of [[1, 50], [7, 60], [100, 150]] as const) {
        const shortCode = code(`cap${limit}`);
        await store.createLink({ ...link(account.uid, shortCode), maxVisits: limit });
        const results = await Promise.all(Array.from({ length: racers }, () => store.resolveLink(shortCode)));
        const granted = results.filter((row) => row?.refused === undefined).map((row) => row!.accesses);
        assert.deepEqual(granted.sort((a, b) => a - b), Array.from({ length: limit }, (_, i) => i + 1));
        assert.ok(results.every((row) => row?.refused === undefined || (row.refused === 'visit_limit' && row.accesses === limit)));
        assert.equal((await store.findLink(shortCode))?.accesses, limit);
      }
    });

    test('edits racing resolutions: counts stay distinct and never pass the limit in force when counted', async () => {
      const account = await createAccount();
      const shortCode = code('edited');
      await store.createLink({ ...link(account.uid, shortCode), maxVisits: 5 });
      const resolutions: Promise<unknown>[] = [];
      const answers: number[] = [];
      for (let i = 0; i < 60; i++) {
        resolutions.push(store.resolveLink(shortCode).then((row) => void (row?.refused === undefined && answers.push(row!.accesses))));
        if (i === 20) resolutions.push(store.updateLink(shortCode, account.uid, { maxVisits: 12 }));
        if (i === 40) resolutions.push(store.updateLink(shortCode, account.uid, { title: 'renamed', maxVisits: 20 }));
      }
      await Promise.all(resolutions);
      const total = (await store.findLink(shortCode))!.accesses;
      assert.ok(total <= 20, `total ${total}`);
      assert.deepEqual(answers.sort((a, b) => a - b), Array.from({ length: total }, (_, i) => i + 1));
    });

    test('a deleted limited link stops resolving, also with resolutions in flight', async () => {
      const account = await createAccount();
      const shortCode = code('gone');
      await store.createLink({ ...link(account.uid, shortCode), maxVisits: 30 });
      const racing = Array.from({ length: 40 }, () => store.resolveLink(shortCode));
      const deleted = store.deleteLink(shortCode, account.uid);
      const results = await Promise.all(racing);
      assert.equal((await deleted).status, 'deleted');
      const granted = results.filter((row) => row !== undefined && row.refused === undefined).map((row) => row!.accesses);
      assert.deepEqual(granted.sort((a, b) => a - b), Array.from({ length: granted.length }, (_, i) => i + 1));
      assert.ok(granted.length <= 30);
      assert.equal(await store.resolveLink(shortCode), undefined);
    });
  });
}
