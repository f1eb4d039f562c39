/**
 * The store contract (test/store/contract.ts) on statistics: each counted visit recorded with
 * its count, folded into rollups, forgotten with its link.
 */
import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { StatsRows, Store } from '../../../src/store/store.ts';
import { visit, sortedStats, valuesOf, type ContractFixture } from './helpers.ts';

export function statsContract(fixture: ContractFixture): void {
  const { code, createAccount, link } = fixture;
  describe('statistics', () => {
    let store: Store;
    beforeEach(() => {
      ({ store } = fixture);
    });

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
}
