/**
 * The short-URL fast path (src/http/fast-path.ts, ADR 27) answers plain redirects and resolves
 * before Fastify. Two apps on identical data, one with it and one without, get the same raw
 * requests over real sockets: their answers must be the same bytes (but for the Date and a
 * generated request id), their log lines the same fields, their metrics the same counts, and
 * the links the same Accesses. The counters show which requests the fast path took.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Config, RateLimitPolicies } from '../../src/config.ts';
import type { Store } from '../../src/store/store.ts';
import { newAccount } from '../helpers/app.ts';
import { appFor, createLinkOk, listen } from './support.ts';

interface Side {
  readonly app: FastifyInstance;
  readonly target: { host: string; port: number };
  readonly lines: () => string[];
  readonly owner: string;
}

/** An app with the links every case uses, logging at info into an array. */
async function side(t: TestContext, fastPath: boolean, wrapStore?: (store: Store) => Store, overrides: Partial<Config> = {}): Promise<Side> {
  const chunks: string[] = [];
  const { app } = await appFor(t, { logLevel: 'info', ...overrides }, {
    fastPath, logStream: { write: (chunk: string) => void chunks.push(chunk) }, ...(wrapStore && { wrapStore }),
  });
  const { code } = await newAccount(app);
  await createLinkOk(app, code, { url: 'https://example.com/plain?x=1#top', short: 'plain1' });
  await createLinkOk(app, code, { url: 'https://EXAMPLE.com/ünï', short: 'idn_1' });
  await createLinkOk(app, code, { url: 'https://example.com/once', short: 'once1', max_visits: '1' });
  await createLinkOk(app, code, { url: 'https://example.com/q', short: 'query1', forward_query: 'true' });
  await createLinkOk(app, code, { url: 'https://example.com/secret', short: 'locked1', password: 'open sesame' });
  const target = await listen(app);
  return { app, target, lines: () => chunks.join('').split('\n').filter((line) => line !== ''), owner: code };
}

/** Writes `raw` on a fresh connection and returns everything read until the server closes it. */
function exchange(target: { host: string; port: number }, raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(target.port, target.host);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
    socket.write(raw);
  });
}

/** The bytes with what differs by nature blanked: the Date, and request ids this process generated. */
function normalised(bytes: string): string {
  return bytes.replace(/^date: .*$/gim, 'date: *').replace(/^x-request-id: [0-9a-f]{12}-[0-9a-z]+$/gim, 'x-request-id: *');
}

/** A log line without its time, pid, request id and response time. */
function logFields(line: string): Record<string, unknown> {
  const { time: _time, pid: _pid, reqId, responseTime: _responseTime, ...rest } = JSON.parse(line) as Record<string, unknown>;
  return { ...rest, reqId: typeof reqId === 'string' && /^[0-9a-f]{12}-/.test(reqId) ? '*' : reqId };
}

function request(path: string, ...headers: string[]): string {
  return requestOn('sl.test', path, ...headers);
}

function requestOn(host: string, path: string, ...headers: string[]): string {
  return `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${headers.map((h) => `${h}\r\n`).join('')}Connection: close\r\n\r\n`;
}

/** Metric lines that count: requests per route, method and status, and the counted events. */
async function countedMetrics(app: FastifyInstance): Promise<string[]> {
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  return text.split('\n').filter((line) =>
    /^shortlink_(http_request_duration_seconds_count|resolutions_total|redirects_total|visits_total)/.test(line) && !line.includes('/metrics'));
}

