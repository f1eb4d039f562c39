import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RedirectStatus } from '../../config.ts';
import type { DomainRegistry } from '../../domains/domain-registry.ts';
import { DomainError, ErrorCode } from '../../errors.ts';
import { withVisitorQuery } from '../../links/forward-query.ts';
import { linkKey } from '../../links/link-key.ts';
import { LinkGoneError, PasswordError, type LinkService, type PasswordAttempt } from '../../links/link-service.ts';
import { ruleTarget, rulesFromJson } from '../../links/rules.ts';
import { CountedEvent } from '../../metrics/metrics.ts';
import type { Visit } from '../../stats/visit.ts';
import type { ResolvedLink } from '../../store/store.ts';
import { Operation } from '../operations.ts';
import { parameterNames, readParameters } from '../parameters.ts';
import { linkBody } from '../presenters.ts';
import type { RateLimitChecks } from '../rate-limit-checks.ts';
import { errorResponses, LinkSchema, PUBLIC_SECURITY, ResolveQuery, ShortcodeParams } from '../schemas.ts';
import { sendGonePage } from '../../web/gone-page.ts';
import { sendNotFoundPage } from '../../web/not-found-page.ts';
import { sendPasswordPage } from '../../web/password-page.ts';

type CodeRequest = FastifyRequest<{ Params: { code: string } }>;

function isNotFound(error: unknown): boolean {
  return error instanceof DomainError && error.code === ErrorCode.LinkNotFound;
}

function isRateLimited(error: unknown): error is DomainError {
  return error instanceof DomainError && error.code === ErrorCode.RateLimited;
}

/** The raw query string of a request, without its '?' ('' when none). */
function rawQuery(url: string): string {
  const mark = url.indexOf('?');
  return mark < 0 ? '' : url.slice(mark + 1);
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
  /** The domains a redirect's `Host` names, with their fallbacks. */
  readonly domains: DomainRegistry;
  /** The statistics of a counted resolution; undefined when statistics are off (STATS=off). */
  readonly visitOf?: ((request: FastifyRequest) => Visit) | undefined;
  /** The classes of a visit without recording it: what rules are judged on when statistics are off. */
  readonly classify: (request: FastifyRequest) => Visit;
  /** Told of each visit recorded with its count (metrics). */
  readonly onVisit?: (visit: Visit) => void;
}

