import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { InjectOptions } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { newAccount, openTestStore, testConfig } from '../helpers/app.ts';
import { appFor, createLinkOk, listen, rawRequest } from './support.ts';

/** A fresh id: this process's 12-hex-digit prefix and a base-36 counter. */
const FRESH = /^[0-9a-f]{12}-[0-9a-z]+$/;

interface LogEntry {
  level: number;
  msg: string;
  reqId?: string;
  url?: string;
}

async function loggedApp(t: TestContext) {
  const chunks: string[] = [];
  const testApp = await appFor(t, { logLevel: 'info' }, { logStream: { write: (chunk: string) => void chunks.push(chunk) } });
  const entries = () =>
    chunks
      .join('')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as LogEntry);
  return { ...testApp, entries };
}

describe('X-Request-Id', () => {
  test('is on every answer: a fresh one when the request brought none', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: 'https://example.com/' });
    const requests: InjectOptions[] = [
      { method: 'GET', url: `/v1/get/${short}` },
      { method: 'GET', url: `/${short}` },
      { method: 'GET', url: '/no-such-link' },
      { method: 'GET', url: '/v1/no/such/route' },
      { method: 'GET', url: '/v1/links' },
      { method: 'HEAD', url: '/v1/new_account' },
      { method: 'GET', url: '/v1/get/%E0%A4%A' },
      { method: 'POST', url: '/v1/link', headers: { authorization: code, 'content-type': 'application/json' }, payload: '{' },
      { method: 'GET', url: '/healthz' },
      { method: 'GET', url: '/metrics' },
      { method: 'GET', url: '/docs' },
      { method: 'GET', url: '/' },
    ];
    const seen = new Set<string>();
    for (const options of requests) {
      const response = await app.inject(options);
      const id = response.headers['x-request-id'];
      assert.equal(typeof id, 'string', `${options.method} ${String(options.url)} → ${response.statusCode}`);
      assert.match(id as string, FRESH);
      seen.add(id as string);
    }
    assert.equal(seen.size, requests.length, 'every request gets its own id');
  });

  test('keeps a sane incoming id', async (t) => {
    const { app } = await appFor(t);
    // 32 hex digits without dashes (nginx's $request_id) are not an access code's shape.
    for (const id of ['abc', 'req-42', 'a.b_c:d-e', '0123456789', 'x'.repeat(128), 'F3C1E6A07A1B4C559D0E2B7F9E6D1A2C']) {
      const response = await app.inject({ method: 'GET', url: '/v1/get/nothing', headers: { 'x-request-id': id } });
      assert.equal(response.headers['x-request-id'], id);
    }
  });

  test('replaces an id that is too long, empty, or carries other characters', async (t) => {
    const { app } = await appFor(t);
    for (const id of ['', 'x'.repeat(129), 'has space', 'semi;colon', '<script>', 'quote"d', 'ünïcode', 'a/b', '{"json":1}']) {
      const response = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } });
      const answered = response.headers['x-request-id'] as string;
      assert.match(answered, FRESH, `${JSON.stringify(id)} was replaced`);
    }
  });

  test('replaces an id shaped like a secret (an access code, an API key) instead of logging and echoing it', async (t) => {
    const { app, entries } = await loggedApp(t);
    const ids = ['F3C1E6A0-7A1B-4C55-9D0E-2B7F9E6D1A2C', 'trace:f3c1e6a0-7a1b-4c55-9d0e-2b7f9e6d1a2c', `slk_${'a'.repeat(43)}`];
    for (const id of ids) {
      const response = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } });
      assert.match(response.headers['x-request-id'] as string, FRESH, `${id} was replaced`);
    }
    const logged = JSON.stringify(entries()).toLowerCase();
    for (const id of ids) assert.ok(!logged.includes(id.toLowerCase()), logged);
  });

  test('replaces an id sent twice (over a real socket)', async (t) => {
    const { app } = await appFor(t);
    const target = await listen(app);
    const response = await rawRequest(target, 'GET', '/healthz', ['X-Request-Id', 'one', 'X-Request-Id', 'two']);
    assert.equal(response.status, 200);
    assert.match(String(response.headers['x-request-id']), FRESH);
  });

  test('is in every log line of the request, as reqId', async (t) => {
    const { app, entries } = await loggedApp(t);
    await app.inject({ method: 'GET', url: '/v1/get/nothing', headers: { 'x-request-id': 'trace-me-1' } });
    const fresh = await app.inject({ method: 'GET', url: '/v1/no/such/route' });
    await app.inject({ method: 'GET', url: '/v1/get/%E0%A4%A', headers: { 'x-request-id': 'refused-early' } });

    const lines = entries();
    const kept = lines.filter((entry) => entry.reqId === 'trace-me-1');
    assert.equal(kept.length, 1);
    assert.equal(kept[0]!.url, '/v1/get/nothing');
    const generated = lines.find((entry) => entry.url === '/v1/no/such/route');
    assert.equal(generated?.reqId, fresh.headers['x-request-id']);
    assert.equal(lines.find((entry) => entry.url === '/v1/get/%E0%A4%A')?.reqId, 'refused-early');
  });

  test('ties an unexpected failure\'s error line to its request line', async (t) => {
    const opened = await openTestStore();
    const { store } = opened;
    const chunks: string[] = [];
    const app = await buildApp({
      config: testConfig({ logLevel: 'info' }),
      store: { ...store, resolveLink: () => Promise.reject(new Error('boom')) },
      logStream: { write: (chunk: string) => void chunks.push(chunk) },
    });
    t.after(async () => {
      await app.close();
      await opened.close();
    });
    const response = await app.inject({ method: 'GET', url: '/v1/get/anything', headers: { 'x-request-id': 'failing-1' } });
    assert.equal(response.statusCode, 500);
    assert.equal(response.headers['x-request-id'], 'failing-1');
    const lines = chunks.join('').split('\n').filter((line) => line.includes('failing-1'));
    assert.equal(lines.length, 2, 'the error line and the request line');
    for (const line of lines) assert.equal((JSON.parse(line) as LogEntry).reqId, 'failing-1');
  });
});
