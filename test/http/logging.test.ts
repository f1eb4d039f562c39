import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { InjectOptions } from 'fastify';
import type { Config } from '../../src/config.ts';
import type { Store } from '../../src/store/store.ts';
import { newAccount } from '../helpers/app.ts';
import { appFor, createLinkOk, listen, rawRequest } from './support.ts';

interface LogEntry {
  level: number;
  msg: string;
  method?: string;
  url?: string;
  statusCode?: number;
  responseTime?: number;
  remoteAddress?: string;
  userAgent?: string;
}

/** An app logging at info into an array of lines. */
async function loggedApp(t: TestContext, { wrapStore, overrides = {} }: { wrapStore?: (store: Store) => Store; overrides?: Partial<Config> } = {}) {
  const chunks: string[] = [];
  const testApp = await appFor(t, { logLevel: 'info', ...overrides }, { logStream: { write: (chunk: string) => void chunks.push(chunk) }, ...(wrapStore && { wrapStore }) });
  const lines = () => chunks.join('').split('\n').filter((line) => line !== '');
  return { ...testApp, lines, clear: () => void (chunks.length = 0) };
}

/** A log line as a reader could decode it: `+` as space, percent-decoded until nothing changes. */
function decodedForReading(line: string): string {
  let text = line.replaceAll('+', ' ');
  for (let previous = ''; previous !== text; ) {
    previous = text;
    text = text.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
  return text.toLowerCase();
}

function percentEncodeAll(text: string): string {
  return [...Buffer.from(text)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

describe('request logging', () => {
  test('writes exactly one JSON line per request, with method, path, status and time', async (t) => {
    const { app, lines, clear } = await loggedApp(t);
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: 'https://example.com/' });
    clear();

    const requests: InjectOptions[] = [
      { method: 'GET', url: '/v1/new_account' },
      { method: 'POST', url: '/v1/new_account' },
      { method: 'HEAD', url: '/v1/new_account' },
      { method: 'GET', url: `/v1/link?url=https%3A%2F%2Fexample.com%2F&auth=${code}` },
      { method: 'GET', url: '/v1/links', headers: { authorization: code } },
      { method: 'GET', url: `/v1/get/${short}` },
      { method: 'HEAD', url: `/v1/get/${short}` },
      { method: 'GET', url: `/${short}` },
      { method: 'GET', url: '/no-such-link' },
      { method: 'GET', url: '/v1/no/such/route' },
      { method: 'GET', url: '/v1/links' },
      { method: 'POST', url: '/v1/link', headers: { authorization: code, 'content-type': 'application/json' }, payload: '{' },
      { method: 'POST', url: '/v1/link', headers: { authorization: code, 'content-type': 'text/plain' }, payload: 'x' },
      { method: 'DELETE', url: `/v1/link?short=${short}`, headers: { authorization: `Bearer ${code}` } },
    ];
    for (const [index, options] of requests.entries()) {
      const response = await app.inject(options);
      const written = lines();
      assert.equal(written.length, index + 1, `${options.method} ${String(options.url)} wrote ${written.length - index} lines`);
      const entry = JSON.parse(written.at(-1)!) as LogEntry;
      assert.equal(entry.level, 30);
      assert.equal(entry.method, options.method);
      assert.equal(entry.statusCode, response.statusCode);
      assert.equal(typeof entry.responseTime, 'number');
      assert.ok(entry.url?.startsWith(String(options.url).split('?')[0]!), entry.url);
    }
  });

  test('names the client address and its User-Agent on each request line', async (t) => {
    const { app, lines, clear } = await loggedApp(t);
    clear();
    await app.inject({ method: 'GET', url: '/v1/links', remoteAddress: '203.0.113.7', headers: { 'user-agent': 'curl/8.5.0' } });
    await app.inject({ method: 'GET', url: '/v1/get/%E0%A4%A', remoteAddress: '2001:db8::7', headers: { 'user-agent': 'probe/1' } });
    const [first, refused] = lines().map((line) => JSON.parse(line) as LogEntry);
    assert.equal(first?.remoteAddress, '203.0.113.7');
    assert.equal(first?.userAgent, 'curl/8.5.0');
    assert.equal(refused?.remoteAddress, '2001:db8::7', 'also on a request refused before routing');
    assert.equal(refused?.userAgent, 'probe/1');
  });

  test('logs the client address TRUST_PROXY finds, and a User-Agent without codes and cut short', async (t) => {
    const { app, lines, clear } = await loggedApp(t, { overrides: { trustProxy: ['10.0.0.9'] } });
    const { code } = await newAccount(app);
    clear();
    await app.inject({
      method: 'GET',
      url: '/v1/links',
      remoteAddress: '10.0.0.9',
      headers: { 'x-forwarded-for': '192.0.2.1, 198.51.100.1', 'user-agent': `tool ${code} ${'x'.repeat(5000)}` },
    });
    const line = lines()[0]!;
    const entry = JSON.parse(line) as LogEntry;
    assert.equal(entry.remoteAddress, '198.51.100.1');
    assert.ok(!line.toLowerCase().includes(code), line);
    assert.ok(entry.userAgent!.startsWith('tool [REDACTED] xxx'), entry.userAgent);
    assert.ok(entry.userAgent!.length <= 256, `${entry.userAgent!.length} characters`);
  });

  test('logs a request that Fastify refuses before routing (bad percent-encoding)', async (t) => {
    const { app, lines, clear } = await loggedApp(t);
    clear();
    const response = await app.inject({ method: 'GET', url: '/v1/get/%E0%A4%A' });
    assert.equal(response.statusCode, 400);
    const written = lines();
    assert.equal(written.length, 1);
    const entry = JSON.parse(written[0]!) as LogEntry;
    assert.equal(entry.statusCode, 400);
    assert.equal(entry.url, '/v1/get/%E0%A4%A');
  });

  test('logs an over-long path that the router refuses', async (t) => {
    const { app, lines, clear } = await loggedApp(t);
    clear();
    await app.inject({ method: 'GET', url: `/v1/get/${'a'.repeat(9000)}` });
    assert.equal(lines().length, 1);
  });
});

describe('access codes never reach the log', () => {
  const carriers: Array<[string, (code: string) => InjectOptions]> = [
    ['an auth query parameter', (code) => ({ method: 'GET', url: `/v1/links?auth=${code}` })],
    ['an upper-case auth query parameter', (code) => ({ method: 'GET', url: `/v1/links?auth=${code.toUpperCase()}` })],
    ['an auth parameter among others', (code) => ({ method: 'GET', url: `/v1/link?url=https%3A%2F%2Fa.example%2F&auth=${code}&short=` })],
    ['a Bearer header', (code) => ({ method: 'GET', url: '/v1/links', headers: { authorization: `Bearer ${code}` } })],
    ['a bare Authorization header', (code) => ({ method: 'GET', url: '/v1/links', headers: { authorization: code } })],
    ['a percent-encoded parameter name', (code) => ({ method: 'GET', url: `/v1/links?%61uth=${code}` })],
    ['a fully percent-encoded name and value', (code) => ({ method: 'GET', url: `/v1/links?${percentEncodeAll('auth')}=${percentEncodeAll(code)}` })],
    ['an auth parameter given twice', (code) => ({ method: 'GET', url: `/v1/links?auth=${code}&auth=${code}` })],
    ['a foreign Basic scheme', (code) => ({ method: 'GET', url: '/v1/links', headers: { authorization: `Basic ${code}` } })],
    ['a code in the wrong parameter', (code) => ({ method: 'GET', url: `/v1/links?token=${code}` })],
    ['a code in the path', (code) => ({ method: 'GET', url: `/v1/get/${code}` })],
    ['a code as a short URL', (code) => ({ method: 'GET', url: `/${code}` })],
    ['an encoded code under another name after a semicolon', (code) => ({ method: 'GET', url: `/v1/links?x=1;auth=${percentEncodeAll(code)}` })],
    ['an encoded code under a name starting with +', (code) => ({ method: 'GET', url: `/v1/links?+auth=${percentEncodeAll(code)}` })],
    ['an encoded code under a name ending in an encoded NUL', (code) => ({ method: 'GET', url: `/v1/links?auth%00=${percentEncodeAll(code)}` })],
    ['a partly encoded code in any parameter', (code) => ({ method: 'GET', url: `/v1/links?x=${code.slice(0, 4)}${percentEncodeAll(code.slice(4, 9))}${code.slice(9)}` })],
    ['a twice-encoded code', (code) => ({ method: 'GET', url: `/v1/links?y=${percentEncodeAll(percentEncodeAll(code))}` })],
    ['an encoded code in a parameter name', (code) => ({ method: 'GET', url: `/v1/links?${percentEncodeAll(code)}=1` })],
    ['an encoded code in the path', (code) => ({ method: 'GET', url: `/v1/get/${percentEncodeAll(code)}` })],
    ['a refused request with a bad path', (code) => ({ method: 'GET', url: `/v1/get/%E0%A4%A?auth=${code}` })],
    ['a code sent as X-Request-Id', (code) => ({ method: 'GET', url: '/v1/links', headers: { 'x-request-id': code } })],
    ['a code sent as X-Request-Id in capitals', (code) => ({ method: 'GET', url: '/v1/links', headers: { 'x-request-id': code.toUpperCase() } })],
    [
      'a failed JSON create',
      (code) => ({ method: 'POST', url: `/v1/link?auth=${code}`, headers: { 'content-type': 'application/json' }, payload: '{' }),
    ],
  ];
  for (const [name, build] of carriers) {
    test(`redacts the code from ${name}`, async (t) => {
      const { app, lines } = await loggedApp(t);
      const { code } = await newAccount(app);

      const options = build(code);
      await app.inject(options);

      const written = lines();
      assert.ok(written.length >= 2, 'the request was logged');
      for (const line of written) {
        assert.ok(!line.includes(code), `log line carries the code: ${line}`);
        assert.ok(!line.toLowerCase().includes(code), `log line carries the code in another case: ${line}`);
        assert.ok(!line.includes(code.replaceAll('-', '')), `log line carries the code without dashes: ${line}`);
        assert.ok(!decodedForReading(line).includes(code), `log line carries the code once decoded: ${line}`);
      }
      const entry = JSON.parse(written.at(-1)!) as LogEntry;
      const path = String(options.url).split('?')[0]!;
      if (!decodedForReading(path).includes(code)) assert.ok(entry.url?.startsWith(path), `the path survives: ${entry.url}`);
    });
  }

  test('keeps the rest of a redacted query readable', async (t) => {
    const { app, lines, clear } = await loggedApp(t);
    const { code } = await newAccount(app);
    clear();
    await app.inject({ method: 'GET', url: `/v1/link?url=https%3A%2F%2Fa.example%2F&auth=${code}&short=kept-name` });
    const entry = JSON.parse(lines()[0]!) as LogEntry;
    assert.ok(entry.url?.startsWith('/v1/link?'), entry.url);
    assert.ok(entry.url?.includes('url=https%3A%2F%2Fa.example%2F'), entry.url);
    assert.ok(entry.url?.includes('short=kept-name'), entry.url);
    assert.ok(!entry.url?.includes(code));
  });

  test('redacts the admin token under any credential-like name, and an API key wherever it is', async (t) => {
    const token = 'Admin-Token_for-the-log-tests-0123456789';
    const key = `slk_${'Ab9_-'.repeat(8)}xyz`;
    const { app, lines } = await loggedApp(t, { overrides: { adminToken: token } });
    const names = ['token', 'access_token', 'admin_token', 'Admin-Token', 'api_key', 'x-api-key', 'apikey', 'key', 'password', 'client_secret', 'authorization', 'bearer', 'metrics_token'];
    for (const name of names) {
      await app.inject({ method: 'GET', url: `/v1/admin/accounts?limit=1&${name}=${token}` });
      await app.inject({ method: 'GET', url: `/v1/admin/accounts?${percentEncodeAll(name)}=${percentEncodeAll(token)}` });
    }
    await app.inject({ method: 'GET', url: `/v1/links?x=${key}` });
    await app.inject({ method: 'GET', url: `/v1/get/${percentEncodeAll(key)}` });
    await app.inject({ method: 'GET', url: '/v1/links', headers: { 'x-request-id': key } });
    const written = lines();
    assert.ok(written.length >= names.length * 2 + 3, 'every request was logged');
    for (const line of written) {
      assert.ok(!decodedForReading(line).includes(token.toLowerCase()), `log line carries the admin token: ${line}`);
      assert.ok(!decodedForReading(line).includes(key.toLowerCase()), `log line carries the API key: ${line}`);
    }
    assert.ok(written.some((line) => line.includes('limit=1&token=[REDACTED]')), 'the rest of the query stays readable');
  });

  test('redacts codes sent over a real socket, including two Authorization headers', async (t) => {
    const { app, lines } = await loggedApp(t);
    const { code } = await newAccount(app);
    const target = await listen(app);
    await rawRequest(target, 'GET', `/v1/links?auth=${code}`);
    await rawRequest(target, 'GET', '/v1/links', ['Authorization', code, 'Authorization', `Bearer ${code}`]);
    const written = lines();
    assert.ok(written.length >= 3);
    for (const line of written) assert.ok(!line.toLowerCase().includes(code), line);
  });

  test('keeps a 500 free of the code while still logging its detail', async (t) => {
    // Listing fails in a way no rule expects (not an outage, which would be a 503): the
    // same on every engine, unlike a closed store, which PostgreSQL reports as unreachable.
    const { app, lines } = await loggedApp(t, { wrapStore: (store) => ({ ...store, listLinkDetails: () => Promise.reject(new Error('the store broke')) }) });
    const { code } = await newAccount(app);
    const response = await app.inject({ method: 'GET', url: `/v1/links?auth=${code}` });
    assert.equal(response.statusCode, 500);
    const written = lines();
    assert.ok(written.some((line) => (JSON.parse(line) as LogEntry).level >= 50));
    for (const line of written) assert.ok(!line.toLowerCase().includes(code), line);
  });
});
