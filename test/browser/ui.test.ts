/**
 * The web UI in a real browser (Debian's Chromium through playwright-core), against the real
 * app on loopback. Every test has its own app, database and browser profile, refuses any
 * request that leaves the origin, and ends by checking that none was attempted, that the
 * page threw nothing and that its Content-Security-Policy was never violated.
 *
 * The one entry file for browser tests (hostile content and layout live beside it), so that
 * without CHROMIUM_PATH they skip with a single line.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import { encode } from 'uqr';
import { postgresGate } from '../helpers/services.ts';
import {
  activeId,
  assertCleanSession,
  chromiumGate,
  createAccountInUi,
  openBrowser,
  openUi,
  startDestination,
  startUiServer,
  waitForText,
  type UiServer,
} from './support.ts';
import { bookmarkletTests } from './bookmarklet.ts';
import { dashboardTests } from './dashboard.ts';
import { docsTests } from './docs.ts';
import { hostileContentTests } from './hostile.ts';
import { keysTests } from './keys.ts';
import { layoutTests } from './layout.ts';
import { lifecycleTests } from './lifecycle.ts';
import { liveTests } from './live.ts';
import { routingTests } from './routing.ts';
import { statsTests } from './stats.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const STORAGE_KEY = 'shortlink.accessCode';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Fills the link form and submits it; waits for nothing (callers wait for what they expect). */
async function submitLink(page: Page, url: string, short = ''): Promise<void> {
  await page.getByLabel('Target URL').fill(url);
  await page.getByLabel('Custom shortcode').fill(short);
  await page.getByRole('button', { name: 'Shorten' }).click();
}

async function clipboard(page: Page): Promise<string> {
  return page.evaluate(() => navigator.clipboard.readText());
}

async function storedCode(page: Page): Promise<string | null> {
  return page.evaluate((key) => localStorage.getItem(key), STORAGE_KEY);
}

async function tabCode(page: Page): Promise<string | null> {
  return page.evaluate((key) => sessionStorage.getItem(key), STORAGE_KEY);
}

async function accountUid(server: UiServer, code: string): Promise<number> {
  const response = await server.app.inject({ url: '/v1/get_account', headers: { authorization: `Bearer ${code}` } });
  return (response.json() as { Uid: number }).Uid;
}

