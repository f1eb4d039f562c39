/**
 * The store contract (test/store/contract.ts) on domains, routing and passwords (CONTRACT §8,
 * ADR 26): one code per domain, forwardQuery, rules, protected links and their unlocked keys.
 */
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Store } from '../../../src/store/store.ts';
import { foldCase } from '../../../src/links/link-details.ts';
import { linkKey, UNLOCKED } from '../../../src/links/link-key.ts';
import { routesNothing, visit, sortedStats, tally, type ContractFixture } from './helpers.ts';

export function domainsAndRoutingContract(fixture: ContractFixture): void {
  const { code, createAccount, link } = fixture;
  describe('domains, routing and passwords (CONTRACT §8, ADR 26)', () => {
    let store: Store;
    let tag: string;
    beforeEach(() => {
      ({ store, tag } = fixture);
    });

    // A host unique to this test (the keys `host/code` of its links), and another one.
    const host = (stem: string): string => `${stem}-${tag}.example`.toLowerCase();
    const NONE = { forwardQuery: false, rules: null, passwordHash: null };
    const RULES = JSON.stringify([{ if: { device: ['mobile'] }, to: 'https://m.example/' }]);
    // Any text stands for a hash here: the store keeps it and never judges it.
    const HOUR = 500_000;
    const HASH = 'scrypt$N=32768,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA==$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g=';

    test('the same code once per domain key: the default code and host/code on two hosts are three links', async () => {
      const account = await createAccount();
      const other = await createAccount();
      const bare = code('same');
      const onA = linkKey(host('a'), bare);
      const onB = linkKey(host('b'), bare);
      assert.equal(await store.createLink(link(account.uid, bare, 'https://default.example/')), 'created');
      assert.equal(await store.createLink(link(account.uid, onA, 'https://a.example/')), 'created');
      assert.equal(await store.createLink(link(other.uid, onB, 'https://b.example/')), 'created');
      assert.equal(await store.createLink(link(other.uid, onA)), 'taken');
      assert.equal(await store.createLink(link(other.uid, bare)), 'taken');
      assert.equal((await store.resolveLink(onA))?.pointsTo, 'https://a.example/');
      assert.equal((await store.resolveLink(onA))?.accesses, 2);
      assert.equal((await store.findLink(bare))?.accesses, 0, 'never counted against the default domain\'s code');
      assert.equal((await store.findLink(onB))?.accesses, 0);
      assert.equal((await store.deleteLink(onA, other.uid)).status, 'not_owner');
      assert.equal((await store.deleteLink(onA, account.uid)).status, 'deleted');
      assert.equal((await store.findLink(bare))?.pointsTo, 'https://default.example/');
      assert.equal(await store.createLink(link(other.uid, onA, 'https://a2.example/')), 'created');
    });

    test('racing creates of one host/code grant it once, and the cap counts links on every domain', async () => {
      const accounts = await Promise.all(Array.from({ length: 10 }, () => createAccount(1)));
      const key = linkKey(host('race'), code('race'));
      const results = await Promise.all(accounts.map((account) => store.createLink(link(account.uid, key))));
      assert.deepEqual(tally(results), { created: 1, taken: 9 });
      const winner = accounts[results.indexOf('created')]!;
      assert.equal(await store.createLink(link(winner.uid, code('more'))), 'cap_reached', 'its one slot is taken by the domain link');
    });

    test('listLinkDetails filters by domain: \'\' the default domain, a host its own range only', async () => {
      const account = await createAccount();
      const a = host('a');
      const keys = [code('d1'), linkKey(a, code('a1')), linkKey(`${a}x`, code('ax')), linkKey(host('b'), code('b1')), linkKey(a, code('a2')), code('d2')];
      for (const key of keys) assert.equal(await store.createLink(link(account.uid, key)), 'created');
      const listed = async (query: Parameters<Store['listLinkDetails']>[1]) => (await store.listLinkDetails(account.uid, query)).links.map((row) => row.shortCode);
      assert.deepEqual(await listed({}), keys);
      assert.deepEqual(await listed({ domain: '' }), [code('d1'), code('d2')]);
      assert.deepEqual(await listed({ domain: a }), [linkKey(a, code('a1')), linkKey(a, code('a2'))], 'not the host that merely starts with it');
      assert.deepEqual(await listed({ domain: host('none') }), []);
      assert.deepEqual(await listed({ domain: a, order: 'newest' }), [linkKey(a, code('a2')), linkKey(a, code('a1'))]);
      const first = await store.listLinkDetails(account.uid, { domain: a, limit: 1 });
      assert.deepEqual(first.links.map((row) => row.shortCode), [linkKey(a, code('a1'))]);
      assert.ok(first.next !== undefined);
      const second = await store.listLinkDetails(account.uid, { domain: a, limit: 1, after: first.next });
      assert.deepEqual(second.links.map((row) => row.shortCode), [linkKey(a, code('a2'))]);
      assert.equal(second.next, undefined);
      assert.deepEqual(await listed({ domain: '', q: foldCase(code('d2')) }), [code('d2')]);
    });

    test('createLink and updateLink keep forwardQuery, rules and the hash; the details show protected, never the hash', async () => {
      const account = await createAccount();
      const key = linkKey(host('r'), code('routed'));
      await store.createLink({ ...link(account.uid, key, 'https://t.example/'), forwardQuery: true, rules: RULES, passwordHash: HASH });
      const [created] = (await store.listLinkDetails(account.uid)).links;
      assert.deepEqual([created!.forwardQuery, created!.rules, created!.protected], [true, RULES, true]);
      assert.ok(!JSON.stringify(created).includes(HASH), 'the details record holds no hash');
      assert.deepEqual({ ...(await store.findLink(key))?.routing }, { forwardQuery: true, rules: RULES, passwordHash: HASH });

      const updated = await store.updateLink(key, account.uid, { forwardQuery: false, rules: null, passwordHash: null });
      assert.ok(updated.status === 'updated');
      assert.deepEqual([updated.link.forwardQuery, updated.link.rules, updated.link.protected], [false, null, false]);
      assert.ok(!JSON.stringify(updated.link).includes('scrypt'));
      const cleared = (await store.findLink(key))?.routing;
      assert.ok(cleared === undefined || routesNothing(cleared), 'a link that routes nothing answers no routing (or one that routes nothing)');
      // A change of one field leaves the others.
      await store.updateLink(key, account.uid, { passwordHash: HASH });
      await store.updateLink(key, account.uid, { title: 'kept' });
      assert.deepEqual({ ...(await store.findLink(key))?.routing }, { ...NONE, passwordHash: HASH });
      assert.equal((await store.listLinkDetails(account.uid)).links[0]!.protected, true);
      // The admin views do not leak it either.
      const found = await store.searchLinks({ after: 0, limit: 10, text: foldCase(code('routed')) });
      assert.equal(found.length, 1);
      assert.ok(!JSON.stringify(found).includes(HASH));
      const removed = await store.takeDownLink(key);
      assert.ok(removed !== undefined && !JSON.stringify(removed).includes(HASH));
    });

    test('resolveLink answers a routed link\'s routing with its count', async () => {
      const account = await createAccount();
      const key = code('route');
      await store.createLink({ ...link(account.uid, key), forwardQuery: true, rules: RULES });
      const resolved = await store.resolveLink(key, undefined, visit(HOUR));
      assert.equal(resolved?.accesses, 1);
      assert.equal(resolved?.refused, undefined);
      assert.deepEqual({ ...resolved?.routing }, { forwardQuery: true, rules: RULES, passwordHash: null });
      const plainKey = code('plain');
      await store.createLink(link(account.uid, plainKey));
      const bare = await store.resolveLink(plainKey);
      assert.ok(bare?.routing === undefined || routesNothing(bare.routing), 'a plain link routes nothing');
    });

    test('a protected link is refused with "password" and counts nothing; its unlocked key counts it once, with statistics', async () => {
      const account = await createAccount();
      const key = linkKey(host('p'), code('locked'));
      await store.createLink({ ...link(account.uid, key, 'https://locked.example/'), passwordHash: HASH, maxVisits: 2 });
      const refused = await store.resolveLink(key, undefined, visit(HOUR));
      assert.equal(refused?.refused, 'password');
      assert.equal(refused?.accesses, 0);
      assert.equal(refused?.routing?.passwordHash, HASH, 'the hash comes back for the check');
      assert.equal((await store.findLink(key))?.refused, 'password');
      assert.equal((await store.readStats({ shortCode: key }, HOUR - 1, HOUR + 1)).series.length, 0, 'no statistics');

      const unlocked = await store.resolveLink(UNLOCKED + key, undefined, visit(HOUR));
      assert.equal(unlocked?.refused, undefined);
      assert.equal(unlocked?.accesses, 1);
      assert.equal(unlocked?.shortCode, key, 'answered under its own key');
      assert.equal(unlocked?.pointsTo, 'https://locked.example/');
      assert.equal((await store.findLink(key))?.accesses, 1);
      assert.deepEqual(sortedStats(await store.readStats({ shortCode: key }, HOUR - 1, HOUR + 1)).series, [{ hour: HOUR, visits: 1, bots: 0 }]);
      // The visit limit still holds for unlocked accesses, exactly.
      const racing = await Promise.all(Array.from({ length: 6 }, () => store.resolveLink(UNLOCKED + key)));
      assert.deepEqual(racing.filter((r) => r?.refused === undefined).map((r) => r?.accesses), [2]);
      assert.ok(racing.filter((r) => r?.refused !== undefined).every((r) => r?.refused === 'visit_limit'));
      assert.equal((await store.findLink(key))?.accesses, 2);
      // An unlocked key of an unknown link is unknown.
      assert.equal(await store.resolveLink(UNLOCKED + code('absent')), undefined);
    });

    test('the unlocked key of an open link counts like its key', async () => {
      const account = await createAccount();
      const key = code('open');
      await store.createLink(link(account.uid, key));
      assert.equal((await store.resolveLink(UNLOCKED + key))?.accesses, 1);
      assert.equal((await store.resolveLink(key))?.accesses, 2);
    });
  });
}
