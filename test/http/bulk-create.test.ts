/**
 * Bulk create, `POST /v1/links` (CONTRACT §8.4): each item created on its own with the single
 * create's rules and answered in place, `{ShortUrl}` or `{Status, Error}` with exactly the
 * status and text a single create gives; the cap counted in order; per-item rate limits;
 * every created link's link.created event; 400 for a body that is no array or too long.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { newAccount, TEST_BASE_URL } from '../helpers/app.ts';
import { openEventStream } from '../helpers/event-stream.ts';
import type { Store } from '../../src/store/store.ts';
import { appFor, assertError, JSON_TYPE, listen, listLinks } from './support.ts';

const MINUTE = 60_000;

function bulk(app: FastifyInstance, code: string, body: unknown, contentType = 'application/json') {
  return app.inject({
    method: 'POST',
    url: '/v1/links',
    headers: { authorization: `Bearer ${code}`, 'content-type': contentType },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** What a single JSON create answers for `params`: [status, body]. */
async function single(app: FastifyInstance, code: string, params: Record<string, unknown>): Promise<[number, string]> {
  const response = await app.inject({
    method: 'POST', url: '/v1/link', headers: { authorization: `Bearer ${code}`, 'content-type': 'application/json' }, payload: JSON.stringify(params),
  });
  return [response.statusCode, response.body];
}

