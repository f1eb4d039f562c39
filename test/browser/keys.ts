/**
 * Browser tests, run from ui.test.ts: the API keys panel of the Integrations view (create
 * with two scopes, the key shown once and copied, the list, the key used against the API,
 * delete after a second click) and "Paste many URLs" in the create box (per-line results
 * through the bulk create, in chunks of 100). On the desktop (light) and on a 375 px phone in
 * the dark scheme, each checked by axe-core, for text contrast and for sideways scrolling.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import { postgresGate } from '../helpers/services.ts';
import { axeViolations } from './dashboard.ts';
import { lowContrastTexts } from './layout.ts';
import {
  activeId,
  assertCleanSession,
  createAccountInUi,
  openBrowser,
  openUi,
  screenshot,
  SCREENSHOT_DIR,
  startUiServer,
  waitForText,
  type UiServer,
} from './support.ts';

interface Screen { viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark' }
const PHONE_DARK: Screen = { viewport: { width: 375, height: 800 }, colorScheme: 'dark' };

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function sidewaysScroll(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

async function keysFlow(t: TestContext, server: UiServer, screen: Screen = {}): Promise<void> {
  const session = await openBrowser(t, server.origin, screen);
  const { page } = session;
  await openUi(session, server.origin);
  await createAccountInUi(page);
  await page.getByRole('button', { name: 'I have saved it' }).click();
  await page.getByRole('link', { name: 'Integrations' }).click();
  await page.locator('#keys-empty:not([hidden])').waitFor();
  const suffix = screen.viewport === undefined ? '1280-light' : `${screen.viewport.width}-dark`;

  // No name, then no scope: said before asking, beside what is missing.
  await page.getByRole('button', { name: 'Create key' }).click();
  await waitForText(page, '#key-name-error', /^Give the key a name/);
  assert.equal(await page.locator('#key-name').getAttribute('aria-invalid'), 'true');
  assert.equal(await activeId(page), 'key-name');
  await page.locator('#key-name').fill('CI deploy');
  assert.equal(await page.locator('#key-name-error').isVisible(), false, 'the error goes on an edit');
  await page.getByLabel(/^List links/).uncheck();
  await page.getByRole('button', { name: 'Create key' }).click();
  await waitForText(page, '#key-scopes-error', /^Pick at least one thing the key may do\.$/);
  assert.deepEqual(await axeViolations(page), [], 'axe-core on the key form with errors');
  assert.deepEqual(await lowContrastTexts(page), [], 'text contrast (WCAG AA)');

  // Two scopes: the key is shown once, with the note, and copies.
  await page.getByLabel(/^List links/).check();
  await page.getByLabel(/^Create, change and delete links/).check();
  await page.getByRole('button', { name: 'Create key' }).click();
  await waitForText(page, '#key-new-value', /^slk_[A-Za-z0-9_-]{43}$/);
  const key = (await page.locator('#key-new-value').textContent()) ?? '';
  assert.equal(await activeId(page), 'key-new-heading');
  assert.ok(await page.getByText('Shown only now.').isVisible());
  await waitForText(page, '#announce', /shown only this once/);
  await page.getByRole('button', { name: 'Copy API key' }).click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);
  assert.equal(await page.locator('#key-name').inputValue(), '', 'the form is ready for the next key');

  // The list: name, scopes, creation, never used.
  const item = page.locator('#keys .api-key');
  await waitForText(page, '#keys .api-key', /CI deploy/);
  assert.equal(await item.count(), 1);
  assert.equal(await item.locator('.key-scopes').textContent(), 'May: List links, Change links');
  assert.equal(await item.locator('.key-last-used').textContent(), 'never');
  assert.match((await item.locator('time').first().getAttribute('datetime')) ?? '', /^\d{4}-\d\d-\d\dT/);
  assert.ok(!(await item.textContent() ?? '').includes(key), 'the list never shows the key');
  assert.deepEqual(await axeViolations(page), [], 'axe-core on the new key and the list');
  assert.deepEqual(await lowContrastTexts(page), [], 'text contrast (WCAG AA)');
  assert.equal(await sidewaysScroll(page), 0, 'the keys panel does not scroll sideways');
  await page.locator('#keys-heading').scrollIntoViewIfNeeded();
  await screenshot(page, `keys-panel-${suffix}`);
  // The panel alone, for docs/web-ui.md.
  await page.locator('#keys-card').screenshot({ path: join(SCREENSHOT_DIR, `keys-card-${suffix}.png`), animations: 'disabled' });

  // The key works against the API for what its scopes name, and nothing else.
  const withKey = { authorization: `Bearer ${key}` };
  assert.equal((await server.app.inject({ url: '/v1/links', headers: withKey })).statusCode, 200);
  const made = await server.app.inject({ method: 'POST', url: '/v1/link', headers: withKey, payload: { url: 'https://example.com/by-key' } });
  assert.equal(made.statusCode, 200, made.body);
  const rotate = await server.app.inject({ method: 'POST', url: '/v1/rotate_access_code', headers: withKey });
  assert.equal(rotate.statusCode, 403);
  assert.match(rotate.body, /: the key does not allow this$/m);
  assert.equal((await server.app.inject({ url: '/v1/stats', headers: withKey })).statusCode, 403);

  // Used: the list says when (this process's uses are written before a list is answered).
  await page.getByRole('button', { name: 'Refresh API keys' }).click();
  await page.locator('#keys .api-key .key-last-used time').waitFor();
  assert.match((await item.locator('.key-last-used time').getAttribute('datetime')) ?? '', /^\d{4}-\d\d-\d\dT/);
  assert.equal(await page.locator('#key-new-value').textContent(), key, 'a refresh keeps the key shown until saved');

  // Saved: the key leaves the page.
  await page.getByRole('button', { name: 'I have saved it' }).click();
  assert.equal(await page.locator('#key-new').isVisible(), false);
  assert.equal(await page.locator('#key-new-value').textContent(), '');
  assert.equal(await activeId(page), 'keys-heading');

  // Delete asks first: one click only changes the button.
  await page.getByRole('button', { name: 'Delete key CI deploy' }).click();
  await waitForText(page, '#keys button.danger', /^Click again to delete/);
  await waitForText(page, '#announce', /Click Delete again to delete the key CI deploy/);
  assert.equal(await item.count(), 1);
  assert.equal((await server.app.inject({ url: '/v1/links', headers: withKey })).statusCode, 200, 'still there after one click');
  await page.getByRole('button', { name: /^Click again to delete key CI deploy$/ }).click();
  await page.locator('#keys-empty:not([hidden])').waitFor();
  assert.equal(await item.count(), 0);
  await waitForText(page, '#announce', /^Deleted the key CI deploy\.$/);
  assert.equal((await server.app.inject({ url: '/v1/links', headers: withKey })).statusCode, 401, 'a deleted key opens nothing');
  await page.getByRole('button', { name: 'Refresh API keys' }).click();
  await page.locator('#keys-empty:not([hidden])').waitFor();
  assert.equal(await item.count(), 0);

  // Signing out leaves no key, name or list in the page.
  await page.locator('#key-name').fill('Left behind');
  await page.getByRole('button', { name: 'Create key' }).click();
  await waitForText(page, '#key-new-value', /^slk_/);
  await waitForText(page, '#keys .api-key', /Left behind/);
  await page.getByRole('link', { name: 'Account' }).click();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.locator('#signed-out:not([hidden])').waitFor();
  assert.equal(await page.locator('#key-new-value').textContent(), '');
  assert.equal(await page.locator('#keys > li').count(), 0);
  assert.equal(await page.locator('#key-name').inputValue(), '');
  await assertCleanSession(session);
}

async function pasteFlow(t: TestContext, server: UiServer, screen: Screen = {}): Promise<void> {
  const session = await openBrowser(t, server.origin, screen);
  const { page } = session;
  await openUi(session, server.origin);
  await createAccountInUi(page);
  await page.getByRole('button', { name: 'I have saved it' }).click();
  await waitForText(page, '#account-usage', /^0 \/ /);

  // Nothing pasted: said before asking.
  await page.getByText('Paste many URLs').click();
  await page.getByRole('button', { name: 'Shorten all' }).click();
  await waitForText(page, '#paste-urls-error', /^Paste at least one address/);
  assert.equal(await activeId(page), 'paste-urls');

  // Three lines, one of them refused: two short URLs and one error in plain words.
  const bulkCalls: string[] = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === '/v1/links' && request.method() === 'POST') bulkCalls.push(request.postData() ?? '');
  });
  await page.getByLabel('URLs, one per line').fill('https://example.com/first\n\nftp://example.com/file\nexample.org/second paste-two\n');
  await page.getByRole('button', { name: 'Shorten all' }).click();
  await waitForText(page, '#paste-summary', /^2 short links created; 1 line failed and stays in the box to fix\.$/);
  assert.equal(await activeId(page), 'paste-results-heading');
  await waitForText(page, '#announce', /^2 short links created/);
  assert.equal(bulkCalls.length, 1, 'one bulk call for three lines');
  const rows = page.locator('#paste-list > li');
  assert.equal(await rows.count(), 3);
  assert.equal(await rows.nth(0).locator('.paste-line').textContent(), 'https://example.com/first');
  assert.match((await rows.nth(0).locator('a').textContent()) ?? '', new RegExp(`^${escapeRegExp(server.origin)}/[A-Za-z0-9]{6}$`));
  assert.equal(await rows.nth(1).locator('.paste-line').textContent(), 'ftp://example.com/file');
  assert.equal(await rows.nth(1).locator('.error').textContent(), 'Only http:// and https:// addresses can be shortened.');
  assert.equal(await rows.nth(1).locator('a').count(), 0);
  assert.equal(await rows.nth(2).locator('a').textContent(), `${server.origin}/paste-two`);
  assert.equal(await rows.nth(2).locator('a').getAttribute('href'), `${server.origin}/paste-two`);
  assert.equal(await page.getByLabel('URLs, one per line').inputValue(), 'ftp://example.com/file', 'the failed line stays to fix');

  // The list and the count are refreshed.
  await waitForText(page, '#account-usage', /^2 \/ /);
  await page.locator('#links > tr[data-code="paste-two"]').waitFor();
  assert.equal(await page.locator('#links > tr').count(), 2);
  assert.equal(await page.locator('#links > tr[data-code="paste-two"] .target').textContent(), 'https://example.org/second');
  assert.deepEqual(await axeViolations(page), [], 'axe-core on the paste results');
  assert.deepEqual(await lowContrastTexts(page), [], 'text contrast (WCAG AA)');
  assert.equal(await sidewaysScroll(page), 0, 'the paste results do not scroll sideways');
  await page.locator('#paste-box').scrollIntoViewIfNeeded();
  await screenshot(page, `paste-many-${screen.viewport === undefined ? '1280-light' : `${screen.viewport.width}-dark`}`);

  // More than 100 lines: sent in chunks of 100, every line answered in order.
  bulkCalls.length = 0;
  const many = Array.from({ length: 101 }, (_, i) => `https://example.com/many/${i} many-${i}`);
  await page.getByLabel('URLs, one per line').fill(many.join('\n'));
  await page.getByRole('button', { name: 'Shorten all' }).click();
  await waitForText(page, '#paste-summary', /^101 short links created\.$/);
  assert.deepEqual(bulkCalls.map((body) => (JSON.parse(body) as unknown[]).length), [100, 1]);
  assert.equal(await rows.count(), 101);
  assert.equal(await rows.nth(100).locator('a').textContent(), `${server.origin}/many-100`);
  assert.equal(await page.getByLabel('URLs, one per line').inputValue(), '', 'nothing left to fix');
  await waitForText(page, '#account-usage', /^103 \/ /);
  await assertCleanSession(session);
}

/** Registers this file's tests; `ui.test.ts` runs them under the Chromium gate. */
export function keysTests(): void {
  describe('API keys and pasting many URLs', () => {
    test('creates a key with two scopes, shows it once, copies it, lists it, and deletes it after a second click', async (t) => {
      await keysFlow(t, await startUiServer(t));
    });

    const postgres = postgresGate();
    test('does the same on PostgreSQL (keys)', { skip: postgres.skip }, async (t) => {
      await keysFlow(t, await startUiServer(t, { postgresUrl: postgres.value! }));
    });

    test('does the same on a 375 px phone in the dark scheme (keys)', async (t) => {
      await keysFlow(t, await startUiServer(t), PHONE_DARK);
    });

    test('words the service\'s refusals: the 21st key, and deleting a key already gone', async (t) => {
      const server = await startUiServer(t);
      const session = await openBrowser(t, server.origin);
      const { page } = session;
      await openUi(session, server.origin);
      const code = await createAccountInUi(page);
      await page.getByRole('button', { name: 'I have saved it' }).click();
      const ids: string[] = [];
      for (let i = 1; i <= 20; i++) {
        const made = await server.app.inject({ method: 'POST', url: `/v1/keys?name=k${i}&scopes=links:read`, headers: { authorization: `Bearer ${code}` } });
        assert.equal(made.statusCode, 200, made.body);
        ids.push((made.json() as { Id: string }).Id);
      }
      await page.getByRole('link', { name: 'Integrations' }).click();
      await waitForText(page, '#keys', /k20/);
      assert.equal(await page.locator('#keys .api-key').count(), 20);
      await page.locator('#key-name').fill('One too many');
      await page.getByRole('button', { name: 'Create key' }).click();
      await waitForText(page, '#key-form-error', /^An account has at most 20 API keys\. Delete one you no longer use first\.$/);
      assert.equal(await page.locator('#key-new').isVisible(), false);

      // Deleted elsewhere (another tab, a script): the second click says so beside the key.
      const gone = await server.app.inject({ method: 'DELETE', url: `/v1/keys?id=${ids[0]}`, headers: { authorization: `Bearer ${code}` } });
      assert.equal(gone.statusCode, 200, gone.body);
      const first = page.locator(`#keys .api-key[data-id="${ids[0]}"]`);
      await first.getByRole('button', { name: 'Delete key k1' }).click();
      await first.getByRole('button', { name: /^Click again to delete/ }).click();
      await waitForText(page, `#keys .api-key[data-id="${ids[0]}"] .error`, /^This key no longer exists/);
      await assertCleanSession(session);
    });

    const roomy = { defaultMaxLinks: 200 };
    test('shortens pasted URLs, one per line, in chunks of 100, with each line\'s result', async (t) => {
      await pasteFlow(t, await startUiServer(t, { config: roomy }));
    });

    test('does the same on a 375 px phone in the dark scheme (paste)', async (t) => {
      await pasteFlow(t, await startUiServer(t, { config: roomy }), PHONE_DARK);
    });
  });
}
