import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { DomainError, ErrorCode } from '../../src/errors.ts';
import type { Store } from '../../src/store/store.ts';
import { newAccount, openTestStore, testConfig } from '../helpers/app.ts';
import { appFor, assertError, assertErrorBody, createLinkOk, HTML, listen, rawRequest, resolve } from './support.ts';

describe('unknown routes', () => {
  const routes: InjectOptions[] = [
    { method: 'GET', url: '/v1/nope' },
    { method: 'GET', url: '/a/b/c' },
    { method: 'GET', url: '/v1/get' },
    { method: 'GET', url: '/v1/links/extra' },
    { method: 'POST', url: '/v1/get_account' },
    { method: 'PUT', url: '/v1/links' },
    { method: 'PUT', url: '/v1/link' },
    { method: 'PATCH', url: '/v1/links' },
    { method: 'DELETE', url: '/v1/links' },
    { method: 'OPTIONS', url: '/v1/link' },
    { method: 'POST', url: '/some-unknown-single-segment' },
    { method: 'DELETE', url: '/abcdef' },
  ];
  for (const options of routes) {
    test(`${options.method} ${String(options.url)} answers 404 "Unable to handle request" in plain text`, async (t) => {
      const { app } = await appFor(t);
      assertError(await app.inject(options), 404, 'handle request');
    });
  }

  test('GET of an unknown single segment answers 404 with an HTML page, the only HTML error', async (t) => {
    const { app } = await appFor(t);
    const response = await app.inject({ method: 'GET', url: '/some-unknown-single-segment' });
    assert.equal(response.statusCode, 404);
    assert.equal(response.headers['content-type'], HTML);
    assert.match(response.body, /<html[\s>]/);
    assert.doesNotMatch(response.body, /Unable to/);
  });
});

describe('request errors', () => {
  test('malformed JSON answers 400 in plain text', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    for (const payload of ['{"url":', '{url: "x"}', 'undefined', '{"url":"https://a.example/"}}']) {
      const response = await app.inject({
        method: 'POST',
        url: '/v1/link',
        headers: { authorization: code, 'content-type': 'application/json' },
        payload,
      });
      assertError(response, 400, 'create link');
    }
  });

  test('an empty JSON body answers 400 in plain text', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const response = await app.inject({
      method: 'POST',
      url: '/v1/link',
      headers: { authorization: code, 'content-type': 'application/json' },
      payload: '',
    });
    assertError(response, 400, 'create link');
  });

  test('a JSON body trying prototype pollution answers 400', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const response = await app.inject({
      method: 'POST',
      url: '/v1/link',
      headers: { authorization: code, 'content-type': 'application/json' },
      payload: '{"url":"https://a.example/","__proto__":{"short":"polluted"}}',
    });
    assertError(response, 400, 'create link');
  });

  test('a bad percent-encoding in a path answers 400 in plain text', async (t) => {
    const { app } = await appFor(t);
    assertError(await app.inject({ method: 'GET', url: '/v1/%E0%A4%A/x' }), 400, 'handle request');
  });

  test('an HTTP/1.1 request without a Host header answers 400 in plain text', async (t) => {
    const { app } = await appFor(t);
    const target = await listen(app);
    const response = await new Promise<{ status: number; type: string | undefined; body: string }>((resolvePromise, reject) => {
      const socket = connect(target.port, target.host, () => {
        socket.end('GET /v1/new_account HTTP/1.1\r\nConnection: close\r\n\r\n');
      });
      let raw = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (raw += chunk));
      socket.on('error', reject);
      socket.on('close', () => {
        const [head = '', body = ''] = raw.split('\r\n\r\n');
        resolvePromise({
          status: Number(head.split(' ')[1]),
          type: /^content-type: (.*)$/im.exec(head)?.[1],
          body,
        });
      });
    });
    assert.equal(response.status, 400);
    assert.equal(response.type, 'text/plain; charset=utf-8');
    assertErrorBody(response.body, 'handle request');
  });

  test('two Host headers answer 400 in plain text (RFC 9112 §3.2)', async (t) => {
    const { app } = await appFor(t);
    const target = await listen(app);
    const response = await rawRequest(target, 'GET', '/v1/new_account', ['Host', 'other.example']);
    assert.equal(response.status, 400);
    assert.equal(response.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    assert.equal(response.body, 'Unable to handle request: the Host header must be sent once');
    assert.equal((await rawRequest(target, 'GET', '/healthz')).status, 200, 'one Host header is fine');
  });

  test('an Expect other than 100-continue answers 417 in plain text with nosniff', async (t) => {
    const { app } = await appFor(t);
    const target = await listen(app);
    for (const expect of ['bogus', '100-continue, bogus']) {
      const response = await rawRequest(target, 'GET', '/v1/new_account', ['Expect', expect]);
      assert.equal(response.status, 417, expect);
      assert.equal(response.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
      assert.match(String(response.headers['x-request-id']), /\S/);
      assertErrorBody(response.body, 'handle request');
    }
    const injected = await app.inject({ method: 'GET', url: '/v1/new_account', headers: { expect: 'bogus' } });
    assertError(injected, 417, 'handle request');
  });

  test('an Expect list naming anything besides 100-continue gets no 100 Continue, only the 417', async (t) => {
    const { app } = await appFor(t);
    const target = await listen(app);
    for (const [expect, status] of [['100-continue, bogus', '417'], ['bogus, 100-continue', '417'], ['100-Continue', '100']] as const) {
      // A raw socket: Node's client hides interim answers. The body is never sent, so the
      // server answers only what it says before reading it.
      const raw = await new Promise<string>((resolvePromise, reject) => {
        const socket = connect(target.port, target.host, () => {
          socket.write(
            `POST /v1/new_account HTTP/1.1\r\nHost: ${target.host}\r\nExpect: ${expect}\r\n` +
              'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n',
          );
        });
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => {
          text += chunk;
          if (text.includes('\r\n\r\n')) {
            socket.destroy();
            resolvePromise(text);
          }
        });
        socket.on('error', reject);
      });
      assert.equal(raw.split('\r\n')[0]?.split(' ')[1], status, `${expect}: ${raw}`);
    }
  });

  test('Expect: 100-continue still gets its answer', async (t) => {
    const { app } = await appFor(t);
    const target = await listen(app);
    const response = await rawRequest(target, 'GET', '/healthz', ['Expect', '100-continue']);
    assert.equal(response.status, 200);
  });

  test('HEAD on a creating endpoint answers 405 in plain text', async (t) => {
    const { app } = await appFor(t);
    const response = await app.inject({ method: 'HEAD', url: '/v1/link' });
    assert.equal(response.statusCode, 405);
    assert.equal(response.headers['content-type'], 'text/plain; charset=utf-8');
  });
});

