import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { newAccount } from '../helpers/app.ts';
import { appFor, createLinkOk, deleteLink, resolve, TEXT } from './support.ts';

const TOKEN = 'scrape-token-0123456789abcdef';

async function scrape(app: FastifyInstance, headers: Record<string, string> = {}): Promise<string> {
  const response = await app.inject({ method: 'GET', url: '/metrics', headers });
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  return response.body;
}

/** The value of one sample, e.g. `value(text, 'x_total', { route: '/a' })`; 0 when absent. */
function value(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, expected]) => found[key] === expected)) return Number(match[3]);
  }
  return 0;
}

describe('GET /metrics', () => {
  test('counts requests by route pattern and status, with their latency', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: 'https://example.com/', short: 'metric-link' });
    const before = await scrape(app);
    const resolveLabels = { route: '/v1/get/:code', method: 'GET', status_code: '200' };
    const countBefore = value(before, 'shortlink_http_requests_total', resolveLabels);

    await resolve(app, short);
    await resolve(app, short);
    await app.inject({ method: 'GET', url: '/v1/get/no-such-code' });

    const after = await scrape(app);
    assert.equal(value(after, 'shortlink_http_requests_total', resolveLabels), countBefore + 2);
    assert.equal(value(after, 'shortlink_http_request_duration_seconds_count', resolveLabels), countBefore + 2);
    assert.ok(value(after, 'shortlink_http_request_duration_seconds_sum', resolveLabels) > 0);
    assert.equal(value(after, 'shortlink_http_request_duration_seconds_bucket', { ...resolveLabels, le: '+Inf' }), countBefore + 2);
    assert.equal(value(after, 'shortlink_http_requests_total', { route: '/v1/get/:code', method: 'GET', status_code: '404' }), 1);
    assert.equal(value(after, 'shortlink_http_requests_total', { route: '/v1/new_account', method: 'GET', status_code: '200' }), 1);
    assert.equal(value(after, 'shortlink_http_requests_total', { route: '/v1/link', method: 'GET', status_code: '200' }), 1);
  });

  test('counts resolutions, redirects, links and accounts created and deleted; HEAD and errors count nothing', async (t) => {
    const { app } = await appFor(t);
    const initial = await scrape(app);
    for (const name of ['resolutions', 'redirects', 'links_created', 'links_deleted', 'accounts_created']) {
      assert.equal(value(initial, `shortlink_${name}_total`), 0, name);
    }

    const { code } = await newAccount(app);
    await app.inject({ method: 'POST', url: '/v1/new_account' });
    const short = await createLinkOk(app, code, { url: 'https://example.com/' });
    await createLinkOk(app, code, { url: 'https://example.com/two' });
    await resolve(app, short);
    await resolve(app, short);
    await resolve(app, short);
    await app.inject({ method: 'HEAD', url: `/v1/get/${short}` });
    await app.inject({ method: 'GET', url: `/${short}` });
    await app.inject({ method: 'HEAD', url: `/${short}` });
    await app.inject({ method: 'GET', url: '/no-such-link' });
    await resolve(app, 'no-such-link');
    assert.equal((await deleteLink(app, code, short)).statusCode, 200);
    assert.equal((await deleteLink(app, code, short)).statusCode, 404);

    const text = await scrape(app);
    assert.equal(value(text, 'shortlink_accounts_created_total'), 2);
    assert.equal(value(text, 'shortlink_links_created_total'), 2);
    assert.equal(value(text, 'shortlink_resolutions_total'), 3);
    assert.equal(value(text, 'shortlink_redirects_total'), 1);
    assert.equal(value(text, 'shortlink_links_deleted_total'), 1);
  });

  test('counts the visits statistics recorded, humans and bots apart', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: 'https://example.com/' });
    const human = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
    await app.inject({ method: 'GET', url: `/${short}`, headers: { 'user-agent': human } });
    await app.inject({ method: 'GET', url: `/v1/get/${short}`, headers: { 'user-agent': human } });
    await app.inject({ method: 'GET', url: `/v1/get/${short}`, headers: { 'user-agent': 'curl/8.5.0' } });
    await app.inject({ method: 'GET', url: '/v1/get/no-such-link', headers: { 'user-agent': human } });
    await app.inject({ method: 'HEAD', url: `/${short}`, headers: { 'user-agent': human } });
    const text = await scrape(app);
    assert.equal(value(text, 'shortlink_visits_total', { kind: 'human' }), 2);
    assert.equal(value(text, 'shortlink_visits_total', { kind: 'bot' }), 1);
  });

  test('times storage calls and group commits', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: 'https://example.com/' });
    await Promise.all([resolve(app, short), resolve(app, short), resolve(app, short)]);

    const text = await scrape(app);
    assert.equal(value(text, 'shortlink_store_duration_seconds_count', { operation: 'resolveLink' }), 3);
    assert.equal(value(text, 'shortlink_store_duration_seconds_count', { operation: 'createAccount' }), 1);
    assert.equal(value(text, 'shortlink_store_duration_seconds_count', { operation: 'createLink' }), 1);
    assert.ok(value(text, 'shortlink_store_duration_seconds_sum', { operation: 'resolveLink' }) > 0);
    assert.equal(value(text, 'shortlink_store_errors_total', { operation: 'resolveLink' }), 0);
    // Group commits are watched process-wide: other apps of this test process count there too.
    assert.ok(value(text, 'shortlink_access_batch_size_sum', { result: 'ok' }) >= 3);
    assert.ok(value(text, 'shortlink_access_batch_commit_seconds_count', { result: 'ok' }) >= 1);
  });

  test('includes the Node process metrics', async (t) => {
    const { app } = await appFor(t);
    const text = await scrape(app);
    assert.match(text, /^process_cpu_user_seconds_total \d/m);
    assert.match(text, /^nodejs_eventloop_lag_seconds \d/m);
  });

  test('never names a shortcode, an access code or a raw path in a label', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: 'https://example.com/secret-target', short: 'Secret-Shortcode-7' });
    await resolve(app, short);
    await app.inject({ method: 'GET', url: `/${short}` });
    await app.inject({ method: 'GET', url: '/Unknown-Shortcode-9' });
    await app.inject({ method: 'GET', url: `/v1/links?auth=${code}` });
    await app.inject({ method: 'GET', url: '/v1/no/such/route-Xyzzy' });
    await app.inject({ method: 'GET', url: '/v1/get/%E0%A4%A' });

    const text = await scrape(app);
    for (const secret of [short, code, 'Unknown-Shortcode-9', 'route-Xyzzy', 'secret-target', '%E0']) {
      assert.ok(!text.toLowerCase().includes(secret.toLowerCase()), `the metrics mention ${secret}`);
    }
    assert.equal(value(text, 'shortlink_http_requests_total', { route: '/:code', method: 'GET', status_code: '302' }), 1);
    assert.equal(value(text, 'shortlink_http_requests_total', { route: '/:code', method: 'GET', status_code: '404' }), 1);
    assert.equal(value(text, 'shortlink_http_requests_total', { route: 'unmatched', method: 'GET', status_code: '404' }), 1);
    // Refused before routing, and still counted.
    assert.equal(value(text, 'shortlink_http_requests_total', { route: 'unmatched', method: 'GET', status_code: '400' }), 1);
    // Every route label is a pattern the app registered.
    const patterns = new Set([...app.registeredRoutes.map((route) => route.url), 'unmatched']);
    for (const match of text.matchAll(/route="([^"]*)"/g)) assert.ok(patterns.has(match[1]!), `route label ${match[1]}`);
  });
});

