/**
 * The admin-store contract: one suite that every AdminStore implementation must pass
 * unchanged, run against the same database as a Store of the same engine, so that what the
 * operator commands write is what the server serves (an imported link resolves, the cap
 * counts imported links). Like contract.ts it assumes nothing about the engine and tolerates
 * a database shared between tests: shortcodes carry a random per-test suffix, and exports are
 * filtered to the test's own links.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AdminStore, ExportedLink, ImportLink, ImportOptions } from '../../src/store/admin.ts';
import type { EventType } from '../../src/events/events.ts';
import type { AccountRecord, Store } from '../../src/store/store.ts';

/** What a backend's factory hands the suite for one test. */
export interface OpenedAdminStore {
  /** An admin store with its migrations applied. */
  readonly admin: AdminStore;
  /** The server's store on the same database. */
  readonly store: Store;
  /** Closes both and removes the database (or leaves a shared one to the file's own hooks). */
  cleanup(): Promise<void>;
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomTag(length: number): string {
  return Array.from(randomBytes(length), (byte) => ALPHANUMERIC[byte % 62]).join('');
}

/**
 * A record as a plain object. A link's routing is dropped when it routes nothing (no rules,
 * no forwarding, no password): the records of these tests compare as the spec's four fields,
 * and the routing cases check routing themselves.
 */
function plain<T extends object>(record: T | undefined): T | undefined {
  if (record === undefined) return undefined;
  const { routing, ...rest } = record as T & { routing?: { forwardQuery: boolean; rules: string | null; passwordHash: string | null } };
  if (routing === undefined || routing.forwardQuery || routing.rules !== null || routing.passwordHash !== null) return { ...record };
  return rest as T;
}

const WRITE: ImportOptions = { accountUid: null, raiseCap: false, dryRun: false };

/** An OpenedAdminStore whose cleanup closes both stores, then runs `remove`. */
export function openedAdminStore(admin: AdminStore, store: Store, remove: () => void = () => {}): OpenedAdminStore {
  return {
    admin,
    store,
    async cleanup() {
      await admin.close();
      await store.close();
      remove();
    },
  };
}

export function adminStoreContract(name: string, open: () => Promise<OpenedAdminStore>): void {
  describe(`admin store contract: ${name}`, () => {
    let opened: OpenedAdminStore;
    let admin: AdminStore;
    let store: Store;
    let tag: string;

    beforeEach(async () => {
      opened = await open();
      ({ admin, store } = opened);
      tag = randomTag(8);
    });

    afterEach(async () => {
      await opened.cleanup();
    });

    const code = (stem: string): string => `${stem}-${tag}`;

    function createAccount(maxLinks = 20): Promise<AccountRecord> {
      return admin.createAccount({ codeHash: randomBytes(32).toString('hex'), dateCreated: new Date().toISOString(), maxLinks });
    }

    function row(stem: string, accesses = 0, dateCreated = '2020-02-03T04:05:06.789Z'): ImportLink {
      return { shortCode: code(stem), pointsTo: `https://${stem.toLowerCase()}.example/`, accesses, dateCreated };
    }

    async function createLinks(uid: number, stems: readonly string[]): Promise<void> {
      for (const stem of stems) {
        assert.equal(
          await store.createLink({ shortCode: code(stem), pointsTo: 'https://made.example/', createdBy: uid, dateCreated: new Date().toISOString() }),
          'created',
        );
      }
    }

    /** This test's links, in export order. */
    async function exported(): Promise<ExportedLink[]> {
      const mine: ExportedLink[] = [];
      for await (const link of admin.exportLinks()) if (link.shortCode.endsWith(`-${tag}`)) mine.push({ ...link });
      return mine;
    }

    describe('accounts', () => {
      test('createAccount returns the account, which the Store then finds by its code hash', async () => {
        const codeHash = randomBytes(32).toString('hex');
        const dateCreated = '2026-11-22T04:12:49.123Z';
        const account = await admin.createAccount({ codeHash, dateCreated, maxLinks: 7 });
        assert.ok(Number.isSafeInteger(account.uid) && account.uid > 0, `uid ${account.uid}`);
        assert.deepEqual(plain(account), { uid: account.uid, dateCreated, maxLinks: 7, disabled: false });
        assert.deepEqual(plain(await store.findAccountByCodeHash(codeHash)), plain(account));
      });

      test('findAccount answers the account with the links it holds, or undefined', async () => {
        const account = await createAccount(5);
        assert.deepEqual(plain(await admin.findAccount(account.uid)), { ...account, linkCount: 0 });
        await createLinks(account.uid, ['a', 'b']);
        assert.deepEqual(plain(await admin.findAccount(account.uid)), { ...account, linkCount: 2 });
        assert.equal((await store.deleteLink(code('a'), account.uid)).status, 'deleted');
        assert.equal((await admin.findAccount(account.uid))?.linkCount, 1);
        assert.equal(await admin.findAccount(account.uid + 1_000_000), undefined);
      });
    });

    describe('setMaxLinks', () => {
      test('sets the cap, answers the previous one, and the Store keeps to the new one', async () => {
        const account = await createAccount(1);
        await createLinks(account.uid, ['a']);
        const result = await admin.setMaxLinks(account.uid, 3);
        assert.equal(result.outcome, 'updated');
        assert.ok(result.outcome === 'updated');
        assert.equal(result.previous, 1);
        assert.deepEqual(plain(result.account), { ...account, maxLinks: 3, linkCount: 1 });
        await createLinks(account.uid, ['b', 'c']);
        const next = { shortCode: code('d'), pointsTo: 'https://d.example/', createdBy: account.uid, dateCreated: new Date().toISOString() };
        assert.equal(await store.createLink(next), 'cap_reached');
      });

      test('accepts a cap equal to the links held, and refuses one below it (below_held)', async () => {
        const account = await createAccount(5);
        await createLinks(account.uid, ['a', 'b', 'c']);
        assert.deepEqual(await admin.setMaxLinks(account.uid, 2), { outcome: 'below_held', linkCount: 3 });
        assert.equal((await admin.findAccount(account.uid))?.maxLinks, 5, 'a refused change leaves the cap as it was');
        const result = await admin.setMaxLinks(account.uid, 3);
        assert.ok(result.outcome === 'updated' && result.previous === 5 && result.account.maxLinks === 3);
      });

      test('answers not_found for an unknown account', async () => {
        const account = await createAccount();
        assert.deepEqual(await admin.setMaxLinks(account.uid + 1_000_000, 5), { outcome: 'not_found' });
      });
    });

    describe('administration (the calls it shares with Store)', () => {
      test('updateAccount disables an account the Store then reads as disabled, and enables it again', async () => {
        const codeHash = randomBytes(32).toString('hex');
        const account = await admin.createAccount({ codeHash, dateCreated: new Date().toISOString(), maxLinks: 3 });
        const result = await admin.updateAccount(account.uid, { disabled: true, maxLinks: 4 });
        assert.deepEqual(result.outcome === 'updated' && plain(result.account), { ...plain(account), maxLinks: 4, disabled: true, linkCount: 0 });
        assert.equal((await store.findAccountByCodeHash(codeHash))?.disabled, true);
        await admin.updateAccount(account.uid, { disabled: false });
        // A SQLite store shares one read transaction per event-loop turn: the next turn sees the change.
        await new Promise((resolve) => setImmediate(resolve));
        assert.equal((await store.findAccountByCodeHash(codeHash))?.disabled, false);
        assert.deepEqual(await admin.updateAccount(account.uid + 1_000_000, { disabled: true }), { outcome: 'not_found' });
      });

      test('listAccounts, searchLinks and takeDownLink see and change what the Store wrote', async () => {
        const account = await createAccount(2);
        await createLinks(account.uid, ['Mod']);
        assert.deepEqual((await admin.listAccounts(account.uid - 1, 1)).map(plain), [{ ...plain(account), linkCount: 1 }]);
        const found = await admin.searchLinks({ after: 0, limit: 10, text: code('mod').toLowerCase() });
        assert.deepEqual(found.map((f) => f.link.shortCode), [code('Mod')]);
        assert.equal((await admin.takeDownLink(code('Mod')))?.createdBy, account.uid);
        assert.equal(await store.findLink(code('Mod')), undefined);
        assert.deepEqual(plain(await admin.findAccount(account.uid)), { ...plain(account), linkCount: 0 });
      });
    });

    describe('events (CONTRACT §7.5)', () => {
      function webhookFor(accountUid: number, events: readonly EventType[]) {
        return {
          id: `wh_${randomBytes(12).toString('hex')}`, accountUid, url: 'https://receiver.example/hook', events,
          dateCreated: new Date().toISOString(), sealedSecret: 'v1.sealed',
        };
      }
      async function claimed(webhookId: string) {
        const events = await store.webhooks.claim({ now: Date.now(), leaseMs: 60_000, owner: 'admin-contract', limit: 100, busyWebhooks: [] });
        return events.filter((event) => event.webhookId === webhookId);
      }

      test('takeDownLink writes link.deleted for the owner\'s webhooks, which the server\'s dispatcher then claims', async () => {
        const account = await createAccount();
        const hook = webhookFor(account.uid, ['link.deleted']);
        assert.equal(await store.webhooks.create(hook), 'created');
        await createLinks(account.uid, ['Gone']);
        assert.equal((await admin.takeDownLink(code('Gone')))?.createdBy, account.uid);
        const events = await claimed(hook.id);
        assert.deepEqual(events.map((event) => event.type), ['link.deleted']);
        const data = JSON.parse(events[0]!.data) as { ShortCode: string; CreatedBy: number; Tags: string[] };
        assert.deepEqual([data.ShortCode, data.CreatedBy, data.Tags], [code('Gone'), account.uid, []]);
      });

      test('importLinks writes no link.created events, by decision (docs/webhooks.md)', async () => {
        const account = await createAccount();
        const hook = webhookFor(account.uid, ['link.created']);
        assert.equal(await store.webhooks.create(hook), 'created');
        assert.deepEqual(await admin.importLinks([row('quiet')], { ...WRITE, accountUid: account.uid }), ['imported']);
        assert.deepEqual(await claimed(hook.id), []);
      });
    });

    describe('exportLinks', () => {
      test('streams every link oldest first with its accesses and creation date, imported or created', async () => {
        const account = await createAccount(20);
        await createLinks(account.uid, ['first']);
        assert.deepEqual(await admin.importLinks([row('second', 41, '2019-01-01T00:00:00.000Z')], { ...WRITE, accountUid: account.uid }), ['imported']);
        await createLinks(account.uid, ['third']);
        await store.resolveLink(code('first'));
        await store.resolveLink(code('first'));

        const links = await exported();
        assert.deepEqual(links.map((link) => link.shortCode), [code('first'), code('second'), code('third')]);
        assert.deepEqual(links[1], {
          shortCode: code('second'), pointsTo: 'https://second.example/', createdBy: account.uid, accesses: 41,
          dateCreated: '2019-01-01T00:00:00.000Z', title: null, tags: [], expiresAt: null, maxVisits: null, forwardQuery: false, rules: null, protected: false,
        });
        assert.equal(links[0]!.accesses, 2);
        assert.match(links[0]!.dateCreated, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      });

      test('reads one snapshot: links created while it streams are not in it', async () => {
        const account = await createAccount(5000);
        // More than a page of PostgreSQL's cursor (1000 rows), so later pages are read after the writes.
        const rows = Array.from({ length: 1500 }, (_, i) => row(`snap${i}`));
        const outcomes = await admin.importLinks(rows, { ...WRITE, accountUid: account.uid });
        assert.ok(outcomes.every((outcome) => outcome === 'imported'));

        const seen: string[] = [];
        let wrote = false;
        for await (const link of admin.exportLinks()) {
          if (!link.shortCode.endsWith(`-${tag}`)) continue;
          seen.push(link.shortCode);
          if (!wrote) {
            wrote = true;
            await createLinks(account.uid, ['late']);
            assert.equal((await store.deleteLink(code('snap1499'), account.uid)).status, 'deleted');
          }
        }
        assert.equal(seen.length, 1500);
        assert.equal(seen.includes(code('late')), false);
        assert.equal(seen.at(-1), code('snap1499'), 'a link deleted meanwhile is still in the snapshot');
        assert.equal((await exported()).length, 1500, 'the next export sees the changes');
      });
    });

    describe('importLinks', () => {
      test('imports in order, keeping Accesses and DateCreated; the Store resolves and counts on from there', async () => {
        const account = await createAccount(10);
        const outcomes = await admin.importLinks([row('a', 7, '2018-05-06T07:08:09.010Z'), row('b')], { ...WRITE, accountUid: account.uid });
        assert.deepEqual(outcomes, ['imported', 'imported']);
        assert.deepEqual(plain(await store.findLink(code('a'))), {
          shortCode: code('a'), pointsTo: 'https://a.example/', createdBy: account.uid, accesses: 7,
        });
        assert.equal((await store.resolveLink(code('a')))?.accesses, 8);
        assert.deepEqual((await store.listLinks(account.uid)).map((link) => link.shortCode), [code('a'), code('b')]);
        assert.equal((await exported())[0]!.dateCreated, '2018-05-06T07:08:09.010Z');
        assert.equal((await admin.findAccount(account.uid))?.linkCount, 2, 'the link count grows by the links added');
      });

      test('keeps codes of 1-4 characters, which the Store then resolves, finds and deletes', async () => {
        // Short codes cannot carry the per-test tag: they are removed again at the end, so a
        // database shared between tests is left as it was.
        const account = await createAccount(10);
        const shortCodes = ['1', '~', '2a', 'ozh', 'Ab-4'];
        const taken = new Set<string>();
        for (const short of shortCodes) if ((await store.findLink(short)) !== undefined) taken.add(short);
        // A Store may read in one transaction per turn of the event loop (SQLite does): let it end
        // before the import commits on the other connection.
        await new Promise((resolve) => setImmediate(resolve));
        const rows = shortCodes.filter((short) => !taken.has(short)).map((shortCode, i) => ({
          shortCode, pointsTo: `https://short${i}.example/`, accesses: i, dateCreated: '2009-08-11T14:30:12.000Z',
        }));
        try {
          const outcomes = await admin.importLinks(rows, { ...WRITE, accountUid: account.uid });
          assert.deepEqual(outcomes, rows.map(() => 'imported'));
          for (const link of rows) {
            assert.equal((await store.findLink(link.shortCode))?.createdBy, account.uid, link.shortCode);
            assert.equal((await store.resolveLink(link.shortCode))?.accesses, link.accesses + 1, link.shortCode);
          }
          assert.deepEqual((await store.listLinks(account.uid)).map((link) => link.shortCode), rows.map((link) => link.shortCode));
        } finally {
          for (const link of rows) await store.deleteLink(link.shortCode, account.uid);
        }
        for (const link of rows) assert.equal(await store.findLink(link.shortCode), undefined, link.shortCode);
        assert.equal((await admin.findAccount(account.uid))?.linkCount, 0);
      });

      test('reports a taken shortcode and never replaces it, also within one batch', async () => {
        const owner = await createAccount(10);
        const other = await createAccount(10);
        await createLinks(owner.uid, ['held']);
        const outcomes = await admin.importLinks([row('held'), row('new'), row('new')], { ...WRITE, accountUid: other.uid });
        assert.deepEqual(outcomes, ['taken', 'imported', 'taken']);
        assert.deepEqual(plain(await store.findLink(code('held'))), {
          shortCode: code('held'), pointsTo: 'https://made.example/', createdBy: owner.uid, accesses: 0,
        });
        assert.equal((await admin.findAccount(other.uid))?.linkCount, 1);
        assert.equal((await admin.findAccount(owner.uid))?.linkCount, 1);
      });

      test('stops at the cap (cap_reached), still reporting taken codes first; the Store counts imported links', async () => {
        const account = await createAccount(3);
        await createLinks(account.uid, ['own']);
        const outcomes = await admin.importLinks([row('a'), row('b'), row('c'), row('own'), row('d')], { ...WRITE, accountUid: account.uid });
        assert.deepEqual(outcomes, ['imported', 'imported', 'cap_reached', 'taken', 'cap_reached']);
        assert.deepEqual(plain(await admin.findAccount(account.uid)), { ...account, linkCount: 3 });
        const next = { shortCode: code('e'), pointsTo: 'https://e.example/', createdBy: account.uid, dateCreated: new Date().toISOString() };
        assert.equal(await store.createLink(next), 'cap_reached');
        assert.equal((await store.deleteLink(code('a'), account.uid)).status, 'deleted', 'an imported link is the account\'s own');
        assert.equal(await store.createLink(next), 'created');
      });

      test('with raiseCap imports every free row and lifts MaxLinks to what the account then holds', async () => {
        const account = await createAccount(2);
        await createLinks(account.uid, ['own']);
        const outcomes = await admin.importLinks([row('a'), row('own'), row('b'), row('c')], { ...WRITE, accountUid: account.uid, raiseCap: true });
        assert.deepEqual(outcomes, ['imported', 'taken', 'imported', 'imported']);
        assert.deepEqual(plain(await admin.findAccount(account.uid)), { ...account, maxLinks: 4, linkCount: 4 });

        const roomy = await createAccount(10);
        await admin.importLinks([row('r1')], { ...WRITE, accountUid: roomy.uid, raiseCap: true });
        assert.deepEqual(plain(await admin.findAccount(roomy.uid)), { ...roomy, linkCount: 1 }, 'a cap already high enough stays');
      });

      test('a dry run predicts what the import would do and writes nothing', async () => {
        const account = await createAccount(3);
        await createLinks(account.uid, ['own']);
        const rows = [row('a'), row('own'), row('a'), row('b'), row('c')];
        const predicted = await admin.importLinks(rows, { accountUid: account.uid, raiseCap: false, dryRun: true });
        assert.deepEqual(predicted, ['imported', 'taken', 'taken', 'imported', 'cap_reached']);
        assert.equal(await store.findLink(code('a')), undefined);
        assert.deepEqual(plain(await admin.findAccount(account.uid)), { ...account, linkCount: 1 });
        assert.deepEqual(await admin.importLinks(rows, { ...WRITE, accountUid: account.uid }), predicted, 'the real import agrees');
      });

      test('a dry run counts pendingLinks of earlier batches against the cap, and no cap without an account', async () => {
        const account = await createAccount(3);
        const rows = [row('a'), row('b')];
        assert.deepEqual(
          await admin.importLinks(rows, { accountUid: account.uid, raiseCap: false, dryRun: true, pendingLinks: 2 }),
          ['imported', 'cap_reached'],
        );
        assert.deepEqual(
          await admin.importLinks(rows, { accountUid: account.uid, raiseCap: true, dryRun: true, pendingLinks: 3 }),
          ['imported', 'imported'],
        );
        const many = Array.from({ length: 30 }, (_, i) => row(`n${i}`));
        const unbounded = await admin.importLinks(many, { accountUid: null, raiseCap: false, dryRun: true });
        assert.ok(unbounded.every((outcome) => outcome === 'imported'));
        assert.equal(await store.findLink(code('n0')), undefined);
      });

      test('refuses to write without an account, or for an unknown one, and writes nothing then', async () => {
        const account = await createAccount(3);
        await assert.rejects(admin.importLinks([row('a')], WRITE), /needs an account/);
        await assert.rejects(admin.importLinks([row('a')], { ...WRITE, accountUid: account.uid + 1_000_000 }), /there is no account/);
        await assert.rejects(
          admin.importLinks([row('a')], { accountUid: account.uid + 1_000_000, raiseCap: false, dryRun: true }),
          /there is no account/,
        );
        assert.equal(await store.findLink(code('a')), undefined);
      });

      test('keeps the cap exact while the Store creates for the same account at the same time', async () => {
        const account = await createAccount(10);
        const creates = Array.from({ length: 10 }, (_, i) => store.createLink({
          shortCode: code(`s${i}`), pointsTo: 'https://s.example/', createdBy: account.uid, dateCreated: new Date().toISOString(),
        }));
        const imported = admin.importLinks(Array.from({ length: 10 }, (_, i) => row(`i${i}`)), { ...WRITE, accountUid: account.uid });
        const created = (await Promise.all(creates)).filter((result) => result === 'created').length;
        const added = (await imported).filter((outcome) => outcome === 'imported').length;
        assert.equal(created + added, 10);
        assert.deepEqual(plain(await admin.findAccount(account.uid)), { ...account, linkCount: 10 });
        assert.equal((await store.listLinks(account.uid)).length, 10);
      });
    });
  });
}
