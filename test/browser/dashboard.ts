/**
 * Browser tests, run from ui.test.ts. The dashboard's own flows: the list's server-side
 * order, search as you type, a tag that filters, bulk tagging and deleting, the CSV export,
 * per-link statistics as their own view, webhooks in the Integrations view, the QR
 * downloads, and screenshots of each view at 1280 and 375 px in both schemes, with no view
 * scrolling sideways at 360 px. On SQLite and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, test, type TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import { postgresGate } from '../helpers/services.ts';
import {
  assertCleanSession,
  createAccountInUi,
  openBrowser,
  openUi,
  screenshot,
  serveOnLoopback,
  startUiServer,
  waitForText,
  type UiServer,
} from './support.ts';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's violations of any impact on the page as it is, as `rule: targets`. The script is
 * evaluated through the DevTools protocol (the page's CSP allows no injected script, rightly).
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
}

async function addLink(page: Page, url: string, short: string, tags = ''): Promise<void> {
  const form = page.locator('#link-form');
  await form.getByLabel('Target URL').fill(url);
  await form.getByLabel('Custom shortcode').fill(short);
  if (tags !== '') {
    await page.locator('#link-options').evaluate((details) => { (details as HTMLDetailsElement).open = true; });
    await form.getByLabel('Tags').fill(tags);
  }
  await page.getByRole('button', { name: 'Shorten' }).click();
  await waitForText(page, '#new-link-url', new RegExp(`/${short}$`));
}

async function codes(page: Page): Promise<string[]> {
  return page.locator('#links > tr').evaluateAll((rows) => rows.map((row) => (row as HTMLElement).dataset.code ?? ''));
}

/** How a flow's browser looks: the desktop (1280 px, light) unless a phone is asked for. */
interface Screen { viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark' }
const PHONE_DARK: Screen = { viewport: { width: 375, height: 800 }, colorScheme: 'dark' };

async function dashboardFlow(t: TestContext, server: UiServer, screen: Screen = {}): Promise<void> {
  const session = await openBrowser(t, server.origin, screen);
  const { page } = session;
  await openUi(session, server.origin);
  await createAccountInUi(page);
  await page.getByRole('button', { name: 'I have saved it' }).click();
  await addLink(page, 'https://example.com/alpha', 'alpha-one', 'news, launch');
  await addLink(page, 'https://example.com/beta', 'beta-two', 'news');
  await addLink(page, 'https://example.com/gamma', 'gamma-three');
  // Visits: beta twice, gamma once.
  for (const code of ['beta-two', 'beta-two', 'gamma-three']) await server.app.inject({ url: `/v1/get/${code}` });

  // Newest first by default; the order is asked of the API.
  await page.getByRole('button', { name: 'Refresh' }).click();
  await waitForText(page, '#links > tr:first-child .accesses', /^1 access$/);
  assert.deepEqual(await codes(page), ['gamma-three', 'beta-two', 'alpha-one']);
  const ordered = page.waitForRequest((request) => new URL(request.url()).searchParams.get('order') === 'visits');
  await page.getByLabel('Sort').selectOption('visits');
  await ordered;
  await waitForText(page, '#announce', /Sorted most visited/);
  assert.deepEqual(await codes(page), ['beta-two', 'gamma-three', 'alpha-one']);
  await page.getByLabel('Sort').selectOption('oldest');
  await waitForText(page, '#announce', /Sorted oldest first/);
  assert.deepEqual(await codes(page), ['alpha-one', 'beta-two', 'gamma-three']);

  // Search as you type: no button to press.
  await page.getByLabel('Search', { exact: true }).pressSequentially('gam');
  await waitForText(page, '#links-count', /^1 link matches\.$/);
  assert.deepEqual(await codes(page), ['gamma-three']);
  await page.getByRole('button', { name: 'Clear' }).click();
  await waitForText(page, '#links-count', /^3 links\.$/);

  // A tag in a row filters by it.
  await page.locator('#links tr[data-code="alpha-one"]').getByRole('button', { name: /^news/ }).click();
  await waitForText(page, '#links-count', /^2 links match\.$/);
  assert.equal(await page.getByLabel('Tag', { exact: true }).inputValue(), 'news');
  await page.getByRole('button', { name: 'Clear' }).click();
  await waitForText(page, '#links-count', /^3 links\.$/);

  // Sparklines come for the rows in view.
  await page.locator('#links tr[data-code="beta-two"] .spark svg polyline').waitFor({ state: 'attached' });

  // CSV export: every link, with its details.
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export CSV' }).click();
  const csv = readFileSync((await (await download).path())!, 'utf8');
  const lines = csv.trim().split('\r\n');
  assert.equal(lines[0], 'short_url,short_code,target,title,tags,created,expires,max_visits,visits,state');
  assert.equal(lines.length, 4);
  assert.match(lines.find((line) => line.includes(',alpha-one,')) ?? '', /,https:\/\/example\.com\/alpha,,launch news,|,https:\/\/example\.com\/alpha,,news launch,/);

  // Bulk: tag two, then delete them.
  await page.getByRole('checkbox', { name: 'Select alpha-one' }).check();
  await page.getByRole('checkbox', { name: 'Select gamma-three' }).check();
  await waitForText(page, '#bulk-count', /^2 selected$/);
  await page.getByLabel('Tags to add to the selected links').fill('bulk');
  await page.getByRole('button', { name: 'Add tags' }).click();
  await waitForText(page, '#announce', /Tagged 2 links with bulk/);
  const gamma = (await server.app.inject({ url: '/v1/links?q=gamma', headers: { authorization: `Bearer ${await page.evaluate(() => sessionStorage.getItem('shortlink.accessCode'))}` } })).json() as Array<{ Tags: string[] }>;
  assert.deepEqual(gamma[0]?.Tags, ['bulk']);
  await page.getByRole('button', { name: 'Delete selected' }).click();
  await page.locator('#delete-dialog[open]').waitFor();
  assert.equal(await page.locator('#delete-heading').textContent(), 'Delete 2 links?');
  await page.getByRole('button', { name: 'Delete 2 links' }).click();
  await waitForText(page, '#account-usage', /^1 \/ 20$/);
  assert.deepEqual(await codes(page), ['beta-two']);
  assert.equal((await server.app.inject({ url: '/v1/get/alpha-one' })).statusCode, 404);

  // Per-link statistics are their own view, with their own address; back returns.
  await page.getByRole('link', { name: 'Stats beta-two' }).click();
  await page.locator('#view-stats:not([hidden])').waitFor();
  assert.equal(new URL(page.url()).hash, '#/stats/beta-two');
  await waitForText(page, '#stats-visits', /^2$/);
  assert.equal(await page.locator('#view-links').isVisible(), false);
  await page.getByText('Humans', { exact: true }).first().click();
  await waitForText(page, '#announce', /humans only/);
  await page.goBack();
  await page.locator('#view-links:not([hidden])').waitFor();
  // The account's statistics, with its top links.
  await page.getByRole('link', { name: 'Statistics' }).click();
  await waitForText(page, '#stats-heading', /^Statistics of all links$/);
  await waitForText(page, '#stats-top-links tbody th', /beta-two/);

  // QR: PNG of the size chosen, and SVG.
  await page.getByRole('link', { name: 'Links' }).click();
  await page.getByRole('button', { name: 'QR beta-two' }).click();
  await page.locator('#qr-dialog[open]').waitFor();
  await page.getByLabel('Download size').selectOption('256');
  const png = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Download PNG' }).click();
  const pngFile = readFileSync((await (await png).path())!);
  assert.deepEqual([...pngFile.subarray(1, 4)], [0x50, 0x4e, 0x47], 'a PNG file');
  assert.equal(pngFile.readUInt32BE(16), 256, 'its width');
  assert.equal(pngFile.readUInt32BE(20), 256, 'its height');
  const svg = page.waitForEvent('download');
  await page.getByRole('link', { name: 'Download SVG' }).click();
  const svgText = readFileSync((await (await svg).path())!, 'utf8');
  assert.match(svgText, /^<svg[^>]* width="256" height="256"/);
  await page.keyboard.press('Escape');

  await assertCleanSession(session);
}

/** A receiver on loopback that answers every delivery 500: its attempts fail and are retried. */
async function failingReceiver(t: TestContext): Promise<string> {
  const origin = await serveOnLoopback(t, (request, response) => {
    request.resume();
    response.writeHead(500).end('no');
  });
  return `${origin}/hook`;
}

async function webhookFlow(t: TestContext, server: UiServer, screen: Screen = {}): Promise<void> {
  const session = await openBrowser(t, server.origin, screen);
  const { page } = session;
  await openUi(session, server.origin);
  const code = await createAccountInUi(page);
  await page.getByRole('button', { name: 'I have saved it' }).click();
  await page.getByRole('link', { name: 'Integrations' }).click();
  await waitForText(page, '#live-state', /^Connected/);
  await page.locator('#webhooks-empty:not([hidden])').waitFor();

  // A bad address is refused, in plain words, beside the field.
  await page.getByLabel('Receiver URL').fill('not an address');
  await page.getByRole('button', { name: 'Add webhook' }).click();
  await waitForText(page, '#webhook-url-error', /^The address contains spaces/);

  // A receiver that fails: its delivery log shows the status and when the retry is due.
  await page.getByLabel('Receiver URL').fill(await failingReceiver(t));
  await page.getByRole('button', { name: 'Add webhook' }).click();
  await waitForText(page, '#webhook-secret-value', /^whsec_/);
  await page.getByRole('button', { name: 'I have saved it' }).click();
  const made = await server.app.inject({ method: 'POST', url: '/v1/link', headers: { authorization: `Bearer ${code}` }, payload: { url: 'https://example.com/hooked' } });
  assert.equal(made.statusCode, 200, made.body);
  const log = page.locator('#webhooks .webhook').first().locator('.deliveries-log');
  const deliveries = () => page.waitForResponse((response) => new URL(response.url()).pathname === '/v1/webhooks/deliveries');
  let answered = deliveries();
  await log.locator('summary').click();
  await answered;
  // The first attempt happens soon after the change: reopen the log (which asks again) until it is there.
  for (let i = 0; !(await log.locator('td[data-ok="false"]').count()); i++) {
    assert.ok(i < 100, 'a delivery attempt is logged');
    await log.locator('summary').click();
    answered = deliveries();
    await log.locator('summary').click();
    await answered;
  }
  assert.match((await log.locator('td[data-ok="false"]').first().textContent()) ?? '', /^500/);
  assert.match((await log.locator('tbody tr').first().locator('td').last().textContent()) ?? '', /^About /);
  await page.getByRole('button', { name: /^Delete webhook http:\/\/127/ }).click();
  await page.getByRole('button', { name: /^Click again to delete/ }).click();
  await page.locator('#webhooks-empty:not([hidden])').waitFor();

  // No event: said before asking.
  await page.getByLabel('Receiver URL').fill('https://1.1.1.1/hook');
  for (const name of ['Link created', 'Link changed', 'Link deleted']) await page.getByLabel(name).uncheck();
  await page.getByRole('button', { name: 'Add webhook' }).click();
  await waitForText(page, '#webhook-events-error', /^Pick at least one event\.$/);
  await page.getByLabel('Link created').check();
  await page.getByRole('button', { name: 'Add webhook' }).click();
  await waitForText(page, '#webhook-secret-value', /^whsec_/);
  await page.getByRole('button', { name: 'Copy signing secret' }).click();
  const secret = await page.locator('#webhook-secret-value').textContent();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
  await waitForText(page, '#webhooks .webhook-url', /^https:\/\/1\.1\.1\.1\/hook$/);
  await page.getByRole('button', { name: 'I have saved it' }).click();
  assert.equal(await page.locator('#webhook-secret-value').textContent(), '');

  // The delivery log opens; delete asks for a second click.
  await page.locator('#webhooks .deliveries-log summary').click();
  await waitForText(page, '#webhooks .deliveries-log', /No deliveries yet|Time/);
  const remove = page.getByRole('button', { name: /^Delete webhook/ });
  await remove.click();
  await waitForText(page, '#webhooks button.danger', /Click again/);
  await page.getByRole('button', { name: /^Click again to delete/ }).click();
  await page.locator('#webhooks-empty:not([hidden])').waitFor();
  await assertCleanSession(session);
}

/** Registers this file's tests; `ui.test.ts` runs them under the Chromium gate. */
export function dashboardTests(): void {
  describe('dashboard', () => {
    test('orders on the server, searches as you type, filters by tag, bulk-edits, exports, shows per-link statistics, downloads QR codes', async (t) => {
      await dashboardFlow(t, await startUiServer(t));
    });

    const postgres = postgresGate();
    test('does the same on PostgreSQL', { skip: postgres.skip }, async (t) => {
      await dashboardFlow(t, await startUiServer(t, { postgresUrl: postgres.value! }));
    });

    test('does the same on a 375 px phone in the dark scheme', async (t) => {
      await dashboardFlow(t, await startUiServer(t), PHONE_DARK);
    });

    const hooks = { webhookAllowPrivate: true };
    test('manages webhooks, with their delivery log, and shows the live stream\'s state', async (t) => {
      await webhookFlow(t, await startUiServer(t, { config: hooks }));
    });

    test('does the same on PostgreSQL (webhooks)', { skip: postgres.skip }, async (t) => {
      await webhookFlow(t, await startUiServer(t, { postgresUrl: postgres.value!, config: hooks }));
    });

    test('does the same on a 375 px phone in the dark scheme (webhooks)', async (t) => {
      await webhookFlow(t, await startUiServer(t, { config: hooks }), PHONE_DARK);
    });

    test('screenshots of every view at 1280 and 375 px, light and dark; nothing scrolls sideways at 360 px', async (t) => {
      const server = await startUiServer(t, { config: { trustProxy: ['127.0.0.1'] } });
      const session = await openBrowser(t, server.origin);
      const { page } = session;
      await openUi(session, server.origin);
      await createAccountInUi(page);
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await addLink(page, `https://example.com/a/rather/long/path/${'and-on-'.repeat(10)}end?with=query`, 'spring-sale-2026', 'spring, sale');
      await addLink(page, 'https://example.org/launch', 'launch-2026', 'launch');
      // Visits from two countries (addresses the offline database places in the US and GB) and a bot.
      const chrome = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';
      for (const [url, ip, agent] of [
        ['/launch-2026', '8.8.8.8', chrome], ['/launch-2026', '8.8.8.8', chrome], ['/launch-2026', '81.2.69.160', chrome],
        ['/spring-sale-2026', '81.2.69.160', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'],
      ] as const) {
        await server.app.inject({ url, headers: { 'user-agent': agent, 'x-forwarded-for': ip, referer: 'https://news.example.org/post' } });
      }
      await page.getByRole('button', { name: 'Refresh' }).click();
      await waitForText(page, '#links > tr:first-child .accesses', /^3 accesses$/);
      await page.locator('#links tr[data-code="launch-2026"] .spark svg').waitFor();

      const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      const views = ['links', 'stats', 'stats/launch-2026', 'integrations', 'account'];
      const shots: string[] = [];
      for (const view of views) {
        await page.goto(`${server.origin}/#/${view}`);
        await page.locator(`#view-${view.split('/')[0]}:not([hidden])`).waitFor();
        if (view.startsWith('stats')) await page.locator('#stats-map path.shade-5').first().waitFor({ state: 'attached' });
        for (const width of [1280, 375]) {
          for (const scheme of ['light', 'dark'] as const) {
            await page.setViewportSize({ width, height: 800 });
            await page.emulateMedia({ colorScheme: scheme });
            shots.push(await screenshot(page, `view-${view.replace('/', '-')}-${width}-${scheme}`));
          }
        }
        await page.setViewportSize({ width: 360, height: 740 });
        assert.equal(await overflow(), 0, `${view} scrolls sideways at 360 px`);
        if (view === 'account') {
          assert.equal(await page.locator('#bookmarklet-card').isVisible(), false, 'no bookmarklet on a phone');
          await page.setViewportSize({ width: 1280, height: 800 });
          assert.equal(await page.locator('#bookmarklet-card').isVisible(), true, 'the bookmarklet on a desktop');
          await page.setViewportSize({ width: 360, height: 740 });
        }
        for (const scheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme: scheme });
          assert.deepEqual(await axeViolations(page), [], `axe-core on ${view}, ${scheme}`);
        }
      }
      // The dialogs, open, and the way in.
      await page.goto(`${server.origin}/#/links`);
      await page.locator('#view-links:not([hidden])').waitFor();
      await page.getByRole('button', { name: 'QR launch-2026' }).click();
      await page.locator('#qr-dialog[open]').waitFor();
      assert.deepEqual(await axeViolations(page), [], 'axe-core on the QR dialog');
      await page.keyboard.press('Escape');
      await page.getByRole('button', { name: 'Edit launch-2026' }).click();
      await page.locator('#edit-dialog').getByLabel('Visit limit').fill('0');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await waitForText(page, '#edit-max-visits-error', /visit limit/);
      assert.deepEqual(await axeViolations(page), [], 'axe-core on the edit dialog with an error');
      await page.keyboard.press('Escape');
      await page.getByRole('link', { name: 'Account' }).click();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.locator('#signed-out:not([hidden])').waitFor();
      assert.deepEqual(await axeViolations(page), [], 'axe-core signed out');
      t.diagnostic(`screenshots:\n${shots.join('\n')}`);
      await assertCleanSession(session);
    });
  });
}
