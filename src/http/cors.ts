/**
 * Cross-origin calls from browsers (CORS), for pages on other origins: a single-page app, a
 * browser extension, a dashboard. Off unless `CORS_ORIGINS` says otherwise; then
 *
 * - a listed origin may call every `/v1/…` endpoint, with its preflights answered;
 * - `*` lets any origin read the public read-only endpoints (resolve, the OpenAPI document);
 * - credentials are never cookies: `Access-Control-Allow-Credentials` is never sent, so an access
 *   code reaches the service only in the `Authorization` header (or `auth=`) the page sets itself,
 *   and a page cannot act with a code it was not given.
 *
 * Nothing is registered when CORS_ORIGINS is unset: the hot path pays nothing for it then.
 * docs/adr/0016-packaging-and-integrations.md has the reasoning; docs/api.md, "Browsers on other origins".
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CorsConfig } from '../config.ts';

/** What anyone may read when `*` is configured: GET and HEAD of a resolve or of the OpenAPI document. */
function isPublicRead(method: string, path: string): boolean {
  return (method === 'GET' || method === 'HEAD') && (path === '/openapi.json' || /^\/v1\/get\/[^/]+$/.test(path));
}

const ALL_METHODS = 'GET, HEAD, POST, PATCH, DELETE';
const READ_ONLY_METHODS = 'GET, HEAD';
/** What a page may send: its access code, a JSON or form body, its own request id. */
const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Request-Id';
/** What a page may read besides the CORS-safelisted headers. */
const EXPOSED_HEADERS = 'Link, Location, Retry-After, WWW-Authenticate, X-Request-Id';
/** Seconds a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE = '600';

type Access = 'full' | 'public' | 'none';

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

function isApiPath(path: string): boolean {
  return path.startsWith('/v1/') || path === '/openapi.json';
}

/** Registers the CORS hook and the preflight routes, when any origin is configured. */
export function registerCors(app: FastifyInstance, cors: CorsConfig): void {
  if (cors.origins.length === 0 && !cors.anyForPublic) return;
  const listed: ReadonlySet<string> = new Set(cors.origins);

  const accessOf = (origin: string, method: string, path: string): Access => {
    if (listed.has(origin)) return 'full';
    if (cors.anyForPublic && isPublicRead(method, path)) return 'public';
    return 'none';
  };

  // Callback style: these run on every request once CORS is on.
  app.addHook('onRequest', (request, reply, done) => {
    const origin = request.headers.origin;
    if (origin !== undefined && request.method !== 'OPTIONS') {
      const path = pathOf(request.url);
      const access = isApiPath(path) ? accessOf(origin, request.method, path) : 'none';
      if (access !== 'none') {
        reply.header('access-control-allow-origin', access === 'full' ? origin : '*');
        reply.header('access-control-expose-headers', EXPOSED_HEADERS);
      }
    }
    done();
  });
  // The answer of an API path depends on Origin: shared caches must key on it. Appended last,
  // after whatever Vary a route set itself.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.method !== 'OPTIONS' && isApiPath(pathOf(request.url))) {
      const vary = reply.getHeader('vary');
      reply.header('vary', vary === undefined ? 'Origin' : `${String(vary)}, Origin`);
    }
    done(null, payload);
  });

  const preflight = (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
    const origin = request.headers.origin;
    const method = request.headers['access-control-request-method'];
    if (origin !== undefined && typeof method === 'string') {
      const access = accessOf(origin, method.toUpperCase(), pathOf(request.url));
      if (access !== 'none') {
        reply.header('access-control-allow-origin', access === 'full' ? origin : '*');
        reply.header('access-control-allow-methods', access === 'full' ? ALL_METHODS : READ_ONLY_METHODS);
        reply.header('access-control-allow-headers', access === 'full' ? ALLOWED_HEADERS : 'X-Request-Id');
        reply.header('access-control-max-age', PREFLIGHT_MAX_AGE);
      }
    }
    // Refused preflights get no CORS headers: the browser then withholds the real request.
    reply.header('allow', `${ALL_METHODS}, OPTIONS`);
    reply.code(204).send();
  };
  const options = { schema: { hide: true } };
  app.options('/v1/*', options, preflight);
  app.options('/openapi.json', options, preflight);
}