/** The whole flow of the issue, on whichever store the server runs. */
async function wholeFlow(t: TestContext, server: UiServer): Promise<void> {
  const destination = await startDestination(t);
  const session = await openBrowser(t, server.origin, { allowedOrigin: destination.origin });
  const { page } = session;
  await openUi(session, server.origin);

  // 1. A new account: the code is shown once, with the warning, and copies.
  const code = await createAccountInUi(page);
  assert.match(code, UUID);
  assert.equal(await activeId(page), 'new-code-heading');
  assert.ok(await page.getByText('Save this, it is your only key.').isVisible());
  await page.getByRole('button', { name: 'Copy access code' }).click();
  assert.equal(await clipboard(page), code);
  await page.getByRole('button', { name: 'I have saved it' }).click();
  assert.equal(await page.locator('#new-code').isVisible(), false);
  assert.equal(await page.locator('#new-code-value').textContent(), '', 'the code is gone from the page once saved');

  const uid = await accountUid(server, code);
  await waitForText(page, '#account-usage', /^0 \/ 20$/);
  assert.ok(await page.locator('#view-links').isVisible(), 'the Links view comes first');
  assert.equal(await page.locator('#nav a[aria-current="page"]').textContent(), 'Links');

  // The Account view has its own address; back returns to Links.
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Account' }).click();
  await waitForText(page, '#account-uid', new RegExp(`^${uid}$`));
  assert.equal(new URL(page.url()).hash, '#/account');
  assert.equal(await activeId(page), 'account-heading');
  assert.match((await page.locator('#account-created').getAttribute('datetime')) ?? '', /^\d{4}-\d\d-\d\dT/);
  assert.equal(await page.locator('#account-remember').isChecked(), false, 'remembering is off by default');
  assert.equal(await storedCode(page), null);
  assert.equal(await tabCode(page), code, 'the code is kept for this tab');
  await page.goBack();
  await page.locator('#view-links:not([hidden])').waitFor();
  assert.equal(await page.locator('#view-account').isVisible(), false);
  await page.goForward();
  await page.locator('#view-account:not([hidden])').waitFor();
  await page.goBack();
  await page.locator('#view-links:not([hidden])').waitFor();

  // 2. An automatic link: its short URL, a copy button and a QR code.
  const automaticTarget = `${destination.origin}/landing/automatic?from=ui`;
  await submitLink(page, automaticTarget);
  await waitForText(page, '#account-usage', /^1 \/ 20$/);
  const automaticUrl = (await page.locator('#new-link-url').textContent()) ?? '';
  assert.match(automaticUrl, new RegExp(`^${escapeRegExp(server.origin)}/[A-Za-z0-9]{6}$`));
  assert.equal(await page.locator('#new-link-url').getAttribute('href'), automaticUrl);
  await page.getByRole('button', { name: 'Copy short link' }).click();
  assert.equal(await clipboard(page), automaticUrl);

  const qr = encode(automaticUrl, { ecc: 'M', border: 4 });
  const drawn = await page.locator('#new-link-qr svg').evaluate((svg) => ({
    label: svg.getAttribute('aria-label'),
    viewBox: svg.getAttribute('viewBox'),
    dark: [...(svg.querySelector('path')?.getAttribute('d') ?? '').matchAll(/h(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0),
  }));
  assert.equal(drawn.label, `QR code for ${automaticUrl}`);
  assert.equal(drawn.viewBox, `0 0 ${qr.size} ${qr.size}`);
  assert.equal(drawn.dark, qr.data.flat().filter(Boolean).length, 'every dark module of the QR code is drawn');

  // 3. A custom link.
  const customTarget = `${destination.origin}/landing/custom`;
  await submitLink(page, customTarget, 'my-custom_link.1');
  await waitForText(page, '#account-usage', /^2 \/ 20$/);
  assert.equal(await page.locator('#new-link-url').textContent(), `${server.origin}/my-custom_link.1`);

  // 4. The API's errors, in plain words, inline next to the field they concern; the last
  // result goes as soon as a new attempt starts.
  await submitLink(page, automaticTarget, 'my-custom_link.1');
  await waitForText(page, '#link-short-error', /^The shortcode "my-custom_link\.1" is already taken\. Choose another/);
  assert.equal(await page.locator('#new-link').isVisible(), false, 'the previous short link is gone');
  assert.equal(await page.locator('#link-short').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('#link-url-error').isVisible(), false);
  assert.equal(await activeId(page), 'link-short');
  await waitForText(page, '#alert', /already taken/);

  await submitLink(page, 'not a url', '');
  await waitForText(page, '#link-url-error', /^The address contains spaces/);
  assert.equal(await page.locator('#link-url').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('#link-short-error').isVisible(), false, 'the old error is cleared');
  assert.equal(await page.locator('#link-short').getAttribute('aria-invalid'), null);
  await waitForText(page, '#account-usage', /^2 \/ 20$/);

  // 5. The list, newest first: short URL, full target, count, copy.
  const items = page.locator('#links > tr');
  assert.equal(await items.count(), 2);
  const first = items.nth(1);
  assert.equal(await first.locator('.short-url').textContent(), automaticUrl);
  assert.equal(await first.locator('.target').textContent(), automaticTarget);
  assert.equal(await first.locator('.target').getAttribute('title'), automaticTarget);
  assert.equal(await first.locator('.accesses').textContent(), '0 accesses');
  await items.nth(0).getByRole('button', { name: 'Copy my-custom_link.1' }).click();
  assert.equal(await clipboard(page), `${server.origin}/my-custom_link.1`);

  // 6. Following the short URL in the browser lands on the target and counts.
  const visit = await session.context.newPage();
  await visit.goto(automaticUrl);
  assert.equal(visit.url(), automaticTarget);
  await visit.getByRole('heading', { name: 'You arrived' }).waitFor();
  await visit.close();
  assert.deepEqual(destination.visits, ['/landing/automatic?from=ui']);
  await page.getByRole('button', { name: 'Refresh' }).click();
  await waitForText(page, '#links > tr:last-child .accesses', /^1 access$/);

  // 7. Looking up one of the account's own links (in the Account view) shows it from the
  // account: no access counted.
  await page.getByRole('link', { name: 'Account' }).click();
  await page.getByLabel('Shortcode or short URL').fill(automaticUrl);
  await page.getByRole('button', { name: 'Look up' }).click();
  await waitForText(page, '#lookup-accesses', /^1$/);
  assert.equal(await page.locator('#lookup-target').textContent(), automaticTarget);
  assert.equal(await page.locator('#lookup-state').textContent(), 'Active');
  assert.ok(await page.locator('#lookup-own').isVisible());
  await waitForText(page, '#announce', /no access was counted/);
  const automaticCode = automaticUrl.slice(automaticUrl.lastIndexOf('/') + 1);
  assert.equal((await server.app.inject({ method: 'HEAD', url: `/v1/get/${automaticCode}` })).statusCode, 200);

  // 8. Delete asks first; cancelling keeps the link.
  await page.getByRole('link', { name: 'Links' }).click();
  const custom = items.nth(0);
  await custom.getByRole('button', { name: 'Delete my-custom_link.1' }).click();
  await page.locator('#delete-dialog[open]').waitFor();
  assert.equal(await page.locator('#delete-code').textContent(), 'my-custom_link.1');
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.locator('#delete-dialog').waitFor({ state: 'hidden' });
  assert.equal(await items.count(), 2);
  await custom.getByRole('button', { name: 'Delete my-custom_link.1' }).click();
  await page.locator('#delete-dialog[open]').waitFor();
  // Closed and opened again in one task, so the close event runs after the new opening: the
  // new opening keeps its link.
  await page.evaluate(() => {
    document.querySelector<HTMLDialogElement>('#delete-dialog')?.close();
    document.querySelector<HTMLButtonElement>('tr[data-key="my-custom_link.1"] [data-action="delete"]')?.click();
  });
  await page.getByRole('button', { name: 'Delete link' }).click();
  await waitForText(page, '#account-usage', /^1 \/ 20$/);
  assert.equal(await items.count(), 1);
  assert.equal((await server.app.inject({ url: '/v1/get/my-custom_link.1' })).statusCode, 404);

  // 9. Sign out forgets the code; signing in with it brings the account back.
  await page.getByRole('link', { name: 'Account' }).click();
  await page.getByRole('button', { name: 'Sign out' }).click();
  assert.equal(await tabCode(page), null);
  await page.locator('#sign-in-form').waitFor();
  assert.equal(await activeId(page), 'sign-in-heading');
  assert.equal(await page.locator('#signed-in').isVisible(), false);
  assert.equal(await page.locator('#links > li').count(), 0);
  await page.getByLabel('Access code', { exact: true }).fill(code);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await waitForText(page, '#account-uid', new RegExp(`^${uid}$`));
  assert.equal(await activeId(page), 'account-heading', 'back where the user signed out');
  assert.equal(await storedCode(page), null);
  await page.getByRole('link', { name: 'Links' }).click();
  await waitForText(page, '#links > tr:first-child .accesses', /^1 access$/);

  await assertCleanSession(session);
}

describe('web UI in Chromium', { skip: chromiumGate.skip }, () => {
  flowTests();
  dashboardTests();
  lifecycleTests();
  hostileContentTests();
  layoutTests();
  docsTests();
  bookmarkletTests();
  liveTests();
  statsTests();
  keysTests();
  routingTests();
});

function flowTests(): void {
  describe('flows', () => {
    test('runs the whole flow: account, links, inline errors, copy, visit, delete, sign out and in', async (t) => {
      await wholeFlow(t, await startUiServer(t));
    });

    const postgres = postgresGate();
    test('runs the whole flow on PostgreSQL too', { skip: postgres.skip }, async (t) => {
      await wholeFlow(t, await startUiServer(t, { postgresUrl: postgres.value! }));
    });

    test('refuses a wrong access code at sign-in with the API\'s words', async (t) => {
      const server = await startUiServer(t);
      const session = await openBrowser(t, server.origin);
      const { page } = session;
      await openUi(session, server.origin);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await waitForText(page, '#sign-in-error', /^Enter your access code\.$/);
      await page.getByLabel('Access code', { exact: true }).fill('00000000-0000-4000-8000-000000000000');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await waitForText(page, '#sign-in-error', /^This access code does not open any account\. Check it and try again\.$/);
      assert.equal(await page.locator('#sign-in-code').getAttribute('aria-invalid'), 'true');
      assert.equal(await page.locator('#signed-in').isVisible(), false);
      await assertCleanSession(session);
    });

    test('keeps the access code for the tab, on this device only when asked, and forgets both on sign-out', async (t) => {
      const server = await startUiServer(t);
      const session = await openBrowser(t, server.origin);
      const { page } = session;
      await openUi(session, server.origin);
      const code = await createAccountInUi(page);
      assert.match(await page.locator('#sign-in-remember-hint').textContent() ?? '', /this tab only/);

      // Off by default: a reload of the tab stays signed in, another tab is not.
      await page.goto(`${server.origin}/#/account`);
      await page.locator('#view-account:not([hidden])').waitFor();
      assert.equal(await storedCode(page), null);
      const other = await session.context.newPage();
      await other.goto(`${server.origin}/`);
      await other.locator('#signed-out:not([hidden])').waitFor();
      await other.close();

      // Asked for at sign-in: a new tab has the account too.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Access code', { exact: true }).fill(code);
      await page.locator('#sign-in-remember').check();
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('#account-heading:focus').waitFor();
      assert.equal(await storedCode(page), code);
      const another = await session.context.newPage();
      await another.goto(`${server.origin}/#/account`);
      await another.locator('#signed-in:not([hidden])').waitFor();
      await another.close();
      await page.reload();
      await page.locator('#view-account:not([hidden])').waitFor();
      assert.equal(await page.locator('#account-uid').textContent(), String(await accountUid(server, code)));
      assert.equal(await page.locator('#account-remember').isChecked(), true);

      // The account's switch turns it off and on again.
      await page.locator('#account-remember').uncheck();
      assert.equal(await storedCode(page), null);
      await page.locator('#account-remember').check();
      assert.equal(await storedCode(page), code);

      // Sign-out forgets it, in the tab and on the device.
      await page.getByRole('button', { name: 'Sign out' }).click();
      assert.equal(await storedCode(page), null);
      assert.equal(await tabCode(page), null);
      await openUi(session, server.origin);
      assert.ok(await page.locator('#sign-in-form').isVisible());

      // A remembered code the service no longer accepts is dropped with a word why.
      await page.evaluate((key) => localStorage.setItem(key, '00000000-0000-4000-8000-000000000000'), STORAGE_KEY);
      await openUi(session, server.origin);
      await waitForText(page, '#sign-in-error', /no longer works/);
      assert.equal(await storedCode(page), null);
      await assertCleanSession(session);
    });

    test('shows a reached link cap next to the form, in plain words', async (t) => {
      const server = await startUiServer(t, { config: { defaultMaxLinks: 1 } });
      const session = await openBrowser(t, server.origin);
      const { page } = session;
      await openUi(session, server.origin);
      await createAccountInUi(page);
      await waitForText(page, '#account-usage', /^0 \/ 1$/);
      await submitLink(page, 'https://example.com/one');
      await waitForText(page, '#account-usage', /^1 \/ 1$/);
      await submitLink(page, 'https://example.com/two');
      await waitForText(page, '#link-form-error', /^Your account is full: it holds its maximum of 1 link\. Delete one to make room\.$/);
      assert.equal(await page.locator('#link-url-error').isVisible(), false);
      assert.equal(await page.locator('#link-short-error').isVisible(), false);
      await assertCleanSession(session);
    });

    test('looks up any shortcode without an account', async (t) => {
      const server = await startUiServer(t);
      const { AccessCode } = (await server.app.inject({ url: '/v1/new_account' })).json() as { AccessCode: string };
      const created = await server.app.inject({
        url: `/v1/link?url=${encodeURIComponent('https://example.org/path?q=1')}&short=public-one`,
        headers: { authorization: AccessCode },
      });
      assert.equal(created.statusCode, 200);

      const session = await openBrowser(t, server.origin);
      const { page } = session;
      await openUi(session, server.origin);
      await page.getByLabel('Shortcode or short URL').fill('public-one');
      await page.getByRole('button', { name: 'Look up' }).click();
      await waitForText(page, '#lookup-accesses', /^1$/);
      assert.equal(await page.locator('#lookup-short').textContent(), 'public-one');
      assert.equal(await page.locator('#lookup-target a').getAttribute('href'), 'https://example.org/path?q=1');
      await waitForText(page, '#announce', /public-one points to/);

      await page.getByLabel('Shortcode or short URL').fill('no-such-code');
      await page.getByRole('button', { name: 'Look up' }).click();
      await waitForText(page, '#lookup-error', /^There is no link with this shortcode/);
      assert.equal(await page.locator('#lookup-result').isVisible(), false);
      await assertCleanSession(session);
    });

    test('can be used with the keyboard alone, in reading order, with a visible focus', async (t) => {
      const server = await startUiServer(t);
      const session = await openBrowser(t, server.origin);
      const { page } = session;
      await openUi(session, server.origin);

      /** Presses Tab and answers what has focus: its id, or its accessible text. */
      const tab = async (key = 'Tab') => {
        await page.keyboard.press(key);
        return page.evaluate(() => {
          const active = document.activeElement as HTMLElement | null;
          return active?.id || active?.textContent?.trim().replace(/\s+/g, ' ') || '';
        });
      };

      assert.equal(await tab(), 'Skip to content');
      // Headless Chromium sometimes spends the first Tab on entering the page: the skip link
      // then answers twice.
      let next = await tab();
      if (next === 'Skip to content') next = await tab();
      assert.equal(next, 'create-account');
      const outline = await page.locator('#create-account').evaluate((element) => {
        const style = getComputedStyle(element);
        return { style: style.outlineStyle, width: Number.parseFloat(style.outlineWidth) };
      });
      assert.notEqual(outline.style, 'none', 'the focused button shows a focus ring');
      assert.ok(outline.width >= 2, `the focus ring is ${outline.width}px wide`);
      assert.deepEqual([await tab(), await tab(), await tab(), await tab()], ['sign-in-code', 'sign-in-remember', 'Sign in', 'lookup-code']);

      // Back to the button, and create the account with Enter.
      for (let i = 0; i < 4; i++) await page.keyboard.press('Shift+Tab');
      assert.equal(await activeId(page), 'create-account');
      await page.keyboard.press('Enter');
      await page.locator('#new-code-heading:focus').waitFor();
      assert.deepEqual([await tab(), await tab()], ['copy-new-code', 'dismiss-new-code']);
      await page.keyboard.press('Enter');
      await page.locator('#links-heading:focus').waitFor();
      assert.deepEqual(
        [await tab(), await tab(), await tab(), await tab(), await tab()],
        ['Shorten a URL', 'link-url', 'link-short', 'Shorten', 'More options (title, tags, expiry, visit limit)'],
      );

      // Shorten with Enter from the URL field.
      await page.locator('#link-url').focus();
      await page.keyboard.type('https://example.com/by/keyboard');
      await page.keyboard.press('Enter');
      await page.locator('#new-link-heading:focus').waitFor();
      await waitForText(page, '#account-usage', /^1 \/ 20$/);
      const newUrl = (await page.locator('#new-link-url').textContent()) ?? '';
      const code = newUrl.slice(newUrl.lastIndexOf('/') + 1);
      assert.deepEqual([await tab(), await tab(), await tab()], ['new-link-url', 'copy-new-link', 'Paste many URLs (one per line)']);
      assert.deepEqual([await tab(), await tab(), await tab(), await tab(), await tab()], ['filter-q', 'filter-tag', 'filter-sort', 'refresh-links', 'export-csv']);
      assert.deepEqual([await tab(), await tab(), await tab(), await tab(), await tab(), await tab(), await tab(), await tab(), await tab()], [
        'select-all', '', newUrl, `Copy ${code}`, 'https://example.com/by/keyboard', `QR ${code}`, `Stats ${code}`, `Edit ${code}`, `Delete ${code}`,
      ]);

      // The QR dialog opens and closes from the keyboard, focus returning to its button.
      for (let i = 0; i < 3; i++) await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Enter');
      await page.locator('#qr-dialog[open]').waitFor();
      assert.equal(await page.locator('#qr-dialog svg[role="img"]').getAttribute('aria-label'), `QR code for ${newUrl}`);
      await page.keyboard.press('Escape');
      await page.locator('#qr-dialog').waitFor({ state: 'hidden' });
      assert.equal(await tab(), `Stats ${code}`);
      assert.equal(await tab(), `Edit ${code}`);
      assert.equal(await tab(), `Delete ${code}`);

      // Delete: the dialog's focus starts on Cancel (the safe choice); Tab reaches Delete link.
      await page.keyboard.press('Enter');
      await page.locator('#delete-dialog[open]').waitFor();
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Cancel');
      assert.equal(await tab(), 'delete-confirm');
      await page.keyboard.press('Enter');
      await page.locator('#links-heading:focus').waitFor();
      await waitForText(page, '#account-usage', /^0 \/ 20$/);
      await waitForText(page, '#announce', new RegExp(`Deleted the short link ${escapeRegExp(code)}`));
      await assertCleanSession(session);
    });
  });
}
