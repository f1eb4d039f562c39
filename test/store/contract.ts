/**
 * The store contract: one suite that every Store implementation must pass unchanged. It
 * drives the real engine through the Store interface only, assumes nothing about which
 * engine it is, and does not rely on the database being empty: every shortcode it uses
 * carries a random per-test suffix, so a backend may share one database between tests.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AccountRecord, LinkRecord, NewLink, StatsRows, Store } from '../../src/store/store.ts';
import type { Visit, VisitClasses } from '../../src/stats/visit.ts';
import { deliveryData, type OutboxEvent } from '../../src/store/webhooks.ts';
import { foldCase } from '../../src/links/link-details.ts';
import type { LinkOrder, LinkPosition } from '../../src/links/link-store.ts';
import { linkKey, UNLOCKED } from '../../src/links/link-key.ts';

/** What a backend's factory hands the suite for one test. */
export interface OpenedStore {
  /** A freshly opened store with its migrations applied. */
  readonly store: Store;
  /**
   * Closes every store this factory opened that is still open (close() must be idempotent)
   * and removes the database.
   */
  cleanup(): Promise<void>;
  /**
   * Opens the same database again, after the suite has closed `store`. Backends that cannot
   * (an in-memory database) leave it out and the persistence tests are skipped.
   */
  reopen?(): Promise<Store>;
}

/**
 * An OpenedStore whose stores all come from `open` (so `reopen` reaches the same database);
 * cleanup closes every one of them, then runs `remove`.
 */
export async function reopenableStore(open: () => Promise<Store>, remove: () => void = () => {}): Promise<OpenedStore> {
  const opened: Store[] = [];
  const openOne = async (): Promise<Store> => {
    const store = await open();
    opened.push(store);
    return store;
  };
  return {
    store: await openOne(),
    reopen: openOne,
    async cleanup() {
      for (const store of opened) await store.close();
      remove();
    },
  };
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomTag(length: number): string {
  return Array.from(randomBytes(length), (byte) => ALPHANUMERIC[byte % 62]).join('');
}

/** A resolved link's routing that routes nothing: the same, by the Store's word, as none read at all. */
function routesNothing(routing: unknown): boolean {
  if (typeof routing !== 'object' || routing === null) return false;
  const { forwardQuery, rules, passwordHash } = routing as Record<string, unknown>;
  return forwardQuery === false && rules === null && passwordHash === null && Object.keys(routing).length === 3;
}

/**
 * The record as a plain object, so that drivers returning null-prototype rows compare equal.
 * A resolved link's `routing` that routes nothing is left out (ResolvedLink: "absent means
 * none of it"), so the cases that are not about routing compare the four Link fields alone;
 * the routing cases look at `routing` themselves.
 */
function plain<T extends object>(record: T | undefined): T | undefined {
  if (record === undefined) return undefined;
  const copy = { ...record } as Record<string, unknown>;
  if ('routing' in copy && routesNothing(copy.routing)) delete copy.routing;
  return copy as T;
}

function plainAll<T extends object>(records: readonly T[]): T[] {
  return records.map((record) => ({ ...record }));
}

/** A visit of the given hour, a human on desktop Chrome unless `classes` says otherwise. */
function visit(hour: number, classes: Partial<VisitClasses> = {}): Visit {
  const full: VisitClasses = { bot: false, referrer: '(direct)', country: 'ZZ', browser: 'Chrome', os: 'Windows', device: 'desktop', ...classes };
  return { ...full, hour, key: JSON.stringify([hour, full]) };
}

/** Statistics rows in a fixed order, so that engines compare equal. */
function sortedStats(rows: StatsRows): StatsRows {
  return {
    series: rows.series.map((r) => ({ ...r })).sort((a, b) => a.hour - b.hour),
    values: rows.values.map((r) => ({ ...r })).sort((a, b) => a.dimension - b.dimension || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0)),
  };
}

function valuesOf(rows: StatsRows, dimension: number): Record<string, number> {
  return Object.fromEntries(rows.values.filter((r) => r.dimension === dimension).map((r) => [r.value, r.visits]));
}

function tally<T extends string>(results: readonly T[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const result of results) counts[result] = (counts[result] ?? 0) + 1;
  return counts;
}

