/**
 * HEAD on the operations and documentation endpoints answers what GET would, without the
 * body: monitors and link checkers probe with HEAD.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { newAccount } from '../helpers/app.ts';
import { appFor } from './support.ts';

async function assertHeadLikeGet(app: FastifyInstance, url: string, headers: Record<string, string> = {}): Promise<void> {
  const get = await app.inject({ method: 'GET', url, headers });
  const head = await app.inject({ method: 'HEAD', url, headers });
  assert.equal(get.statusCode, 200, `GET ${url}`);
  assert.equal(head.statusCode, 200, `HEAD ${url}: ${head.statusCode}`);
  assert.equal(head.headers['content-type'], get.headers['content-type'], url);
  assert.equal(head.headers['x-content-type-options'], 'nosniff', url);
  assert.equal(head.body, '', `HEAD ${url} has no body`);
}

describe('HEAD on operations and documentation endpoints', () => {
  for (const url of ['/metrics', '/openapi.json', '/docs', '/docs/', '/robots.txt']) {
    test(`HEAD ${url} answers like GET, without a body`, async (t) => {
      const { app } = await appFor(t);
      await assertHeadLikeGet(app, url);
    });
  }

  test('HEAD /metrics asks for the token like GET', async (t) => {
    const token = 'scrape-token-0123456789abcdef';
    const { app } = await appFor(t, { metricsToken: token });
    assert.equal((await app.inject({ method: 'HEAD', url: '/metrics' })).statusCode, 401);
    await assertHeadLikeGet(app, '/metrics', { authorization: `Bearer ${token}` });
  });

  test('HEAD /docs carries the docs page\'s CSP', async (t) => {
    const { app } = await appFor(t);
    const get = await app.inject({ method: 'GET', url: '/docs' });
    const head = await app.inject({ method: 'HEAD', url: '/docs' });
    assert.equal(head.headers['content-security-policy'], get.headers['content-security-policy']);
  });
});

describe('HEAD on the owner\'s reading endpoints', () => {
  for (const url of ['/v1/stats', '/v1/webhooks', '/v1/events']) {
    test(`HEAD ${url} answers GET's headers without a body, and 401 without a code`, async (t) => {
      const { app } = await appFor(t);
      const { code } = await newAccount(app);
      const head = await app.inject({ method: 'HEAD', url, headers: { authorization: `Bearer ${code}` } });
      assert.equal(head.statusCode, 200, `HEAD ${url}: ${head.statusCode}`);
      assert.equal(head.body, '');
      if (url !== '/v1/events') {
        const get = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${code}` } });
        assert.equal(head.headers['content-type'], get.headers['content-type']);
      }
      const missing = await app.inject({ method: 'HEAD', url });
      assert.equal(missing.statusCode, 401);
      assert.equal(missing.headers['www-authenticate'], 'Bearer realm="shortlink"');
    });
  }

  test('HEAD /v1/webhooks/deliveries answers like GET: 404 for an unknown webhook, 400 without an id', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const headers = { authorization: `Bearer ${code}` };
    assert.equal((await app.inject({ method: 'HEAD', url: '/v1/webhooks/deliveries', headers })).statusCode, 400);
    assert.equal((await app.inject({ method: 'HEAD', url: '/v1/webhooks/deliveries?id=wh_000000000000000000000000', headers })).statusCode, 404);
  });
});
