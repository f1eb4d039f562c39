/**
 * Browser tests, run from ui.test.ts. The statistics view (issue 15, CONTRACT §7.4): a link's
 * and the account's statistics after visits with different User-Agents, Referers and client
 * addresses made through the API; the numbers in the table view and the top lists, the period
 * picker, the CSV download, focus and keyboard, screenshots at 1280 and 375 px in both schemes,
 * no sideways scrolling and WCAG AA text contrast.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test, type TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import type { Statistics } from '../../src/http/schemas.ts';
import { postgresGate } from '../helpers/services.ts';
import { lowContrastTexts } from './layout.ts';
import { activeId, assertCleanSession, openBrowser, openUi, screenshot, startUiServer, waitForText, type UiServer } from './support.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
/** Client addresses the offline database places in the United States and Great Britain. */
const US = '8.8.8.8';
const GB = '81.2.69.160';

/** A new account with two links, made through the API. */
async function apiAccount(server: UiServer): Promise<string> {
  const response = await server.app.inject({ method: 'POST', url: '/v1/new_account' });
  assert.equal(response.statusCode, 200, response.body);
  const code = (response.json() as { AccessCode: string }).AccessCode;
  for (const short of ['stats-one', 'stats-two']) {
    const created = await server.app.inject({
      method: 'POST', url: '/v1/link', headers: { authorization: `Bearer ${code}` }, payload: { url: `https://example.com/${short}`, short },
    });
    assert.equal(created.statusCode, 200, created.body);
  }
  return code;
}

/**
 * Visits through the API, as browsers and crawlers would make them: stats-one gets 5 (3 humans,
 * 2 bots; 2 from news.example.org, 3 direct; 2 US, 1 GB, 2 unknown), stats-two gets 1.
 */
async function visit(server: UiServer): Promise<void> {
  const visits: Array<[string, Record<string, string>]> = [
    ['/stats-one', { 'user-agent': CHROME, referer: 'https://news.example.org/a?b=1', 'x-forwarded-for': US }],
    ['/v1/get/stats-one', { 'user-agent': IPHONE, 'x-forwarded-for': GB }],
    ['/stats-one', { 'user-agent': FIREFOX_LINUX, referer: 'https://news.example.org/other', 'x-forwarded-for': US }],
    ['/v1/get/stats-one', { 'user-agent': GOOGLEBOT }],
    ['/v1/get/stats-one', {}],
    ['/stats-two', { 'user-agent': CHROME }],
  ];
  for (const [url, headers] of visits) {
    const response = await server.app.inject({ method: 'GET', url, headers });
    assert.ok(response.statusCode === 200 || response.statusCode === 302, `${url}: ${response.statusCode}`);
  }
}

