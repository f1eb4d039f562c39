/**
 * `shortlink account create --database` and `shortlink admin accounts|disable|enable|links|
 * takedown`, straight on the database, on SQLite and (with TEST_DATABASE_URL) PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashAccessCode } from '../../src/accounts/access-code.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';
import { jsonLines, openDatabase, runCli, seedAccount, tempFolder, type SeededAccount } from './support.ts';

const gate = postgresGate();

function moderationSuite(engine: string, setUp: () => Promise<{ url: string; remove(): Promise<void> }>, skip: string | false = false): void {
  describe(`moderation commands on ${engine}`, { skip }, () => {
    let database: { url: string; remove(): Promise<void> };
    let env: Record<string, string>;
    let owner: SeededAccount;
    let other: SeededAccount;

    before(async () => {
      database = await setUp();
      env = { DATABASE_URL: database.url };
      const store = await openDatabase(database.url);
      try {
        owner = await seedAccount(store, [
          { short: 'mod-phish', url: 'https://login.phish.example/account' },
          { short: 'mod-fine', url: 'https://fine.example/', resolutions: 2 },
        ], 5);
        other = await seedAccount(store, [{ short: 'mod-other', url: 'https://PHISH.example/' }]);
      } finally {
        await store.close();
      }
    });
    after(() => database?.remove());

    test('account create --database makes an account in the database and prints its code once', async () => {
      const result = await runCli(['account', 'create', '--database', '--max-links', '7'], { env });
      assert.equal(result.code, 0, result.stderr);
      const account = JSON.parse(result.stdout) as { Uid: number; AccessCode: string; DateCreated: string; MaxLinks: number };
      assert.deepEqual(Object.keys(account), ['Uid', 'AccessCode', 'DateCreated', 'MaxLinks']);
      assert.equal(account.MaxLinks, 7);
      const store = await openDatabase(database.url);
      try {
        assert.equal((await store.findAccountByCodeHash(hashAccessCode(account.AccessCode)))?.uid, account.Uid);
      } finally {
        await store.close();
      }
      const refused = await runCli(['account', 'create', '--max-links', '7'], { env });
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /--max-links needs --database/);
    });

    test('admin accounts prints every account as a JSON line, with links held and state', async () => {
      const result = await runCli(['admin', 'accounts'], { env });
      assert.equal(result.code, 0, result.stderr);
      const accounts = jsonLines<{ Uid: number; Links: number; Disabled: boolean; MaxLinks: number }>(result.stdout);
      const mine = accounts.find((a) => a.Uid === owner.uid)!;
      assert.deepEqual(Object.keys(mine), ['Uid', 'DateCreated', 'MaxLinks', 'Links', 'Disabled']);
      assert.deepEqual([mine.MaxLinks, mine.Links, mine.Disabled], [5, 2, false]);
      assert.ok(!result.stdout.includes(owner.accessCode));
      const limited = await runCli(['admin', 'accounts', '--limit', '1'], { env });
      assert.equal(jsonLines(limited.stdout).length, 1);
    });

    test('admin disable and enable flip the flag the server reads; unknown uid fails', async () => {
      const disabled = await runCli(['admin', 'disable', String(other.uid)], { env });
      assert.equal(disabled.code, 0, disabled.stderr);
      assert.equal(disabled.stdout, `Account ${other.uid}: disabled (holds 1 links).\n`);
      const store = await openDatabase(database.url);
      try {
        assert.equal((await store.findAccountByCodeHash(hashAccessCode(other.accessCode)))?.disabled, true);
        assert.equal((await runCli(['admin', 'enable', String(other.uid)], { env })).code, 0);
        assert.equal((await store.findAccountByCodeHash(hashAccessCode(other.accessCode)))?.disabled, false);
      } finally {
        await store.close();
      }
      const unknown = await runCli(['admin', 'disable', '987654'], { env });
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /no account has this uid/);
    });

    test('admin links searches by host (subdomains included) and by text', async () => {
      const byHost = await runCli(['admin', 'links', '--host', 'phish.example'], { env });
      assert.equal(byHost.code, 0, byHost.stderr);
      const found = jsonLines<{ ShortCode: string; CreatedBy: number }>(byHost.stdout);
      assert.deepEqual(found.map((link) => [link.ShortCode, link.CreatedBy]), [['mod-phish', owner.uid], ['mod-other', other.uid]]);
      assert.deepEqual(Object.keys(found[0]!), ['ShortCode', 'PointsTo', 'CreatedBy', 'Accesses', 'DateCreated', 'Title', 'Tags', 'ExpiresAt', 'MaxVisits', 'Domain', 'ForwardQuery', 'Protected', 'Rules']);
      const byText = await runCli(['admin', 'links', '--query', 'FINE'], { env });
      assert.deepEqual(jsonLines<{ ShortCode: string; Accesses: number }>(byText.stdout).map((l) => [l.ShortCode, l.Accesses]), [['mod-fine', 2]]);
      const bad = await runCli(['admin', 'links', '--host', 'https://x.example/'], { env });
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /host/);
    });

    test('admin takedown deletes any account\'s link and frees its slot; unknown fails', async () => {
      const hookId = `wh_${'0'.repeat(20)}${String(owner.uid).padStart(4, '0')}`;
      const store = await openDatabase(database.url);
      try {
        const created = await store.webhooks.create({
          id: hookId, accountUid: owner.uid, url: 'https://receiver.example/', events: ['link.deleted'], dateCreated: new Date().toISOString(), sealedSecret: 'v1.x',
        });
        assert.equal(created, 'created');
      } finally {
        await store.close();
      }
      const result = await runCli(['admin', 'takedown', 'mod-phish'], { env });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, `Took down mod-phish → https://login.phish.example/account (account ${owner.uid}).\n`);
      // The owner's webhook hears of it: the outbox row the CLI wrote is there for the servers' dispatchers.
      const reader = await openDatabase(database.url);
      try {
        const events = (await reader.webhooks.claim({ now: Date.now(), leaseMs: 60_000, owner: 'cli-test', limit: 100, busyWebhooks: [] }))
          .filter((event) => event.webhookId === hookId);
        assert.deepEqual(events.map((event) => [event.type, (JSON.parse(event.data) as { ShortCode: string }).ShortCode]), [['link.deleted', 'mod-phish']]);
      } finally {
        await reader.close();
      }
      const again = await runCli(['admin', 'takedown', 'mod-phish'], { env });
      assert.equal(again.code, 1);
      assert.match(again.stderr, /no link has this shortcode/);
      const accounts = jsonLines<{ Uid: number; Links: number }>((await runCli(['admin', 'accounts'], { env })).stdout);
      assert.equal(accounts.find((a) => a.Uid === owner.uid)!.Links, 1);
    });

    test('admin takedown --domain takes down the link of that domain only; admin links shows each link\'s Domain', async () => {
      const store = await openDatabase(database.url);
      let twin: SeededAccount;
      try {
        await store.domains.putDomain({
          host: 'go.mod.test', origin: 'https://go.mod.test', notFoundUrl: null, rootUrl: null, expiredUrl: null, dateCreated: new Date().toISOString(),
        });
        twin = await seedAccount(store, [
          { short: 'mod-twin', url: 'https://twin.example/default' },
          { short: 'go.mod.test/mod-twin', url: 'https://twin.example/domain' },
        ]);
      } finally {
        await store.close();
      }
      const listed = jsonLines<{ ShortCode: string; Domain: string | null; CreatedBy: number }>(
        (await runCli(['admin', 'links', '--query', 'mod-twin'], { env })).stdout,
      );
      assert.deepEqual(listed.map((link) => [link.ShortCode, link.Domain, link.CreatedBy]), [['mod-twin', null, twin.uid], ['mod-twin', 'go.mod.test', twin.uid]]);
      const unknown = await runCli(['admin', 'takedown', 'mod-twin', '--domain', 'nowhere.mod.test'], { env });
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /the domain "nowhere\.mod\.test" is not registered/);
      const result = await runCli(['admin', 'takedown', 'mod-twin', '--domain', 'GO.mod.test'], { env });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, `Took down go.mod.test/mod-twin → https://twin.example/domain (account ${twin.uid}).\n`);
      const left = jsonLines<{ ShortCode: string; Domain: string | null }>((await runCli(['admin', 'links', '--query', 'mod-twin'], { env })).stdout);
      assert.deepEqual(left.map((link) => [link.ShortCode, link.Domain]), [['mod-twin', null]]);
      const again = await runCli(['admin', 'takedown', 'mod-twin', '--domain', 'go.mod.test'], { env });
      assert.match(again.stderr, /no link has this shortcode/);
    });
  });
}

moderationSuite('SQLite', async () => {
  const folder = tempFolder();
  return { url: folder.file('moderation.db'), remove: async () => folder.remove() };
});

moderationSuite('PostgreSQL', async () => {
  const created = await createPostgresDatabase(gate.value!);
  return { url: created.url, remove: () => created.drop() };
}, gate.skip);
