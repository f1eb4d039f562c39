/**
 * Browser tests, run from ui.test.ts. The API docs at /docs (Swagger UI): they render the
 * document, run under their CSP without a violation, fetch nothing from another origin, and
 * "Try it out" reaches the API.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openBrowser, screenshot, startUiServer } from './support.ts';

export function docsTests(): void {
  describe('API docs', () => {
    test('render every operation from this origin alone, under their CSP, and can call the API', async (t) => {
      const server = await startUiServer(t);
      const session = await openBrowser(t, server.origin);
      const { page } = session;
      const requested: string[] = [];
      page.on('request', (request) => requested.push(request.url()));

      await page.goto(`${server.origin}/docs`);
      await page.locator('.opblock').first().waitFor();
      const document = (await (await fetch(`${server.origin}/openapi.json`)).json()) as { paths: Record<string, object>; webhooks?: Record<string, object> };
      // Swagger UI draws the webhook payloads (OpenAPI's `webhooks`) as operation blocks too.
      const operations = [...Object.values(document.paths), ...Object.values(document.webhooks ?? {})]
        .reduce((sum, item) => sum + Object.keys(item).length, 0);
      assert.equal(await page.locator('.opblock').count(), operations, 'one block per documented operation');
      assert.ok(await page.getByRole('button', { name: /Authorize/ }).isVisible(), 'the access-code schemes can be entered');

      // Try it out: GET /healthz through the UI.
      const health = page.locator('#operations-operations-liveness');
      await health.locator('.opblock-summary').click();
      await health.getByRole('button', { name: 'Try it out' }).click();
      await health.getByRole('button', { name: 'Execute' }).click();
      await health.locator('.live-responses-table .response-col_status').filter({ hasText: '200' }).first().waitFor();
      await screenshot(page, 'docs-1280-light');

      assert.ok(requested.some((url) => url.endsWith('/docs/static/swagger-ui-bundle.js')));
      assert.ok(requested.every((url) => url.startsWith(`${server.origin}/`) || url.startsWith('data:')), requested.join('\n'));
      assert.deepEqual(session.foreignRequests, []);
      assert.deepEqual(session.pageErrors, []);
      assert.deepEqual(await session.cspViolations(), []);
    });
  });
}
