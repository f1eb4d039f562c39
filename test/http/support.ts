import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, type TestContext } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Config } from '../../src/config.ts';
import type { Link, LinkDetails } from '../../src/http/schemas.ts';
import { createTestApp, TEST_BASE_URL, type TestApp } from '../helpers/app.ts';

export type Reply = LightMyRequestResponse;

export const TEXT = 'text/plain; charset=utf-8';
export const JSON_TYPE = 'application/json; charset=utf-8';
export const HTML = 'text/html; charset=utf-8';
export const LINK_KEYS = ['ShortCode', 'PointsTo', 'CreatedBy', 'Accesses'];
export const ACCOUNT_KEYS = ['Uid', 'AccessCode', 'DateCreated', 'MaxLinks'];

/** The Link JSON, as the API's schema types it. */
export type LinkJson = Link;

/**
 * One app for the tests of the enclosing describe (or file, at the top level) that need
 * nothing fresh but their own accounts and links: built before the first test and closed
 * after the last. Call the answer inside a test. A build costs as much CPU as dozens of
 * requests (Fastify compiles every route's serializers), and most tests make a handful.
 */
export function sharedApp(overrides: Partial<Config> = {}, extra: Parameters<typeof createTestApp>[1] = {}): () => TestApp {
  let testApp: TestApp | undefined;
  before(async () => {
    testApp = await createTestApp(overrides, extra);
  });
  after(() => testApp?.close());
  return () => {
    if (testApp === undefined) throw new Error('the shared app was not built');
    return testApp;
  };
}

/** A fresh app for one test, closed (and its database removed) when the test ends. */
export async function appFor(
  t: TestContext,
  overrides: Partial<Config> = {},
  extra: Parameters<typeof createTestApp>[1] = {},
): Promise<TestApp> {
  const testApp = await createTestApp(overrides, extra);
  t.after(() => testApp.close());
  return testApp;
}

/** Creates a link through `GET /v1/link` with the code in the query. */
export function createLink(app: FastifyInstance, code: string, params: Record<string, string>): Promise<Reply> {
  return app.inject({ method: 'GET', url: '/v1/link', query: { ...params, auth: code } });
}

/** Creates a link and fails the test unless it is answered 200; returns the shortcode. */
export async function createLinkOk(app: FastifyInstance, code: string, params: Record<string, string>): Promise<string> {
  const response = await createLink(app, code, params);
  assert.equal(response.statusCode, 200, response.body);
  const prefix = `${TEST_BASE_URL}/`;
  assert.ok(response.body.startsWith(prefix), response.body);
  return response.body.slice(prefix.length);
}

/** The owner's list: LinkDetails. */
export async function listLinks(app: FastifyInstance, code: string): Promise<LinkDetails[]> {
  const response = await app.inject({ method: 'GET', url: '/v1/links', headers: { authorization: `Bearer ${code}` } });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as LinkDetails[];
}

export function deleteLink(app: FastifyInstance, code: string, short: string): Promise<Reply> {
  return app.inject({ method: 'DELETE', url: '/v1/link', query: { short }, headers: { authorization: `Bearer ${code}` } });
}

/** Resolves through `GET /v1/get/{code}`. */
export function resolve(app: FastifyInstance, short: string): Promise<Reply> {
  return app.inject({ method: 'GET', url: `/v1/get/${encodeURIComponent(short)}` });
}

/** The link's current Accesses, read from its owner's list (which never counts). */
export async function accessesOf(app: FastifyInstance, owner: string, short: string): Promise<number> {
  const link = (await listLinks(app, owner)).find((l) => l.ShortCode === short);
  assert.ok(link, `link ${short} is listed`);
  return link.Accesses;
}

/**
 * Asserts the contract's error form: plain text, one line `Unable to <operation>: <reason>`,
 * no stack trace.
 */
export function assertError(response: Reply, status: number, operation: string): void {
  assert.equal(response.statusCode, status, `expected ${status}, got ${response.statusCode}: ${response.body}`);
  assert.equal(response.headers['content-type'], TEXT);
  assertErrorBody(response.body, operation);
}

export function assertErrorBody(body: string, operation: string): void {
  const prefix = `Unable to ${operation}: `;
  assert.ok(body.startsWith(prefix), `body ${JSON.stringify(body)} should start with ${JSON.stringify(prefix)}`);
  assert.ok(body.length > prefix.length, 'the error names a reason');
  assert.doesNotMatch(body, /[\r\n]/, 'one line');
  assert.doesNotMatch(body, /\bat .+:\d+:\d+/, 'no stack frames');
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Starts the app on an ephemeral local port (closed by the app's own close()). */
export async function listen(app: FastifyInstance): Promise<{ host: string; port: number }> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address() as AddressInfo;
  return { host: '127.0.0.1', port: address.port };
}

/**
 * Sends one request over a real socket. `headers` is a raw list of name/value pairs, so
 * the same header can be sent twice (which `fetch` would merge).
 */
export function rawRequest(
  target: { host: string; port: number },
  method: string,
  path: string,
  headers: string[] = [],
): Promise<RawResponse> {
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(
      { host: target.host, port: target.port, method, path, headers: ['Host', `${target.host}:${target.port}`, ...headers, 'Connection', 'close'], agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
