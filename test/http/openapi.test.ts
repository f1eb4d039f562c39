import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { appFor, JSON_TYPE } from './support.ts';

interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string }[];
  responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>;
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; in?: string; name?: string; scheme?: string }> };
}

/** Routes that are not API: the web UI, its assets, and the docs UI itself. Nothing else may be left out. */
const UNDOCUMENTED = (url: string) =>
  url === '/' || url === '/ui' || url === '/favicon.ico' || url === '/robots.txt' || url === '/assets/:version/:file' || url === '/docs' || url.startsWith('/docs/');

/** Fastify's `/v1/get/:code` is OpenAPI's `/v1/get/{code}`. */
const toOpenApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** The contract's endpoints, each with its methods: all must be documented. */
const CONTRACT_ROUTES: Record<string, string[]> = {
  '/v1/new_account': ['get', 'post'],
  '/v1/get_account': ['get'],
  '/v1/user_info': ['get'],
  '/v1/link': ['get', 'post', 'delete'],
  '/v1/links': ['get'],
  '/v1/get/{code}': ['get', 'head'],
  '/{code}': ['get', 'head'],
  '/healthz': ['get'],
  '/readyz': ['get'],
  '/metrics': ['get'],
};

const PROTECTED = [
  ['/v1/get_account', 'get'],
  ['/v1/user_info', 'get'],
  ['/v1/link', 'get'],
  ['/v1/link', 'post'],
  ['/v1/link', 'delete'],
  ['/v1/links', 'get'],
] as const;

async function documentOf(t: Parameters<typeof appFor>[0], overrides: Parameters<typeof appFor>[1] = {}) {
  const { app } = await appFor(t, overrides);
  const response = await app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(response.statusCode, 200);
  assert.equal(response.headers['content-type'], JSON_TYPE);
  return { app, document: response.json() as Document };
}

