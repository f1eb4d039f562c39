/**
 * Browser tests, run from ui.test.ts. Hostile content in the UI: targets, codes and error
 * texts carrying markup, quotes and `javascript:` must show as text, never run, and never
 * become clickable links. First with what the real API accepts, then with API answers the
 * service would never send (faked in the browser), so the page's own defences are tested,
 * not only the server's validation.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { openBrowser, startUiServer, waitForText, type BrowserSession } from './support.ts';

/** Set by any payload that manages to run. */
const PWNED = '__pwned';

const HOSTILE_TARGETS = [
  `https://evil.test/"><script>window.${PWNED}=1</script>`,
  `https://evil.test/?q=<svg/onload=window.${PWNED}=2>&r='"><img/src/onerror=window.${PWNED}=3>`,
  `https://evil.test/javascript:window.${PWNED}=4`,
] as const;

/** What the page holds that could run or navigate somewhere unsafe. */
async function dangerousMarkup(page: Page) {
  return page.evaluate((flag) => {
    // The bookmarklet is the page's one javascript: link, by design, and must be exactly its own.
    const bookmarklet = `javascript:void(location.href='${location.origin}/?url='+encodeURIComponent(location.href))`;
    const unsafeLinks = [...document.querySelectorAll<HTMLAnchorElement>('a[href]')]
      .filter((a) => !(a.id === 'bookmarklet' && decodeURIComponent(a.href) === bookmarklet))
      .map((a) => a.href)
      .filter((href) => !/^(https?|blob):/i.test(href));
    const handlers = [...document.querySelectorAll('*')].flatMap((element) =>
      [...element.attributes].filter((attribute) => /^on/i.test(attribute.name)).map((a) => `${element.tagName} ${a.name}`));
    return {
      pwned: (window as unknown as Record<string, unknown>)[flag] ?? null,
      scripts: [...document.scripts].map((s) => s.src.replace(location.origin, '')),
      images: [...document.images].map((image) => image.getAttribute('src')),
      svgs: [...document.querySelectorAll('svg')].filter((svg) => !svg.closest('.qr, .spark')).length,
      styleAttributes: document.querySelectorAll('[style]').length,
      unsafeLinks,
      handlers,
    };
  }, PWNED);
}

async function assertNothingRan(session: BrowserSession): Promise<void> {
  const found = await dangerousMarkup(session.page);
  assert.equal(found.pwned, null, 'no payload ran');
  assert.equal(found.scripts.length, 1, 'only the page\'s own module script');
  assert.match(found.scripts[0]!, /^\/assets\/[0-9a-f]+\/app\.js$/);
  assert.deepEqual(found.images.filter((src) => !/\/assets\/[0-9a-f]+\/favicon\.svg$/.test(src ?? '')), [], 'no injected <img>');
  assert.equal(found.svgs, 0, 'no injected <svg>');
  assert.equal(found.styleAttributes, 0);
  assert.deepEqual(found.unsafeLinks, [], 'no link to anything but http(s)');
  assert.deepEqual(found.handlers, [], 'no inline event handler attributes');
  assert.deepEqual(session.foreignRequests, []);
  assert.deepEqual(session.pageErrors, []);
  assert.deepEqual(session.dialogs, []);
  assert.deepEqual(await session.cspViolations(), []);
}

async function signUp(session: BrowserSession, origin: string): Promise<void> {
  await session.page.goto(`${origin}/`);
  await session.page.getByRole('button', { name: 'Create an account' }).click();
  await session.page.locator('#links-heading').waitFor();
}

async function submitLink(page: Page, url: string, short = ''): Promise<void> {
  await page.getByLabel('Target URL').fill(url);
  await page.getByLabel('Custom shortcode').fill(short);
  await page.getByRole('button', { name: 'Shorten' }).click();
}

