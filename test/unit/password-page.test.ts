/**
 * The password form of a protected link (src/web/password-page.ts), answered by a small
 * Fastify app through inject: statuses and headers, a CSP whose style hash matches the inline
 * style and that allows no script, the accessible no-script form, and escaping.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test, type TestContext } from 'node:test';
import formBody from '@fastify/formbody';
import Fastify from 'fastify';
import { escapeHtml, PASSWORD_CONTENT_SECURITY_POLICY, passwordPage, sendPasswordPage } from '../../src/web/password-page.ts';

async function pageApp(t: TestContext) {
  const app = Fastify({ logger: false });
  await app.register(formBody);
  app.get('/:code', (_request, reply) => sendPasswordPage(reply, { status: 200 }));
  app.post('/:code', (_request, reply) => sendPasswordPage(reply, { status: 401, message: 'That password is wrong <script>alert(1)</script> & "quoted"' }));
  app.put('/:code', (_request, reply) => sendPasswordPage(reply, { status: 429, message: 'Too many wrong passwords. Try again in 15 minutes.', retryAfter: 899.2 }));
  t.after(() => app.close());
  await app.ready();
  return app;
}

function directives(policy: string): Map<string, string> {
  return new Map(policy.split(';').map((part) => part.trim().split(/\s+/)).map(([name, ...values]) => [name!, values.join(' ')]));
}

describe('the password page', () => {
  test('GET answers 200 HTML that is never cached, never framed and sends no referrer', async (t) => {
    const app = await pageApp(t);
    const response = await app.inject({ method: 'GET', url: '/abc12?x=1' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.equal(response.headers['referrer-policy'], 'no-referrer');
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    assert.equal(response.headers['x-frame-options'], 'DENY');
    assert.equal(response.headers['content-security-policy'], PASSWORD_CONTENT_SECURITY_POLICY);
    assert.equal(response.headers['www-authenticate'], undefined);
    assert.equal(response.headers['retry-after'], undefined);
    assert.doesNotMatch(response.body, /role="alert"/, 'no message, no alert');
  });

  test('its CSP allows no script and nothing to load, and its one style by hash', async (t) => {
    const app = await pageApp(t);
    const response = await app.inject({ method: 'GET', url: '/abc12' });
    const csp = directives(String(response.headers['content-security-policy']));
    assert.equal(csp.get('default-src'), "'none'");
    assert.equal(csp.get('base-uri'), "'none'");
    assert.equal(csp.get('frame-ancestors'), "'none'");
    assert.equal(csp.has('script-src'), false, 'scripts fall back to default-src none');
    const styles = [...response.body.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((match) => match[1]!);
    assert.equal(styles.length, 1);
    const hash = createHash('sha256').update(styles[0]!).digest('base64');
    assert.equal(csp.get('style-src'), `'sha256-${hash}'`, 'the hash is of the inline style exactly');
    // The form posts here and a right password redirects to any http(s) target, which
    // Chrome checks against form-action as well.
    assert.equal(csp.get('form-action'), "'self' https: http:");
    assert.doesNotMatch(response.body, /<script|\son[a-z]+=|javascript:/i, 'no script of any kind');
    assert.doesNotMatch(response.body, /<link|<img|\ssrc=|\sstyle=/i, 'nothing to fetch and no inline style attribute');
  });

  test('the form works without JavaScript: it posts `password` to the page\'s own URL', async (t) => {
    const app = await pageApp(t);
    const { body } = await app.inject({ method: 'GET', url: '/abc12' });
    const forms = [...body.matchAll(/<form\b([^>]*)>/g)];
    assert.equal(forms.length, 1);
    assert.match(forms[0]![1]!, /^\s+method="post"$/, 'POST, no action (the current URL, Host included), default encoding');
    const inputs = [...body.matchAll(/<input\b([^>]*)>/g)].map((match) => match[1]!);
    assert.equal(inputs.length, 1);
    const input = inputs[0]!;
    for (const attribute of ['name="password"', 'type="password"', 'id="password"', 'autocomplete="current-password"', ' autofocus', ' required']) {
      assert.ok(input.includes(attribute), `input has ${attribute}: ${input}`);
    }
    assert.match(body, /<button type="submit">[^<]+<\/button>/);
  });

  test('is accessible: a language, a title, a visible heading and a label tied to the field', async (t) => {
    const app = await pageApp(t);
    const { body } = await app.inject({ method: 'GET', url: '/abc12' });
    assert.match(body, /^<!doctype html>\n<html lang="en">/);
    assert.match(body, /<title>[^<]+<\/title>/);
    assert.match(body, /<h1>[^<]+<\/h1>/);
    assert.match(body, /<label for="password">Password<\/label>/);
    assert.match(body, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
  });

  test('a wrong password answers 401 with WWW-Authenticate and the message, escaped, as an alert tied to the field', async (t) => {
    const app = await pageApp(t);
    const response = await app.inject({ method: 'POST', url: '/abc12', payload: 'password=nope', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(response.statusCode, 401);
    assert.equal(response.headers['www-authenticate'], 'Bearer realm="shortlink"');
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.match(response.body, /<p class="alert" role="alert" id="password-message">That password is wrong &lt;script&gt;alert\(1\)&lt;\/script&gt; &amp; &quot;quoted&quot;<\/p>/);
    assert.doesNotMatch(response.body, /<script/);
    assert.match(response.body, /<input [^>]*aria-describedby="password-message"[^>]*aria-invalid="true"/);
  });

  test('too many guesses answer 429 with Retry-After in whole seconds, the message and the form', async (t) => {
    const app = await pageApp(t);
    const response = await app.inject({ method: 'PUT', url: '/abc12' });
    assert.equal(response.statusCode, 429);
    assert.equal(response.headers['retry-after'], '900');
    assert.equal(response.headers['www-authenticate'], undefined);
    assert.match(response.body, /role="alert"[^>]*>Too many wrong passwords\. Try again in 15 minutes\.<\/p>/);
    assert.match(response.body, /<form method="post">/);
  });

  test('holds nothing from the request', async (t) => {
    const app = await pageApp(t);
    const marker = 'zq9marker';
    const response = await app.inject({
      method: 'GET', url: `/${marker}?to=${marker}`, headers: { host: `${marker}.example`, referer: `https://${marker}.example/`, 'user-agent': marker },
    });
    assert.ok(!response.body.includes(marker));
    assert.equal(passwordPage(), passwordPage(''), 'an empty message shows no alert');
  });
});

describe('escapeHtml', () => {
  test('escapes the five characters that matter in content and attributes, and nothing else', () => {
    assert.equal(escapeHtml(`<a href="x" title='y'>&amp;</a>`), '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;');
    assert.equal(escapeHtml('plain text, ü ✓'), 'plain text, ü ✓');
  });
});