const CASES: readonly { name: string; raw: string; taken: 'answered' | 'handedOver' | 'no' }[] = [
  { name: 'plain redirect', raw: request('/plain1'), taken: 'answered' },
  { name: 'redirect to a target the URL parser normalises', raw: request('/idn_1'), taken: 'answered' },
  { name: 'plain resolve', raw: request('/v1/get/plain1'), taken: 'answered' },
  { name: 'a given request id, a User-Agent holding an access code', raw: request('/plain1', 'X-Request-Id: trace-42.a', 'User-Agent: x 123e4567-e89b-12d3-a456-426614174000'), taken: 'answered' },
  {
    name: 'two requests on one keep-alive connection',
    raw: `GET /plain1 HTTP/1.1\r\nHost: sl.test\r\n\r\n${request('/v1/get/plain1')}`,
    taken: 'answered',
  },
  { name: 'HTTP/1.0', raw: 'GET /plain1 HTTP/1.0\r\nHost: sl.test\r\n\r\n', taken: 'answered' },
  { name: 'unknown code', raw: request('/nosuch'), taken: 'handedOver' },
  { name: 'unknown code, resolve', raw: request('/v1/get/nosuch'), taken: 'handedOver' },
  { name: 'a link with one visit left, then gone', raw: request('/once1'), taken: 'answered' },
  { name: 'gone', raw: request('/once1'), taken: 'handedOver' },
  { name: 'gone, resolve', raw: request('/v1/get/once1'), taken: 'handedOver' },
  { name: 'forward_query', raw: request('/query1'), taken: 'handedOver' },
  { name: 'protected: the form', raw: request('/locked1'), taken: 'handedOver' },
  { name: 'protected, resolve without a password', raw: request('/v1/get/locked1'), taken: 'handedOver' },
  { name: 'a reserved path', raw: request('/robots.txt'), taken: 'no' },
  { name: 'a query string', raw: request('/query1?a=b'), taken: 'no' },
  { name: 'percent-encoding', raw: request('/plain%31'), taken: 'no' },
  { name: 'HEAD', raw: 'HEAD /plain1 HTTP/1.1\r\nHost: sl.test\r\nConnection: close\r\n\r\n', taken: 'no' },
  { name: 'Expect', raw: request('/plain1', 'Expect: 100-continue'), taken: 'no' },
  { name: 'an unmet Expect', raw: request('/plain1', 'Expect: bogus'), taken: 'no' },
  { name: 'two Hosts', raw: request('/plain1', 'Host: other.test'), taken: 'no' },
  { name: 'no Host', raw: 'GET /plain1 HTTP/1.1\r\nConnection: close\r\n\r\n', taken: 'no' },
  { name: 'X-Forwarded-For', raw: request('/plain1', 'X-Forwarded-For: 203.0.113.7'), taken: 'no' },
  { name: 'a GET with a body', raw: `GET /plain1 HTTP/1.1\r\nHost: sl.test\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab`, taken: 'no' },
];

