/**
 * `/v1/keys` (CONTRACT §8.5): create, list and delete the account's API keys. The access code
 * only: a key calling these is refused (403, key-scopes.ts).
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { ApiKeyRecord } from '../../accounts/api-key-store.ts';
import type { ApiKeyService, CreatedApiKey } from '../../accounts/api-keys.ts';
import { invalid } from '../../errors.ts';
import { Operation } from '../operations.ts';
import { parameterNames, readParameters } from '../parameters.ts';
import { accountOf, type Authenticate } from '../route-helpers.ts';
import {
  ACCESS_CODE_SECURITY, ApiKeyIdQuery, ApiKeySchema, CreateApiKeyBody, CreateApiKeyQuery, CreatedApiKeySchema, errorResponses, textResponse,
  type ApiKey, type CreatedApiKey as CreatedApiKeyBody,
} from '../schemas.ts';
import { PLAIN_TEXT } from '../send-error.ts';

export interface KeyRoutesDeps {
  readonly apiKeys: ApiKeyService;
  readonly authenticate: Authenticate;
}

export function apiKeyBody(key: ApiKeyRecord): ApiKey {
  return { Id: key.id, Name: key.name, Scopes: [...key.scopes], DateCreated: key.dateCreated, LastUsed: key.lastUsed };
}

export function createdApiKeyBody(key: CreatedApiKey): CreatedApiKeyBody {
  return { Id: key.id, Name: key.name, Scopes: [...key.scopes], Key: key.key, DateCreated: key.dateCreated, LastUsed: key.lastUsed };
}

/** A JSON body's `scopes` given as an array, comma-joined like the query and form forms. */
function normaliseScopes(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const scopes = (body as Record<string, unknown>)['scopes'];
  if (!Array.isArray(scopes)) return body;
  if (!scopes.every((scope) => typeof scope === 'string' && !scope.includes(','))) {
    throw invalid('scopes must be a string or a JSON array of strings without commas');
  }
  return { ...body, scopes: scopes.join(',') };
}

export function registerKeyRoutes(app: FastifyInstance, { apiKeys, authenticate }: KeyRoutesDeps): void {
  const config = { operation: Operation.ManageKeys };
  app.post(
    '/v1/keys',
    {
      config,
      onRequest: authenticate,
      schema: {
        operationId: 'createApiKey',
        summary: 'Create an API key',
        description:
          'Parameters in the query string or in a JSON or URL-encoded form body. The answer\'s `Key` (`slk_…`) is shown this ' +
          'once and stored only as a digest. A key authenticates like the access code (the `auth` parameter, `Authorization: ' +
          'Bearer slk_…` or the bare key), compared exactly, and allows only what its scopes name: links:read (list links, ' +
          'domains), links:write (create, bulk create, edit, delete), stats:read (statistics), webhooks (webhooks, the live ' +
          'events). At most 20 per account. The access code only.',
        tags: ['keys'],
        security: ACCESS_CODE_SECURITY,
        querystring: CreateApiKeyQuery,
        body: CreateApiKeyBody,
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        response: { 200: CreatedApiKeySchema, ...errorResponses(Operation.ManageKeys, [400, 401, 403, 413, 415, 429, 503]) },
      },
    },
    async (request, reply) => {
      const { name, scopes } = readParameters(parameterNames(CreateApiKeyBody), request.query, normaliseScopes(request.body));
      const created = await apiKeys.create(accountOf(request), { name, scopes });
      // The key is in this answer only.
      reply.header('cache-control', 'no-store');
      return createdApiKeyBody(created);
    },
  );

  app.get(
    '/v1/keys',
    {
      config,
      onRequest: authenticate,
      schema: {
        operationId: 'listApiKeys',
        summary: 'List your API keys',
        description: 'Oldest first, without the keys themselves. The access code only.',
        tags: ['keys'],
        security: ACCESS_CODE_SECURITY,
        response: {
          200: Type.Array(ApiKeySchema, { description: 'The account\'s keys, oldest first; [] when there are none' }),
          ...errorResponses(Operation.ManageKeys, [400, 401, 403, 429, 503]),
        },
      },
    },
    async (request) => (await apiKeys.list(accountOf(request))).map(apiKeyBody),
  );

  app.delete(
    '/v1/keys',
    {
      config,
      onRequest: authenticate,
      schema: {
        operationId: 'deleteApiKey',
        summary: 'Delete one of your API keys',
        description: 'From then on the key is refused (401) on every process and instance within 1 s. The access code only.',
        tags: ['keys'],
        security: ACCESS_CODE_SECURITY,
        querystring: ApiKeyIdQuery,
        response: {
          200: textResponse('Deleted', 'Success'),
          ...errorResponses(Operation.ManageKeys, [400, 401, 403, 404, 429, 503]),
        },
      },
    },
    async (request, reply) => {
      const { id } = readParameters(parameterNames(ApiKeyIdQuery), request.query, request.body);
      await apiKeys.remove(accountOf(request), id);
      return reply.type(PLAIN_TEXT).send('Success');
    },
  );
}
