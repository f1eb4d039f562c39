/**
 * HEAD on the operations and documentation endpoints answers what GET would, without the
 * body: monitors and link checkers probe with HEAD.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
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
