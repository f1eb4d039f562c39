import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ErrorCode } from '../../errors.ts';
import type { LinkService } from '../../links/link-service.ts';
import type { LinkRecord } from '../../store/store.ts';
import { NOT_FOUND_PAGE } from '../not-found-page.ts';
import { Operation } from '../operations.ts';
import { LinkSchema, ShortcodeParams } from '../schemas.ts';
import { linkBody } from './links.ts';

type CodeRequest = FastifyRequest<{ Params: { code: string } }>;

const NOT_FOUND_STYLE_HASH = createHash('sha256')
  .update(/<style>([\s\S]*?)<\/style>/.exec(NOT_FOUND_PAGE)![1]!)
  .digest('base64');
const NOT_FOUND_CSP = `default-src 'none'; style-src 'sha256-${NOT_FOUND_STYLE_HASH}'; frame-ancestors 'none'`;

/** Answers the short-URL space's 404 as a small HTML page (people arrive here from browsers). */
export function sendNotFoundPage(reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .header('content-security-policy', NOT_FOUND_CSP)
    .header('cache-control', 'no-cache')
    .type('text/html; charset=utf-8')
    .send(NOT_FOUND_PAGE);
}

function isNotFound(error: unknown): boolean {
  return error instanceof DomainError && error.code === ErrorCode.LinkNotFound;
}

export function registerResolveRoutes(app: FastifyInstance, links: LinkService): void {
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
  app.get('/v1/get/:code', resolveOptions, async (request: CodeRequest) => linkBody(await links.resolve(request.params.code)));
  app.head('/v1/get/:code', resolveOptions, async (request: CodeRequest) => linkBody(await links.peek(request.params.code)));

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
  const redirectVia = (lookup: (code: string) => Promise<LinkRecord>) => async (request: CodeRequest, reply: FastifyReply) => {
    let link: LinkRecord;
    try {
      link = await lookup(request.params.code);
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
  app.get('/:code', redirectOptions, redirectVia(links.resolve));
  app.head('/:code', redirectOptions, redirectVia(links.peek));
}
