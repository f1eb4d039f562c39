/**
 * Browser tests, run from ui.test.ts: domains, routing and passwords in the links view
 * (CONTRACT §8.1–8.3). A link on a second domain (registered through the admin API) shows
 * that domain in its short URL and QR code, the list filters by domain, and edit, delete and
 * live visits reach that domain's link, never the default domain's link of the same code. The
 * rules editor is used with the keyboard alone (add, fill, reorder, preview), a password makes
 * the link Protected, and the short URL's password form takes a wrong then the right password
 * from the keyboard. axe-core checks the create form with its routing open and the password page.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { encode } from 'uqr';
import { axeViolations } from './dashboard.ts';
import {
  activeId,
  assertCleanSession,
  createAccountInUi,
  openBrowser,
  openUi,
  screenshot,
  startDestination,
  startUiServer,
  waitForText,
} from './support.ts';

const ADMIN_TOKEN = 'browser-test-admin-token-0123456789abcdef';
const SECOND = 'go.example.test';
const SECOND_ORIGIN = `https://${SECOND}`;

/** The accessible name of the focused element, as a screen reader would read it (roughly). */
async function focusedName(page: Page): Promise<string> {
  return page.evaluate(() => {
    const active = document.activeElement;
    if (!(active instanceof HTMLElement)) return '';
    return (active.getAttribute('aria-label') ?? active.textContent ?? '').replace(/\s+/g, ' ').trim();
  });
}

/** Presses Tab until the element with this id has the focus (at most `limit` times). */
async function tabTo(page: Page, id: string, limit = 30): Promise<void> {
  for (let i = 0; i < limit; i++) {
    if (await activeId(page) === id) return;
    await page.keyboard.press('Tab');
  }
  assert.equal(await activeId(page), id, `Tab never reached #${id}`);
}

