/**
 * `/v1/admin/…` (CONTRACT §7.3), registered only when ADMIN_TOKEN is set (unset, these paths
 * are unknown routes: 404). Each request must carry the token as `Authorization: Bearer …`;
 * an access code never opens them. Every request writes one audit line (action, target,
 * outcome) besides the request log, never the token.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AdminService, Page } from '../../admin/admin-service.ts';
import type { DomainService } from '../../domains/domain-service.ts';
import { DomainError, ErrorCode } from '../../errors.ts';
import { Operation } from '../operations.ts';
import { parameterNames, readParameters } from '../parameters.ts';
import { adminAccountBody, linkDetailsBody } from '../presenters.ts';
import type { RateLimitChecks } from '../rate-limit-checks.ts';
import {
  ADMIN_SECURITY, AdminAccountSchema, AdminAccountsQuery, AdminAccountUpdate, AdminLinksQuery, AdminTakeDownQuery,
  errorResponses, LinkDetailsSchema, textResponse,
} from '../schemas.ts';
import { PLAIN_TEXT } from '../send-error.ts';
import { registerAdminDomainRoutes } from './domains.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An admin route's action, as its audit lines name it. */
    auditAction?: string;
  }
}

export interface AdminRoutesDeps {
  readonly admin: AdminService;
  /** ADMIN_TOKEN. */
  readonly token: string;
  readonly rateLimits: RateLimitChecks;
  /** BASE_URL, for the `Link: <…>; rel="next"` of paged lists. */
  readonly baseUrl: string;
  /** Domain administration (CONTRACT §8.1), behind the same token. */
  readonly domains: DomainService;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** The texts an audit line may carry about a request's target: short, and never the token. */
const TARGET_PARAMETERS = ['uid', 'max_links', 'disabled', 'short', 'host', 'origin', 'q', 'limit', 'cursor'] as const;

function auditTarget(request: FastifyRequest): string {
  const sources = [request.query, request.body].filter((source): source is Record<string, unknown> => typeof source === 'object' && source !== null);
  const parts: string[] = [];
  for (const name of TARGET_PARAMETERS) {
    for (const source of sources) {
      const value = source[name];
      if (typeof value === 'string' && value !== '') parts.push(`${name}=${JSON.stringify(value.slice(0, 200))}`);
    }
  }
  return parts.join(' ');
}

function outcomeOf(status: number): string {
  if (status < 400) return 'done';
  return status >= 500 ? `failed (${status})` : `refused (${status})`;
}

/** The absolute URL of the next page: the request's own parameters with the new cursor. */
function nextLink(baseUrl: string, path: string, parameters: Record<string, string | undefined>, cursor: string): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined && name !== 'cursor') query.set(name, value);
  query.set('cursor', cursor);
  return `<${baseUrl}${path}?${query.toString()}>; rel="next"`;
}

const PAGED_HEADERS = {
  Link: { type: 'string', description: 'RFC 8288 `<…?cursor=…>; rel="next"` when more remain' },
};

