import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { invalid } from '../../errors.ts';
import type { LinkService } from '../../links/link-service.ts';
import { CountedEvent } from '../../metrics/metrics.ts';
import { Operation } from '../operations.ts';
import { LINK_CSV_HEADER, linkCsvRecord } from '../links-csv.ts';
import { normaliseDetailsBody, readParameters } from '../parameters.ts';
import { linkDetailsBody } from '../presenters.ts';
import type { RateLimitChecks } from '../rate-limit-checks.ts';
import { accountOf, methodNotAllowed, type Authenticate } from '../route-helpers.ts';
import {
  ACCESS_CODE_SECURITY,
  CreateLinkBody,
  CreateLinkPostQuery,
  CreateLinkQuery,
  DeleteLinkQuery,
  errorResponses,
  LinkDetailsSchema,
  ListLinksQuery,
  PUBLIC_SECURITY,
  textResponse,
  UpdateLinkBody,
  UpdateLinkQuery,
} from '../schemas.ts';
import { PLAIN_TEXT } from '../send-error.ts';
import { wantsCsv } from './stats.ts';

const CSV = 'text/csv; charset=utf-8';

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
    const { url, short, title, tags, expires, max_visits: maxVisits } = readParameters(
      ['url', 'short', 'title', 'tags', 'expires', 'max_visits'],
      request.query,
      normaliseDetailsBody(request.body, isJsonBody(request)),
    );
    if (url === undefined) throw invalid('the parameter "url" is required');
    const shortCode = await links.create(account, { url, short, title, tags, expires, maxVisits });
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
        querystring: CreateLinkPostQuery,
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
        security: PUBLIC_SECURITY,
        response: errorResponses(Operation.CreateLink, [405]),
      },
    },
    methodNotAllowed('GET, POST, PATCH, DELETE'),
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

  app.patch(
    '/v1/link',
    {
      config: { operation: Operation.UpdateLink },
      onRequest: authenticate,
      schema: {
        operationId: 'updateLink',
        summary: 'Edit one of your links',
        description:
          'Changes the target, title, tags, expiry or visit limit of a link; the fields not given stay, an empty value ' +
          'clears one (an empty url is refused). The shortcode and Accesses never change. Parameters in the query string ' +
          'or in a JSON or URL-encoded form body, each in one place only.',
        tags: ['links'],
        security: ACCESS_CODE_SECURITY,
        querystring: UpdateLinkQuery,
        body: UpdateLinkBody,
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        response: {
          200: LinkDetailsSchema,
          ...errorResponses(Operation.UpdateLink, [400, 401, 403, 404, 413, 415, 429, 503]),
        },
      },
    },
    async (request) => {
      const { short, url, title, tags, expires, max_visits: maxVisits } = readParameters(
        ['short', 'url', 'title', 'tags', 'expires', 'max_visits'],
        request.query,
        normaliseDetailsBody(request.body, isJsonBody(request)),
        { keepEmpty: true },
      );
      if (short === undefined || short === '') throw invalid('the parameter "short" is required');
      return linkDetailsBody(await links.update(accountOf(request), short, { url, title, tags, expires, maxVisits }));
    },
  );

  const listSchema = (method: string) => ({
    operationId: `listLinks${method}`,
    summary: 'List your links, oldest first',
    description:
      'Without parameters, every link of the account. `q` and `tag` filter; with `limit`, when more links match, the ' +
      'answer carries `Link: <…/v1/links?…&cursor=…>; rel="next"` (RFC 8288) to the next page. The body is always a plain array. ' +
      '`format=csv` (or `Accept: text/csv`) answers the same links as CSV: a header line ' +
      '`ShortCode,PointsTo,CreatedBy,Accesses,DateCreated,Title,Tags,ExpiresAt,MaxVisits`, then one RFC 4180 record per link, ' +
      'Tags comma-separated in one field, absent values empty: the columns of `shortlink export`, which `shortlink import` reads back.',
    tags: ['links'],
    security: ACCESS_CODE_SECURITY,
    querystring: ListLinksQuery,
    response: {
      200: {
        description: 'The account\'s links, oldest first; [] when there are none (JSON), or the same links as CSV',
        headers: {
          Link: { type: 'string', description: 'When more links match: <BASE_URL/v1/links?…&cursor=…>; rel="next"' },
        },
        content: {
          'application/json': { schema: Type.Array(LinkDetailsSchema) },
          'text/csv': {
            schema: {
              type: 'string',
              examples: [`${LINK_CSV_HEADER}launch-2026,https://example.com/,1,0,2026-11-01T09:30:00.000Z,Launch,"a,b",,\n`],
            },
          },
        },
      },
      ...errorResponses(Operation.ListLinks, [400, 401, 429, 503]),
    },
  });
  const list = async (request: FastifyRequest, reply: FastifyReply) => {
    const { q, tag, limit, order, cursor, format } = readParameters(['q', 'tag', 'limit', 'order', 'cursor', 'format'], request.query, undefined);
    if (format !== undefined && format !== 'csv' && format !== 'json') throw invalid('the parameter "format" must be csv or json');
    const csv = format === 'csv' || (format === undefined && wantsCsv(request.headers.accept));
    const page = await links.listDetails(accountOf(request), { q, tag, limit, order, cursor });
    if (page.nextCursor !== undefined) {
      // The access code never goes into the link: the client sends it again its own way.
      const next = new URLSearchParams();
      if (q !== undefined) next.set('q', q);
      if (tag !== undefined) next.set('tag', tag);
      if (limit !== undefined) next.set('limit', limit);
      if (order !== undefined) next.set('order', order);
      if (format !== undefined) next.set('format', format);
      next.set('cursor', page.nextCursor);
      reply.header('link', `<${baseUrl}/v1/links?${next.toString()}>; rel="next"`);
    }
    if (csv) {
      reply.type(CSV);
      let text = LINK_CSV_HEADER;
      for (const link of page.links) text += linkCsvRecord(link);
      return text;
    }
    return page.links.map(linkDetailsBody);
  };
  const listConfig = { operation: Operation.ListLinks };
  app.get('/v1/links', { config: listConfig, onRequest: authenticate, schema: listSchema('') }, list);
  app.head('/v1/links', { config: listConfig, onRequest: authenticate, schema: listSchema('Head') }, list);
}

/** A JSON body (where `tags` may be an array and `max_visits` a number). */
function isJsonBody(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  return typeof type === 'string' && /^application\/(?:[\w.+-]+\+)?json\b/i.test(type);
}
