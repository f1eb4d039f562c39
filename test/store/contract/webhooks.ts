/**
 * The store contract (test/store/contract.ts) on webhooks (CONTRACT §7.5): the cap, the outbox
 * events written with each change, claims, leases and fairness.
 */
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Store } from '../../../src/store/store.ts';
import { deliveryData, type OutboxEvent } from '../../../src/store/webhooks.ts';
import { tally, type ContractFixture } from './helpers.ts';

export function webhooksContract(fixture: ContractFixture): void {
  const { code, createAccount, link } = fixture;
  describe('webhooks (CONTRACT §7.5)', () => {
    let store: Store;
    beforeEach(() => {
      ({ store } = fixture);
    });

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
}
