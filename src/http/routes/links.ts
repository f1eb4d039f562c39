import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { invalid } from '../../errors.ts';
import type { LinkService } from '../../links/link-service.ts';
import { CountedEvent } from '../../metrics/metrics.ts';
import { Operation } from '../operations.ts';
import { readParameters } from '../parameters.ts';
import { linkBody } from '../presenters.ts';
import type { RateLimitChecks } from '../rate-limit-checks.ts';
import { accountOf, methodNotAllowed, type Authenticate } from '../route-helpers.ts';
import {
  ACCESS_CODE_SECURITY,
  AuthQuery,
  CreateLinkBody,
  CreateLinkQuery,
  DeleteLinkQuery,
  errorResponses,
  LinkSchema,
  textResponse,
} from '../schemas.ts';
import { PLAIN_TEXT } from '../send-error.ts';

export interface LinkRoutesDeps {
  readonly links: LinkService;
  readonly authenticate: Authenticate;
  readonly rateLimits: RateLimitChecks;
  /** Short URLs are `${baseUrl}/${shortCode}`. */
  readonly baseUrl: string;
}

export function registerLinkRoutes(app: FastifyInstance, { links, authenticate, rateLimits, baseUrl }: LinkRoutesDeps): void {
  const createConfig = { operation: Operation.CreateLink, countedEvent: CountedEvent.LinkCreated };
  const createSchema = {
    operationId: 'createLink',
    summary: 'Create a short link',
    description: 'Parameters in the query string. Answers the full short URL as plain text, without a newline.',
    tags: ['links'],
    security: ACCESS_CODE_SECURITY,
    querystring: CreateLinkQuery,
    response: {
      200: textResponse('The short URL: BASE_URL/ShortCode', `${baseUrl}/x7Kq2Z`),
      ...errorResponses(Operation.CreateLink, [400, 401, 403, 409, 429, 503]),
    },
  };
  const create = async (request: FastifyRequest, reply: FastifyReply) => {
    const account = accountOf(request);
    if (rateLimits.applies(request)) await rateLimits.createLink(request, account.uid);
    const { url, short } = readParameters(['url', 'short'], request.query, request.body);
    if (url === undefined) throw invalid('the parameter "url" is required');
    const shortCode = await links.create(account, { url, short });
    reply.type(PLAIN_TEXT);
    return `${baseUrl}/${shortCode}`;
  };
  app.get('/v1/link', { config: createConfig, onRequest: authenticate, schema: createSchema }, create);
  app.post(
    '/v1/link',
    {
      config: createConfig,
      onRequest: authenticate,
      schema: {
        ...createSchema,
        operationId: 'createLinkPost',
        description:
          'Parameters in the query string or in a JSON or URL-encoded form body; a parameter given in both is refused. ' +
          'Answers the full short URL as plain text, without a newline.',
        body: CreateLinkBody,
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        response: { ...createSchema.response, ...errorResponses(Operation.CreateLink, [400, 401, 403, 409, 413, 415, 429, 503]) },
      },
    },
    create,
  );
  app.head(
    '/v1/link',
    {
      config: { operation: Operation.CreateLink },
      schema: {
        operationId: 'linkHead',
        summary: 'Not allowed: HEAD never creates anything',
        tags: ['links'],
        response: errorResponses(Operation.CreateLink, [405]),
      },
    },
    methodNotAllowed('GET, POST, DELETE'),
  );

  app.delete(
    '/v1/link',
    {
      config: { operation: Operation.DeleteLink, countedEvent: CountedEvent.LinkDeleted },
      onRequest: authenticate,
      schema: {
        operationId: 'deleteLink',
        summary: 'Delete one of your links',
        description: 'Frees the link\'s slot in the account\'s cap and its shortcode.',
        tags: ['links'],
        security: ACCESS_CODE_SECURITY,
        querystring: DeleteLinkQuery,
        response: {
          200: textResponse('Deleted', 'Success'),
          ...errorResponses(Operation.DeleteLink, [400, 401, 403, 404, 429, 503]),
        },
      },
    },
    async (request, reply) => {
      const { short } = readParameters(['short'], request.query, request.body);
      if (short === undefined) throw invalid('the parameter "short" is required');
      await links.delete(accountOf(request), short);
      reply.type(PLAIN_TEXT);
      return 'Success';
    },
  );

  const listSchema = (method: string) => ({
    operationId: `listLinks${method}`,
    summary: 'List your links, oldest first',
    tags: ['links'],
    security: ACCESS_CODE_SECURITY,
    querystring: AuthQuery,
    response: {
      200: Type.Array(LinkSchema, { description: 'The account\'s links, oldest first; [] when there are none' }),
      ...errorResponses(Operation.ListLinks, [400, 401, 429, 503]),
    },
  });
  const list = async (request: FastifyRequest) => (await links.list(accountOf(request))).map(linkBody);
  const listConfig = { operation: Operation.ListLinks };
  app.get('/v1/links', { config: listConfig, onRequest: authenticate, schema: listSchema('') }, list);
  app.head('/v1/links', { config: listConfig, onRequest: authenticate, schema: listSchema('Head') }, list);
}