type Failure = () => Error;

/**
 * A real store (of the engine the suite runs on) behind a switch: while a failure is set, every method (but close)
 * throws it, synchronously or as a rejection.
 */
async function appWithFaultyStore(t: TestContext) {
  const opened = await openTestStore();
  const inner = opened.store;
  let failure: { make: Failure; sync: boolean } | undefined;
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || property === 'close') return value;
      return (...args: unknown[]) => {
        if (failure !== undefined) {
          if (failure.sync) throw failure.make();
          return Promise.reject(failure.make());
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) satisfies Store;
  const lines: string[] = [];
  const app = await buildApp({
    config: testConfig({ logLevel: 'info' }),
    store,
    logStream: { write: (line: string) => void lines.push(line) },
  });
  await app.ready();
  t.after(async () => {
    await app.close();
    await opened.close();
  });
  return {
    app,
    lines,
    fail(make: Failure, sync = false) {
      failure = { make, sync };
    },
    heal() {
      failure = undefined;
    },
  };
}

const unavailable: Failure = () => new DomainError(ErrorCode.StorageUnavailable, 'storage unavailable', { retryAfter: 1 });

/** Requests that touch storage, each with the operation its error must name. */
function storageRequests(code: string): Array<[InjectOptions, string]> {
  const auth = { authorization: `Bearer ${code}` };
  return [
    [{ method: 'GET', url: '/v1/new_account' }, 'create account'],
    [{ method: 'POST', url: '/v1/new_account' }, 'create account'],
    [{ method: 'GET', url: '/v1/get_account', headers: auth }, 'get account information'],
    [{ method: 'GET', url: '/v1/user_info', headers: auth }, 'get account information'],
    [{ method: 'GET', url: '/v1/links', headers: auth }, 'list links'],
    [{ method: 'GET', url: '/v1/link?url=https%3A%2F%2Fa.example%2F', headers: auth }, 'create link'],
    [{ method: 'DELETE', url: '/v1/link?short=stored', headers: auth }, 'delete link'],
    [{ method: 'GET', url: '/v1/get/stored' }, 'resolve link'],
    [{ method: 'HEAD', url: '/v1/get/stored' }, 'resolve link'],
    [{ method: 'GET', url: '/stored' }, 'resolve link'],
  ];
}