async function apiStats(server: UiServer, code: string, query: Record<string, string>, csv = false): Promise<string> {
  const response = await server.app.inject({
    url: '/v1/stats', query: { ...query, ...(csv ? { format: 'csv' } : {}) }, headers: { authorization: `Bearer ${code}` },
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.body;
}

async function signIn(page: Page, code: string): Promise<void> {
  await page.getByLabel('Access code', { exact: true }).fill(code);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('.view:not([hidden]) h2:focus').waitFor();
}

/** The cells of a top list, as `name=visits` (its row's data-name, not the words shown). */
async function topList(page: Page, id: string): Promise<string[]> {
  return page.locator(`#${id} tbody tr[data-name]`).evaluateAll((rows) =>
    rows.map((row) => `${(row as HTMLElement).dataset.name}=${row.querySelector('td.num')?.textContent ?? ''}`));
}

/** The table view's totals row: visits, humans, bots. */
async function totals(page: Page): Promise<string[]> {
  return page.locator('#stats-table tfoot td').allTextContents();
}

const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Registers this file's tests; `ui.test.ts` runs them under the Chromium gate. */
export function statsTests(): void {
  describe('statistics', () => {
    test('shows a link\'s and the account\'s statistics: numbers, table, top lists, periods, CSV', async (t) => {
      await wholeView(t, await startUiServer(t, { config: { trustProxy: ['127.0.0.1'] } }));
    });

    const postgres = postgresGate();
    test('shows them on PostgreSQL too', { skip: postgres.skip }, async (t) => {
      await wholeView(t, await startUiServer(t, { postgresUrl: postgres.value!, config: { trustProxy: ['127.0.0.1'] } }));
    });

    test('is usable from the keyboard alone', async (t) => {
      const server = await startUiServer(t);
      const code = await apiAccount(server);
      await visit(server);
      const session = await openBrowser(t, server.origin);
      const { page } = session;
      await openUi(session, server.origin);
      await signIn(page, code);
      const name = () => page.evaluate(() => {
        const active = document.activeElement as HTMLElement | null;
        return active?.id || active?.textContent?.trim().replace(/\s+/g, ' ') || '';
      });

      await page.getByRole('link', { name: 'Statistics' }).focus();
      await page.keyboard.press('Enter');
      await waitForText(page, '#stats-visits', /^6$/);
      assert.equal(await activeId(page), 'stats-heading');
      const order: string[] = [];
      for (let i = 0; i < 4; i++) {
        await page.keyboard.press('Tab');
        order.push(await name());
      }
      assert.deepEqual(order, ['stats-refresh', 'stats-range', 'stats-who-all', 'Show the numbers as a table']);
      await page.keyboard.press('Enter');
      assert.equal(await page.locator('#stats-table-details').getAttribute('open'), '');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      // The table scrolls by itself when long: it is focusable only when it does; then the CSV button.
      for (let i = 0; i < 10 && await name() !== 'stats-csv'; i++) await page.keyboard.press('Tab');
      assert.equal(await name(), 'stats-csv');
      // Waiting starts before the key: on a loaded machine the download can come first.
      const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
      assert.match(download.suggestedFilename(), /^shortlink-all-links-/);
      await page.locator('#stats-range').focus();
      await page.keyboard.press('ArrowDown');
      await waitForText(page, '#stats-chart-caption', /^Visits per month, /);
      // Back (the browser's, here from the keyboard) returns to the list.
      await page.goBack();
      await page.locator('#links-heading:focus').waitFor();
      await assertCleanSession(session);
    });

    test('screenshots at 1280 and 375 px, light and dark; no sideways scrolling; AA contrast', async (t) => {
      const server = await startUiServer(t, { config: { trustProxy: ['127.0.0.1'] } });
      const code = await apiAccount(server);
      await visit(server);
      // A referrer host as long as hosts get, which must wrap rather than widen the page.
      const longHost = `${'a-rather-long-label-'.repeat(3)}x.${'another-label-'.repeat(3)}y.example.org`;
      await server.app.inject({ url: '/stats-one', headers: { 'user-agent': CHROME, referer: `https://${longHost}/page` } });
      const session = await openBrowser(t, server.origin);
      const { page } = session;
      await openUi(session, server.origin);
      await signIn(page, code);
      await page.getByRole('link', { name: 'Stats stats-one' }).click();
      await waitForText(page, '#stats-visits', /^6$/);
      assert.equal(await page.locator(`#stats-referrers tr[data-name="${longHost}"] td.num`).textContent(), '1');
      await page.getByText('Show the numbers as a table').click();
      await page.getByLabel('Period', { exact: true }).selectOption('7d');
      await page.locator('#stats-table tbody tr:nth-child(7)').waitFor();
      const shots: string[] = [];
      for (const width of [1280, 375]) {
        for (const scheme of ['light', 'dark'] as const) {
          await page.setViewportSize({ width, height: width > 800 ? 900 : 812 });
          await page.emulateMedia({ colorScheme: scheme });
          // The chart is drawn again for its new width.
          await page.waitForFunction(() => {
            const svg = document.querySelector('#stats-chart svg');
            const box = document.getElementById('stats-chart');
            return svg !== null && box !== null && Number(svg.getAttribute('width')) === Math.floor(box.clientWidth);
          });
          assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), 0, `no sideways scrolling at ${width} px`);
          assert.deepEqual(await lowContrastTexts(page), [], `contrast at ${width} px, ${scheme}`);
          await page.locator('#stats').scrollIntoViewIfNeeded();
          shots.push(await screenshot(page, `stats-${width}-${scheme}`));
        }
      }
      await page.getByLabel('Period', { exact: true }).selectOption('custom');
      await page.getByRole('button', { name: 'Show', exact: true }).click();
      await page.locator('#stats-table tbody tr:nth-child(7)').waitFor();
      await page.setViewportSize({ width: 360, height: 740 });
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), 0, 'custom period at 360 px');
      for (const width of [1280, 375]) {
        for (const scheme of ['light', 'dark'] as const) {
          await page.setViewportSize({ width, height: width > 800 ? 900 : 812 });
          await page.emulateMedia({ colorScheme: scheme });
          shots.push(await screenshot(page, `stats-custom-${width}-${scheme}`));
        }
      }
      t.diagnostic(`screenshots:\n${shots.join('\n')}`);
      assert.equal(shots.length, 8);
      await assertCleanSession(session);
    });
  });
}

