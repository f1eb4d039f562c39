import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TEST_BASE_URL } from '../helpers/app.ts';
import { appFor, HTML, TEXT } from './support.ts';

/** Every src= and href= in a page. */
function referencesIn(html: string): string[] {
  return [...html.matchAll(/\b(?:src|href)\s*=\s*["']([^"']*)["']/gi)].map((match) => match[1]!);
}

describe('GET /docs', () => {
  test('serves the Swagger UI page, referring only to files on this origin', async (t) => {
    const { app } = await appFor(t);
    const page = await app.inject({ method: 'GET', url: '/docs' });
    assert.equal(page.statusCode, 200);
    assert.equal(page.headers['content-type'], HTML);
    assert.match(page.body, /<div id="swagger-ui">/);
    assert.doesNotMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>/i, 'no inline script');
    assert.doesNotMatch(page.body, /<style|\sstyle=/i, 'no inline style');

    const references = referencesIn(page.body);
    assert.ok(references.length >= 5, `found ${references.join(', ')}`);
    for (const reference of references) {
      const url = new URL(reference, `${TEST_BASE_URL}/docs`);
      assert.equal(url.origin, TEST_BASE_URL, `${reference} stays on this origin`);
      const asset = await app.inject({ method: 'GET', url: url.pathname });
      assert.equal(asset.statusCode, 200, `${url.pathname} is served`);
      assert.ok(asset.body.length > 0);
    }
  });

  test('loads its document from this origin and asks no outside validator', async (t) => {
    const { app } = await appFor(t);
    const initializer = await app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    assert.equal(initializer.statusCode, 200);
    assert.match(initializer.body, /validatorUrl: null/);
    assert.match(initializer.body, /resolveUrl\('\.\/json'\)/);
    const code = initializer.body.split('\n').filter((line) => !line.trim().startsWith('//'));
    assert.ok(!code.some((line) => /https?:\/\//.test(line)), 'no absolute address outside comments');

    const document = await app.inject({ method: 'GET', url: '/docs/json' });
    assert.equal(document.statusCode, 200);
    const openapi = await app.inject({ method: 'GET', url: '/openapi.json' });
    assert.deepEqual(document.json(), openapi.json(), 'the UI shows the same document as /openapi.json');
  });

  test('sends a strict CSP and the browser headers with the page and its files', async (t) => {
    const { app } = await appFor(t);
    for (const url of ['/docs', '/docs/', '/docs/static/swagger-ui.css', '/docs/static/swagger-ui-bundle.js', '/docs/json']) {
      const response = await app.inject({ method: 'GET', url });
      assert.equal(response.statusCode, 200, url);
      const csp = String(response.headers['content-security-policy']);
      assert.match(csp, /default-src 'none'/, url);
      assert.match(csp, /script-src 'self'(;|$)/, url);
      assert.match(csp, /style-src 'self'(;|$)/, url);
      assert.match(csp, /connect-src 'self'(;|$)/, url);
      assert.match(csp, /frame-ancestors 'none'/, url);
      assert.doesNotMatch(csp, /unsafe-|https?:|\*/, `${url}: nothing but this origin (and data: images)`);
      assert.equal(response.headers['x-frame-options'], 'DENY', url);
      assert.equal(response.headers['referrer-policy'], 'no-referrer', url);
      assert.equal(response.headers['x-content-type-options'], 'nosniff', url);
    }
  });

  test('answers an unknown docs file with the plain-text 404', async (t) => {
    const { app } = await appFor(t);
    const response = await app.inject({ method: 'GET', url: '/docs/static/no-such-file.js' });
    assert.equal(response.statusCode, 404);
    assert.equal(response.headers['content-type'], TEXT);
  });
});