describe('short-URL fast path', () => {
  test('answers every case as Fastify does: same bytes, log lines, metrics and counts', async (t) => {
    const fast = await side(t, true);
    const slow = await side(t, false);
    for (const { name, raw, taken } of CASES) {
      const before = { ...fast.app.shortUrlFastPath };
      const linesBefore = [fast.lines().length, slow.lines().length];
      const [a, b] = [await exchange(fast.target, raw), await exchange(slow.target, raw)];
      assert.equal(normalised(a), normalised(b), name);
      assert.match(a, /^HTTP\/1\.[01] \d{3} /, name);
      const after = fast.app.shortUrlFastPath;
      const expected = {
        answered: before.answered + (taken === 'answered' ? (raw.split('GET ').length - 1) : 0),
        handedOver: before.handedOver + (taken === 'handedOver' ? 1 : 0),
      };
      assert.deepEqual({ ...after }, expected, `${name}: taken ${taken}`);
      // Each side's lines of this case (written after 'finish': wait for them).
      const [newFast, newSlow] = await eventually(() => {
        const pair = [fast.lines().slice(linesBefore[0]), slow.lines().slice(linesBefore[1])] as const;
        return pair[0].length === pair[1].length && pair[0].length > 0 ? pair : undefined;
      });
      assert.deepEqual(newFast.map(logFields), newSlow.map(logFields), `${name}: log lines`);
    }
    assert.deepEqual(slow.app.shortUrlFastPath, { answered: 0, handedOver: 0 });
    assert.ok(!fast.lines().some((line) => line.includes('123e4567')), 'the access code is never logged');
    assert.deepEqual(await countedMetrics(fast.app), await countedMetrics(slow.app));
    const accesses = async (s: Side) =>
      (await s.app.inject({ method: 'GET', url: '/v1/links', headers: { authorization: `Bearer ${s.owner}` } })).json() as { ShortCode: string; Accesses: number }[];
    const counts = (links: { ShortCode: string; Accesses: number }[]) => Object.fromEntries(links.map((l) => [l.ShortCode, l.Accesses]));
    assert.deepEqual(counts(await accesses(fast)), counts(await accesses(slow)), 'nothing counted twice or lost');
  });

  test('an answer begun before close() began says Connection: close, as Fastify\'s does', async (t) => {
    const answers: string[] = [];
    for (const fastPath of [true, false]) {
      // Resolutions wait for `release` once `gated` is set.
      let gated = false;
      let reached = () => {};
      const arrived = new Promise<void>((resolve) => (reached = resolve));
      let release = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      const s = await side(t, fastPath, (store) => Object.assign(Object.create(store) as Store, {
        resolveLink: async (...args: Parameters<Store['resolveLink']>) => {
          if (gated) {
            reached();
            await held;
          }
          return store.resolveLink(...args);
        },
      }));
      gated = true;
      const answer = exchange(s.target, 'GET /plain1 HTTP/1.1\r\nHost: sl.test\r\n\r\n');
      await arrived;
      const closed = s.app.close();
      // close() stops listening once its preClose hooks (the closing flag among them) have run.
      await eventually(() => (s.app.server.listening ? undefined : true));
      release();
      answers.push(normalised(await answer));
      await closed;
      assert.deepEqual({ ...s.app.shortUrlFastPath }, { answered: fastPath ? 1 : 0, handedOver: 0 });
    }
    assert.match(answers[0]!, /^connection: close$/im);
    assert.equal(answers[0], answers[1]);
  });

  test('with rate limits on it leaves the request to Fastify, unless the client is exempt', async (t) => {
    const roomy = { limit: 1000, windowMs: 60_000 };
    const policies: RateLimitPolicies = {
      newAccount: roomy, failedAuth: roomy, createLink: roomy, unknownCode: roomy, createWebhook: roomy, password: roomy,
      resolve: { limit: 1, windowMs: 60_000 },
    };
    const limited = await side(t, true, undefined, { rateLimit: true, rateLimitExempt: [], rateLimitPolicies: policies });
    assert.match(await exchange(limited.target, request('/plain1')), /^HTTP\/1\.1 302 /);
    assert.match(await exchange(limited.target, request('/plain1')), /^HTTP\/1\.1 429 /);
    assert.deepEqual({ ...limited.app.shortUrlFastPath }, { answered: 0, handedOver: 0 });
    const exempt = await side(t, true, undefined, { rateLimit: true, rateLimitExempt: ['127.0.0.1'], rateLimitPolicies: policies });
    for (let i = 0; i < 2; i++) assert.match(await exchange(exempt.target, request('/plain1')), /^HTTP\/1\.1 302 /);
    assert.deepEqual({ ...exempt.app.shortUrlFastPath }, { answered: 2, handedOver: 0 });
  });

  test('with CORS configured it leaves /v1/get/ to Fastify (its hooks add headers there) and still takes redirects', async (t) => {
    const fast = await side(t, true, undefined, { cors: { origins: ['https://app.example'], anyForPublic: true } });
    const resolved = await exchange(fast.target, request('/v1/get/plain1', 'Origin: https://app.example'));
    assert.match(resolved, /^vary: Origin$/im);
    assert.match(resolved, /^access-control-allow-origin: https:\/\/app\.example$/im);
    assert.deepEqual({ ...fast.app.shortUrlFastPath }, { answered: 0, handedOver: 0 });
    const slow = await side(t, false, undefined, { cors: { origins: ['https://app.example'], anyForPublic: true } });
    const raw = request('/plain1', 'Origin: https://app.example');
    assert.equal(normalised(await exchange(fast.target, raw)), normalised(await exchange(slow.target, raw)));
    assert.deepEqual({ ...fast.app.shortUrlFastPath }, { answered: 1, handedOver: 0 });
  });

  test('on a registered domain: its links, and its NotFoundUrl for an unknown code, as Fastify answers them', async (t) => {
    const token = 'admin-token-for-the-fast-path-test';
    const sides: Side[] = [];
    for (const fastPath of [true, false]) {
      const s = await side(t, fastPath, undefined, { adminToken: token });
      const put = await s.app.inject({
        method: 'PUT', url: '/v1/admin/domain', headers: { authorization: `Bearer ${token}` },
        query: { origin: 'https://go.example', not_found_url: 'https://www.example.com/missing?from=go' },
      });
      assert.equal(put.statusCode, 200, put.body);
      await createWithQuery(s.app, s.owner, { url: 'https://example.com/on-go', short: 'plain1', domain: 'go.example' });
      sides.push(s);
    }
    const [fast, slow] = sides as [Side, Side];
    for (const raw of [requestOn('go.example', '/plain1'), requestOn('go.example', '/nosuch')]) {
      assert.equal(normalised(await exchange(fast.target, raw)), normalised(await exchange(slow.target, raw)));
    }
    assert.deepEqual({ ...fast.app.shortUrlFastPath }, { answered: 1, handedOver: 1 });
    const redirected = await exchange(fast.target, requestOn('GO.example:443', '/plain1'));
    assert.match(redirected, /^location: https:\/\/example\.com\/on-go$/im);
  });
});

/** Polls `probe` on the event loop until it answers something. */
async function eventually<T>(probe: () => T | undefined): Promise<T> {
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Creates a link through `GET /v1/link` with these parameters (a domain's too). */
async function createWithQuery(app: FastifyInstance, owner: string, query: Record<string, string>): Promise<void> {
  const response = await app.inject({ method: 'GET', url: '/v1/link', query, headers: { authorization: `Bearer ${owner}` } });
  assert.equal(response.statusCode, 200, response.body);
}