/**
 * The whole view, on whichever store the server runs: a link's statistics with every period,
 * the table view, the top lists and the CSV, then the account's, refresh, delete and sign-out.
 */
async function wholeView(t: TestContext, server: UiServer): Promise<void> {
  const code = await apiAccount(server);
  await visit(server);
  const session = await openBrowser(t, server.origin);
  const { page } = session;
  await openUi(session, server.origin);
  await signIn(page, code);

  // 1. A link's statistics, from its row; focus moves to the view's heading.
  const stats = page.getByRole('link', { name: 'Stats stats-one' });
  await stats.click();
  await waitForText(page, '#stats-visits', /^5$/);
  assert.equal(await activeId(page), 'stats-heading');
  assert.equal(await page.locator('#stats-heading').textContent(), 'Statistics of stats-one');
  assert.match((await page.locator('#stats-subject').textContent()) ?? '', /\/stats-one → https:\/\/example\.com\/stats-one$/);
  assert.equal(await page.locator('#stats-humans').textContent(), '3');
  assert.equal(await page.locator('#stats-bots').textContent(), '2');
  await waitForText(page, '#announce', /stats-one: 5 visits/);

  // The chart: a labelled image, one column per day, bots hatched on top of humans.
  const chart = page.locator('#stats-chart svg[role="img"]');
  assert.match((await chart.getAttribute('aria-label')) ?? '', /^Visits per day, .*: 5 visits, 3 by humans and 2 by bots\./);
  assert.equal(await chart.locator('g.bars > g').count(), 30);
  assert.equal(await chart.locator('.bar-humans').count(), 1);
  assert.equal(await chart.locator('.bar-bots').getAttribute('fill'), 'url(#stats-hatch)');
  assert.match((await chart.locator('g.bars > g').last().locator('title').textContent()) ?? '', /UTC: 5 visits \(3 humans, 2 bots\)$/);

  // 2. The same numbers as a table: one row per day, today's last, and the totals.
  await page.getByText('Show the numbers as a table').click();
  const rows = page.locator('#stats-table tbody tr');
  assert.equal(await rows.count(), 30);
  assert.deepEqual(await rows.last().locator('td').allTextContents(), ['5', '3', '2']);
  assert.equal(await rows.last().locator('time').getAttribute('datetime'), `${utcDate(Date.now())}T00:00:00.000Z`);
  assert.deepEqual(await totals(page), ['5', '3', '2']);

  // 3. The top lists, as the API counted them.
  assert.deepEqual(await topList(page, 'stats-referrers'), ['(direct)=3', 'news.example.org=2']);
  assert.deepEqual(await topList(page, 'stats-countries'), ['US=2', 'ZZ=2', 'GB=1']);
  assert.equal(await page.locator('#stats-countries tr[data-name="US"] th').textContent(), 'United States (US)');
  assert.equal(await page.locator('#stats-countries tr[data-name="ZZ"] th').textContent(), 'Unknown (ZZ)');
  // The same countries on the map: the busiest darkest, the others by share; unknown nowhere.
  assert.equal(await page.locator('#stats-map path[data-code="US"]').getAttribute('class'), 'country shade-5');
  assert.equal(await page.locator('#stats-map path[data-code="GB"]').getAttribute('class'), 'country shade-3');
  assert.equal(await page.locator('#stats-map path[data-code="FR"]').getAttribute('class'), 'country shade-0');
  assert.equal(await page.locator('#stats-map path[data-code="US"] title').textContent(), 'United States (US): 2 visits');
  assert.deepEqual(await topList(page, 'stats-devices'), ['bot=2', 'desktop=2', 'mobile=1']);
  const api = JSON.parse(await apiStats(server, code, { short: 'stats-one' })) as Statistics;
  assert.deepEqual(await topList(page, 'stats-browsers'), api.Browsers.map((b) => `${b.Name}=${b.Visits}`));
  assert.deepEqual(await topList(page, 'stats-os'), api.OperatingSystems.map((o) => `${o.Name}=${o.Visits}`));
  assert.ok(api.Browsers.some((b) => b.Name === 'Firefox'), 'the browsers the API names');
  assert.equal(await page.locator('#stats-referrers tr[data-name="news.example.org"] td.share').textContent(), '40%');

  // 4. Periods: 24 hours by hour, 12 months by month, each still holding today's visits.
  await page.getByLabel('Period', { exact: true }).selectOption('24h');
  await waitForText(page, '#stats-chart-caption', /^Visits per hour, /);
  assert.equal(await rows.count(), 24);
  assert.deepEqual(await totals(page), ['5', '3', '2']);
  assert.match((await chart.getAttribute('aria-label')) ?? '', /^Visits per hour, /);
  await page.getByLabel('Period', { exact: true }).selectOption('12m');
  await waitForText(page, '#stats-chart-caption', /^Visits per month, /);
  assert.equal(await rows.count(), 12);
  assert.deepEqual(await rows.last().locator('td').allTextContents(), ['5', '3', '2']);
  await page.getByLabel('Period', { exact: true }).selectOption('7d');
  await waitForText(page, '#stats-chart-caption', /^Visits per day, /);
  assert.equal(await rows.count(), 7);

  // A custom period: UTC dates, both included; "Best fit" asks for hours over 3 days.
  await page.getByLabel('Period', { exact: true }).selectOption('custom');
  assert.equal(await activeId(page), 'stats-from');
  const today = utcDate(Date.now());
  const twoDaysAgo = utcDate(Date.now() - 2 * 86_400_000);
  await page.getByLabel('From', { exact: true }).fill(today);
  await page.getByLabel('To', { exact: true }).fill(twoDaysAgo);
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await waitForText(page, '#stats-custom-error', /^The first date must not be after the second\.$/);
  assert.equal(await page.locator('#stats-from').getAttribute('aria-invalid'), 'true');
  await page.getByLabel('From', { exact: true }).fill(twoDaysAgo);
  await page.getByLabel('To', { exact: true }).fill(today);
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await page.locator('#stats-table tbody tr:nth-child(72)').waitFor();
  assert.equal(await rows.count(), 72);
  assert.deepEqual(await totals(page), ['5', '3', '2']);
  assert.equal(await page.locator('#stats-custom-error').isVisible(), false);
  // The API's own error, beside the period: too many hours.
  await page.getByLabel('From', { exact: true }).fill('2020-01-01');
  await page.getByLabel('By', { exact: true }).selectOption('hour');
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await waitForText(page, '#stats-custom-error', /^That period has more than 10000 hours: choose a shorter one/);
  await page.getByLabel('From', { exact: true }).fill('2020-01-01');
  await page.getByLabel('To', { exact: true }).fill('2020-01-31');
  await page.getByLabel('By', { exact: true }).selectOption('auto');
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await waitForText(page, '#stats-visits', /^0$/);
  assert.equal(await rows.count(), 31);
  assert.deepEqual(await totals(page), ['0', '0', '0']);
  assert.equal(await page.locator('#stats-referrers tbody td').textContent(), 'No visits in this period.');
  assert.ok(await chart.getByText('No visits in this period').isVisible());

  // 5. The CSV: the API's own, for the period shown, saved from the page.
  await page.getByLabel('From', { exact: true }).fill(twoDaysAgo);
  await page.getByLabel('To', { exact: true }).fill(today);
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await page.locator('#stats-table tbody tr:nth-child(72)').waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
  assert.equal(download.suggestedFilename(), `shortlink-stats-one-${twoDaysAgo}_${today}.csv`);
  const csv = readFileSync(await download.path(), 'utf8');
  const expected = await apiStats(server, code, {
    short: 'stats-one', from: `${twoDaysAgo}T00:00:00.000Z`, to: new Date(Date.parse(today) + 86_400_000).toISOString(), interval: 'hour',
  }, true);
  assert.equal(csv, expected);
  assert.equal(csv.split('\n')[0], 'time,visits,bots');
  assert.equal(csv.trim().split('\n').length, 73);

  // 6. Back returns to the list, focus on its heading.
  await page.goBack();
  assert.equal(await page.locator('#stats').isVisible(), false);
  await page.locator('#links-heading:focus').waitFor();

  // 7. The whole account: both links' visits together.
  await page.getByRole('link', { name: 'Statistics' }).click();
  await page.getByLabel('Period', { exact: true }).selectOption('30d');
  // The account view opens on the link's custom period (hourly, 6 visits too): wait for the
  // 30 days to be shown before anything is read or downloaded (a PostgreSQL run took the
  // hourly CSV once).
  await waitForText(page, '#stats-chart-caption', /^Visits per day, /);
  await page.locator('#stats-table tbody tr:nth-child(30)').waitFor();
  assert.equal(await rows.count(), 30);
  await waitForText(page, '#stats-visits', /^6$/);
  assert.equal(await page.locator('#stats-heading').textContent(), 'Statistics of all links');
  assert.deepEqual(await totals(page), ['6', '4', '2']);
  assert.deepEqual(await topList(page, 'stats-referrers'), ['(direct)=4', 'news.example.org=2']);
  const [accountCsv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
  assert.match(accountCsv.suggestedFilename(), /^shortlink-all-links-\d{4}-\d\d-\d\d_\d{4}-\d\d-\d\d\.csv$/);
  const accountRows = readFileSync(await accountCsv.path(), 'utf8').trim().split('\n');
  assert.equal(accountRows.length, 31);
  assert.match(accountRows.at(-1) ?? '', new RegExp(`^${today}T00:00:00\\.000Z,6,2$`));

  // 8. Refresh brings in new visits; sign-out leaves nothing behind.
  await server.app.inject({ url: '/stats-two', headers: { 'user-agent': GOOGLEBOT } });
  await page.getByRole('button', { name: 'Refresh statistics' }).click();
  await waitForText(page, '#stats-visits', /^7$/);
  assert.equal(await page.locator('#stats-bots').textContent(), '3');
  // A deleted link's statistics address says it is gone, and shows none of its numbers.
  await page.getByRole('link', { name: 'Links' }).click();
  await page.getByRole('link', { name: 'Stats stats-two' }).click();
  await waitForText(page, '#stats-visits', /^2$/);
  await page.goBack();
  await page.getByRole('button', { name: 'Delete stats-two' }).click();
  await page.getByRole('button', { name: 'Delete link' }).click();
  await page.locator('#links tr[data-code="stats-two"]').waitFor({ state: 'detached' });
  await page.goForward();
  await waitForText(page, '#stats-error', /^There is no link with this shortcode/);
  assert.equal(await page.locator('#stats-body').isVisible(), false);
  await page.getByRole('link', { name: 'Account' }).click();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.locator('#sign-in-form').waitFor();
  assert.equal(await page.locator('#stats-chart').innerHTML(), '');
  assert.equal(await page.locator('#stats-table tbody tr').count(), 0);
  await signIn(page, code);
  assert.equal(await page.locator('#stats').isVisible(), false, 'the view stays closed after signing in again');
  await assertCleanSession(session);
}
