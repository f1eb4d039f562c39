/**
 * Browser tests, run from ui.test.ts: the links list follows the account's events live
 * (GET /v1/events, read with fetch() and the Authorization header, ADR 19). A visit made by
 * another client shows in the count without a reload; an edit and a link made elsewhere
 * show too; the access code never appears in a requested URL.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Request } from 'playwright-core';
import { assertCleanSession, createAccountInUi, openBrowser, openUi, startUiServer, waitForText } from './support.ts';

export function liveTests(): void {
  describe('live events', () => {
    test('a visit by another client raises the count in the list without a reload; edits and new links elsewhere show too', async (t) => {
      const server = await startUiServer(t);
      const session = await openBrowser(t, server.origin);
      const { page } = session;
      const requested: string[] = [];
      const streams: Request[] = [];
      page.on('request', (request) => {
        requested.push(request.url());
        if (new URL(request.url()).pathname === '/v1/events') streams.push(request);
      });
      await openUi(session, server.origin);
      const code = await createAccountInUi(page);
      await page.getByRole('button', { name: 'I have saved it' }).click();
      const auth = { authorization: `Bearer ${code}` };

      await page.getByLabel('Target URL').fill('https://example.com/live');
      await page.getByLabel('Custom shortcode').fill('live-link');
      const listed = page.waitForResponse((response) => new URL(response.url()).pathname === '/v1/links');
      await page.getByRole('button', { name: 'Shorten' }).click();
      const item = '#links tr[data-code="live-link"]';
      await listed;
      await page.locator('#links:not([aria-busy])').waitFor();
      await waitForText(page, `${item} .accesses`, /^0\b/);
      // Set in this document: still there after the visits shows the page was not reloaded.
      await page.evaluate(() => Object.assign(window, { __sameDocument: true }));
      assert.equal(streams.length, 1, 'one stream, opened with the account');
      assert.equal((await streams[0]!.allHeaders()).authorization, `Bearer ${code}`);
      const loads = () => requested.filter((url) => new URL(url).pathname === '/v1/links').length;
      const loadsBefore = loads();

      // Another client follows the link, twice.
      for (let i = 0; i < 2; i++) {
        const visit = await server.app.inject({ url: '/live-link', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0' } });
        assert.equal(visit.statusCode, 302);
      }
      await waitForText(page, `${item} .accesses`, /^2\b/);
      assert.equal(await page.locator(`${item} .accesses`).getAttribute('data-live'), 'updated', 'the new count is marked');
      assert.equal(loads(), loadsBefore, 'visits come from the stream, not from reloading the list');
      assert.equal(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument), true, 'the page was reloaded');

      // An edit elsewhere redraws the link; a link made elsewhere joins the list.
      const edited = await server.app.inject({ method: 'PATCH', url: '/v1/link', headers: auth, payload: { short: 'live-link', title: 'Edited elsewhere' } });
      assert.equal(edited.statusCode, 200, edited.body);
      await waitForText(page, `${item} .link-title`, 'Edited elsewhere');
      const created = await server.app.inject({ method: 'POST', url: '/v1/link', headers: auth, payload: { url: 'https://example.com/other', short: 'made-elsewhere' } });
      assert.equal(created.statusCode, 200, created.body);
      await page.locator('#links tr[data-code="made-elsewhere"]').waitFor();
      await waitForText(page, '#account-usage', /^2 \//);

      // The link's statistics, open, follow its visits too.
      await page.getByRole('link', { name: 'Stats live-link' }).click();
      await waitForText(page, '#stats-visits', /^2$/);
      const third = await server.app.inject({ url: '/live-link' });
      assert.equal(third.statusCode, 302);
      await waitForText(page, '#stats-visits', /^3$/);
      await page.goBack();
      await waitForText(page, `${item} .accesses`, /^3\b/);

      assert.deepEqual(requested.filter((url) => url.toLowerCase().includes(code.toLowerCase())), [], 'the access code in a URL');
      await assertCleanSession(session);
    });
  });
}