async function seed(app: FastifyInstance): Promise<string> {
  const { code } = await newAccount(app);
  await createLinkOk(app, code, { url: 'https://a.example/', short: 'stored' });
  return code;
}

describe('storage unavailable', () => {
  test('every operation answers 503 with Retry-After and "storage unavailable", then recovers', async (t) => {
    const faulty = await appWithFaultyStore(t);
    const code = await seed(faulty.app);
    faulty.fail(unavailable);

    for (const [options, operation] of storageRequests(code)) {
      const response = await faulty.app.inject(options);
      assert.equal(response.statusCode, 503, `${options.method} ${String(options.url)}: ${response.body}`);
      assert.equal(response.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(response.headers['retry-after'], '1');
      if (options.method !== 'HEAD') assert.equal(response.body, `Unable to ${operation}: storage unavailable`);
    }

    faulty.heal();
    assert.equal((await resolve(faulty.app, 'stored')).statusCode, 200);
    assert.equal((await faulty.app.inject({ method: 'GET', url: '/v1/links', query: { auth: code } })).statusCode, 200);
  });

  test('a storage failure while authenticating is 503, not 401', async (t) => {
    const faulty = await appWithFaultyStore(t);
    const { code } = await newAccount(faulty.app);
    faulty.fail(unavailable);
    const response = await faulty.app.inject({ method: 'GET', url: '/v1/links', query: { auth: code } });
    assertError(response, 503, 'list links');
    assert.equal(response.headers['www-authenticate'], undefined);
  });

  test('an outage logs one error line per cause per 10 s, while every request keeps its request line', async (t) => {
    const faulty = await appWithFaultyStore(t);
    await seed(faulty.app);
    faulty.fail(unavailable);
    faulty.lines.length = 0;
    for (let i = 0; i < 50; i++) assert.equal((await resolve(faulty.app, 'stored')).statusCode, 503);
    const entries = faulty.lines.map((line) => JSON.parse(line) as { level: number; msg: string; statusCode?: number; err?: unknown });
    const errors = entries.filter((entry) => entry.level >= 50);
    assert.equal(errors.length, 1, `error lines: ${errors.length}`);
    assert.ok(errors[0]!.err !== undefined, 'the one line carries the detail');
    assert.equal(entries.filter((entry) => entry.msg === 'request completed' && entry.statusCode === 503).length, 50);
  });

  test('the redirect path answers a storage failure in plain text, not the HTML 404 page', async (t) => {
    const faulty = await appWithFaultyStore(t);
    await seed(faulty.app);
    faulty.fail(unavailable, true);
    const response = await faulty.app.inject({ method: 'GET', url: '/stored' });
    assertError(response, 503, 'resolve link');
  });
});

describe('unexpected failures', () => {
  const leaky: Failure = () => {
    const error = new Error('SQLITE_ERROR: no such column: secret_column in "SELECT secret_column FROM links WHERE short_code = ?"');
    (error as Error & { errcode: number }).errcode = 1;
    return error;
  };

  for (const sync of [false, true]) {
    test(`every operation answers 500 without detail when a store method ${sync ? 'throws' : 'rejects'}`, async (t) => {
      const faulty = await appWithFaultyStore(t);
      const code = await seed(faulty.app);
      faulty.fail(leaky, sync);

      for (const [options, operation] of storageRequests(code)) {
        const response = await faulty.app.inject(options);
        const what = `${options.method} ${String(options.url)}`;
        assert.equal(response.statusCode, 500, `${what}: ${response.body}`);
        assert.equal(response.headers['content-type'], 'text/plain; charset=utf-8', what);
        if (options.method === 'HEAD') continue;
        assert.equal(response.body, `Unable to ${operation}: an unexpected error occurred`, what);
        assert.doesNotMatch(response.body, /SQLITE|SELECT|secret_column|\.ts:\d+/);
      }
    });
  }

  test('logs the detail of a 500 that the answer leaves out', async (t) => {
    const faulty = await appWithFaultyStore(t);
    const code = await seed(faulty.app);
    faulty.fail(leaky);
    faulty.lines.length = 0;

    const response = await faulty.app.inject({ method: 'GET', url: '/v1/links', query: { auth: code } });

    assert.equal(response.statusCode, 500);
    const entries = faulty.lines.map((line) => JSON.parse(line) as { level: number; err?: { message?: string } });
    assert.ok(entries.some((entry) => entry.level >= 50 && entry.err?.message?.includes('secret_column')));
  });
});