describe('POST /v1/links', () => {
  test('creates each link and answers one result per item, in order, with a single create\'s status and text for failures', async (t) => {
    const { app } = await appFor(t, { defaultMaxLinks: 50 });
    const { code, uid } = await newAccount(app);
    const bad: Record<string, unknown>[] = [
      { short: 'no-url' },
      { url: 'ftp://example.com/' },
      { url: 'https://example.com/', short: 'ab' },
      { url: 'https://example.com/', max_visits: 0 },
      { url: 'https://example.com/', tags: ['a,b'] },
      { url: 'https://example.com/', title: 5 },
      { url: `${TEST_BASE_URL}/loop` },
    ];
    const response = await bulk(app, code, [
      { url: 'https://example.com/one' },
      ...bad,
      { url: 'https://example.com/two', short: 'chosen-code', title: 'Two', tags: ['x', 'y'], max_visits: 3 },
      { url: 'https://example.com/three', short: 'chosen-code' },
      'not an object',
    ]);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['content-type'], JSON_TYPE);
    const results = response.json() as Record<string, unknown>[];
    assert.equal(results.length, bad.length + 4);
    assert.deepEqual(Object.keys(results[0]!), ['ShortUrl']);
    assert.match(String(results[0]!.ShortUrl), new RegExp(`^${TEST_BASE_URL}/[A-Za-z0-9]{6}$`));
    assert.deepEqual(results[bad.length + 1], { ShortUrl: `${TEST_BASE_URL}/chosen-code` });

    // Each failure is what a single create of the same item answers (the second app account
    // keeps this one's cap and codes out of the comparison, but the taken code is shared).
    const other = await newAccount(app);
    for (const [i, params] of bad.entries()) {
      const [status, body] = await single(app, other.code, params);
      assert.deepEqual(results[i + 1], { Status: status, Error: body }, JSON.stringify(params));
      assert.deepEqual(Object.keys(results[i + 1]!), ['Status', 'Error']);
      assert.equal(status, 400);
    }
    const [takenStatus, takenBody] = await single(app, other.code, { url: 'https://example.com/three', short: 'chosen-code' });
    assert.equal(takenStatus, 409);
    assert.deepEqual(results[bad.length + 2], { Status: 409, Error: takenBody });
    assert.deepEqual(results[bad.length + 3], { Status: 400, Error: 'Unable to create link: each link must be a JSON object' });

    const links = await listLinks(app, code);
    assert.equal(links.length, 2);
    const chosen = links.find((link) => link.ShortCode === 'chosen-code');
    assert.ok(chosen);
    assert.equal(chosen.PointsTo, 'https://example.com/two');
    assert.equal(chosen.CreatedBy, uid);
    assert.equal(chosen.Title, 'Two');
    assert.deepEqual(chosen.Tags, ['x', 'y']);
    assert.equal(chosen.MaxVisits, 3);
  });

  test('counts the cap for each item, in order: the items past MaxLinks answer 403 and the rest are created', async (t) => {
    const { app } = await appFor(t, { defaultMaxLinks: 3 });
    const { code } = await newAccount(app);
    const items = Array.from({ length: 6 }, (_, i) => ({ url: `https://example.com/${i}`, short: `item-${i}` }));
    const results = (await bulk(app, code, items)).json() as Record<string, unknown>[];
    assert.deepEqual(results.slice(0, 3), items.slice(0, 3).map((item) => ({ ShortUrl: `${TEST_BASE_URL}/${item.short}` })));
    for (const result of results.slice(3)) {
      assert.deepEqual(result, { Status: 403, Error: 'Unable to create link: the account already holds its maximum of 3 links' });
    }
    assert.deepEqual((await listLinks(app, code)).map((link) => link.ShortCode), ['item-0', 'item-1', 'item-2']);
  });

  test('sends all the creates to the store in one turn, in order, before any of them is answered', async (t) => {
    const calls: string[] = [];
    let answered = 0;
    const wrapStore = (store: Store): Store => ({
      ...store,
      createLink(link) {
        calls.push(`${link.shortCode}@${answered}`);
        return store.createLink(link).finally(() => answered++);
      },
    });
    const { app } = await appFor(t, {}, { wrapStore });
    const { code } = await newAccount(app);
    const items = Array.from({ length: 20 }, (_, i) => ({ url: 'https://example.com/', short: `batch-${i}` }));
    assert.equal((await bulk(app, code, items)).statusCode, 200);
    assert.deepEqual(calls, items.map((item) => `${item.short}@0`));
  });

  test('writes a link.created event for each created link', async (t) => {
    const testApp = await appFor(t);
    const { host, port } = await listen(testApp.app);
    const { code } = await newAccount(testApp.app);
    const stream = await openEventStream(`http://${host}:${port}`, { authorization: `Bearer ${code}` });
    t.after(() => stream.close());
    const results = (await bulk(testApp.app, code, [
      { url: 'https://example.com/a', short: 'event-a' }, { url: 'bad' }, { url: 'https://example.com/b', short: 'event-b' },
    ])).json() as Record<string, unknown>[];
    assert.equal(results[1]!.Status, 400);
    await stream.next((e) => e.event === 'link.created' && e.data.data.ShortCode === 'event-b', 'the second link.created');
    const created = stream.events.filter((e) => e.event === 'link.created').map((e) => e.data.data.ShortCode);
    assert.deepEqual(created, ['event-a', 'event-b']);
  });

  test('counts each item against the create limit: the items past it answer 429', async (t) => {
    const { app } = await appFor(t, {
      rateLimit: true, rateLimitExempt: [],
      rateLimitPolicies: {
        newAccount: { limit: 100, windowMs: MINUTE }, failedAuth: { limit: 100, windowMs: MINUTE }, createLink: { limit: 3, windowMs: MINUTE },
        resolve: { limit: 1000, windowMs: MINUTE }, unknownCode: { limit: 1000, windowMs: MINUTE }, createWebhook: { limit: 100, windowMs: MINUTE },
        password: { limit: 100, windowMs: MINUTE },
      },
    });
    const { code } = await newAccount(app);
    const results = (await bulk(app, code, Array.from({ length: 5 }, (_, i) => ({ url: `https://example.com/${i}` })))).json() as Record<string, unknown>[];
    assert.equal(results.filter((result) => 'ShortUrl' in result).length, 3);
    for (const result of results.slice(3)) {
      assert.equal(result.Status, 429);
      assert.match(String(result.Error), /^Unable to create link: too many requests; try again in \d+ s$/);
    }
    assertError(await app.inject({ method: 'GET', url: '/v1/link', query: { url: 'https://example.com/', auth: code } }), 429, 'create link');
  });

  test('refuses a body that is no array, an empty array or more than 100 items with 400, creating nothing', async (t) => {
    const { app } = await appFor(t, { defaultMaxLinks: 200 });
    const { code } = await newAccount(app);
    for (const body of [{ url: 'https://example.com/' }, [], Array.from({ length: 101 }, () => ({ url: 'https://example.com/' })), '"text"', 'null']) {
      assertError(await bulk(app, code, body), 400, 'create links');
    }
    assertError(await bulk(app, code, 'url=https%3A%2F%2Fexample.com%2F', 'application/x-www-form-urlencoded'), 400, 'create links');
    assert.deepEqual(await listLinks(app, code), []);
    const hundred = (await bulk(app, code, Array.from({ length: 100 }, (_, i) => ({ url: `https://example.com/${'x'.repeat(1900)}${i}` })))).json() as unknown[];
    assert.equal(hundred.length, 100);
    assert.equal((await listLinks(app, code)).length, 100);
  });

  test('answers 401 without a valid access code before looking at the body', async (t) => {
    const { app } = await appFor(t);
    const response = await app.inject({ method: 'POST', url: '/v1/links', headers: { 'content-type': 'application/json' }, payload: 'not json' });
    assertError(response, 401, 'create links');
    assert.equal(response.headers['www-authenticate'], 'Bearer realm="shortlink"');
  });

  test('a disabled account\'s items answer 403 each, after their parameters are checked', async (t) => {
    const testApp = await appFor(t);
    const { code, uid } = await newAccount(testApp.app);
    await testApp.store.updateAccount(uid, { disabled: true });
    const results = (await bulk(testApp.app, code, [{ url: 'https://example.com/' }, { url: 'bad' }])).json();
    assert.deepEqual(results, [
      { Status: 403, Error: 'Unable to create link: the account is disabled' },
      { Status: 400, Error: (await single(testApp.app, code, { url: 'bad' }))[1] },
    ]);
  });
});
