/**
 * Domains (CONTRACT §8.1): the administrator's `PUT /v1/admin/domain`, `GET /v1/admin/domains`
 * and `DELETE /v1/admin/domain` (registered by admin.ts, behind the admin token, one audit
 * line each), and the owner's `GET /v1/domains`. Every one names its errors
 * `Unable to manage domains: …`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { DomainRegistry } from '../../domains/domain-registry.ts';
import type { DomainService } from '../../domains/domain-service.ts';
import { Operation } from '../operations.ts';
import { parameterNames, readParameters } from '../parameters.ts';
import { adminDomainBody, domainBody } from '../presenters.ts';
import type { Authenticate } from '../route-helpers.ts';
import {
  ACCESS_CODE_SECURITY, ADMIN_SECURITY, AdminDomainDeleteQuery, AdminDomainPut, AdminDomainSchema, AuthQuery, DomainSchema,
  errorResponses, textResponse,
} from '../schemas.ts';
import { PLAIN_TEXT } from '../send-error.ts';

/** What admin.ts gives every admin route: its operation, the token check and the audit line. */
export interface AdminRouteOptions {
  readonly config: { readonly operation: string; readonly auditAction: string };
  onRequest(request: FastifyRequest): Promise<void>;
  onResponse(request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

export interface AdminDomainRoutesDeps {
  readonly domains: DomainService;
  /** The admin route options for an audited action under this operation. */
  readonly route: (action: string, operation: string) => AdminRouteOptions;
}

export function registerAdminDomainRoutes(app: FastifyInstance, { domains, route }: AdminDomainRoutesDeps): void {
  app.put('/v1/admin/domain', {
    ...route('put domain', Operation.ManageDomains),
    schema: {
      operationId: 'adminPutDomain',
      summary: 'Register a domain, or set its fallbacks (administration)',
      description:
        'Parameters in the query, a JSON body or a form body. Registers the domain of `origin`, or replaces its fallbacks: ' +
        'a PUT sets the domain as given, so an omitted or empty URL is none. The default domain (BASE_URL\'s host) needs no ' +
        'registration: a PUT of its host sets its three fallbacks, and its origin stays BASE_URL\'s. The fallbacks are ' +
        'answered with 302 to browsers (the JSON API answers as before): `not_found_url` for an unknown shortcode, ' +
        '`root_url` for `/` (on the default domain the web UI is then at `/ui`), `expired_url` for an expired, used-up or ' +
        'disabled link. Every instance serves the change within a second.',
      tags: ['administration'],
      security: ADMIN_SECURITY,
      querystring: AdminDomainPut,
      response: {
        200: { description: 'The domain as it is now', content: { 'application/json': { schema: AdminDomainSchema } } },
        ...errorResponses(Operation.ManageDomains, [400, 401, 413, 415, 429, 503]),
      },
    },
  }, async (request) => {
    const { origin, not_found_url: notFoundUrl, root_url: rootUrl, expired_url: expiredUrl } =
      readParameters(parameterNames(AdminDomainPut), request.query, request.body);
    return adminDomainBody(await domains.put({ origin, notFoundUrl, rootUrl, expiredUrl }));
  });

  app.get('/v1/admin/domains', {
    ...route('list domains', Operation.ManageDomains),
    schema: {
      operationId: 'adminListDomains',
      summary: 'List domains with their fallbacks and links (administration)',
      description: 'The default domain (BASE_URL\'s, `DateCreated` null) first, then every registered domain by host.',
      tags: ['administration'],
      security: ADMIN_SECURITY,
      response: {
        200: { description: 'Every domain', content: { 'application/json': { schema: { type: 'array', items: AdminDomainSchema } } } },
        ...errorResponses(Operation.ManageDomains, [400, 401, 429, 503]),
      },
    },
  }, async (request) => {
    readParameters([], request.query, undefined);
    return (await domains.list()).map(adminDomainBody);
  });

  app.delete('/v1/admin/domain', {
    ...route('remove domain', Operation.ManageDomains),
    schema: {
      operationId: 'adminDeleteDomain',
      summary: 'Remove a domain (administration)',
      description:
        'Removes a registered domain that holds no links (409 while it does: delete or take them down first). The default ' +
        'domain cannot be removed (400). Its host then resolves in the default domain, as any unknown host does.',
      tags: ['administration'],
      security: ADMIN_SECURITY,
      querystring: AdminDomainDeleteQuery,
      response: {
        200: textResponse('The domain is gone', 'Success'),
        ...errorResponses(Operation.ManageDomains, [400, 401, 404, 409, 429, 503]),
      },
    },
  }, async (request, reply) => {
    const { host } = readParameters(parameterNames(AdminDomainDeleteQuery), request.query, undefined);
    await domains.delete(host);
    return reply.type(PLAIN_TEXT).send('Success');
  });
}

export interface DomainRoutesDeps {
  readonly registry: DomainRegistry;
  readonly authenticate: Authenticate;
}

export function registerDomainRoutes(app: FastifyInstance, { registry, authenticate }: DomainRoutesDeps): void {
  app.get('/v1/domains', {
    config: { operation: Operation.ManageDomains },
    onRequest: authenticate,
    schema: {
      operationId: 'listDomains',
      summary: 'List the domains your links may use',
      description:
        'The default domain (BASE_URL\'s) first, then the registered ones by host: pass a `Host` as `domain` when creating ' +
        'a link to put it there. Every domain, in this version. An API key needs links:read.',
      tags: ['links'],
      security: ACCESS_CODE_SECURITY,
      querystring: AuthQuery,
      response: {
        200: Type.Array(DomainSchema, { description: 'The domains, the default first' }),
        ...errorResponses(Operation.ManageDomains, [400, 401, 403, 429, 503]),
      },
    },
  }, async (request) => {
    readParameters([], request.query, undefined);
    return registry.all().map(domainBody);
  });
}
