import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalid } from '../../errors.ts';
import type { LinkService } from '../../links/link-service.ts';
import type { LinkRecord } from '../../store/store.ts';
import { Operation } from '../operations.ts';
import { readParameters } from '../parameters.ts';
import type { RateLimitChecks } from '../rate-limits.ts';
import { accountOf, methodNotAllowed, type Authenticate } from '../route-helpers.ts';
import { AuthQuery, CreateLinkQuery, DeleteLinkQuery, LinkSchema, PlainText } from '../schemas.ts';
import { Type } from 'typebox';

const TEXT = 'text/plain; charset=utf-8';

/** The Link JSON, keys in contract order. */
export function linkBody(link: LinkRecord) {
  return { ShortCode: link.shortCode, PointsTo: link.pointsTo, CreatedBy: link.createdBy, Accesses: link.accesses };
}

export function registerLinkRoutes(
  app: FastifyInstance,
  links: LinkService,
  authenticate: Authenticate,
  limits: RateLimitChecks,
  baseUrl: string,
): void {
  const createOptions = {
    config: { operation: Operation.CreateLink },
    onRequest: authenticate,
    schema: {
      summary: 'Create a short link',
      description:
        'Parameters in the query string, or for POST in a JSON or URL-encoded form body (not both for the same ' +
        'parameter). Answers the full short URL as plain text.',
      tags: ['links'],
      querystring: CreateLinkQuery,
      response: { 200: PlainText },
    },
  };
  const create = async (request: FastifyRequest, reply: FastifyReply) => {
    const account = accountOf(request);
    if (limits.applies(request)) await limits.createLink(request, account.uid);
    const { url, short } = readParameters(['url', 'short'], request.query, request.body);
    if (url === undefined) throw invalid('the parameter "url" is required');
    const shortCode = await links.create(account, { url, short });
    reply.type(TEXT);
    return `${baseUrl}/${shortCode}`;
  };
  app.get('/v1/link', createOptions, create);
  app.post('/v1/link', createOptions, create);
  app.head('/v1/link', { config: createOptions.config }, methodNotAllowed('GET, POST, DELETE'));

  app.delete(
    '/v1/link',
    {
      config: { operation: Operation.DeleteLink },
      onRequest: authenticate,
      schema: {
        summary: 'Delete one of your links',
        description: 'Frees the link\'s slot in the account\'s cap and its shortcode.',
        tags: ['links'],
        querystring: DeleteLinkQuery,
        response: { 200: PlainText },
      },
    },
    async (request, reply) => {
      const { short } = readParameters(['short'], request.query, request.body);
      if (short === undefined) throw invalid('the parameter "short" is required');
      await links.delete(accountOf(request), short);
      reply.type(TEXT);
      return 'Success';
    },
  );

  const listOptions = {
    config: { operation: Operation.ListLinks },
    onRequest: authenticate,
    schema: {
      summary: 'List your links, oldest first',
      tags: ['links'],
      querystring: AuthQuery,
      response: { 200: Type.Array(LinkSchema) },
    },
  };
  const list = async (request: FastifyRequest) => (await links.list(accountOf(request))).map(linkBody);
  app.get('/v1/links', listOptions, list);
  app.head('/v1/links', listOptions, list);
}
