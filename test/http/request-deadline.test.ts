/**
 * The whole-request deadline (issue 13 item 2): whatever a request waits for, it is answered
 * 503 with Retry-After at STORAGE_TIMEOUT + 1 s from the end of its headers. Storage calls
 * have their own deadline (test/store/sqlite-lock.test.ts, test/e2e/postgres-faults.test.ts);
 * this is the net under everything else, shown with a store call that never settles.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { openSqliteStore } from '../../src/store/sqlite/store.ts';
import type { Store } from '../../src/store/store.ts';
import { tempDir, testConfig } from '../helpers/app.ts';

test('a request still unanswered at STORAGE_TIMEOUT + 1 s answers 503 "the request took too long" with Retry-After', async (t) => {
  const dir = tempDir();
  const inner = await openSqliteStore({ path: join(dir.path, 'test.db'), checkpointer: false });
  // A lookup that never settles, as if something below the store's own deadline hung.
  const store: Store = { ...inner, engine: inner.engine, findLink: () => new Promise(() => {}) };
  const app = await buildApp({ config: testConfig({ storageTimeoutMs: 200 }), store });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(async () => {
    await app.close();
    await inner.close();
    dir.remove();
  });

  const started = performance.now();
  const response = await fetch(`${address}/v1/get/some-link`, { method: 'HEAD', signal: AbortSignal.timeout(10_000) });
  const ms = performance.now() - started;
  assert.equal(response.status, 503);
  assert.equal(response.headers.get('retry-after'), '1');
  assert.ok(ms >= 1150 && ms < 3000, `answered after ${ms.toFixed(0)} ms`);

  // The same with a body, through the error table's wording.
  const hangingList: Store = { ...inner, engine: inner.engine, listLinkDetails: () => new Promise(() => {}) };
  const listApp = await buildApp({ config: testConfig({ storageTimeoutMs: 200 }), store: hangingList });
  t.after(() => listApp.close());
  const account = JSON.parse((await listApp.inject({ url: '/v1/new_account' })).body) as { AccessCode: string };
  const listed = await listApp.inject({ url: '/v1/links', headers: { authorization: `Bearer ${account.AccessCode}` } });
  assert.equal(listed.statusCode, 503);
  assert.equal(listed.body, 'Unable to list links: the request took too long');
  assert.equal(listed.headers['retry-after'], '1');

  const get = await fetch(`${address}/v1/get/some-link`, { signal: AbortSignal.timeout(10_000) });
  // GET counts through resolveLink, which answers; the deadline does not touch a prompt request.
  assert.equal(get.status, 404);
  assert.equal((await fetch(`${address}/healthz`)).status, 200);
});

test('the deadline follows STORAGE_TIMEOUT: an answer within it is untouched', async (t) => {
  const dir = tempDir();
  const inner = await openSqliteStore({ path: join(dir.path, 'test.db'), checkpointer: false });
  const slow: Store = {
    ...inner,
    engine: inner.engine,
    findLink: async (code) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return inner.findLink(code);
    },
  };
  const app = await buildApp({ config: testConfig({ storageTimeoutMs: 200 }), store: slow });
  await app.ready();
  t.after(async () => {
    await app.close();
    await inner.close();
    dir.remove();
  });
  // 300 ms is past STORAGE_TIMEOUT (which only store calls enforce) but within it + 1 s.
  const response = await app.inject({ method: 'HEAD', url: '/v1/get/some-link' });
  assert.equal(response.statusCode, 404);
});
