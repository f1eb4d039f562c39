/**
 * Browser tests, run from ui.test.ts. How the UI looks: screenshots at 1280 and 375 px,
 * light and dark (written to artifacts/screenshots/ for review), no sideways scrolling down
 * to 360 px, and text contrast that meets WCAG AA in both colour schemes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { openBrowser, screenshot, startUiServer, waitForText, type BrowserSession } from './support.ts';

const LONG_TARGET = `https://example.com/a/rather/long/path/that/goes/on/${'and-on-'.repeat(12)}end?with=query&and=more`;
const LONG_CODE = `a-long-custom-code-${'x'.repeat(60)}`;

/** Signs up and makes a few links, the last one with the new-link panel and its QR showing. */
async function populate(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Create an account' }).click();
  await page.getByRole('button', { name: 'I have saved it' }).click();
  await addLinks(page);
}

/**
 * Three links, one with a long target and a long code; the last with every option (a title,
 * tags, an expiry and a visit limit), whose panel is left open.
 */
async function addLinks(page: Page): Promise<void> {
  const links: Array<[string, string]> = [
    ['https://example.com/docs/getting-started', ''],
    [LONG_TARGET, LONG_CODE],
    ['https://example.org/launch', 'launch-2026'],
  ];
  const form = page.locator('#link-form');
  for (const [i, [url, short]] of links.entries()) {
    await form.getByLabel('Target URL').fill(url);
    await form.getByLabel('Custom shortcode').fill(short);
    if (i === links.length - 1) {
      await page.getByText('More options').click();
      await form.getByLabel('Title').fill('Launch day: the announcement, the press kit and the live stream');
      await form.getByLabel('Tags').fill('launch, press, 2026');
      await form.getByLabel('Expires').fill('2030-12-31T23:59');
      await form.getByLabel('Visit limit').fill('1000');
    }
    await page.getByRole('button', { name: 'Shorten' }).click();
    await waitForText(page, '#account-usage', new RegExp(`^${i + 1} / 20$`));
  }
}

/**
 * Every visible text below WCAG AA contrast against its background: 4.5:1, or 3:1 for large
 * text, with the background found by walking up to the first opaque ancestor.
 */
export async function lowContrastTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const parse = (value: string): [number, number, number, number] => {
      const numbers = (value.match(/[\d.]+/g) ?? []).map(Number);
      return [numbers[0] ?? 0, numbers[1] ?? 0, numbers[2] ?? 0, numbers[3] ?? 1];
    };
    const luminance = ([r, g, b]: number[]) => {
      const channel = (c: number) => {
        const s = c / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * channel(r!) + 0.7152 * channel(g!) + 0.0722 * channel(b!);
    };
    const backgroundOf = (element: Element | null): number[] => {
      for (let e = element; e !== null; e = e.parentElement) {
        const bg = parse(getComputedStyle(e).backgroundColor);
        if (bg[3] > 0.5) return bg;
      }
      return [255, 255, 255, 1];
    };
    const failures: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const element = node.parentElement;
      if (element === null || (node.textContent ?? '').trim() === '') continue;
      if (!element.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
      if (element.closest('.visually-hidden, [hidden], noscript, template, .skip-link, button:disabled')) continue;
      const style = getComputedStyle(element);
      const fg = parse(style.color);
      const bg = backgroundOf(element);
      const [l1, l2] = [luminance(fg), luminance(bg)].sort((a, b) => b - a) as [number, number];
      const ratio = (l1 + 0.05) / (l2 + 0.05);
      const size = Number.parseFloat(style.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
      if (ratio < (large ? 3 : 4.5)) {
        failures.push(`${element.tagName}.${element.className} "${node.textContent?.trim().slice(0, 30)}" ${ratio.toFixed(2)}:1`);
      }
    }
    return failures;
  });
}

async function assertClean(session: BrowserSession): Promise<void> {
  assert.deepEqual(session.foreignRequests, []);
  assert.deepEqual(session.pageErrors, []);
  assert.deepEqual(await session.cspViolations(), []);
}