describe('GET /openapi.json', () => {
  test('is a valid OpenAPI 3.1 document', async (t) => {
    const { document } = await documentOf(t);
    assert.equal(document.openapi, '3.1.0');
    const validator = new Validator();
    const result = await validator.validate(document as unknown as Parameters<Validator['validate']>[0]);
    assert.equal(validator.version, '3.1');
    assert.deepEqual(result.errors, undefined);
    assert.equal(result.valid, true);
  });

  test('stays valid with every optional part switched on (metrics token, admin token, another redirect status)', async (t) => {
    const { app, document } = await documentOf(t, { metricsToken: 'a-metrics-token-of-some-length', redirectStatus: 308, adminToken: 'an-admin-token-of-at-least-32-characters' });
    const result = await new Validator().validate(document as unknown as Parameters<Validator['validate']>[0]);
    assert.equal(result.valid, true, JSON.stringify(result.errors));
    assert.deepEqual(document.paths['/metrics']!.get!.security, [{ metricsToken: [] }]);
    assert.ok(document.paths['/{code}']!.get!.responses['308']);
    assert.equal(document.paths['/{code}']!.get!.responses['302'], undefined);
    // The admin routes, with their own scheme and never an access code's.
    assert.equal(document.components.securitySchemes.adminToken?.scheme, 'bearer');
    const admin = app.registeredRoutes.filter((route) => route.url.startsWith('/v1/admin/'));
    assert.equal(admin.length, 7);
    for (const { method, url } of admin) {
      const operation = document.paths[url]![method.toLowerCase() as 'get']!;
      assert.deepEqual(operation.security, [{ adminToken: [] }], `${method} ${url}`);
      assert.ok(operation.responses['401'] && operation.responses['200'], `${method} ${url}`);
      assert.match(operation.operationId ?? '', /^admin/);
    }
  });

  test('documents every route the server has, with every method, except the UI and the docs', async (t) => {
    const { app, document } = await documentOf(t);
    const routes = app.registeredRoutes.filter((route) => !UNDOCUMENTED(route.url));
    assert.ok(routes.length >= 20, `found ${routes.length} routes`);
    for (const { method, url } of routes) {
      const item = document.paths[toOpenApiPath(url)];
      assert.ok(item, `${url} is missing from the document`);
      assert.ok(item[method.toLowerCase()], `${method} ${url} is missing from the document`);
    }
    // And nothing that is not served.
    const served = new Set(routes.map(({ method, url }) => `${method.toLowerCase()} ${toOpenApiPath(url)}`));
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of Object.keys(item)) assert.ok(served.has(`${method} ${path}`), `${method} ${path} is documented but not served`);
    }
  });

  test('covers every endpoint of the contract', async (t) => {
    const { document } = await documentOf(t);
    for (const [path, methods] of Object.entries(CONTRACT_ROUTES)) {
      for (const method of methods) assert.ok(document.paths[path]?.[method], `${method} ${path}`);
    }
  });

  test('gives every operation a unique operationId', async (t) => {
    const { document } = await documentOf(t);
    const ids = Object.values(document.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    assert.ok(ids.every((id) => typeof id === 'string'));
    assert.equal(new Set(ids).size, ids.length);
  });

  test('describes the three ways of sending an access code, on every protected operation', async (t) => {
    const { document } = await documentOf(t);
    const schemes = document.components.securitySchemes;
    assert.equal(schemes.accessCodeQuery?.type, 'apiKey');
    assert.equal(schemes.accessCodeQuery?.in, 'query');
    assert.equal(schemes.accessCodeQuery?.name, 'auth');
    assert.equal(schemes.bearerAccessCode?.type, 'http');
    assert.equal(schemes.bearerAccessCode?.scheme, 'bearer');
    assert.equal(schemes.accessCodeHeader?.in, 'header');
    assert.equal(schemes.accessCodeHeader?.name, 'Authorization');
    for (const [path, method] of PROTECTED) {
      const operation = document.paths[path]![method]!;
      assert.deepEqual(operation.security, [{ accessCodeQuery: [] }, { bearerAccessCode: [] }, { accessCodeHeader: [] }], `${method} ${path}`);
      // The query parameter is the security scheme: not listed twice.
      assert.ok(!(operation.parameters ?? []).some((p) => p.name === 'auth'), `${method} ${path} lists auth as a plain parameter`);
      assert.ok(operation.responses['401'], `${method} ${path} documents 401`);
    }
    // The document's default is the access code; public operations say so with an empty list.
    assert.deepEqual((document as unknown as { security: unknown }).security, [{ accessCodeQuery: [] }, { bearerAccessCode: [] }, { accessCodeHeader: [] }]);
    for (const method of ['get', 'post'] as const) assert.deepEqual(document.paths['/v1/new_account']![method]!.security, []);
    assert.deepEqual(document.paths['/v1/get/{code}']!.get!.security, []);
    assert.deepEqual(document.paths['/{code}']!.get!.security, []);
    assert.deepEqual(document.paths['/healthz']!.get!.security, []);
  });

  test('names HEAD operations without the generator\'s "-head" suffix', async (t) => {
    const { document } = await documentOf(t);
    assert.equal(document.paths['/v1/new_account']!.head!.operationId, 'createAccountHead');
    assert.equal(document.paths['/v1/get/{code}']!.head!.operationId, 'resolveLinkHead');
    const ids = Object.values(document.paths).flatMap((item) => Object.values(item).map((op) => op.operationId ?? ''));
    assert.deepEqual(ids.filter((id) => !/^[a-z][A-Za-z]*$/.test(id)), []);
  });

  test('requires url in the query of GET /v1/link, and admits an empty short (empty counts as omitted)', async (t) => {
    const { document } = await documentOf(t);
    const parameters = (document.paths['/v1/link']!.get! as unknown as { parameters: { name: string; required: boolean; schema: { pattern: string } }[] }).parameters;
    assert.equal(parameters.find((p) => p.name === 'url')?.required, true);
    const short = parameters.find((p) => p.name === 'short')!;
    assert.equal(short.required, false);
    const pattern = new RegExp(short.schema.pattern);
    for (const accepted of ['', 'abcde', 'a.b_c~d-e']) assert.ok(pattern.test(accepted), JSON.stringify(accepted));
    for (const refused of ['abcd', 'abc de', 'abcdé']) assert.ok(!pattern.test(refused), JSON.stringify(refused));
  });

  test('names a relative server, so "Try it out" calls the origin the docs were opened on', async (t) => {
    const { document } = await documentOf(t);
    assert.deepEqual((document as unknown as { servers: { url: string }[] }).servers.map((server) => server.url), ['/']);
  });

  test('documents the errors of each operation as text/plain, with their statuses', async (t) => {
    const { document } = await documentOf(t);
    const expected: Array<[string, string, string[]]> = [
      ['/v1/new_account', 'get', ['429', '503']],
      ['/v1/get_account', 'get', ['400', '401', '429', '503']],
      ['/v1/link', 'get', ['400', '401', '403', '409', '429', '503']],
      ['/v1/link', 'post', ['400', '401', '403', '409', '413', '415', '429', '503']],
      ['/v1/link', 'delete', ['400', '401', '403', '404', '429', '503']],
      ['/v1/links', 'get', ['400', '401', '429', '503']],
      ['/v1/get/{code}', 'get', ['404', '429', '503']],
      ['/{code}', 'get', ['429', '503']],
      ['/v1/new_account', 'head', ['405']],
      ['/v1/link', 'head', ['405']],
      ['/readyz', 'get', ['503']],
    ];
    for (const [path, method, statuses] of expected) {
      const responses = document.paths[path]![method]!.responses;
      for (const status of statuses) {
        const content = responses[status]?.content;
        assert.ok(content?.['text/plain'], `${method} ${path} documents ${status} as text/plain`);
      }
    }
    assert.ok(document.paths['/v1/get_account']!.get!.responses['401']!.headers?.['WWW-Authenticate']);
    assert.ok(document.paths['/v1/link']!.get!.responses['429']!.headers?.['Retry-After']);
    assert.ok(document.paths['/v1/link']!.get!.responses['503']!.headers?.['Retry-After']);
    // The short-URL space answers its 404 as an HTML page.
    assert.ok(document.paths['/{code}']!.get!.responses['404']!.content?.['text/html']);
  });

  test('documents the answers: Link and Account JSON, plain-text short URL, redirect with Location', async (t) => {
    const { document } = await documentOf(t);
    assert.ok(document.paths['/v1/get/{code}']!.get!.responses['200']!.content?.['application/json']);
    assert.ok(document.paths['/v1/new_account']!.get!.responses['200']!.content?.['application/json']);
    assert.ok(document.paths['/v1/link']!.get!.responses['200']!.content?.['text/plain']);
    assert.ok(document.paths['/{code}']!.get!.responses['302']!.headers?.['Location']);
    const parameters = document.paths['/v1/link']!.get!.parameters!.map((p) => `${p.in}:${p.name}`);
    assert.deepEqual(parameters.sort(), ['query:domain', 'query:expires', 'query:forward_query', 'query:max_visits', 'query:password', 'query:rules', 'query:short', 'query:tags', 'query:title', 'query:url']);
    assert.ok(document.paths['/v1/link']!.patch!.responses['200']!.content?.['application/json']);
    assert.ok(document.paths['/{code}']!.get!.responses['410']!.content?.['text/html']);
    assert.deepEqual(document.paths['/v1/get/{code}']!.get!.parameters!.map((p) => `${p.in}:${p.name}`), ['query:domain', 'query:password', 'path:code']);
  });

  test('can be read by API tools on other origins', async (t) => {
    const { app } = await appFor(t);
    const response = await app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.headers['access-control-allow-origin'], '*');
  });
});
