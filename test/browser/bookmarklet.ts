/**
 * The "shorten this page" bookmarklet: its address on the UI, run on a page of another origin
 * (one with a strict CSP of its own), landing on the UI with the form filled and the address
 * cleaned, the link then made by the user's own click; clicking it on the UI itself only explains.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { chromiumGate, openBrowser, serveOnLoopback, startUiServer, waitForText } from './support.ts';

/** A page on another origin that allows no script and no connection of its own. */
async function strictPage(t: TestContext): Promise<string> {
  return serveOnLoopback(t, (_request, response) => {
    response.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': "default-src 'none'",
    });
    response.end('<!doctype html><title>An article</title><h1>An article worth sharing</h1>');
  });
}

export function bookmarkletTests(): void {
  describe('bookmarklet', { skip: chromiumGate.skip }, () => {
    test('shortens the page it is used on: the UI opens with the form filled, and the user\'s click makes the link', async (t) => {
      const server = await startUiServer(t);
      const article = await strictPage(t);
      const session = await openBrowser(t, server.origin, { allowedOrigin: article });
      const { page } = session;
      await page.goto(`${server.origin}/`);
      await page.getByRole('button', { name: 'Create an account' }).click();
      await page.locator('#new-code-value').filter({ hasText: /\S/ }).waitFor();
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await page.getByRole('link', { name: 'Account' }).click();

      const href = await page.locator('#bookmarklet').getAttribute('href');
      assert.ok(href?.startsWith('javascript:'), String(href));
      assert.equal(href, `javascript:void(location.href='${server.origin}/?url='+encodeURIComponent(location.href))`);
      // Clicked here, it explains itself instead of running (the UI's CSP would refuse it).
      await page.locator('#bookmarklet').click();
      await page.locator('#bookmarklet-hint:not([hidden])').waitFor();
      assert.equal(page.url(), `${server.origin}/#/account`);

      // "Remember me" keeps the session across the round trip through the other page.
      await page.locator('#account-remember').check();
      const articleUrl = `${article}/2026/an-article?ref=feed&x=a b`;
      await page.goto(articleUrl);
      // What a bookmarklet does: run its script in the visited page.
      await Promise.all([page.waitForURL(`${server.origin}/**`), page.evaluate(decodeURIComponent(href.slice('javascript:'.length)))]);
      await page.locator('#signed-in:not([hidden])').waitFor();
      const target = new URL(articleUrl).href;
      assert.equal(await page.getByLabel('Target URL').inputValue(), target);
      assert.equal(page.url(), `${server.origin}/`, 'the parameter is taken out of the address');

      await page.getByRole('button', { name: 'Shorten' }).click();
      await waitForText(page, '#new-link-url', new RegExp(`^${server.origin}/[A-Za-z0-9]{6}$`));
      const list = await server.app.inject({ url: '/v1/links', headers: { authorization: (await page.evaluate(() => localStorage.getItem('shortlink.accessCode')))! } });
      assert.deepEqual((list.json() as { PointsTo: string }[]).map((link) => link.PointsTo), [target]);
      assert.deepEqual(session.pageErrors, []);
      assert.deepEqual(await session.cspViolations(), []);
    });

    test('fills the form but sends nothing when the UI is opened with ?url=', async (t) => {
      const server = await startUiServer(t);
      const session = await openBrowser(t, server.origin);
      await session.page.goto(`${server.origin}/?url=${encodeURIComponent('https://example.com/x')}`);
      await session.page.locator('#signed-out:not([hidden])').waitFor();
      assert.equal(await session.page.locator('#link-url').inputValue(), 'https://example.com/x');
      assert.equal(session.page.url(), `${server.origin}/`);
    });
  });
}