/** Registers this file's tests; `ui.test.ts` runs them under the Chromium gate. */
export function hostileContentTests(): void {
  describe('hostile content', () => {
    test('targets full of markup and quotes show as text through the real API and run nothing', async (t) => {
      const server = await startUiServer(t);
      const session = await openBrowser(t, server.origin);
      const { page } = session;
      await signUp(session, server.origin);

      for (const [i, target] of HOSTILE_TARGETS.entries()) {
        await submitLink(page, target, i === 2 ? 'javascript.__pwned' : '');
        await waitForText(page, '#account-usage', new RegExp(`^${i + 1} / 20$`));
      }
      const targets = await page.locator('#links > tr .target').allTextContents();
      assert.deepEqual(targets, [...HOSTILE_TARGETS].reverse(), 'each target shows exactly as given, as text (newest first)');
      // Whole on hover and focus, still as text.
      for (const element of await page.locator('#links > tr .target').all()) {
        // Forced: the rows may still be re-laid out (a sparkline arriving, a live update), and
        // what is checked is the text the hover shows, not that the row stood still.
        await element.hover({ force: true });
        await element.focus();
      }
      await waitForText(page, '#links > tr[data-code="javascript.__pwned"] .short-url', /\/javascript\.__pwned$/);

      // javascript: and data: are refused by the API, and its error shows as text beside the field.
      await submitLink(page, `javascript:window.${PWNED}=5`);
      await waitForText(page, '#link-url-error', /^Only http:\/\/ and https:\/\/ addresses can be shortened\.$/);
      await submitLink(page, `data:text/html,<script>window.${PWNED}=6</script>`);
      await waitForText(page, '#link-url-error', /^Only http:\/\/ and https:\/\/ addresses can be shortened\.$/);
      // A code with markup is refused beside the shortcode field.
      await submitLink(page, 'https://example.com/', `<script>window.${PWNED}=7</script>`);
      await waitForText(page, '#link-short-error', /^A shortcode may hold only letters/);

      // The public lookup of a hostile target (in the Account view), and its QR and delete dialogs.
      await page.getByRole('link', { name: 'Account' }).click();
      await page.getByLabel('Shortcode or short URL').fill('javascript.__pwned');
      await page.getByRole('button', { name: 'Look up' }).click();
      await waitForText(page, '#lookup-state', /^Active$/);
      assert.equal(await page.locator('#lookup-target').textContent(), HOSTILE_TARGETS[2]);
      await page.getByRole('link', { name: 'Links' }).click();
      await page.locator('#links > tr').nth(0).getByRole('button', { name: /^QR/ }).click();
      await page.locator('#qr-dialog svg').waitFor();
      await page.keyboard.press('Escape');

      await assertNothingRan(session);
    });

    test('API answers the service never sends still cannot inject markup or a javascript: link', async (t) => {
      const server = await startUiServer(t);
      const session = await openBrowser(t, server.origin);
      const { page } = session;
      await signUp(session, server.origin);

      const evilCode = `"><img src=x onerror="window.${PWNED}=10">`;
      const fakeLinks = [
        { ShortCode: evilCode, PointsTo: `javascript:window.${PWNED}=11`, CreatedBy: 1, Accesses: 3 },
        { ShortCode: 'data-target', PointsTo: `data:text/html,<script>window.${PWNED}=12</script>`, CreatedBy: 1, Accesses: 0 },
        { ShortCode: `<script>window.${PWNED}=13</script>`, PointsTo: `JaVaScRiPt:window.${PWNED}=14`, CreatedBy: 1, Accesses: 1 },
        { ShortCode: 'vbscript', PointsTo: ` javascript:window.${PWNED}=15`, CreatedBy: 1, Accesses: 1 },
      ];
      await page.route(/\/v1\/links(\?|$)/, (route) => route.fulfill({ json: fakeLinks }));
      await page.route('**/v1/get/**', (route) => route.fulfill({ json: fakeLinks[0] }));
      await page.route('**/v1/link', (route) =>
        route.fulfill({ status: 400, contentType: 'text/plain', body: `Unable to create link: url <img src=x onerror="window.${PWNED}=16">` }));

      await page.getByRole('button', { name: 'Refresh' }).click();
      await waitForText(page, '#account-usage', /^4 \/ 20$/);
      const items = page.locator('#links > tr');
      for (const [i, link] of fakeLinks.entries()) {
        const item = items.nth(i);
        assert.equal(await item.locator('.target').textContent(), link.PointsTo);
        assert.equal(await item.locator('.target').evaluate((element) => element.tagName), 'SPAN', 'not a link');
        assert.ok((await item.locator('.short-url').textContent())?.endsWith(`/${link.ShortCode}`));
      }
      // Clicking the non-links does nothing.
      for (const target of await page.locator('#links > tr .target').all()) await target.click();
      assert.equal(new URL(page.url()).pathname, '/');

      // The delete dialog and the QR dialog name the code as text.
      await items.nth(0).getByRole('button', { name: /^Delete/ }).click();
      assert.equal(await page.locator('#delete-code').textContent(), evilCode);
      await page.getByRole('button', { name: 'Cancel' }).click();
      await items.nth(0).getByRole('button', { name: /^QR/ }).click();
      assert.ok((await page.locator('#qr-dialog-url').textContent())?.endsWith(evilCode));
      await page.keyboard.press('Escape');

      // A faked lookup answer and a faked error line show as text too.
      await page.getByRole('link', { name: 'Account' }).click();
      await page.getByLabel('Shortcode or short URL').fill('anything');
      await page.getByRole('button', { name: 'Look up' }).click();
      await waitForText(page, '#lookup-accesses', /^3$/);
      assert.equal(await page.locator('#lookup-short').textContent(), evilCode);
      assert.equal(await page.locator('#lookup-target').textContent(), fakeLinks[0]!.PointsTo);
      assert.equal(await page.locator('#lookup-target a').count(), 0);
      await page.getByRole('link', { name: 'Links' }).click();
      await submitLink(page, 'https://example.com/');
      await waitForText(page, '#link-url-error', /<img src=x onerror=/);

      await assertNothingRan(session);
    });

    test('the origin guard of these tests does see a request that leaves the origin', async (t) => {
      const server = await startUiServer(t);
      const session = await openBrowser(t, server.origin);
      // Straight from the test, not the page (whose CSP would stop a fetch first): proves the
      // assertions elsewhere are not vacuous.
      await assert.rejects(session.page.goto('https://elsewhere.test/beacon'));
      assert.deepEqual(session.foreignRequests, ['https://elsewhere.test/beacon']);
    });
  });
}