export function storeContract(name: string, open: () => Promise<OpenedStore>): void {
  describe(`store contract: ${name}`, () => {
    let opened: OpenedStore;
    let store: Store;
    let tag: string;

    beforeEach(async () => {
      opened = await open();
      store = opened.store;
      tag = randomTag(8);
    });

    afterEach(async () => {
      await opened.cleanup();
    });

    /** A shortcode unique to this test run: the given stem plus the test's random suffix. */
    const code = (stem: string): string => `${stem}-${tag}`;

    function createAccount(maxLinks = 20, target: Store = store): Promise<AccountRecord> {
      return target.createAccount({
        codeHash: randomBytes(32).toString('hex'),
        dateCreated: new Date().toISOString(),
        maxLinks,
      });
    }

    function link(createdBy: number, shortCode: string, pointsTo = 'https://example.com/'): NewLink {
      return { shortCode, pointsTo, createdBy, dateCreated: new Date().toISOString() };
    }

    describe('accounts', () => {
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

    describe('createLink', () => {
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

    describe('resolveLink and findLink', () => {
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

    describe('account control (rotate, delete)', () => {
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

    describe('administration', () => {
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

    describe('races through the store', () => {
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

    describe('link details and lifecycle (CONTRACT §7.1)', () => {
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

    describe('domains, routing and passwords (CONTRACT §8, ADR 26)', () => {
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
        assert.deepEqual({ ...(await store.findLink(key))?.routing }, NONE);
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

    describe('statistics', () => {
      // An hour well inside the hourly window, and one old enough to be folded into its day.
      const HOUR = 500_000; // 2027-01-15T08:00Z
      const OLD_DAY = 489_984; // 2025-11-24T00:00Z
      const OLD = OLD_DAY + 5;

      test('records each counted visit with its count, and reads it before any fold', async () => {
        const account = await createAccount();
        const shortCode = code('stats');
        await store.createLink(link(account.uid, shortCode));
        await Promise.all([
          store.resolveLink(shortCode, undefined, visit(HOUR)),
          store.resolveLink(shortCode, undefined, visit(HOUR, { bot: true, device: 'bot', browser: 'Other', os: 'Other' })),
          store.resolveLink(shortCode, undefined, visit(HOUR + 1, { referrer: 'news.example', country: 'FR' })),
          store.resolveLink(shortCode),
        ]);
        assert.equal(await store.resolveLink(code('missing'), undefined, visit(HOUR)), undefined);
        const rows = await store.readStats({ shortCode }, HOUR - 24, HOUR + 24);
        assert.deepEqual(sortedStats(rows).series, [{ hour: HOUR, visits: 2, bots: 1 }, { hour: HOUR + 1, visits: 1, bots: 0 }]);
        assert.deepEqual(valuesOf(rows, 1), { '(direct)': 2, 'news.example': 1 });
        assert.deepEqual(valuesOf(rows, 2), { ZZ: 2, FR: 1 });
        assert.deepEqual(valuesOf(rows, 5), { desktop: 2, bot: 1 });
        assert.deepEqual(sortedStats(await store.readStats({ shortCode }, HOUR + 1, HOUR + 2)).series, [{ hour: HOUR + 1, visits: 1, bots: 0 }]);
        assert.deepEqual((await store.readStats({ accountUid: account.uid }, HOUR - 24, HOUR + 24)).series.length, 2);
      });

      test('concurrent visits of many links add up to their accesses, folded or not', async () => {
        const account = await createAccount();
        const codes = [code('s1'), code('s2'), code('s3')];
        for (const c of codes) await store.createLink(link(account.uid, c));
        await Promise.all(Array.from({ length: 90 }, (_, i) =>
          store.resolveLink(codes[i % 3]!, undefined, visit(HOUR, { referrer: `r${i % 7}.example`, bot: i % 5 === 0 }))));
        const before = sortedStats(await store.readStats({ accountUid: account.uid }, HOUR, HOUR + 1));
        while (await store.foldStats() > 0);
        const after = sortedStats(await store.readStats({ accountUid: account.uid }, HOUR, HOUR + 1));
        assert.deepEqual(after, before);
        for (const c of codes) {
          const accesses = (await store.findLink(c))!.accesses;
          const series = (await store.readStats({ shortCode: c }, HOUR, HOUR + 1)).series;
          assert.equal(series.reduce((sum, r) => sum + r.visits, 0), accesses);
        }
        assert.deepEqual(after.series, [{ hour: HOUR, visits: 90, bots: 18 }]);
      });

      test('folds the tuples of hours that are over into the rollups in chunks, keeping every total', async () => {
        const account = await createAccount();
        const codes = [code('t1'), code('t2'), code('t3')];
        for (const c of codes) await store.createLink(link(account.uid, c));
        // 3 links × 2 hours × 90 referrers: 540 tuples, more than one chunk on SQLite (500).
        for (const hour of [HOUR, HOUR + 1]) {
          await Promise.all(codes.flatMap((c) => Array.from({ length: 90 }, (_, i) =>
            store.resolveLink(c, undefined, visit(hour, { referrer: `r${String(i).padStart(2, '0')}.example`, bot: i % 3 === 0 })))));
        }
        const total = (rows: StatsRows, dimension: number) =>
          Object.values(valuesOf(rows, dimension)).reduce((a, b) => a + b, 0);
        const before = await store.readStats({ accountUid: account.uid }, HOUR, HOUR + 2);
        while (await store.foldStats({ hoursBefore: HOUR + 2 }) > 0);
        assert.equal(await store.foldStats({ hoursBefore: HOUR + 2 }), 0);
        const after = await store.readStats({ accountUid: account.uid }, HOUR, HOUR + 2);
        assert.deepEqual(sortedStats(after).series, sortedStats(before).series);
        assert.deepEqual(sortedStats(after).series, [{ hour: HOUR, visits: 270, bots: 90 }, { hour: HOUR + 1, visits: 270, bots: 90 }]);
        for (const dimension of [1, 2, 3, 4, 5]) assert.equal(total(after, dimension), 540);
        // Each link-hour kept 50 referrers by name (the first 50) and summed 40 as (other).
        const one = await store.readStats({ shortCode: codes[1]! }, HOUR + 1, HOUR + 2);
        assert.equal(valuesOf(one, 1)['(other)'], 40);
        assert.equal(Object.keys(valuesOf(one, 1)).length, 51);
        for (const c of codes) assert.equal((await store.findLink(c))!.accesses, 180);
      });

      test('keeps 50 values by name per link, hour and dimension, the rest summed as (other)', async () => {
        const account = await createAccount();
        const shortCode = code('many');
        await store.createLink(link(account.uid, shortCode));
        // r0 gets 3 visits, r1 2, the other 58 one each: the 50 kept are r0, r1 and the first 48 by name.
        const referrers = Array.from({ length: 60 }, (_, i) => `r${String(i).padStart(2, '0')}.example`);
        const visits = [...referrers, referrers[0]!, referrers[0]!, referrers[1]!];
        await Promise.all(visits.map((referrer) => store.resolveLink(shortCode, undefined, visit(HOUR, { referrer }))));
        // While the hour is not over, its visits wait as tuples, every value by name (ADR 20).
        while (await store.foldStats({ hoursBefore: HOUR }) > 0);
        assert.equal(Object.keys(valuesOf(await store.readStats({ shortCode }, HOUR, HOUR + 1), 1)).length, 60);
        while (await store.foldStats({ hoursBefore: HOUR + 1 }) > 0);
        const kept = valuesOf(await store.readStats({ shortCode }, HOUR, HOUR + 1), 1);
        assert.equal(Object.keys(kept).length, 51);
        assert.equal(kept['r00.example'], 3);
        assert.equal(kept['r01.example'], 2);
        assert.equal(kept['(other)'], 10);
        assert.equal(Object.values(kept).reduce((a, b) => a + b, 0), visits.length);
      });

      test('folds hours older than the given hour into their day, keeping every total', async () => {
        const account = await createAccount();
        const shortCode = code('old');
        await store.createLink(link(account.uid, shortCode));
        for (const hour of [OLD, OLD + 1, OLD + 1, OLD + 30, HOUR]) await store.resolveLink(shortCode, undefined, visit(hour, { country: hour === OLD ? 'DE' : 'ZZ' }));
        while (await store.foldStats() > 0);
        const before = await store.readStats({ shortCode }, OLD - 100, HOUR + 1);
        await store.foldStats({ daysBeforeHour: OLD_DAY + 48 });
        const after = sortedStats(await store.readStats({ shortCode }, OLD - 100, HOUR + 1));
        assert.deepEqual(after.series, [
          { hour: OLD_DAY, visits: 3, bots: 0 },
          { hour: OLD_DAY + 24, visits: 1, bots: 0 },
          { hour: HOUR, visits: 1, bots: 0 },
        ]);
        assert.deepEqual(after.values, sortedStats(before).values);
        assert.deepEqual(valuesOf(after, 2), { DE: 1, ZZ: 4 });
      });

      test('records only the visits that were counted: a visit limit, an expiry, an unknown link', async () => {
        const account = await createAccount();
        const limited = code('limited');
        const expired = code('expired');
        await store.createLink({ ...link(account.uid, limited), maxVisits: 3 });
        await store.createLink({ ...link(account.uid, expired), expiresAt: '2000-01-01T00:00:00.000Z' });
        const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) =>
          store.resolveLink(limited, undefined, visit(HOUR, { bot: i % 2 === 0 }))));
        assert.equal(outcomes.filter((o) => o?.refused === undefined).length, 3);
        assert.equal((await store.resolveLink(expired, undefined, visit(HOUR)))?.refused, 'expired');
        const rows = await store.readStats({ accountUid: account.uid }, HOUR, HOUR + 1);
        assert.equal(rows.series.reduce((sum, r) => sum + r.visits, 0), 3);
        assert.equal(Object.values(valuesOf(rows, 1)).reduce((a, b) => a + b, 0), 3);
      });

      test('forgets a deleted link\'s statistics; its shortcode made again starts from nothing', async () => {
        const account = await createAccount();
        const shortCode = code('gone');
        await store.createLink(link(account.uid, shortCode));
        await store.resolveLink(shortCode, undefined, visit(HOUR));
        while (await store.foldStats() > 0);
        assert.equal((await store.deleteLink(shortCode, account.uid)).status, 'deleted');
        await store.createLink(link(account.uid, shortCode));
        assert.deepEqual((await store.readStats({ shortCode }, HOUR, HOUR + 1)).series, []);
        assert.deepEqual((await store.readStats({ accountUid: account.uid }, HOUR, HOUR + 1)).series, []);
        await store.foldStats({ daysBeforeHour: 0 });
        assert.deepEqual((await store.readStats({ accountUid: account.uid }, HOUR, HOUR + 1)).series, []);
      });
    });

    describe('webhooks (CONTRACT §7.5)', () => {
      const ALL_TYPES = ['link.created', 'link.updated', 'link.deleted', 'link.visited', 'account.rotated'] as const;
      function webhook(accountUid: number, events: readonly (typeof ALL_TYPES)[number][] = ALL_TYPES) {
        return {
          id: `wh_${randomBytes(12).toString('hex')}`, accountUid, url: 'https://receiver.example/hook', events: [...events],
          dateCreated: new Date().toISOString(), sealedSecret: 'v1.sealed',
        };
      }
      /** Every event of one webhook, claimed and delivered one by one (a claim takes one per webhook). */
      async function takeAll(webhookId: string, owner = 'contract'): Promise<OutboxEvent[]> {
        const taken: OutboxEvent[] = [];
        for (;;) {
          const events = (await store.webhooks.claim({ now: Date.now(), leaseMs: 60_000, owner, limit: 100, busyWebhooks: [] }))
            .filter((event) => event.webhookId === webhookId);
          if (events.length === 0) return taken;
          for (const event of events) {
            taken.push(event);
            const delivery = { eventId: event.eventId, type: event.type, attempt: 1, time: new Date().toISOString(), status: 200, error: null };
            await store.webhooks.settle(event, owner, { outcome: 'delivered', delivery });
          }
        }
      }

      test('at most 5 per account, however many creates race', async () => {
        const account = await createAccount();
        const results = await Promise.all(Array.from({ length: 12 }, () => store.webhooks.create(webhook(account.uid))));
        assert.deepEqual(tally(results), { created: 5, cap_reached: 7 });
        assert.equal((await store.webhooks.list(account.uid)).length, 5);
        const other = await createAccount();
        assert.equal(await store.webhooks.create(webhook(other.uid)), 'created', 'the cap is per account');
      });

      test('a change writes its event in its own transaction, only for the types subscribed', async () => {
        const account = await createAccount();
        const hook = webhook(account.uid, ['link.created', 'link.deleted', 'account.rotated']);
        assert.equal(await store.webhooks.create(hook), 'created');
        assert.equal(await store.createLink(link(account.uid, code('wa'))), 'created');
        assert.equal(await store.createLink(link(account.uid, code('wa'))), 'taken');
        assert.equal((await store.updateLink(code('wa'), account.uid, { title: 'T' })).status, 'updated');
        assert.equal((await store.deleteLink(code('wa'), account.uid)).status, 'deleted');
        const events = await takeAll(hook.id);
        assert.deepEqual(events.map((event) => event.type), ['link.created', 'link.deleted']);
        const deleted = JSON.parse(events[1]!.data) as { ShortCode: string; Title: string };
        assert.equal(deleted.ShortCode, code('wa'));
        assert.equal(deleted.Title, 'T', 'the link\'s last state');
        assert.notEqual(events[0]!.eventId, events[1]!.eventId);
        assert.equal(events[0]!.url, hook.url);
        assert.equal(events[0]!.sealedSecret, hook.sealedSecret);
        const log = await store.webhooks.deliveries(hook.id, account.uid);
        assert.equal(log.status, 'found');
        assert.deepEqual(log.status === 'found' ? log.deliveries.map((d) => d.type) : [], ['link.deleted', 'link.created']);
        assert.deepEqual(await store.webhooks.deliveries(hook.id, account.uid + 1000), { status: 'not_owner' });
      });

      test('a takedown writes link.deleted (the link\'s last state) for the owner\'s subscribed webhooks, in its own transaction', async () => {
        const account = await createAccount();
        const hook = webhook(account.uid, ['link.deleted']);
        const deaf = webhook(account.uid, ['link.created', 'link.updated']);
        assert.equal(await store.webhooks.create(hook), 'created');
        assert.equal(await store.webhooks.create(deaf), 'created');
        assert.equal(await store.createLink(link(account.uid, code('td'), 'https://phish.example/')), 'created');
        assert.equal((await store.updateLink(code('td'), account.uid, { title: 'Last' })).status, 'updated');
        await takeAll(hook.id);
        await takeAll(deaf.id);
        assert.equal((await store.takeDownLink(code('td')))?.createdBy, account.uid);
        const events = await takeAll(hook.id);
        assert.deepEqual(events.map((event) => event.type), ['link.deleted']);
        const data = JSON.parse(events[0]!.data) as { ShortCode: string; PointsTo: string; CreatedBy: number; Title: string };
        assert.deepEqual([data.ShortCode, data.PointsTo, data.CreatedBy, data.Title], [code('td'), 'https://phish.example/', account.uid, 'Last']);
        assert.deepEqual(await takeAll(deaf.id), [], 'only to webhooks subscribed to link.deleted');
        assert.equal(await store.takeDownLink(code('td')), undefined);
        assert.deepEqual(await takeAll(hook.id), [], 'a takedown of nothing writes nothing');
      });

      test('each change writes its event with the id its caller gave (the live stream shows the same id)', async () => {
        const codeHash = randomBytes(32).toString('hex');
        const account = await store.createAccount({ codeHash, dateCreated: new Date().toISOString(), maxLinks: 5 });
        const hook = webhook(account.uid);
        assert.equal(await store.webhooks.create(hook), 'created');
        const id = (name: string) => `msg_${name.padEnd(32, '0')}`;
        assert.equal(await store.createLink({ ...link(account.uid, code('ia')), eventId: id('c') }), 'created');
        assert.equal(await store.createLink({ ...link(account.uid, code('ib')), eventId: id('d') }), 'created');
        assert.equal((await store.updateLink(code('ia'), account.uid, { title: 'T' }, id('e'))).status, 'updated');
        assert.equal((await store.deleteLink(code('ia'), account.uid, id('f'))).status, 'deleted');
        assert.equal((await store.takeDownLink(code('ib'), id('a')))?.shortCode, code('ib'));
        assert.equal((await store.rotateAccessCode(account.uid, codeHash, randomBytes(32).toString('hex'), id('b')))?.uid, account.uid);
        const events = await takeAll(hook.id);
        assert.deepEqual(events.map((event) => [event.type, event.eventId]), [
          ['link.created', id('c')], ['link.created', id('d')], ['link.updated', id('e')], ['link.deleted', id('f')], ['link.deleted', id('a')],
          ['account.rotated', id('b')],
        ]);
      });

      test('a claimed event is leased: no other dispatcher gets it until the lease passes; a lost lease settles nothing', async () => {
        const account = await createAccount();
        const hook = webhook(account.uid, ['link.created']);
        await store.webhooks.create(hook);
        await store.createLink(link(account.uid, code('wl')));
        const now = Date.now();
        const claim = (owner: string, at: number) => store.webhooks.claim({ now: at, leaseMs: 1000, owner, limit: 10, busyWebhooks: [] })
          .then((events) => events.filter((event) => event.webhookId === hook.id));
        const [first, second] = await Promise.all([claim('a', now), claim('b', now)]);
        assert.equal(first!.length + second!.length, 1, 'one dispatcher got it');
        assert.deepEqual(await claim('b', now + 500), []);
        assert.deepEqual(await store.webhooks.claim({ now: now + 2000, leaseMs: 1000, owner: 'c', limit: 10, busyWebhooks: [hook.id] }).then((e) => e.filter((x) => x.webhookId === hook.id)), [], 'a busy webhook is skipped');
        const [taken] = await claim('c', now + 2000);
        assert.ok(taken, 'taken again once the lease passed');
        const holder = first!.length === 1 ? 'a' : 'b';
        const delivery = { eventId: taken.eventId, type: taken.type, attempt: 1, time: new Date().toISOString(), status: 200, error: null };
        await store.webhooks.settle(taken, holder, { outcome: 'delivered', delivery });
        assert.equal((await claim('d', now + 4000)).length, 1, 'the old holder could not settle it');
        await store.webhooks.settle(taken, 'd', { outcome: 'retry', delivery: { ...delivery, status: 500, error: 'x' }, nextAttemptAt: now + 60_000 });
        assert.deepEqual(await claim('e', now + 5000), [], 'not due before its retry');
        const [retried] = await claim('e', now + 61_000);
        assert.equal(retried!.attempts, 1);
        assert.equal(retried!.eventId, taken.eventId, 'the same id on a retry');
      });

      test('a claim is fair across accounts: at most perAccount of one account, its attempts in flight counted; each event names its account', async () => {
        const busy = await createAccount();
        const quiet = await createAccount();
        const hooks = [webhook(busy.uid, ['link.created']), webhook(busy.uid, ['link.created']), webhook(busy.uid, ['link.created'])];
        const quietHook = webhook(quiet.uid, ['link.created']);
        for (const hook of [...hooks, quietHook]) await store.webhooks.create(hook);
        await store.createLink(link(busy.uid, code('fa')));
        await store.createLink(link(quiet.uid, code('fb')));
        const mine = new Set([...hooks, quietHook].map((hook) => hook.id));
        const claim = (owner: string, accountsInFlight: Map<number, number>) => store.webhooks
          .claim({ now: Date.now(), leaseMs: 60_000, owner, limit: 100, busyWebhooks: [], perAccount: 3, accountsInFlight })
          .then((events) => events.filter((event) => mine.has(event.webhookId)));
        const first = await claim('fair-a', new Map([[busy.uid, 2]]));
        assert.equal(first.filter((event) => event.accountUid === busy.uid).length, 1, 'two in flight, a bound of three: one more');
        assert.deepEqual(first.filter((event) => event.accountUid === quiet.uid).map((event) => event.webhookId), [quietHook.id]);
        assert.deepEqual(await claim('fair-b', new Map([[busy.uid, 3]])), [], 'an account at its bound gets none');
        const rest = await claim('fair-c', new Map());
        assert.equal(rest.length, 2, 'the rest, once its attempts have ended');
        assert.ok(rest.every((event) => event.accountUid === busy.uid && hooks.some((hook) => hook.id === event.webhookId)));
      });

      test('visits written with their count reach the webhooks, one link.visited event per webhook at a time', async () => {
        const account = await createAccount();
        const hook = webhook(account.uid, ['link.visited']);
        await store.webhooks.create(hook);
        await store.createLink(link(account.uid, code('wv')));
        const hour = Math.floor(Date.now() / 3_600_000);
        const visit = { hour, key: 'k', bot: false, referrer: '(direct)', country: 'ZZ', browser: 'Chrome', os: 'Linux', device: 'desktop' } as const;
        await Promise.all(Array.from({ length: 7 }, () => store.resolveLink(code('wv'), undefined, visit)));
        // The count batch writes them for the webhook (no fold needed, ADR 24); a fold changes nothing.
        while (await store.foldStats() > 0);
        const collect = () => store.webhooks.collectVisits({ now: new Date().toISOString(), maxVisits: 5, foldAbove: 1000 });
        assert.ok(await collect() >= 1);
        assert.equal(await collect(), 0, 'none while one is pending');
        const [first] = await takeAll(hook.id);
        const visits = (JSON.parse(deliveryData(first!.type, first!.data)) as { visits: { ShortCode: string; Country: string }[] }).visits;
        assert.equal(visits.length, 5, 'at most maxVisits in one event');
        assert.equal(visits[0]!.ShortCode, code('wv'));
        assert.ok(await collect() >= 1);
        const [second] = await takeAll(hook.id);
        assert.equal((JSON.parse(deliveryData(second!.type, second!.data)) as { visits: unknown[] }).visits.length, 2, 'the rest, none lost');
      });

      test('the visits of a link deleted right after them are still delivered, every one (issue 23, item 3)', async () => {
        const account = await createAccount();
        const hook = webhook(account.uid, ['link.visited']);
        await store.webhooks.create(hook);
        await store.createLink(link(account.uid, code('wg')));
        const hour = Math.floor(Date.now() / 3_600_000);
        const visit = { hour, key: 'k', bot: false, referrer: '(direct)', country: 'ZZ', browser: 'Chrome', os: 'Linux', device: 'desktop' } as const;
        const answered = await Promise.all(Array.from({ length: 5 }, () => store.resolveLink(code('wg'), undefined, visit)));
        assert.equal(answered.filter((row) => row !== undefined).length, 5);
        assert.equal((await store.deleteLink(code('wg'), account.uid)).status, 'deleted');
        while (await store.foldStats() > 0);
        const collect = () => store.webhooks.collectVisits({ now: new Date().toISOString(), maxVisits: 100, foldAbove: 1000 });
        assert.ok(await collect() >= 1, 'a link.visited event');
        const visited = (await takeAll(hook.id)).filter((event) => event.type === 'link.visited');
        const visits = visited.flatMap((event) => (JSON.parse(deliveryData(event.type, event.data)) as { visits: { ShortCode: string }[] }).visits);
        assert.deepEqual(visits.map((v) => v.ShortCode), Array.from({ length: 5 }, () => code('wg')), 'all 5 answered visits');
      });

      test('deleting the webhook or the account removes it with its events', async () => {
        const account = await createAccount();
        const hook = webhook(account.uid, ['link.created']);
        await store.webhooks.create(hook);
        await store.createLink(link(account.uid, code('wd')));
        assert.equal(await store.webhooks.delete(hook.id, account.uid + 1000), 'not_owner');
        assert.equal(await store.webhooks.delete(hook.id, account.uid), 'deleted');
        assert.equal(await store.webhooks.delete(hook.id, account.uid), 'not_found');
        assert.deepEqual(await takeAll(hook.id), []);
        const again = webhook(account.uid, ['link.created']);
        await store.webhooks.create(again);
        await store.createLink(link(account.uid, code('we')));
        assert.equal(await store.deleteAccount(account.uid), true);
        assert.deepEqual(await takeAll(again.id), []);
        assert.deepEqual(await store.webhooks.list(account.uid), []);
      });
    });

    describe('event stream slots (ADR 19)', () => {
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

    describe('persistence', () => {
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
  });
}
