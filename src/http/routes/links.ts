import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { invalid } from '../../errors.ts';
import type { CreateLinkInput, LinkService } from '../../links/link-service.ts';
import type { DomainRegistry } from '../../domains/domain-registry.ts';
import { CountedEvent } from '../../metrics/metrics.ts';
import { Operation } from '../operations.ts';
import { LINK_CSV_HEADER, linkCsvRecord } from '../links-csv.ts';
import { normaliseDetailsBody, parameterNames, readParameters } from '../parameters.ts';
import { linkDetailsBody } from '../presenters.ts';
import type { RateLimitChecks } from '../rate-limit-checks.ts';
import { accountOf, methodNotAllowed, type Authenticate } from '../route-helpers.ts';
import {
  ACCESS_CODE_SECURITY,
  BulkCreateBody,
  BulkCreatedSchema,
  BulkRefusedSchema,
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
import type { BulkCreateResult } from '../schemas.ts';
import { describeError } from '../error-table.ts';
import { REQUEST_BOUNDS } from '../request-bounds.ts';
import { wantsCsv } from './stats.ts';

const CSV = 'text/csv; charset=utf-8';

export interface LinkRoutesDeps {
  readonly links: LinkService;
  readonly authenticate: Authenticate;
  readonly rateLimits: RateLimitChecks;
  /** Short URLs are `${baseUrl}/${shortCode}` on the default domain. */
  readonly baseUrl: string;
  /** The other domains' short URLs. */
  readonly domains: DomainRegistry;
}

/** Every parameter a create takes, as a single create and each bulk item read them. */
const CREATE_PARAMETERS = parameterNames(CreateLinkBody);
/** What an edit reads: the link (short, domain) and the fields it changes. */
const UPDATE_PARAMETERS = parameterNames(UpdateLinkBody);
const DELETE_PARAMETERS = parameterNames(DeleteLinkQuery);
const LIST_PARAMETERS = parameterNames(ListLinksQuery);

/** The create parameters as the link service takes them. */
function createInput(parameters: Record<(typeof CREATE_PARAMETERS)[number], string | undefined>): CreateLinkInput {
  const { url, short, title, tags, expires, max_visits: maxVisits, domain, forward_query: forwardQuery, rules, password } = parameters;
  if (url === undefined) throw invalid('the parameter "url" is required');
  return { url, short, title, tags, expires, maxVisits, domain, forwardQuery, rules, password };
}

export function registerLinkRoutes(app: FastifyInstance, deps: LinkRoutesDeps): void {
  const { links, authenticate, rateLimits, baseUrl, domains } = deps;
  const createConfig = { operation: Operation.CreateLink, countedEvent: CountedEvent.LinkCreated };
  const createSchema = {
    operationId: 'createLink',
    summary: 'Create a short link',
    description: 'Parameters in the query string. Answers the full short URL as plain text, without a newline.',
    tags: ['links'],
    security: ACCESS_CODE_SECURITY,
    querystring: CreateLinkQuery,
    response: {
      200: textResponse('The short URL: BASE_URL/ShortCode, or the domain\'s origin and the shortcode', `${baseUrl}/x7Kq2Z`),
      ...errorResponses(Operation.CreateLink, [400, 401, 403, 409, 429, 503]),
    },
  };
  const create = async (request: FastifyRequest, reply: FastifyReply) => {
    const account = accountOf(request);
    if (rateLimits.applies(request)) await rateLimits.createLink(request, account.uid);
    const input = createInput(readParameters(CREATE_PARAMETERS, request.query, normaliseDetailsBody(request.body, isJsonBody(request))));
    const key = await links.create(account, input);
    reply.type(PLAIN_TEXT);
    return domains.shortUrl(key);
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

  registerBulkCreate(app, deps);

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
      const { short, domain } = readParameters(DELETE_PARAMETERS, request.query, request.body);
      if (short === undefined) throw invalid('the parameter "short" is required');
      await links.delete(accountOf(request), short, domain);
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
      const {
        short, url, title, tags, expires, max_visits: maxVisits, domain, forward_query: forwardQuery, rules, password,
      } = readParameters(
        UPDATE_PARAMETERS,
        request.query,
        normaliseDetailsBody(request.body, isJsonBody(request)),
        { keepEmpty: true },
      );
      if (short === undefined || short === '') throw invalid('the parameter "short" is required');
      const input = { url, title, tags, expires, maxVisits, forwardQuery, rules, password };
      return linkDetailsBody(await links.update(accountOf(request), short, input, domain === '' ? undefined : domain));
    },
  );

  const listSchema = (method: string) => ({
    operationId: `listLinks${method}`,
    summary: 'List your links, oldest first',
    description:
      'Without parameters, every link of the account. `domain`, `q` and `tag` filter; with `limit`, when more links match, the ' +
      'answer carries `Link: <…/v1/links?…&cursor=…>; rel="next"` (RFC 8288) to the next page. The body is always a plain array. ' +
      '`format=csv` (or `Accept: text/csv`) answers the same links as CSV: a header line ' +
      '`ShortCode,PointsTo,CreatedBy,Accesses,DateCreated,Title,Tags,ExpiresAt,MaxVisits,Domain,ForwardQuery,Protected,Rules`, ' +
      'then one RFC 4180 record per link: Tags comma-separated in one field, ForwardQuery and Protected `true` or `false`, Rules ' +
      'the JSON of LinkDetails\' Rules, absent values (and the default domain\'s Domain) empty; never a password. The columns of ' +
      '`shortlink export`, which `shortlink import` reads back.',
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
              examples: [
                `${LINK_CSV_HEADER}launch-2026,https://example.com/,1,0,2026-11-01T09:30:00.000Z,Launch,"a,b",,,,false,false,\n` +
                  'app,https://example.com/app,1,4,2026-11-02T10:00:00.000Z,,,,,go.example.com,true,false,' +
                  '"[{""If"":{""os"":[""ios""]},""To"":""https://apps.example.com/ios""}]"\n',
              ],
            },
          },
        },
      },
      ...errorResponses(Operation.ListLinks, [400, 401, 429, 503]),
    },
  });
  const list = async (request: FastifyRequest, reply: FastifyReply) => {
    const { q, tag, limit, order, cursor, format, domain } = readParameters(LIST_PARAMETERS, request.query, undefined);
    if (format !== undefined && format !== 'csv' && format !== 'json') throw invalid('the parameter "format" must be csv or json');
    const csv = format === 'csv' || (format === undefined && wantsCsv(request.headers.accept));
    const page = await links.listDetails(accountOf(request), { q, tag, limit, order, cursor, domain });
    if (page.nextCursor !== undefined) {
      // The access code never goes into the link: the client sends it again its own way.
      const next = new URLSearchParams();
      if (domain !== undefined) next.set('domain', domain);
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

/** One item's answer in a bulk create: the short URL, or the status and text a single create would have answered. */
type BulkItemResult = BulkCreateResult;

/**
 * `POST /v1/links` (CONTRACT §8.4): up to 100 creates in one request, each with the single
 * create's rules and its own answer. Each item is counted against the create limit first, in
 * order; the allowed ones are then created together (one write batch, see
 * LinkService.createMany).
 */
function registerBulkCreate(app: FastifyInstance, { links, authenticate, rateLimits, domains }: LinkRoutesDeps): void {
  const itemError = (request: FastifyRequest, error: unknown): BulkItemResult => {
    const { status, reason } = describeError(error);
    if (status >= 500) request.log.error({ err: error }, 'bulk create item failed');
    return { Status: status, Error: `Unable to ${Operation.CreateLink}: ${reason}` };
  };
  app.post(
    '/v1/links',
    {
      config: { operation: Operation.CreateLinks },
      onRequest: authenticate,
      bodyLimit: REQUEST_BOUNDS.bulkBodyBytes,
      schema: {
        operationId: 'createLinks',
        summary: 'Create up to 100 links at once',
        description:
          'A JSON array of 1 to 100 objects, each with the parameters of a single create. Each item is created on its own, ' +
          'with the same rules (the link cap counts each, in order; each counts against the create rate limit), and answered ' +
          'in the same place: `{ShortUrl}`, or `{Status, Error}` with the status and text a single create would have ' +
          'answered. One item\'s failure never fails the others. Each created link writes its link.created event.',
        tags: ['links'],
        security: ACCESS_CODE_SECURITY,
        body: BulkCreateBody,
        consumes: ['application/json'],
        response: {
          200: Type.Array(Type.Union([BulkCreatedSchema, BulkRefusedSchema]), { description: 'One result per item, in the order of the request' }),
          ...errorResponses(Operation.CreateLinks, [400, 401, 403, 413, 415, 429, 503]),
        },
      },
    },
    async (request) => {
      const account = accountOf(request);
      const items = request.body;
      if (!Array.isArray(items)) throw invalid('the body must be a JSON array of links');
      if (items.length === 0) throw invalid('the body must hold at least one link');
      if (items.length > REQUEST_BOUNDS.bulkItems) {
        throw invalid(`the body holds ${items.length} links; at most ${REQUEST_BOUNDS.bulkItems} may be created at once`);
      }
      const results = new Array<BulkItemResult | undefined>(items.length);
      // 1. The rate limit, each item in order, as if each were its own request.
      if (rateLimits.applies(request)) {
        await Promise.all(items.map((_, i) => rateLimits.createLink(request, account.uid).catch((error: unknown) => {
          results[i] = itemError(request, error);
        })));
      }
      // 2. Each remaining item's parameters, read as a single create's JSON body.
      const inputs: CreateLinkInput[] = [];
      const positions: number[] = [];
      items.forEach((item: unknown, i) => {
        if (results[i] !== undefined) return;
        try {
          if (typeof item !== 'object' || item === null || Array.isArray(item)) throw invalid('each link must be a JSON object');
          inputs.push(createInput(readParameters(CREATE_PARAMETERS, undefined, normaliseDetailsBody(item, true))));
          positions.push(i);
        } catch (error) {
          results[i] = itemError(request, error);
        }
      });
      // 3. The creates, together.
      const outcomes = await links.createMany(account, inputs);
      outcomes.forEach((outcome, k) => {
        results[positions[k]!] = 'shortCode' in outcome ? { ShortUrl: domains.shortUrl(outcome.shortCode) } : itemError(request, outcome.error);
      });
      return results;
    },
  );
}

/** A JSON body (where `tags` may be an array and `max_visits` a number). */
function isJsonBody(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  return typeof type === 'string' && /^application\/(?:[\w.+-]+\+)?json\b/i.test(type);
}
