import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RedirectStatus } from '../../config.ts';
import { DomainError, ErrorCode } from '../../errors.ts';
import { LinkGoneError, type LinkService } from '../../links/link-service.ts';
import { CountedEvent } from '../../metrics/metrics.ts';
import type { Visit } from '../../stats/visit.ts';
import type { LinkRecord } from '../../store/store.ts';
import { Operation } from '../operations.ts';
import { linkBody } from '../presenters.ts';
import type { RateLimitChecks } from '../rate-limit-checks.ts';
import { errorResponses, LinkSchema, PUBLIC_SECURITY, ShortcodeParams } from '../schemas.ts';
import { sendGonePage } from '../../web/gone-page.ts';
import { sendNotFoundPage } from '../../web/not-found-page.ts';

type CodeRequest = FastifyRequest<{ Params: { code: string } }>;

function isNotFound(error: unknown): boolean {
  return error instanceof DomainError && error.code === ErrorCode.LinkNotFound;
}

const REDIRECT_DESCRIPTION: Readonly<Record<RedirectStatus, string>> = {
  301: '301 Moved Permanently',
  302: '302 Found',
  307: '307 Temporary Redirect',
  308: '308 Permanent Redirect',
};

export interface ResolveRoutesDeps {
  readonly links: LinkService;
  readonly rateLimits: RateLimitChecks;
  readonly redirectStatus: RedirectStatus;
  /** The statistics of a counted resolution; undefined when statistics are off (STATS=off). */
  readonly visitOf?: ((request: FastifyRequest) => Visit) | undefined;
  /** Told of each visit recorded with its count (metrics). */
  readonly onVisit?: (visit: Visit) => void;
}

export function registerResolveRoutes(app: FastifyInstance, { links, rateLimits, redirectStatus, visitOf, onVisit }: ResolveRoutesDeps): void {
  /** Counts one access, recording the visit's statistics with it when they are on. */
  async function count(request: CodeRequest): Promise<LinkRecord> {
    if (visitOf === undefined) return links.resolve(request.params.code);
    const visit = visitOf(request);
    const link = await links.resolve(request.params.code, visit);
    onVisit?.(visit);
    return link;
  }

  /** The link behind the request's shortcode; `counted` decides between GET and HEAD semantics. */
  async function find(request: CodeRequest, counted: boolean): Promise<LinkRecord> {
    const code = request.params.code;
    if (!rateLimits.applies(request)) return counted ? count(request) : links.peek(code);
    await rateLimits.resolve(request);
    try {
      return await (counted ? count(request) : links.peek(code));
    } catch (error) {
      if (isNotFound(error)) await rateLimits.unknownCode(request);
      throw error;
    }
  }

  const resolveSchema = (head: boolean) => ({
    operationId: head ? 'resolveLinkHead' : 'resolveLink',
    summary: head ? 'Look a shortcode up without counting' : 'Resolve a shortcode',
    description: head
      ? 'Public. Answers the headers GET would, without a body and without counting an access.'
      : 'Public. Counts one access and answers the link with it included (the first resolution answers Accesses 1). ' +
        'A link past its expiry, at its visit limit, or whose account is disabled answers 410 and is not counted.',
    tags: ['links'],
    security: PUBLIC_SECURITY,
    params: ShortcodeParams,
    response: { 200: LinkSchema, ...errorResponses(Operation.ResolveLink, [404, 410, 429, 503]) },
  });
  app.get(
    '/v1/get/:code',
    { config: { operation: Operation.ResolveLink, countedEvent: CountedEvent.Resolution }, schema: resolveSchema(false) },
    async (request: CodeRequest) => linkBody(await find(request, true)),
  );
  app.head(
    '/v1/get/:code',
    { config: { operation: Operation.ResolveLink }, schema: resolveSchema(true) },
    async (request: CodeRequest) => linkBody(await find(request, false)),
  );

  const redirectSchema = (head: boolean) => ({
    operationId: head ? 'followShortUrlHead' : 'followShortUrl',
    summary: head ? 'Check a short URL without counting' : 'Follow a short URL',
    description:
      `The short URL itself, for browsers: ${REDIRECT_DESCRIPTION[redirectStatus]} to the target ` +
      (head ? '(HEAD does not count an access).' : 'counting one access. Unknown shortcodes answer a small HTML page.'),
    tags: ['links'],
    security: PUBLIC_SECURITY,
    params: ShortcodeParams,
    response: {
      [redirectStatus]: {
        description: `${REDIRECT_DESCRIPTION[redirectStatus]}: to the target, normalised by the WHATWG URL parser (always ASCII)`,
        type: 'null',
        headers: {
          Location: { type: 'string', description: 'The target URL' },
          'Cache-Control': { type: 'string', description: 'private, no-cache: every visit reaches the service and is counted' },
        },
      },
      404: {
        description: 'No live link has this shortcode: a small HTML page',
        content: { 'text/html': { schema: { type: 'string' } } },
      },
      410: {
        description: 'The link has expired, reached its visit limit, or been disabled: a small HTML page (not counted)',
        content: { 'text/html': { schema: { type: 'string' } } },
      },
      ...errorResponses(Operation.ResolveLink, [429, 503]),
    },
  });
  // GET counts the access, HEAD only looks; both answer unknown codes with the HTML page.
  const redirectVia = (count: boolean) => async (request: CodeRequest, reply: FastifyReply) => {
    let link: LinkRecord;
    try {
      link = await find(request, count);
    } catch (error) {
      if (isNotFound(error)) return sendNotFoundPage(reply);
      if (error instanceof LinkGoneError) return sendGonePage(reply, error.refusal);
      throw error;
    }
    return reply
      .code(redirectStatus)
      .header('location', new URL(link.pointsTo).href)
      .header('cache-control', 'private, no-cache')
      .send();
  };
  app.get('/:code', { config: { operation: Operation.ResolveLink, countedEvent: CountedEvent.Redirect }, schema: redirectSchema(false) }, redirectVia(true));
  app.head('/:code', { config: { operation: Operation.ResolveLink }, schema: redirectSchema(true) }, redirectVia(false));
}