export function registerAdminRoutes(app: FastifyInstance, { admin, token, rateLimits, baseUrl, domains }: AdminRoutesDeps): void {
  const expected = digest(token);

  /** The onRequest hook of every admin route: the token, compared in constant time. */
  async function authenticateAdmin(request: FastifyRequest): Promise<void> {
    const limited = rateLimits.applies(request);
    if (limited) await rateLimits.beforeAuthentication(request);
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^bearer +(\S+)\s*$/i.exec(header) : null;
    // Digests have equal lengths, so the comparison takes the same time whatever was sent.
    if (match !== null && timingSafeEqual(digest(match[1]!), expected)) return;
    if (limited) await rateLimits.failedAuthentication(request);
    throw new DomainError(
      ErrorCode.Unauthenticated,
      header === undefined ? 'the admin token is required (Authorization: Bearer …)' : 'the admin token is not valid',
    );
  }

  async function audit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    request.log.info(
      { audit: { action: request.routeOptions.config.auditAction, target: auditTarget(request), outcome: outcomeOf(reply.statusCode) } },
      'admin action',
    );
  }

  const route = (action: string, operation: string = Operation.Administer) => ({
    config: { operation, auditAction: action },
    onRequest: authenticateAdmin,
    onResponse: audit,
  });

  function sendPage<T, B>(reply: FastifyReply, path: string, parameters: Record<string, string | undefined>, page: Page<T>, body: (item: T) => B): B[] {
    if (page.next !== undefined) reply.header('link', nextLink(baseUrl, path, parameters, page.next));
    return page.items.map(body);
  }

  app.get('/v1/admin/accounts', {
    ...route('list accounts'),
    schema: {
      operationId: 'adminListAccounts',
      summary: 'List accounts (administration)',
      description: 'Every account by uid, a page at a time, with the links it holds and whether it is disabled.',
      tags: ['administration'],
      security: ADMIN_SECURITY,
      querystring: AdminAccountsQuery,
      response: {
        200: { description: 'One page of accounts', headers: PAGED_HEADERS, content: { 'application/json': { schema: { type: 'array', items: AdminAccountSchema } } } },
        ...errorResponses(Operation.Administer, [400, 401, 429, 503]),
      },
    },
  }, async (request, reply) => {
    const parameters = readParameters(parameterNames(AdminAccountsQuery), request.query, undefined);
    return sendPage(reply, '/v1/admin/accounts', parameters, await admin.listAccounts(parameters), adminAccountBody);
  });

  app.patch('/v1/admin/account', {
    ...route('update account'),
    schema: {
      operationId: 'adminUpdateAccount',
      summary: 'Change an account\'s cap or disable it (administration)',
      description:
        'Parameters in the query, a JSON body or a form body. `max_links` may not go below the links the account ' +
        'holds (400). A disabled account\'s calls answer 403 and its links 410, on every instance within 1 s.',
      tags: ['administration'],
      security: ADMIN_SECURITY,
      querystring: AdminAccountUpdate,
      response: {
        200: { description: 'The account as it is now', content: { 'application/json': { schema: AdminAccountSchema } } },
        ...errorResponses(Operation.Administer, [400, 401, 404, 413, 415, 429, 503]),
      },
    },
  }, async (request) => {
    const { uid, max_links: maxLinks, disabled } = readParameters(parameterNames(AdminAccountUpdate), request.query, request.body);
    return adminAccountBody(await admin.updateAccount({ uid, maxLinks, disabled }));
  });

  app.get('/v1/admin/links', {
    ...route('search links'),
    schema: {
      operationId: 'adminSearchLinks',
      summary: 'Search links across accounts (administration)',
      description:
        '`host` matches targets on that host or any of its subdomains; `q` is case-insensitive text in the shortcode, ' +
        'target or title. Both together must both match; neither lists every link. Oldest first, a page at a time.',
      tags: ['administration'],
      security: ADMIN_SECURITY,
      querystring: AdminLinksQuery,
      response: {
        200: { description: 'One page of links', headers: PAGED_HEADERS, content: { 'application/json': { schema: { type: 'array', items: LinkDetailsSchema } } } },
        ...errorResponses(Operation.Administer, [400, 401, 429, 503]),
      },
    },
  }, async (request, reply) => {
    const parameters = readParameters(parameterNames(AdminLinksQuery), request.query, undefined);
    return sendPage(reply, '/v1/admin/links', parameters, await admin.searchLinks(parameters), linkDetailsBody);
  });

  app.delete('/v1/admin/link', {
    ...route('take down link'),
    schema: {
      operationId: 'adminTakeDownLink',
      summary: 'Take a link down (administration)',
      description: 'Deletes the link whoever holds it; its slot and its shortcode (on its domain) are free again.',
      tags: ['administration'],
      security: ADMIN_SECURITY,
      querystring: AdminTakeDownQuery,
      response: {
        200: textResponse('The link is gone', 'Success'),
        ...errorResponses(Operation.Administer, [400, 401, 404, 429, 503]),
      },
    },
  }, async (request, reply) => {
    const { short, domain } = readParameters(parameterNames(AdminTakeDownQuery), request.query, undefined);
    await admin.takeDown(short, domain);
    return reply.type(PLAIN_TEXT).send('Success');
  });

  registerAdminDomainRoutes(app, { domains, route });
}
