import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RedirectStatus } from '../../config.ts';
import type { Domain, DomainRegistry } from '../../domains/domain-registry.ts';
import type { Visitor } from '../../features/stats.ts';
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

/**
 * A resolution the fast path (fast-path.ts) counted before Fastify saw the request, and could
 * not answer itself (an unknown code, a gone, protected or routed link, a storage error): the
 * route answers its outcome instead of resolving again, so nothing is counted twice.
 */
export interface CountedBefore {
  /** The domain the redirect's Host named when it was counted (undefined for `/v1/get/`). */
  readonly domain: Domain | undefined;
  /** The link key counted. */
  readonly key: string;
  readonly found: Promise<[ResolvedLink, Visit | undefined]>;
}

/** Where a counted-before resolution travels: on the raw request, to the route. */
export const COUNTED_BEFORE = Symbol('shortlink.countedBefore');
type HandedRequest = IncomingMessage & { [COUNTED_BEFORE]?: CountedBefore | undefined };

/** Hands `counted` to the route that will answer `raw`. */
export function handOver(raw: IncomingMessage, counted: CountedBefore): void {
  (raw as HandedRequest)[COUNTED_BEFORE] = counted;
}

/** The route names and counted events of the short-URL routes, shared with the fast path (metrics label them so). */
export const REDIRECT_ROUTE = '/:code';
export const RESOLVE_ROUTE = '/v1/get/:code';
const redirectConfig = { operation: Operation.ResolveLink, countedEvent: CountedEvent.Redirect };
const resolveConfig = { operation: Operation.ResolveLink, countedEvent: CountedEvent.Resolution };
export const REDIRECT_EVENT = redirectConfig.countedEvent;
export const RESOLVE_EVENT = resolveConfig.countedEvent;

/** What the routes share with the fast path, so both answer alike. */
export interface ShortUrls {
  /** The domain a redirect's `Host` names, and the key of `code` there. */
  redirectKey(host: string | undefined, code: string): { domain: Domain; key: string };
  /** Counts one access of `key` (no password), with the visit's statistics when they are on. */
  count(visitor: Visitor, key: string): Promise<[ResolvedLink, Visit | undefined]>;
  /** The status and Location of a redirect to `link` when they depend on nothing but the link; otherwise undefined. */
  plainRedirect(link: ResolvedLink): { status: RedirectStatus; location: string } | undefined;
}

export interface ResolveRoutesDeps {
  readonly links: LinkService;
  readonly rateLimits: RateLimitChecks;
  readonly redirectStatus: RedirectStatus;
  /** The domains a redirect's `Host` names, with their fallbacks. */
  readonly domains: DomainRegistry;
  /** The statistics of a counted resolution; undefined when statistics are off (STATS=off). */
  readonly visitOf?: ((visitor: Visitor) => Visit) | undefined;
  /** The classes of a visit without recording it: what rules are judged on when statistics are off. */
  readonly classify: (visitor: Visitor) => Visit;
  /** Told of each visit recorded with its count (metrics). */
  readonly onVisit?: (visit: Visit) => void;
}

export function registerResolveRoutes(app: FastifyInstance, deps: ResolveRoutesDeps): ShortUrls {
  const { links, rateLimits, redirectStatus, domains, visitOf, classify, onVisit } = deps;

  /** How a request unlocks a protected link: its password, and the guesses' limit per link and client. */
  function attemptOf(request: FastifyRequest, key: string, password: string | undefined): PasswordAttempt | undefined {
    if (password === undefined) return undefined;
    if (!rateLimits.applies(request)) return { password };
    return { password, before: () => rateLimits.passwordGuess(request, key), wrong: () => rateLimits.wrongPassword(request, key) };
  }

  /** Counts one access, recording the visit's statistics with it when they are on; the visit (if classified) comes back too. */
  async function count(visitor: Visitor, key: string, attempt: PasswordAttempt | undefined): Promise<[ResolvedLink, Visit | undefined]> {
    if (visitOf === undefined) return [await links.resolve(key, undefined, attempt), undefined];
    const visit = visitOf(visitor);
    const link = await links.resolve(key, visit, attempt);
    onVisit?.(visit);
    return [link, visit];
  }

  /** The resolution the fast path counted for this request, taken once; undefined when it counted none. */
  function countedBefore(request: FastifyRequest): CountedBefore | undefined {
    const raw = request.raw as HandedRequest;
    const counted = raw[COUNTED_BEFORE];
    if (counted !== undefined) raw[COUNTED_BEFORE] = undefined;
    return counted;
  }

  /**
   * The link `key` names, counted (GET) or not (HEAD), with the visit's classes when they were
   * taken; the resolve and unknown-code limits apply.
   */
  async function find(request: FastifyRequest, key: string, counted: boolean, password?: string): Promise<[ResolvedLink, Visit | undefined]> {
    // The fast path takes only plain GETs that no rate limit applies to: its outcome is the whole lookup.
    const before = countedBefore(request);
    if (before !== undefined) return before.found;
    const look = async (): Promise<[ResolvedLink, Visit | undefined]> =>
      (counted ? count(request, key, attemptOf(request, key, password)) : [await links.peek(key), undefined]);
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
    if (routing === undefined || (routing.rules === null && !routing.forwardQuery)) return plainTarget(link);
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
    return isPlain(link) ? redirectStatus : 302;
  }

  function redirectKey(host: string | undefined, code: string): { domain: Domain; key: string } {
    const domain = domains.forHost(host);
    return { domain, key: domain.isDefault ? code : linkKey(domain.host, code) };
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
    RESOLVE_ROUTE,
    { config: resolveConfig, schema: resolveSchema(false) },
    resolveVia(true),
  );
  app.post(
    RESOLVE_ROUTE,
    {
      config: resolveConfig,
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
    RESOLVE_ROUTE,
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
    // The domain and key the fast path counted under, if it did (find() takes its outcome).
    const before = (request.raw as HandedRequest)[COUNTED_BEFORE];
    const { domain, key } = before?.domain !== undefined ? { domain: before.domain, key: before.key } : redirectKey(request.headers.host, request.params.code);
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
  app.get(REDIRECT_ROUTE, { config: redirectConfig, schema: redirectSchema(false) }, redirectVia(true, false));
  app.head(REDIRECT_ROUTE, { config: { operation: Operation.ResolveLink }, schema: redirectSchema(true) }, redirectVia(false, false));
  app.post(REDIRECT_ROUTE, {
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

  return {
    redirectKey,
    count: (visitor, key) => count(visitor, key, undefined),
    plainRedirect: (link) => (isPlain(link) ? { status: redirectStatus, location: plainTarget(link) } : undefined),
  };
}

/** True when a redirect of `link` depends on nothing but the link: no rules, no forwarded query, no password. */
function isPlain(link: ResolvedLink): boolean {
  const routing = link.routing;
  return routing === undefined || (routing.rules === null && !routing.forwardQuery && routing.passwordHash === null);
}

/** A link's PointsTo as a redirect's Location: normalised by the WHATWG URL parser (always ASCII). */
function plainTarget(link: ResolvedLink): string {
  return new URL(link.pointsTo).href;
}

/** The `password` field of a form body ('' when absent, which counts as a wrong password). */
function passwordOf(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '';
  const value = (body as Record<string, unknown>)['password'];
  return typeof value === 'string' ? value : '';
}
