import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Link as LinkJson } from '../../src/http/schemas.ts';
import { createTestApp, newAccount, TEST_BASE_URL, type TestApp } from '../helpers/app.ts';


/** Runs `body` against a fresh app on its own database, closing and removing it afterwards. */
async function withApp(body: (t: TestApp) => Promise<void>): Promise<void> {
  const t = await createTestApp();
  try {
    await body(t);
  } finally {
    await t.close();
  }
}

function tally(statuses: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

function createLink(t: TestApp, code: string, query: Record<string, string>) {
  return t.app.inject({ method: 'GET', url: '/v1/link', query, headers: { authorization: `Bearer ${code}` } });
}

async function listLinks(t: TestApp, code: string): Promise<LinkJson[]> {
  const response = await t.app.inject({ method: 'GET', url: '/v1/links', query: { auth: code } });
  assert.equal(response.statusCode, 200);
  return response.json() as LinkJson[];
}

describe('concurrent requests through HTTP', () => {
  test('40 concurrent creates on one account: exactly MaxLinks answer 200, the rest 403', () =>
    withApp(async (t) => {
      assert.equal(t.config.defaultMaxLinks, 20);
      const { code } = await newAccount(t.app);
      const responses = await Promise.all(
        Array.from({ length: 40 }, (_, i) => createLink(t, code, { url: `https://example.com/${i}` })),
      );
      assert.deepEqual(tally(responses.map((response) => response.statusCode)), { 200: 20, 403: 20 });
      for (const response of responses) {
        if (response.statusCode === 200) {
          assert.match(response.body, new RegExp(`^${TEST_BASE_URL}/[A-Za-z0-9]{6}$`));
        } else {
          assert.match(response.headers['content-type'] ?? '', /^text\/plain; charset=utf-8/);
          assert.match(response.body, /^Unable to create link: /);
        }
      }
      const listed = await listLinks(t, code);
      assert.equal(listed.length, 20);
      const granted = responses.filter((r) => r.statusCode === 200).map((r) => r.body.slice(TEST_BASE_URL.length + 1));
      assert.deepEqual(new Set(listed.map((link) => link.ShortCode)), new Set(granted));
    }));

  test('40 concurrent creates with custom codes on one account: exactly MaxLinks answer 200', () =>
    withApp(async (t) => {
      const { code } = await newAccount(t.app);
      const responses = await Promise.all(
        Array.from({ length: 40 }, (_, i) => createLink(t, code, { url: 'https://example.com/', short: `custom${i}` })),
      );
      assert.deepEqual(tally(responses.map((response) => response.statusCode)), { 200: 20, 403: 20 });
      assert.equal((await listLinks(t, code)).length, 20);
    }));

  test('20 concurrent creates of one custom code from 20 accounts: one 200 and 19 × 409', () =>
    withApp(async (t) => {
      const accounts = await Promise.all(Array.from({ length: 20 }, () => newAccount(t.app)));
      const responses = await Promise.all(
        accounts.map(({ code, uid }) => createLink(t, code, { url: `https://example.com/${uid}`, short: 'contested' })),
      );
      assert.deepEqual(tally(responses.map((response) => response.statusCode)), { 200: 1, 409: 19 });
      const winnerIndex = responses.findIndex((response) => response.statusCode === 200);
      assert.equal(responses[winnerIndex]!.body, `${TEST_BASE_URL}/contested`);
      for (const response of responses) {
        if (response.statusCode === 409) assert.match(response.body, /^Unable to create link: /);
      }

      const winner = accounts[winnerIndex]!;
      const peek = await t.app.inject({ method: 'HEAD', url: '/v1/get/contested' });
      assert.equal(peek.statusCode, 200);
      const held = await listLinks(t, winner.code);
      assert.equal(held.length, 1);
      const { ShortCode, PointsTo, CreatedBy, Accesses } = held[0]!;
      assert.deepEqual({ ShortCode, PointsTo, CreatedBy, Accesses }, { ShortCode: 'contested', PointsTo: `https://example.com/${winner.uid}`, CreatedBy: winner.uid, Accesses: 0 });
      for (const [i, account] of accounts.entries()) {
        if (i !== winnerIndex) assert.deepEqual(await listLinks(t, account.code), []);
      }
    }));

  test('400 concurrent resolutions: all 200, Accesses exactly 1 to 400, each once', () =>
    withApp(async (t) => {
      const { code } = await newAccount(t.app);
      const created = await createLink(t, code, { url: 'https://example.com/target', short: 'popular' });
      assert.equal(created.statusCode, 200);

      const responses = await Promise.all(
        Array.from({ length: 400 }, () => t.app.inject({ method: 'GET', url: '/v1/get/popular' })),
      );
      const accesses = responses.map((response) => {
        assert.equal(response.statusCode, 200);
        const link = response.json() as LinkJson;
        assert.equal(link.ShortCode, 'popular');
        assert.equal(link.PointsTo, 'https://example.com/target');
        return link.Accesses;
      });
      assert.equal(new Set(accesses).size, 400);
      assert.deepEqual(accesses.sort((a, b) => a - b), Array.from({ length: 400 }, (_, i) => i + 1));

      const [listed] = await listLinks(t, code);
      assert.equal(listed?.Accesses, 400);
    }));

  test('redirects and resolutions racing on one link are all counted, each once', () =>
    withApp(async (t) => {
      const { code } = await newAccount(t.app);
      assert.equal((await createLink(t, code, { url: 'https://example.com/', short: 'mixed' })).statusCode, 200);

      const responses = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          t.app.inject({ method: i % 2 === 0 ? 'GET' : 'HEAD', url: i % 4 < 2 ? '/v1/get/mixed' : '/mixed' })
            .then((response) => ({ response, counts: i % 2 === 0, json: i % 4 < 2 }))),
      );
      const accesses: number[] = [];
      for (const { response, counts, json } of responses) {
        assert.equal(response.statusCode, json ? 200 : 302);
        if (counts && json) accesses.push((response.json() as LinkJson).Accesses);
      }
      // 100 GETs counted (50 resolve, 50 redirect); the HEADs counted nothing.
      assert.equal(new Set(accesses).size, 50);
      assert.ok(accesses.every((value) => value >= 1 && value <= 100));
      const [listed] = await listLinks(t, code);
      assert.equal(listed?.Accesses, 100);
    }));

  test('concurrent deletes of one link: one Success, the rest 404', () =>
    withApp(async (t) => {
      const { code } = await newAccount(t.app);
      assert.equal((await createLink(t, code, { url: 'https://example.com/', short: 'delete-me' })).statusCode, 200);
      const responses = await Promise.all(
        Array.from({ length: 10 }, () =>
          t.app.inject({ method: 'DELETE', url: '/v1/link', query: { short: 'delete-me', auth: code } })),
      );
      assert.deepEqual(tally(responses.map((response) => response.statusCode)), { 200: 1, 404: 9 });
      assert.equal(responses.find((response) => response.statusCode === 200)?.body, 'Success');
      assert.deepEqual(await listLinks(t, code), []);
    }));
});