/** The dark modules of a drawn QR code, counted from its path. */
async function qrModules(page: Page, selector: string): Promise<{ label: string | null; dark: number }> {
  return page.locator(selector).evaluate((svg) => ({
    label: svg.getAttribute('aria-label'),
    dark: [...(svg.querySelector('path')?.getAttribute('d') ?? '').matchAll(/h(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0),
  }));
}

export function routingTests(): void {
  describe('domains, routing and passwords', () => {
    test('a link on a second domain shows that domain\'s short URL and QR code, filters by domain, and edit, delete and visits reach it alone', async (t) => {
      const server = await startUiServer(t, { config: { adminToken: ADMIN_TOKEN } });
      const registered = await server.app.inject({
        method: 'PUT', url: '/v1/admin/domain', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { origin: SECOND_ORIGIN },
      });
      assert.equal(registered.statusCode, 200, registered.body);
      const session = await openBrowser(t, server.origin);
      const { page } = session;
      await openUi(session, server.origin);
      const code = await createAccountInUi(page);
      await page.getByRole('button', { name: 'I have saved it' }).click();
      const auth = { authorization: `Bearer ${code}` };
      const defaultHost = new URL(server.origin).hostname;

      // The picker lists the default domain first, and appears since there are two.
      const picker = page.getByLabel('Domain', { exact: true }).first();
      await page.locator('#link-domain-field:not([hidden])').waitFor();
      assert.deepEqual(await page.locator('#link-domain option').allTextContents(), [`${defaultHost} (default)`, SECOND]);

      // The same code on both domains.
      await page.getByLabel('Target URL').fill('https://example.com/default');
      await page.getByLabel('Custom shortcode').fill('same-code');
      await page.getByRole('button', { name: 'Shorten' }).click();
      await waitForText(page, '#new-link-url', `${server.origin}/same-code`);
      await page.getByLabel('Target URL').fill('https://example.com/second');
      await picker.selectOption(SECOND);
      await page.getByLabel('Custom shortcode').fill('same-code');
      await page.getByRole('button', { name: 'Shorten' }).click();
      const secondUrl = `${SECOND_ORIGIN}/same-code`;
      await waitForText(page, '#new-link-url', secondUrl);
      const expected = encode(secondUrl, { ecc: 'M', border: 4 }).data.flat().filter(Boolean).length;
      assert.deepEqual(await qrModules(page, '#new-link-qr svg'), { label: `QR code for ${secondUrl}`, dark: expected });

      // Each row's short URL on its own domain; the QR dialog encodes the second domain's.
      const secondRow = page.locator(`#links tr[data-code="same-code"][data-domain="${SECOND}"]`);
      const defaultRow = page.locator('#links tr[data-code="same-code"]:not([data-domain])');
      await waitForText(page, `#links tr[data-domain="${SECOND}"] .short-url`, secondUrl);
      assert.equal(await defaultRow.locator('.short-url').textContent(), `${server.origin}/same-code`);
      await secondRow.getByRole('button', { name: 'QR same-code' }).click();
      await page.locator('#qr-dialog[open]').waitFor();
      assert.deepEqual(await qrModules(page, '#qr-dialog-image svg'), { label: `QR code for ${secondUrl}`, dark: expected });
      await page.keyboard.press('Escape');

      // The filter asks the API for one domain's links.
      const filtered = page.waitForRequest((request) => new URL(request.url()).pathname === '/v1/links' &&
        new URL(request.url()).searchParams.get('domain') === SECOND);
      await page.locator('#filter-domain').selectOption(SECOND);
      await filtered;
      await waitForText(page, '#links-count', /^1 link matches\.$/);
      assert.equal(await page.locator('#links tr').count(), 1);
      await page.locator('#filter-domain').selectOption('');
      await waitForText(page, '#links-count', /^2 links\.$/);

      // A visit on the second domain counts on its link, live.
      const visit = await server.app.inject({ url: '/same-code', headers: { host: SECOND } });
      assert.equal(visit.statusCode, 302);
      assert.equal(visit.headers.location, 'https://example.com/second');
      await waitForText(page, `#links tr[data-domain="${SECOND}"] .accesses`, /^1\b/);
      assert.match((await defaultRow.locator('.accesses').textContent()) ?? '', /^0\b/, 'the default domain\'s link of that code was not visited');

      // Edit and delete address the second domain's link, not the default's of the same code.
      await secondRow.getByRole('button', { name: 'Edit same-code' }).click();
      await page.locator('#edit-dialog[open]').waitFor();
      assert.equal(await page.locator('#edit-code').textContent(), `${SECOND}/same-code`);
      await page.locator('#edit-title').fill('On the second domain');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.locator('#edit-dialog').waitFor({ state: 'hidden' });
      const listed = (await server.app.inject({ url: '/v1/links', headers: auth })).json() as Array<{ Domain: string | null; Title: string | null }>;
      assert.deepEqual(listed.map((l) => [l.Domain, l.Title]).sort(), [[null, null], [SECOND, 'On the second domain']]);

      await secondRow.getByRole('button', { name: 'Delete same-code' }).click();
      await page.locator('#delete-dialog[open]').waitFor();
      await page.locator('#delete-confirm').click();
      await page.locator('#delete-dialog').waitFor({ state: 'hidden' });
      await secondRow.waitFor({ state: 'detached' });
      const left = (await server.app.inject({ url: '/v1/links', headers: auth })).json() as Array<{ Domain: string | null; ShortCode: string }>;
      assert.deepEqual(left.map((l) => [l.Domain, l.ShortCode]), [[null, 'same-code']], 'the default domain\'s link stays');
      await assertCleanSession(session);
    });

    test('rules are made and reordered with the keyboard alone, a password protects the link, and its form takes the right password', async (t) => {
      const destination = await startDestination(t);
      const server = await startUiServer(t);
      const session = await openBrowser(t, server.origin, { allowedOrigin: destination.origin });
      const { page } = session;
      await openUi(session, server.origin);
      const code = await createAccountInUi(page);
      await page.getByRole('button', { name: 'I have saved it' }).press('Enter');
      await page.locator('#links-heading:focus').waitFor();

      // The target and shortcode, typed.
      await tabTo(page, 'link-url');
      await page.keyboard.type(`${destination.origin}/landing`);
      await page.keyboard.press('Tab');
      await page.keyboard.type('routed');
      // Open "Routing and password" with Enter on its summary.
      await page.locator('#link-routing > summary').focus();
      await page.keyboard.press('Enter');
      assert.equal(await page.locator('#link-routing').getAttribute('open'), '');
      await tabTo(page, 'link-password');
      await page.keyboard.type('correct horse');

      // Rule 1: mobile devices (Space ticks the box).
      await tabTo(page, 'link-rule-add');
      await page.keyboard.press('Enter');
      assert.equal(await activeId(page), 'link-rule-1-device-desktop', 'a new rule takes the focus');
      await page.keyboard.press('Tab');
      assert.equal(await activeId(page), 'link-rule-1-device-mobile');
      await page.keyboard.press('Space');
      await tabTo(page, 'link-rule-1-to');
      await page.keyboard.type(`${destination.origin}/mobile`);
      // Rule 2: German speakers.
      await tabTo(page, 'link-rule-add');
      await page.keyboard.press('Enter');
      await tabTo(page, 'link-rule-2-language');
      await page.keyboard.type('de');
      await tabTo(page, 'link-rule-2-to');
      await page.keyboard.type(`${destination.origin}/de`);

      // Move rule 2 up: its button is the next stop; the focus follows the rule.
      await page.keyboard.press('Tab');
      assert.equal(await focusedName(page), 'Move rule 2 Up');
      await page.keyboard.press('Enter');
      assert.equal(await focusedName(page), 'Move rule 1 Down', 'the moved rule, now first, keeps the focus on its buttons');
      await waitForText(page, '#announce', 'Rule 2 is now rule 1.');
      assert.equal(await page.locator('#link-rule-1-language').inputValue(), 'de');
      assert.equal(await page.locator('#link-rule-2-device-mobile').isChecked(), true);

      // The preview: a German speaker goes to rule 1's target; a phone (picked with the arrow keys) to rule 2's.
      await tabTo(page, 'link-preview-device');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      assert.equal(await page.locator('#link-preview-device').inputValue(), 'mobile');
      await waitForText(page, '#link-rules-preview', `A visitor on a mobile device goes to ${destination.origin}/mobile: rule 2.`);
      await tabTo(page, 'link-preview-language');
      await page.keyboard.type('de');
      await waitForText(page, '#link-rules-preview', `A visitor on a mobile device speaking de goes to ${destination.origin}/de: rule 1.`);

      assert.deepEqual(await axeViolations(page), [], 'axe-core on the create form with its routing open');
      await page.locator('#link-routing').scrollIntoViewIfNeeded();
      // docs/screenshots/rules-editor-1280-light.png is a copy of this one.
      await screenshot(page, 'rules-editor-1280-light');

      // Shorten with Enter from the target field.
      await page.locator('#link-url').focus();
      await page.keyboard.press('Enter');
      await page.locator('#new-link-heading:focus').waitFor();
      const listed = (await server.app.inject({ url: '/v1/links', headers: { authorization: `Bearer ${code}` } })).json() as Array<Record<string, unknown>>;
      assert.equal(listed.length, 1);
      assert.deepEqual(listed[0]!.Rules, [
        { If: { language: ['de'] }, To: `${destination.origin}/de` },
        { If: { device: ['mobile'] }, To: `${destination.origin}/mobile` },
      ], 'the rules are kept in the order the keyboard gave them');
      assert.equal(listed[0]!.Protected, true);
      assert.equal(listed[0]!.ForwardQuery, false);
      assert.equal(JSON.stringify(listed[0]).includes('correct horse'), false);

      // The badges, in words.
      const row = page.locator('#links tr[data-code="routed"]');
      await row.locator('.badge-protected').waitFor();
      assert.equal((await row.locator('.badge-protected').innerText()).trim(), '🔒 Protected');
      assert.equal(await row.locator('.badge-routed').innerText(), 'Routed');
      assert.equal(await page.locator('#link-password').inputValue(), '', 'the password is gone from the form');

      // The short URL asks for the password; a wrong one from the keyboard is refused with 401.
      await page.goto(`${server.origin}/routed`);
      await page.locator('#password:focus').waitFor();
      assert.deepEqual(await axeViolations(page), [], 'axe-core on the password form');
      await page.keyboard.type('wrong password');
      const refused = page.waitForResponse((response) => response.request().method() === 'POST');
      await page.keyboard.press('Enter');
      assert.equal((await refused).status(), 401);
      await waitForText(page, '#password-message', /\S/);
      assert.equal(await page.locator('#password').getAttribute('aria-invalid'), 'true');
      assert.deepEqual(await axeViolations(page), [], 'axe-core on the password form with its message');
      // The right one: no rule holds for this desktop browser in English, so the target.
      await page.locator('#password').focus();
      await page.keyboard.type('correct horse');
      await Promise.all([page.waitForURL(`${destination.origin}/landing`), page.keyboard.press('Enter')]);
      assert.deepEqual(destination.visits, ['/landing']);
      await assertCleanSession(session);
    });

    test('the edit dialog shows a link\'s rules, removes its password and sends only what changed', async (t) => {
      const server = await startUiServer(t);
      const session = await openBrowser(t, server.origin);
      const { page } = session;
      await openUi(session, server.origin);
      const code = await createAccountInUi(page);
      await page.getByRole('button', { name: 'I have saved it' }).click();
      const auth = { authorization: `Bearer ${code}` };
      const created = await server.app.inject({
        method: 'POST', url: '/v1/link', headers: auth,
        payload: { url: 'https://example.com/t', short: 'edit-me', password: 'a long secret', rules: [{ if: { os: ['ios'] }, to: 'https://example.com/ios' }] },
      });
      assert.equal(created.statusCode, 200, created.body);
      await page.getByRole('button', { name: 'Refresh' }).click();
      const row = page.locator('#links tr[data-code="edit-me"]');
      await row.locator('.badge-protected').waitFor();

      await row.getByRole('button', { name: 'Edit edit-me' }).click();
      await page.locator('#edit-dialog[open]').waitFor();
      assert.equal(await page.locator('#edit-routing').getAttribute('open'), '', 'routing is open for a routed link');
      assert.equal(await page.locator('#edit-rule-1-os-ios').isChecked(), true);
      assert.equal(await page.locator('#edit-rule-1-to').inputValue(), 'https://example.com/ios');
      assert.equal(await page.locator('#edit-password').inputValue(), '', 'a password is never shown');
      // A bad rule: the service's words beside the rules.
      await page.locator('#edit-rule-1-to').fill('ftp://example.com/ios');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await waitForText(page, '#edit-rules-error', /^Rule 1: "to" must use http or https/);
      assert.equal(await activeId(page), 'edit-rules');
      await page.locator('#edit-rule-1-to').fill('https://example.com/ios');
      await page.getByLabel('Remove the password').check();
      const sent = page.waitForRequest((request) => request.method() === 'PATCH');
      await page.getByRole('button', { name: 'Save changes' }).click();
      assert.deepEqual((await sent).postDataJSON(), { short: 'edit-me', password: '' }, 'only the password, removed');
      await page.locator('#edit-dialog').waitFor({ state: 'hidden' });
      await row.locator('.badge-protected').waitFor({ state: 'hidden' });
      assert.equal(await row.locator('.badge-routed').isVisible(), true);
      await assertCleanSession(session);
    });
  });
}
