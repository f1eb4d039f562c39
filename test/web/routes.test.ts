/**
 * The web UI's HTTP side, through app.inject: the page, its assets, their caching and
 * security headers, and the short-URL 404 page that shares the stylesheet.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import ts from 'typescript';
import { webAssets } from '../../src/web/assets.ts';
import { createTestApp, newAccount, type TestApp } from '../helpers/app.ts';

const UI_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

async function appFor(t: TestContext): Promise<TestApp> {
  const testApp = await createTestApp();
  t.after(() => testApp.close());
  return testApp;
}

/** Every src and href in an HTML text. */
function references(html: string): string[] {
  return [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
}

/** A served module: its URL path and what the server answered. */
interface ServedModule {
  readonly url: string;
  readonly headers: Record<string, unknown>;
  readonly body: string;
}

/**
 * The page's entry module and every module it imports, at any depth, fetched as the browser
 * would fetch them: each specifier resolved against the URL of the module that names it.
 * Imports are found by TypeScript's scanner (static, re-exports and dynamic `import()`;
 * comments and strings are skipped). Fails on a bare specifier, which a browser cannot
 * resolve without an import map, and on any import the server does not answer, naming the
 * module that asked: a typo in an import path would otherwise show only in a browser.
 */
async function moduleGraph(app: FastifyInstance): Promise<Map<string, ServedModule>> {
  const html = (await app.inject({ url: '/' })).body;
  const entries = [...html.matchAll(/<script\b[^>]*\ssrc="([^"]+)"/g)].map((m) => m[1]!);
  assert.equal(entries.length, 1, 'the page names one script: the entry module');
  const found = new Map<string, ServedModule>();
  const queue: { url: string; importer: string }[] = [{ url: entries[0]!, importer: 'the page' }];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const { url, importer } = next;
    if (found.has(url)) continue;
    const response = await app.inject({ url });
    assert.equal(response.statusCode, 200, `${url}, imported by ${importer}`);
    found.set(url, { url, headers: response.headers, body: response.body });
    for (const { fileName: specifier } of ts.preProcessFile(response.body, true, true).importedFiles) {
      assert.match(specifier, /^\.\.?\//, `${url} imports ${specifier}: only relative specifiers resolve in a browser`);
      const resolved = new URL(specifier, `http://page.test${url}`);
      assert.equal(resolved.search + resolved.hash, '', `${url} imports ${specifier}`);
      queue.push({ url: resolved.pathname, importer: url });
    }
  }
  return found;
}

function assertBrowserHeaders(headers: Record<string, unknown>, csp: string | RegExp): void {
  if (typeof csp === 'string') assert.equal(headers['content-security-policy'], csp);
  else assert.match(String(headers['content-security-policy']), csp);
  assert.equal(headers['referrer-policy'], 'no-referrer');
  assert.equal(headers['x-content-type-options'], 'nosniff');
  assert.equal(headers['x-frame-options'], 'DENY');
}

describe('the web UI page', () => {
  test('is served at / with a strict CSP, no referrer, and revalidation by ETag', async (t) => {
    const { app } = await appFor(t);
    const response = await app.inject({ url: '/' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'text/html; charset=utf-8');
    assertBrowserHeaders(response.headers, UI_CSP);
    assert.equal(response.headers['cache-control'], 'no-cache');
    const etag = response.headers.etag;
    assert.match(String(etag), /^"[\w-]+"$/);

    const again = await app.inject({ url: '/', headers: { 'if-none-match': String(etag) } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    assert.equal((await app.inject({ url: '/', headers: { 'if-none-match': '"other"' } })).statusCode, 200);
  });

  test('answers HEAD with the same headers and no body', async (t) => {
    const { app } = await appFor(t);
    const get = await app.inject({ url: '/' });
    const head = await app.inject({ method: 'HEAD', url: '/' });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    assert.equal(head.headers.etag, get.headers.etag);
    assert.equal(head.headers['content-security-policy'], UI_CSP);
  });

  test('holds no inline script, style or event handler, and names only same-origin assets', async (t) => {
    const { app } = await appFor(t);
    const html = (await app.inject({ url: '/' })).body;
    assert.doesNotMatch(html, /<style/i);
    assert.doesNotMatch(html, /\sstyle=/i);
    assert.doesNotMatch(html, /\son[a-z]+=/i);
    for (const script of html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/gi)) {
      assert.match(script[0], /\ssrc="\/assets\//, 'every script is an asset');
      assert.equal(script[1], '', 'no inline script');
    }
    const refs = references(html);
    assert.ok(refs.length >= 4);
    for (const ref of refs) assert.match(ref, /^(\/assets\/[0-9a-f]{16}\/[\w.-]+|#\/?[\w-]+)$/, ref);
  });

  test('names the service\'s BASE_URL, so short URLs read right from the first load on any origin', async (t) => {
    const { app } = await appFor(t);
    const html = (await app.inject({ url: '/' })).body;
    assert.match(html, /<meta name="shortlink-base-url" content="http:\/\/sl\.test">/);
    assert.doesNotMatch(html, /%BASE_URL%|%ASSETS%/);

    // Whatever BASE_URL holds stays inside the attribute; each address has its own ETag.
    const odd = await createTestApp({ baseUrl: 'https://sho.rt/a"b<c>&d' });
    t.after(() => odd.close());
    const oddPage = await odd.app.inject({ url: '/' });
    assert.match(oddPage.body, /<meta name="shortlink-base-url" content="https:\/\/sho\.rt\/a&quot;b&lt;c&gt;&amp;d">/);
    assert.notEqual(oddPage.headers.etag, (await app.inject({ url: '/' })).headers.etag);
  });
});

describe('the web UI assets', () => {
  test('are served under a versioned path with a year of immutable caching', async (t) => {
    const { app } = await appFor(t);
    const html = (await app.inject({ url: '/' })).body;
    const assets = [...new Set(references(html).filter((ref) => ref.startsWith('/assets/')))];
    const types: Record<string, string> = {
      js: 'text/javascript; charset=utf-8',
      css: 'text/css; charset=utf-8',
      svg: 'image/svg+xml',
    };
    // The page names the entry module only; the browser finds the others through its imports.
    assert.deepEqual(assets.map((a) => a.slice(a.lastIndexOf('/') + 1)).sort(), ['app.css', 'app.js', 'favicon.svg']);
    for (const asset of assets) {
      const response = await app.inject({ url: asset });
      assert.equal(response.statusCode, 200, asset);
      assert.equal(response.headers['content-type'], types[asset.slice(asset.lastIndexOf('.') + 1)], asset);
      assert.equal(response.headers['cache-control'], 'public, max-age=31536000, immutable', asset);
      assertBrowserHeaders(response.headers, UI_CSP);
      const revalidated = await app.inject({ url: asset, headers: { 'if-none-match': String(response.headers.etag) } });
      assert.equal(revalidated.statusCode, 304, asset);
    }
  });

  test('every module the entry imports, at any depth, is served as JavaScript with immutable caching and the CSP', async (t) => {
    const { app } = await appFor(t);
    const modules = await moduleGraph(app);
    const prefix = `/assets/${webAssets().version}/`;
    for (const { url, headers } of modules.values()) {
      assert.ok(url.startsWith(prefix), `${url} is under the current version`);
      assert.equal(headers['content-type'], 'text/javascript; charset=utf-8', url);
      assert.equal(headers['cache-control'], 'public, max-age=31536000, immutable', url);
      assertBrowserHeaders(headers, UI_CSP);
    }
    const names = [...modules.keys()].map((url) => url.slice(prefix.length)).sort();
    const servedModules = [...webAssets().files.keys()].filter((name) => name.endsWith('.js')).sort();
    assert.deepEqual(names, servedModules, 'every served module is imported, and every imported one served');
  });

  test('serve the QR encoder straight from its npm package', async (t) => {
    const { app } = await appFor(t);
    const modules = await moduleGraph(app);
    const uqr = [...modules.keys()].find((url) => url.endsWith('/uqr.js'))!;
    const served = (await app.inject({ url: uqr })).rawPayload;
    assert.deepEqual(served, readFileSync(fileURLToPath(import.meta.resolve('uqr'))));
    const qrJs = modules.get(uqr.replace('uqr.js', 'qr.js'))!.body;
    assert.match(qrJs, /from '\.\/uqr\.js'/, 'the module imports it relative to its own versioned path');
  });

  test('load nothing from elsewhere: no imports, fonts or urls in the stylesheet', async (t) => {
    const { app } = await appFor(t);
    const html = (await app.inject({ url: '/' })).body;
    const css = (await app.inject({ url: references(html).find((ref) => ref.endsWith('/app.css'))! })).body;
    assert.doesNotMatch(css, /@import|@font-face|url\(/i);
    for (const { url: module, body: js } of (await moduleGraph(app)).values()) {
      for (const url of js.match(/https?:\/\/[^\s'"`]+/g) ?? []) {
        // The scheme the link form puts before a bare host the user typed is no address.
        if (url === 'https://${value}') continue;
        assert.equal(url, 'http://www.w3.org/2000/svg', `${module}: the only absolute URL is the SVG namespace, never fetched`);
      }
    }
  });

  test('an unknown file or an outdated version is a plain-text 404', async (t) => {
    const { app } = await appFor(t);
    const html = (await app.inject({ url: '/' })).body;
    const appJs = references(html).find((ref) => ref.endsWith('/app.js'))!;
    for (const url of [
      appJs.replace(/\/assets\/[0-9a-f]+\//, '/assets/0123456789abcdef/'),
      appJs.replace('app.js', 'nope.js'),
      appJs.replace('app.js', '..%2Fapp.ts'),
      '/assets/app.js',
      '/assets/x/y/z',
    ]) {
      const response = await app.inject({ url });
      assert.equal(response.statusCode, 404, url);
      assert.equal(response.headers['content-type'], 'text/plain; charset=utf-8', url);
      assert.equal(response.body, 'Unable to handle request: no such route', url);
    }
  });

  test('the favicon is the SVG icon, also at /favicon.ico', async (t) => {
    const { app } = await appFor(t);
    const response = await app.inject({ url: '/favicon.ico' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'image/svg+xml');
    assert.match(response.body, /^<svg /);
    assert.equal(response.headers['cache-control'], 'public, max-age=86400');
  });

  test('no short link can take the assets path', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    for (const short of ['assets', 'ASSETS']) {
      const response = await app.inject({ url: `/v1/link?url=https%3A%2F%2Fexample.com%2F&short=${short}`, headers: { authorization: code } });
      assert.equal(response.statusCode, 400, short);
    }
  });
});

describe('/robots.txt', () => {
  test('lets crawlers follow short URLs but keeps them out of the API and the operations endpoints', async (t) => {
    const { app } = await appFor(t);
    const response = await app.inject({ url: '/robots.txt' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    assert.match(String(response.headers['cache-control']), /max-age=\d+/);
    const rules = response.body.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    assert.deepEqual(rules, ['User-agent: *', 'Disallow: /v1/', 'Disallow: /metrics', 'Disallow: /healthz', 'Disallow: /readyz', 'Allow: /']);
  });
});

describe('the short-URL 404 page', () => {
  test('is styled by the UI stylesheet, with no inline style and a strict CSP', async (t) => {
    const { app } = await appFor(t);
    const response = await app.inject({ url: '/no-such-link' });
    assert.equal(response.statusCode, 404);
    assert.equal(response.headers['content-type'], 'text/html; charset=utf-8');
    assertBrowserHeaders(response.headers, /^default-src 'none'; style-src 'self'; .*frame-ancestors 'none'$/);
    assert.doesNotMatch(String(response.headers['content-security-policy']), /script-src|unsafe|sha256/);
    assert.doesNotMatch(response.body, /<style|\sstyle=|<script/i);
    const stylesheet = /<link rel="stylesheet" href="([^"]+)">/.exec(response.body)?.[1];
    assert.ok(stylesheet !== undefined);
    const css = await app.inject({ url: stylesheet });
    assert.equal(css.statusCode, 200);
    assert.match(css.body, /body\.not-found/);
  });
});
