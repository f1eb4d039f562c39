import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { webAssets, type WebFile } from './assets.ts';
import { BROWSER_HEADERS, UI_CONTENT_SECURITY_POLICY } from './security-headers.ts';
import type { DomainRegistry } from '../domains/domain-registry.ts';

type AssetRequest = FastifyRequest<{ Params: { version: string; file: string } }>;

/** The page is revalidated on every visit (cheap with the ETag) so it always names current assets. */
const PAGE_CACHE = 'no-cache';
/** Versioned asset URLs never change content. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';
/** `/favicon.ico` has no version in its URL: a day is plenty. */
const FAVICON_CACHE = 'public, max-age=86400';
/** Crawlers reread robots.txt about daily anyway. */
const ROBOTS_CACHE = 'public, max-age=86400';

/**
 * What crawlers may fetch. Short URLs are for following, by people and by the crawlers that
 * index the pages they are posted on, so the root is allowed (each follow counts an access,
 * as any visit does). The API is not: `GET /v1/new_account` creates an account and
 * `/v1/get/…` counts an access. Nor are the operations endpoints.
 */
export const ROBOTS_TXT = `# Shortlink: short URLs may be followed; the API and the operations endpoints may not.
User-agent: *
Disallow: /v1/
Disallow: /metrics
Disallow: /healthz
Disallow: /readyz
Allow: /
`;

/** True when the client's cached copy (If-None-Match) is the current one. */
function isFresh(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (header === undefined) return false;
  return header.trim() === '*' || header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

function sendFile(request: FastifyRequest, reply: FastifyReply, file: WebFile, cacheControl: string): FastifyReply {
  reply
    .headers(BROWSER_HEADERS)
    .header('content-security-policy', UI_CONTENT_SECURITY_POLICY)
    .header('cache-control', cacheControl)
    .header('etag', file.etag);
  if (isFresh(request, file.etag)) return reply.code(304).send();
  return reply.type(file.contentType).send(file.body);
}

/**
 * The browser UI: the page at `/` and its assets under `/assets/<version>/` (`assets` is a
 * reserved shortcode, so no short URL can ever collide with them). The page talks to the
 * public API only; it learns BASE_URL from the page itself.
 */
export function registerWebRoutes(app: FastifyInstance, { baseUrl, domains }: { baseUrl: string; domains: DomainRegistry }): void {
  const assets = webAssets();
  const pageFile = assets.pageFor(baseUrl);
  const page = (request: FastifyRequest, reply: FastifyReply) => sendFile(request, reply, pageFile, PAGE_CACHE);
  // A domain with a RootUrl sends `/` there (CONTRACT §8.1); the UI stays at `/ui`.
  const root = (request: FastifyRequest, reply: FastifyReply) => {
    const rootUrl = domains.forHost(request.headers.host).rootUrl;
    if (rootUrl === null) return page(request, reply);
    return reply.code(302).header('location', new URL(rootUrl).href).header('cache-control', 'private, no-cache').send();
  };
  app.get('/', root);
  app.head('/', root);
  app.get('/ui', page);
  app.head('/ui', page);

  const asset = (request: AssetRequest, reply: FastifyReply) => {
    const file = request.params.version === assets.version ? assets.files.get(request.params.file) : undefined;
    // An old version (a page cached across a deploy) is a 404 rather than today's file under
    // yesterday's immutable URL.
    if (file === undefined) return reply.callNotFound();
    return sendFile(request, reply, file, ASSET_CACHE);
  };
  app.get('/assets/:version/:file', asset);
  app.head('/assets/:version/:file', asset);

  const favicon = assets.files.get('favicon.svg')!;
  const icon = (request: FastifyRequest, reply: FastifyReply) => sendFile(request, reply, favicon, FAVICON_CACHE);
  app.get('/favicon.ico', icon);
  app.head('/favicon.ico', icon);

  const robots = (_request: FastifyRequest, reply: FastifyReply) =>
    reply.header('cache-control', ROBOTS_CACHE).type('text/plain; charset=utf-8').send(ROBOTS_TXT);
  app.get('/robots.txt', robots);
  app.head('/robots.txt', robots);
}