describe('METRICS_TOKEN', () => {
  test('is not needed when none is configured', async (t) => {
    const { app } = await appFor(t);
    await scrape(app);
  });

  test('must be sent as a Bearer token when configured', async (t) => {
    const { app } = await appFor(t, { metricsToken: TOKEN });
    for (const headers of [
      {},
      { authorization: 'Bearer wrong-token-0123456789abcdef' },
      { authorization: TOKEN },
      { authorization: `Basic ${TOKEN}` },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
    ]) {
      const response = await app.inject({ method: 'GET', url: '/metrics', headers });
      assert.equal(response.statusCode, 401, JSON.stringify(headers));
      assert.equal(response.headers['content-type'], TEXT);
      assert.equal(response.headers['www-authenticate'], 'Bearer realm="shortlink"');
      assert.equal(response.body, 'Unable to handle request: a valid metrics token is required');
    }
    const inQuery = await app.inject({ method: 'GET', url: `/metrics?token=${TOKEN}&auth=${TOKEN}` });
    assert.equal(inQuery.statusCode, 401);

    await scrape(app, { authorization: `Bearer ${TOKEN}` });
    await scrape(app, { authorization: `bearer ${TOKEN}` });
  });

  test('is not required by the rest of the service', async (t) => {
    const { app } = await appFor(t, { metricsToken: TOKEN });
    assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    await newAccount(app);
  });
});
