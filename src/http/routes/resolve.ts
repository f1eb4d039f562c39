import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ErrorCode } from '../../errors.ts';
import type { LinkService } from '../../links/link-service.ts';
import type { LinkRecord } from '../../store/store.ts';
import { notFoundPage } from '../not-found-page.ts';
import { Operation } from '../operations.ts';
import type { RateLimitChecks } from '../rate-limits.ts';
import { LinkSchema, ShortcodeParams } from '../schemas.ts';
import { BROWSER_HEADERS, NOT_FOUND_CONTENT_SECURITY_POLICY } from '../../web/security-headers.ts';
import { linkBody } from './links.ts';

type CodeRequest = FastifyRequest<{ Params: { code: string } }>;

/** Answers the short-URL space's 404 as a small HTML page (people arrive here from browsers). */
export function sendNotFoundPage(reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .headers(BROWSER_HEADERS)
    .header('content-security-policy', NOT_FOUND_CONTENT_SECURITY_POLICY)
    .header('cache-control', 'no-cache')
    .type('text/html; charset=utf-8')
    .send(notFoundPage());
}

function isNotFound(error: unknown): boolean {
  return error instanceof DomainError && error.code === ErrorCode.LinkNotFound;
}

export function registerResolveRoutes(app: FastifyInstance, links: LinkService, limits: RateLimitChecks): void {
  /** The link behind the request's shortcode; `count` decides between GET and HEAD semantics. */
  async function find(request: CodeRequest, count: boolean): Promise<LinkRecord> {
    const code = request.params.code;
    if (!limits.applies(request)) return count ? links.resolve(code) : links.peek(code);
    await limits.resolve(request);
    try {
      return await (count ? links.resolve(code) : links.peek(code));
    } catch (error) {
      if (isNotFound(error)) await limits.unknownCode(request);
      throw error;
    }
  }

  const resolveOptions = {
    config: { operation: Operation.ResolveLink },
    schema: {
      summary: 'Resolve a shortcode',
      description: 'Public. Counts one access (GET only; HEAD does not count) and answers the link with it included.',
      tags: ['links'],
      params: ShortcodeParams,
      response: { 200: LinkSchema },
    },
  };
  app.get('/v1/get/:code', resolveOptions, async (request: CodeRequest) => linkBody(await find(request, true)));
  app.head('/v1/get/:code', resolveOptions, async (request: CodeRequest) => linkBody(await find(request, false)));

  const redirectOptions = {
    config: { operation: Operation.ResolveLink },
    schema: {
      summary: 'Follow a short URL',
      description: 'The short URL itself: 302 to the target, counting one access (HEAD does not count).',
      tags: ['links'],
      params: ShortcodeParams,
    },
  };
  // GET counts the access, HEAD only looks; both answer unknown codes with the HTML page.
  const redirectVia = (count: boolean) => async (request: CodeRequest, reply: FastifyReply) => {
    let link: LinkRecord;
    try {
      link = await find(request, count);
    } catch (error) {
      if (isNotFound(error)) return sendNotFoundPage(reply);
      throw error;
    }
    return reply
      .code(302)
      .header('location', new URL(link.pointsTo).href)
      .header('cache-control', 'private, no-cache')
      .send();
  };
  app.get('/:code', redirectOptions, redirectVia(true));
  app.head('/:code', redirectOptions, redirectVia(false));
}