/** Registers this file's tests; `ui.test.ts` runs them under the Chromium gate. */
export function layoutTests(): void {
  describe('layout', () => {
    test('screenshots at 1280 and 375 px wide, light and dark', async (t) => {
      const server = await startUiServer(t);
      const session = await openBrowser(t, server.origin);
      const { page } = session;
      const shots: string[] = [];
      const combos = [1280, 375].flatMap((width) => (['light', 'dark'] as const).map((scheme) => ({ width, scheme })));
      const each = async (name: string, fullPage = true) => {
        for (const { width, scheme } of combos) {
          await page.setViewportSize({ width, height: width > 800 ? 900 : 812 });
          await page.emulateMedia({ colorScheme: scheme });
          shots.push(await screenshot(page, `${name}-${width}-${scheme}`, { fullPage }));
        }
      };

      await page.goto(`${server.origin}/nope-not-a-link`);
      await page.getByRole('heading', { name: 'This short link does not exist' }).waitFor();
      await each('not-found');

      await page.goto(`${server.origin}/`);
      await page.locator('#signed-out:not([hidden])').waitFor();
      await each('signed-out');

      await page.getByRole('button', { name: 'Create an account' }).click();
      await page.locator('#new-code-value').filter({ hasText: /\S/ }).waitFor();
      await each('new-account');
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await addLinks(page);
      await each('signed-in');
      await page.getByRole('link', { name: 'Account' }).click();
      await page.getByLabel('Shortcode or short URL').fill('launch-2026');
      await page.getByRole('button', { name: 'Look up' }).click();
      await waitForText(page, '#lookup-state', /^Active$/);
      await each('account');
      await page.getByRole('link', { name: 'Links' }).click();

      await page.locator('#links > tr').nth(1).getByRole('button', { name: /^QR/ }).click();
      await page.locator('#qr-dialog svg').waitFor();
      await each('qr-dialog', false);
      await page.keyboard.press('Escape');

      await page.locator('#links > tr').nth(0).getByRole('button', { name: /^Edit/ }).click();
      await page.locator('#edit-dialog[open]').waitFor();
      await page.locator('#edit-dialog').getByLabel('Visit limit').fill('0');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await waitForText(page, '#edit-max-visits-error', /The visit limit is a whole number/);
      await each('edit-dialog', false);
      await page.keyboard.press('Escape');

      await page.getByRole('link', { name: 'Account' }).click();
      await page.getByRole('button', { name: 'Change access code' }).click();
      await page.locator('#rotate-dialog[open]').waitFor();
      await each('rotate-dialog', false);
      await page.keyboard.press('Escape');

      await page.getByRole('button', { name: 'Delete account' }).click();
      await page.locator('#delete-account-dialog[open]').waitFor();
      await each('delete-account-dialog', false);
      await page.keyboard.press('Escape');

      // A search that finds a part of the links, sorted by visits.
      await page.getByRole('link', { name: 'Links' }).click();
      await page.getByLabel('Search', { exact: true }).fill('launch');
      await waitForText(page, '#links-count', /match/);
      await page.getByLabel('Sort').selectOption('visits');
      await waitForText(page, '#announce', /Sorted most visited/);
      await each('search');

      t.diagnostic(`screenshots:\n${shots.join('\n')}`);
      assert.equal(shots.length, 40);
      await assertClean(session);
    });

    test('never scrolls sideways down to 360 px, even with long targets and codes', async (t) => {
      const server = await startUiServer(t);
      const session = await openBrowser(t, server.origin, { viewport: { width: 360, height: 740 } });
      const { page } = session;
      const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

      await page.goto(`${server.origin}/`);
      await page.locator('#signed-out:not([hidden])').waitFor();
      assert.equal(await overflow(), 0, 'signed out');
      await populate(page);
      for (const width of [360, 375, 414]) {
        await page.setViewportSize({ width, height: 740 });
        assert.equal(await overflow(), 0, `signed in at ${width} px`);
      }
      // A long value revealed whole (hover or focus) wraps instead of widening the page.
      await page.locator('#links > tr .target').nth(1).focus();
      assert.equal(await overflow(), 0, 'with a long target revealed');
      await assertClean(session);
    });

    for (const scheme of ['light', 'dark'] as const) {
      test(`text contrast meets WCAG AA in the ${scheme} scheme, errors and hints included`, async (t) => {
        const server = await startUiServer(t);
        const session = await openBrowser(t, server.origin, { colorScheme: scheme });
        const { page } = session;
        await page.goto(`${server.origin}/`);
        await page.locator('#signed-out:not([hidden])').waitFor();
        await page.getByRole('button', { name: 'Sign in' }).click();
        await waitForText(page, '#sign-in-error', /Enter your access code/);
        assert.deepEqual(await lowContrastTexts(page), [], 'signed out');

        await page.getByRole('button', { name: 'Create an account' }).click();
        await page.locator('#new-code-value').filter({ hasText: /\S/ }).waitFor();
        assert.deepEqual(await lowContrastTexts(page), [], 'new access code');
        await page.getByRole('button', { name: 'I have saved it' }).click();
        await addOneLink(page);
        await page.getByLabel('Target URL').fill('ftp://example.com/');
        await page.getByRole('button', { name: 'Shorten' }).click();
        await waitForText(page, '#link-url-error', /Only http/);
        assert.deepEqual(await lowContrastTexts(page), [], 'signed in, with an error');

        await page.locator('#links > tr').first().getByRole('button', { name: /^Delete/ }).click();
        await page.locator('#delete-dialog[open]').waitFor();
        assert.deepEqual(await lowContrastTexts(page), [], 'delete dialog');
        await page.keyboard.press('Escape');

        // Every state of a link, with its details, and the edit dialog with an error.
        await page.locator('#link-form').getByLabel('Target URL').fill('https://example.com/once');
        await page.getByText('More options').click();
        await page.locator('#link-form').getByLabel('Tags').fill('contrast');
        await page.locator('#link-form').getByLabel('Visit limit').fill('1');
        await page.getByRole('button', { name: 'Shorten' }).click();
        await waitForText(page, '#account-usage', /^2 \/ 20$/);
        const once = (await page.locator('#new-link-url').textContent()) ?? '';
        await server.app.inject({ url: `/v1/get/${once.slice(once.lastIndexOf('/') + 1)}` });
        await page.getByRole('button', { name: 'Refresh' }).click();
        await waitForText(page, '#links .state', /^Visit limit reached$/);
        assert.deepEqual(await lowContrastTexts(page), [], 'links in every state');
        await page.locator('#links > tr').first().getByRole('button', { name: /^Edit/ }).click();
        await page.locator('#edit-dialog').getByLabel('Target').fill('');
        await page.getByRole('button', { name: 'Save changes' }).click();
        await waitForText(page, '#edit-url-error', /Enter the address/);
        assert.deepEqual(await lowContrastTexts(page), [], 'edit dialog with an error');
        await assertClean(session);
      });
    }
  });
}

/** One link, for the contrast checks (the account already exists). */
async function addOneLink(page: Page): Promise<void> {
  await page.getByLabel('Target URL').fill('https://example.com/contrast');
  await page.getByRole('button', { name: 'Shorten' }).click();
  await waitForText(page, '#account-usage', /^1 \/ 20$/);
}
