import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newAccount } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { appFor, assertError, createLinkOk, TEXT } from './support.ts';
import type { Statistics } from '../../src/http/schemas.ts';

const TARGET = 'https://example.com/';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const STATS_KEYS = ['ShortCode', 'From', 'To', 'Interval', 'Visits', 'Humans', 'Bots', 'Series', 'Referrers', 'Countries', 'Browsers', 'OperatingSystems', 'Devices'];
const OP = 'get statistics';

describe('GET /v1/stats', () => {
  test('counts each resolution and redirect once, with its classes, in the contract\'s key order', async (t) => {
    const { app } = await appFor(t, { trustProxy: ['127.0.0.1'] });
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: TARGET });
    await app.inject({ method: 'GET', url: `/${short}`, headers: { 'user-agent': CHROME, referer: 'https://news.example.org/a?b', 'x-forwarded-for': '8.8.8.8' } });
    await app.inject({ method: 'GET', url: `/v1/get/${short}`, headers: { 'user-agent': IPHONE, 'x-forwarded-for': '81.2.69.160' } });
    await app.inject({ method: 'GET', url: `/v1/get/${short}`, headers: { 'user-agent': GOOGLEBOT } });
    await app.inject({ method: 'GET', url: `/v1/get/${short}` }); // no User-Agent: a bot
    await app.inject({ method: 'HEAD', url: `/v1/get/${short}`, headers: { 'user-agent': CHROME } }); // not counted

    const response = await app.inject({ method: 'GET', url: '/v1/stats', query: { short, auth: code } });
    assert.equal(response.statusCode, 200, response.body);
    const stats = response.json() as Statistics;
    assert.deepEqual(Object.keys(stats), STATS_KEYS);
    assert.equal(stats.ShortCode, short);
    assert.equal(stats.Interval, 'day');
    assert.deepEqual([stats.Visits, stats.Humans, stats.Bots], [4, 2, 2]);
    assert.equal(stats.Series.length, 31);
    assert.equal(stats.Series.reduce((sum, p) => sum + p.Visits, 0), 4);
    assert.equal(stats.Series.at(-1)!.Visits, 4);
    assert.equal(stats.Series.at(-1)!.Bots, 2);
    assert.deepEqual(stats.Referrers, [{ Name: '(direct)', Visits: 3 }, { Name: 'news.example.org', Visits: 1 }]);
    assert.deepEqual(stats.Countries, [{ Name: 'ZZ', Visits: 2 }, { Name: 'GB', Visits: 1 }, { Name: 'US', Visits: 1 }]);
    assert.deepEqual(stats.Devices, [{ Name: 'bot', Visits: 2 }, { Name: 'desktop', Visits: 1 }, { Name: 'mobile', Visits: 1 }]);
    assert.ok(stats.Browsers.some((b) => b.Name === 'Chrome' && b.Visits === 1));
    assert.ok(stats.OperatingSystems.some((o) => o.Name === 'iOS' && o.Visits === 1));

    const link = (await app.inject({ method: 'GET', url: `/v1/get/${short}` })).json() as { Accesses: number };
    assert.equal(link.Accesses, 5);
  });

  test('sums the whole account without short, ShortCode null; never another account\'s links', async (t) => {
    const { app } = await appFor(t);
    const mine = await newAccount(app);
    const theirs = await newAccount(app);
    const a = await createLinkOk(app, mine.code, { url: TARGET });
    const b = await createLinkOk(app, mine.code, { url: TARGET });
    const c = await createLinkOk(app, theirs.code, { url: TARGET });
    for (const s of [a, b, b, c]) await app.inject({ method: 'GET', url: `/${s}`, headers: { 'user-agent': CHROME } });
    const stats = (await app.inject({ method: 'GET', url: '/v1/stats', headers: { authorization: `Bearer ${mine.code}` } })).json() as Statistics;
    assert.equal(stats.ShortCode, null);
    assert.equal(stats.Visits, 3);
  });

  test('zero-fills hourly and monthly series over the asked period, UTC', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: TARGET });
    const hourly = (await app.inject({
      method: 'GET', url: '/v1/stats', query: { short, auth: code, from: '2026-03-29T00:30:00+01:00', to: '2026-03-29T06:00:00+02:00', interval: 'hour' },
    })).json() as Statistics;
    assert.equal(hourly.From, '2026-03-28T23:30:00.000Z');
    assert.equal(hourly.To, '2026-03-29T04:00:00.000Z');
    assert.deepEqual(hourly.Series.map((p) => p.Time), [
      '2026-03-28T23:00:00.000Z', '2026-03-29T00:00:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-29T02:00:00.000Z', '2026-03-29T03:00:00.000Z',
    ]);
    assert.ok(hourly.Series.every((p) => p.Visits === 0 && p.Bots === 0));
    const monthly = (await app.inject({
      method: 'GET', url: '/v1/stats', query: { short, auth: code, from: '2025-12-15T00:00:00Z', to: '2026-03-01T00:00:00Z', interval: 'month' },
    })).json() as Statistics;
    assert.deepEqual(monthly.Series.map((p) => p.Time), ['2025-12-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z']);
  });

  test('answers the series as CSV with format=csv or Accept: text/csv', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: TARGET });
    await app.inject({ method: 'GET', url: `/${short}`, headers: { 'user-agent': GOOGLEBOT } });
    const query = { short, auth: code, from: new Date(Date.now() - 2 * 3_600_000).toISOString(), interval: 'hour' };
    for (const request of [{ query: { ...query, format: 'csv' } }, { query, headers: { accept: 'text/csv' } }]) {
      const response = await app.inject({ method: 'GET', url: '/v1/stats', ...request });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['content-type'], 'text/csv; charset=utf-8');
      const lines = response.body.trimEnd().split('\n');
      assert.equal(lines[0], 'time,visits,bots');
      assert.equal(lines.length, 4);
      assert.match(lines.at(-1)!, /^\d{4}-\d\d-\d\dT\d\d:00:00\.000Z,1,1$/);
    }
  });

  test('checks in the contract\'s order: 401, then 400, then 404, then 403', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const other = await newAccount(app);
    const theirs = await createLinkOk(app, other.code, { url: TARGET });
    assertError(await app.inject({ method: 'GET', url: '/v1/stats', query: { short: 'nope-nope', interval: 'week' } }), 401, OP);
    assertError(await app.inject({ method: 'GET', url: '/v1/stats', query: { short: 'nope-nope', interval: 'week', auth: code } }), 400, OP);
    assertError(await app.inject({ method: 'GET', url: '/v1/stats', query: { short: theirs, from: '2026-01-01', auth: code } }), 400, OP);
    assertError(await app.inject({ method: 'GET', url: '/v1/stats', query: { short: theirs, to: '2026-01-01T00:00:00', auth: code } }), 400, OP);
    assertError(await app.inject({ method: 'GET', url: '/v1/stats', query: { short: theirs, format: 'xml', auth: code } }), 400, OP);
    assertError(await app.inject({ method: 'GET', url: '/v1/stats', query: { short: theirs, from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z', auth: code } }), 400, OP);
    assertError(await app.inject({ method: 'GET', url: `/v1/stats?short=${theirs}&short=${theirs}&auth=${code}` }), 400, OP);
    assertError(await app.inject({ method: 'GET', url: '/v1/stats', query: { short: 'nope-nope', auth: code } }), 404, OP);
    assertError(await app.inject({ method: 'GET', url: '/v1/stats', query: { short: theirs, auth: code } }), 403, OP);
    const response = await app.inject({ method: 'GET', url: '/v1/stats', query: { short: theirs, auth: code } });
    assert.equal(response.headers['content-type'], TEXT);
  });

  test('records safely what hostile headers send, and never answers 5xx for them', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: TARGET });
    const hostile = [
      { 'user-agent': 'A'.repeat(10_000) },
      { 'user-agent': 'Mozilla/5.0 \u0001\u0002\u007f', referer: 'http://exa mple.com' },
      { referer: 'android-app://com.google.android.gm/' },
      { referer: 'https://xn--bcher-kva.example/' },
      { referer: '::::' },
    ];
    for (const headers of hostile) {
      const response = await app.inject({ method: 'GET', url: `/${short}`, headers });
      assert.equal(response.statusCode, 302);
    }
    const stats = (await app.inject({ method: 'GET', url: '/v1/stats', query: { short, auth: code } })).json() as Statistics;
    assert.equal(stats.Visits, hostile.length);
    const referrers = Object.fromEntries(stats.Referrers.map((r) => [r.Name, r.Visits]));
    assert.equal(referrers['com.google.android.gm'], 1);
    assert.equal(referrers['xn--bcher-kva.example'], 1);
    assert.equal(referrers['(invalid)'], 2);
  });

  test('closing waits for a fold in progress and starts none after it (the store closes after the app)', async (t) => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let folds = 0;
    // Each fold moves something, so the folder would go on folding until none is left.
    const { app } = await appFor(t, {}, { wrapStore: (store) => ({ ...store, foldStats: async () => (folds++, await gate, 1) }) });
    // The first tick (1 s) folds, visits or not.
    await waitFor(() => folds > 0, 'the first fold', { intervalMs: 20 });
    assert.equal(folds, 1, 'a fold is in progress');
    let closed = false;
    const closing = app.close().then(() => (closed = true));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(closed, false, 'close waits for the fold');
    release();
    await closing;
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(folds, 1, 'no fold after close began');
  });

  test('records nothing with STATS=off, while counting as always', async (t) => {
    const { app } = await appFor(t, { stats: false });
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: TARGET });
    await app.inject({ method: 'GET', url: `/${short}`, headers: { 'user-agent': CHROME } });
    const stats = (await app.inject({ method: 'GET', url: '/v1/stats', query: { short, auth: code } })).json() as Statistics;
    assert.equal(stats.Visits, 0);
    assert.deepEqual(stats.Referrers, []);
  });
});