export function registerResolveRoutes(app: FastifyInstance, deps: ResolveRoutesDeps): void {
  const { links, rateLimits, redirectStatus, domains, visitOf, classify, onVisit } = deps;

  /** How a request unlocks a protected link: its password, and the guesses' limit per link and client. */
  function attemptOf(request: FastifyRequest, key: string, password: string | undefined): PasswordAttempt | undefined {
    if (password === undefined) return undefined;
    if (!rateLimits.applies(request)) return { password };
    return { password, before: () => rateLimits.passwordGuess(request, key), wrong: () => rateLimits.wrongPassword(request, key) };
  }

  /** Counts one access, recording the visit's statistics with it when they are on; the visit (if classified) comes back too. */
  async function count(request: FastifyRequest, key: string, password: string | undefined): Promise<[ResolvedLink, Visit | undefined]> {
    if (visitOf === undefined) return [await links.resolve(key, undefined, attemptOf(request, key, password)), undefined];
    const visit = visitOf(request);
    const link = await links.resolve(key, visit, attemptOf(request, key, password));
    onVisit?.(visit);
    return [link, visit];
  }

  /**
   * The link `key` names, counted (GET) or not (HEAD), with the visit's classes when they were
   * taken; the resolve and unknown-code limits apply.
   */
  async function find(request: FastifyRequest, key: string, counted: boolean, password?: string): Promise<[ResolvedLink, Visit | undefined]> {
    const look = async (): Promise<[ResolvedLink, Visit | undefined]> =>
      (counted ? count(request, key, password) : [await links.peek(key), undefined]);
    if (!rateLimits.applies(request)) return look();
    await rateLimits.resolve(request);
    try {
      return await look();
    } catch (error) {
      if (isNotFound(error)) await rateLimits.unknownCode(request);
      throw error;
    }
  }

  /**
   * Where a redirect of `link` leads (CONTRACT §8.2): the first matching rule's target, else
   * PointsTo, with the visitor's query appended when the link forwards it. A link without
   * routing pays one property read.
   */
  function targetOf(request: FastifyRequest, link: ResolvedLink, visit: Visit | undefined): string {
    const routing = link.routing;
    if (routing === undefined || (routing.rules === null && !routing.forwardQuery)) return new URL(link.pointsTo).href;
    let target = link.pointsTo;
    if (routing.rules !== null) {
      const classes = visit ?? classify(request);
      const chosen = ruleTarget(rulesFromJson(routing.rules), {
        device: classes.device, os: classes.os, country: classes.country,
        acceptLanguage: request.headers['accept-language'], query: rawQuery(request.url),
      });
      if (chosen !== undefined) target = chosen;
    }
    const href = new URL(target).href;
    return routing.forwardQuery ? withVisitorQuery(href, rawQuery(request.url)) : href;
  }

  /** A routed or protected link is always 302, so no browser keeps its first answer (CONTRACT §8.2). */
  function statusOf(link: ResolvedLink): RedirectStatus {
    const routing = link.routing;
    return routing !== undefined && (routing.rules !== null || routing.forwardQuery || routing.passwordHash !== null) ? 302 : redirectStatus;
  }

  /** `GET /v1/get/{code}`'s key and password: `domain` and `password` from the query (or a POST body). */
  function resolveParameters(request: CodeRequest): { key: string; password: string | undefined } {
    // Nearly every resolve has no query: the code on the default domain, nothing to read.
    if (request.method !== 'POST' && !request.url.includes('?')) return { key: request.params.code, password: undefined };
    const { domain, password } = readParameters(parameterNames(ResolveQuery), request.query, request.method === 'POST' ? request.body : undefined);
    return { key: links.keyOf(request.params.code, domain), password };
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
    querystring: ResolveQuery,
    response: { 200: LinkSchema, ...errorResponses(Operation.ResolveLink, [400, 401, 404, 410, 429, 503]) },
  });
  const resolveVia = (counted: boolean) => async (request: CodeRequest) => {
    const { key, password } = resolveParameters(request);
    return linkBody((await find(request, key, counted, password))[0]);
  };
  app.get(
    '/v1/get/:code',
    { config: { operation: Operation.ResolveLink, countedEvent: CountedEvent.Resolution }, schema: resolveSchema(false) },
    resolveVia(true),
  );
  app.post(
    '/v1/get/:code',
    {
      config: { operation: Operation.ResolveLink, countedEvent: CountedEvent.Resolution },
      schema: {
        ...resolveSchema(false),
        operationId: 'resolveLinkPost',
        summary: 'Resolve a protected shortcode with its password in the body',
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
      },
    },
    resolveVia(true),
  );
  app.head(
    '/v1/get/:code',
    { config: { operation: Operation.ResolveLink }, schema: resolveSchema(true) },
    resolveVia(false),
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
  /**
   * Whether `key` names a protected link (read without counting). One that is gone (expired,
   * used up, disabled) counts too: its form may still be open in a browser, and the post must
   * answer the gone page or ExpiredUrl as its GET would, not the unknown-route 404.
   */
  async function isProtected(key: string): Promise<boolean> {
    try {
      return (await links.peek(key)).refused === 'password';
    } catch (error) {
      if (error instanceof LinkGoneError) return error.protectedLink;
      if (error instanceof DomainError && error.code === ErrorCode.LinkNotFound) return false;
      throw error;
    }
  }

  /** A fallback of the domain (CONTRACT §8.1): 302 there, nothing counted. */
  const fallback = (reply: FastifyReply, url: string) => reply.code(302).header('location', new URL(url).href).header('cache-control', 'private, no-cache').send();

  // GET counts the access, HEAD only looks; both answer unknown codes with the HTML page (or
  // the domain's fallback). POST carries a protected link's password from its form.
  const redirectVia = (count: boolean, form: boolean) => async (request: CodeRequest, reply: FastifyReply) => {
    const domain = domains.forHost(request.headers.host);
    const key = domain.isDefault ? request.params.code : linkKey(domain.host, request.params.code);
    const password = form ? passwordOf(request.body) : undefined;
    // A POST is the password form's; anywhere but at a protected link it is no route at all.
    if (form && !(await isProtected(key))) return reply.callNotFound();
    let found: [ResolvedLink, Visit | undefined];
    try {
      found = await find(request, key, count, password);
    } catch (error) {
      if (isNotFound(error)) return domain.notFoundUrl === null ? sendNotFoundPage(reply) : fallback(reply, domain.notFoundUrl);
      if (error instanceof LinkGoneError) return domain.expiredUrl === null ? sendGonePage(reply, error.refusal) : fallback(reply, domain.expiredUrl);
      if (error instanceof PasswordError) {
        if (!form) return sendPasswordPage(reply, { status: 200 });
        return sendPasswordPage(reply, { status: 401, message: password === '' ? 'Enter the password.' : 'That password is not right. Try again.' });
      }
      if (form && isRateLimited(error)) {
        return sendPasswordPage(reply, { status: 429, message: 'Too many attempts. Try again later.', retryAfter: error.retryAfter });
      }
      throw error;
    }
    const [link, visit] = found;
    // HEAD of a protected link answers what GET would: the form.
    if (!count && link.refused === 'password') return sendPasswordPage(reply, { status: 200 });
    return reply
      .code(statusOf(link))
      .header('location', targetOf(request, link, visit))
      .header('cache-control', 'private, no-cache')
      .send();
  };
  const redirectConfig = { operation: Operation.ResolveLink, countedEvent: CountedEvent.Redirect };
  app.get('/:code', { config: redirectConfig, schema: redirectSchema(false) }, redirectVia(true, false));
  app.head('/:code', { config: { operation: Operation.ResolveLink }, schema: redirectSchema(true) }, redirectVia(false, false));
  app.post('/:code', {
    config: redirectConfig,
    schema: {
      ...redirectSchema(false),
      operationId: 'unlockShortUrl',
      summary: 'Unlock a protected short URL',
      description:
        'The password form of a protected link posts here (`password`, URL-encoded). The right password: the redirect, ' +
        'counted once. A wrong one: 401 with the form and a message; past RATE_LIMIT_PASSWORD wrong guesses per link and ' +
        'client: 429 with the form.',
      consumes: ['application/x-www-form-urlencoded'],
    },
  }, redirectVia(true, true));
}

/** The `password` field of a form body ('' when absent, which counts as a wrong password). */
function passwordOf(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '';
  const value = (body as Record<string, unknown>)['password'];
  return typeof value === 'string' ? value : '';
}
