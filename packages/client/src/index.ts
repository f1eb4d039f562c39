/**
 * A typed client for the Shortlink HTTP API, built on the global `fetch`: no dependencies,
 * for Node 18+, Deno, Bun and browsers.
 *
 *     import { ShortlinkClient } from '@shortlink/client';
 *     const anonymous = new ShortlinkClient({ baseUrl: 'http://localhost:8080' });
 *     const account = await anonymous.newAccount();
 *     const client = anonymous.withAccessCode(account.AccessCode);
 *     const shortUrl = await client.createLink('https://example.com/a/long/path');
 *
 * Every answer other than a success becomes a `ShortlinkError` carrying the HTTP status and
 * the service's one-line message (`Unable to create link: …`).
 */

// Type-only, so erased before any runtime resolves it; `.js` because a `.d.ts` keeps the
// specifier as written and its readers look for the compiled name.
import type { Account, AdminAccount, AdminDomain, ApiKey, BulkCreated, CreatedApiKey, BulkRefused, CreatedWebhook, Delivery, Domain, Link, LinkDetails, ShortlinkEvent, Statistics, Webhook } from './types.js';

/**
 * The wire types (an `Account` from `newAccount` and `getAccount`, a `Link` from `resolve`,
 * `LinkDetails` from `listLinks` and `updateLink`, and every other schema the service names)
 * are generated from the server's own response schemas (./types.ts), so the client cannot
 * drift from what the service sends.
 * The AccessCode is the account's only credential; keep it, the service cannot show it again.
 */
export type * from './types.js';

export interface StatsOptions {
  /** One link; omitted: every link of the account. */
  readonly short?: string;
  /** The domain of `short` (a registered host); omitted: the default domain. */
  readonly domain?: string;
  /** Start of the period (a Date, or RFC 3339 with an offset); default 30 days before `to`. */
  readonly from?: Date | string;
  /** End of the period; default now. */
  readonly to?: Date | string;
  /** Length of each series entry, UTC; default `day`. */
  readonly interval?: 'hour' | 'day' | 'month';
}

export interface CreateLinkOptions {
  /** A shortcode of your choice (5–2000 of `A–Z a–z 0–9 - . _ ~`); generated when omitted. */
  readonly short?: string;
  /** Up to 200 characters, no control characters. */
  readonly title?: string;
  /** At most 10, each 1–50 of `A–Z a–z 0–9 - _ .`; stored lower case. */
  readonly tags?: readonly string[];
  /** When the link stops resolving: a Date, or RFC 3339 text with an offset; in the future. */
  readonly expires?: Date | string;
  /** How many resolutions the link allows in all (1 to 2,147,483,647). */
  readonly maxVisits?: number;
  /** The host of a registered domain (see the service's `GET /v1/domains`); omitted: the default domain. */
  readonly domain?: string;
  /** Whether a redirect appends the visitor's query string to the target; omitted: the service's FORWARD_QUERY. */
  readonly forwardQuery?: boolean;
  /** Redirect rules, at most 10, first match wins (a visit no rule matches goes to the target). */
  readonly rules?: readonly RedirectRule[];
  /** A password (8–200 characters) visitors must give; stored only as a hash, never shown. */
  readonly password?: string;
}

/** One value of a rule condition, or a list of them (any one matches). */
export type RuleValue<T extends string = string> = T | readonly T[];

/** What a visit must meet for a rule to send it on: every condition given must hold. */
export interface RedirectConditions {
  readonly device?: RuleValue<'desktop' | 'mobile' | 'tablet'>;
  readonly os?: RuleValue<'android' | 'ios' | 'windows' | 'macos' | 'linux'>;
  /** ISO 3166 alpha-2 codes, e.g. `DE`. */
  readonly country?: RuleValue;
  /** Primary language subtags, e.g. `de`, matched against every language of `Accept-Language`. */
  readonly language?: RuleValue;
  /** Query parameters the visit's URL must carry, each with this value (or one of these). */
  readonly query?: Readonly<Record<string, RuleValue>>;
}

/**
 * A redirect rule as create and edit take it: `{if: {device: 'mobile'}, to: 'https://…'}`.
 * LinkDetails shows the stored rules as `{If, To}` with every value a list.
 */
export interface RedirectRule {
  readonly if: RedirectConditions;
  readonly to: string;
}

/**
 * How a call names one link: its shortcode (on the default domain), or its shortcode and its
 * domain's host. `shorten`'s answer is one, so is `{shortCode: d.ShortCode, domain: d.Domain}`
 * of a LinkDetails `d`.
 */
export type LinkRef = string | { readonly shortCode: string; readonly domain?: string | null };

export interface ResolveOptions {
  /** The password of a protected link; it goes in a POST body, never in the URL. */
  readonly password?: string;
}

/** An edit (`updateLink`): fields left out stay as they are; null clears one. */
export interface LinkChanges {
  readonly url?: string;
  readonly title?: string | null;
  readonly tags?: readonly string[] | null;
  readonly expires?: Date | string | null;
  readonly maxVisits?: number | null;
  readonly forwardQuery?: boolean;
  /** The new rules, replacing every old one; null or [] removes them. */
  readonly rules?: readonly RedirectRule[] | null;
  /** A new password; null removes the protection. */
  readonly password?: string | null;
}

export interface ListLinksOptions {
  /** Only the links of this domain (a registered host, or the default host); every domain when omitted. */
  readonly domain?: string;
  /** Only links whose shortcode, target or title contains this (case-insensitive). */
  readonly q?: string;
  /** Only links carrying all of these tags. */
  readonly tags?: readonly string[];
  /** At most this many links (1–1000); all matching links when omitted. */
  readonly limit?: number;
  /** `oldest` first (the default), `newest` first, or most `visits` first (ties newest first). */
  readonly order?: 'oldest' | 'newest' | 'visits';
  /** Where to start: a previous page's `nextCursor` (it keeps its order). */
  readonly cursor?: string;
}

/** What `shorten` answers: the short URL as the service wrote it, its shortcode and its domain (a LinkRef). */
export interface CreatedLink {
  /** The domain's origin (`BASE_URL` on the default domain), `/`, the ShortCode, as the service answers it. */
  readonly shortUrl: string;
  /** The link's shortcode: the one asked for, or the one the service generated. */
  readonly shortCode: string;
  /** The domain asked for, or null for the default domain. */
  readonly domain: string | null;
}

export interface LinkPage {
  readonly links: LinkDetails[];
  /** Pass as `cursor` for the next page; undefined on the last one. */
  readonly nextCursor: string | undefined;
}

export interface ShortlinkClientOptions {
  /** Where the service answers, e.g. `http://localhost:8080`. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer <code>` with every request that needs one. */
  readonly accessCode?: string;
  /** Milliseconds before a request is given up (with a `TimeoutError`). Default 30 000. */
  readonly timeoutMs?: number;
  /** A `fetch` to use instead of the global one (tests, proxies, instrumentation). */
  readonly fetch?: typeof fetch;
}

/** One event of the live stream: the event and its id (the SSE `id:` line). */
export type StreamedEvent = ShortlinkEvent & { readonly id: string };

export interface EventsOptions {
  /** Ends the stream (the iteration returns). */
  readonly signal?: AbortSignal;
}

/** A refusal or failure answered by the service. */
export class ShortlinkError extends Error {
  /** The HTTP status: 400, 401, 403, 404, 409, 429, 500, 503, … */
  readonly status: number;
  /** Seconds to wait before retrying, from `Retry-After` (429 and 503). */
  readonly retryAfter: number | undefined;

  constructor(status: number, message: string, retryAfter?: number) {
    super(message);
    this.name = 'ShortlinkError';
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface RequestSpec {
  readonly method: Method;
  readonly path: string;
  readonly authenticated: boolean;
  readonly operation: string;
  readonly body?: unknown;
  readonly redirect?: RequestRedirect;
}

const DEFAULT_TIMEOUT_MS = 30_000;

export class ShortlinkClient {
  readonly baseUrl: string;
  readonly #accessCode: string | undefined;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: ShortlinkClientOptions) {
    const parsed = parseUrl(options.baseUrl);
    if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new TypeError(`baseUrl must be an http(s) URL, got ${JSON.stringify(options.baseUrl)}`);
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#accessCode = options.accessCode;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // Called through an arrow, not stored as is: browsers refuse a `fetch` invoked with another
    // object as `this` ("Illegal invocation"), which `this.#fetch(…)` would be.
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** The same client, sending another access code. */
  withAccessCode(accessCode: string): ShortlinkClient {
    return new ShortlinkClient({ baseUrl: this.baseUrl, accessCode, timeoutMs: this.#timeoutMs, fetch: this.#fetch });
  }

  /** Creates an account (no access code needed) and returns it with its access code. */
  async newAccount(): Promise<Account> {
    return this.#json<Account>({ method: 'POST', path: '/v1/new_account', authenticated: false, operation: 'create account' });
  }

  /** The account of the client's access code (`GET /v1/get_account`). */
  async getAccount(): Promise<Account> {
    return this.#json<Account>({ method: 'GET', path: '/v1/get_account', authenticated: true, operation: 'get account information' });
  }

  /** The same as `getAccount`, through the API's other path (`GET /v1/user_info`). */
  async userInfo(): Promise<Account> {
    return this.#json<Account>({ method: 'GET', path: '/v1/user_info', authenticated: true, operation: 'get account information' });
  }

  /** Creates a link and returns its short URL (`BASE_URL/ShortCode`, as the service answers it). */
  async createLink(url: string, options: CreateLinkOptions = {}): Promise<string> {
    // Parameters go in a JSON body, which keeps the target out of request logs.
    const body = createBody(url, options);
    const response = await this.#send({ method: 'POST', path: '/v1/link', authenticated: true, operation: 'create link', body });
    return response.text();
  }

  /**
   * Creates a link like `createLink`, and answers both its short URL and its shortcode, so
   * that callers need not take the URL apart to edit, delete or count the link later.
   */
  async shorten(url: string, options: CreateLinkOptions = {}): Promise<CreatedLink> {
    const shortUrl = await this.createLink(url, options);
    return { shortUrl, shortCode: options.short ?? shortCodeOf(shortUrl), domain: emptyAsNull(options.domain) };
  }

  /** Edits one of the account's links (`PATCH /v1/link`) and answers it as it then stands. */
  async updateLink(link: LinkRef, changes: LinkChanges): Promise<LinkDetails> {
    const { shortCode, domain } = refOf(link);
    const body: Record<string, unknown> = { short: shortCode };
    if (domain !== null) body.domain = domain;
    if (changes.url !== undefined) body.url = changes.url;
    if (changes.title !== undefined) body.title = changes.title ?? '';
    if (changes.tags !== undefined) body.tags = changes.tags === null ? [] : [...changes.tags];
    if (changes.expires !== undefined) body.expires = changes.expires === null ? '' : timeText(changes.expires);
    if (changes.maxVisits !== undefined) body.max_visits = changes.maxVisits ?? '';
    if (changes.forwardQuery !== undefined) body.forward_query = changes.forwardQuery;
    if (changes.rules !== undefined) body.rules = changes.rules === null ? [] : [...changes.rules];
    if (changes.password !== undefined) body.password = changes.password ?? '';
    return this.#json<LinkDetails>({ method: 'PATCH', path: '/v1/link', authenticated: true, operation: 'update link', body });
  }

  /** The account's links with their details, oldest first: all of them, or one page of `options`. */
  async listLinks(options: ListLinksOptions = {}): Promise<LinkDetails[]> {
    return (await this.listLinksPage(options)).links;
  }

  /** One page of the account's links, and the cursor of the next page (from the `Link` header). */
  async listLinksPage(options: ListLinksOptions = {}): Promise<LinkPage> {
    const query = listQuery(options);
    const search = query.toString() === '' ? '' : `?${query}`;
    const response = await this.#send({ method: 'GET', path: `/v1/links${search}`, authenticated: true, operation: 'list links' });
    const links = (await response.json()) as LinkDetails[];
    const next = /<([^>]*)>\s*;\s*rel="next"/.exec(response.headers.get('link') ?? '');
    const nextCursor = next === null ? undefined : new URL(next[1]!, this.baseUrl).searchParams.get('cursor') ?? undefined;
    return { links, nextCursor };
  }

  /**
   * The account's links as CSV (`GET /v1/links?format=csv`): a header line
   * `ShortCode,PointsTo,CreatedBy,Accesses,DateCreated,Title,Tags,ExpiresAt,MaxVisits,Domain,ForwardQuery,Protected,Rules`,
   * then one record per link, oldest first (Tags comma-separated in one field, Rules JSON,
   * absent values empty); the layout of `shortlink export`, which `shortlink import` reads back. All the
   * links, or one page when `limit` is given.
   */
  async listLinksCsv(options: ListLinksOptions = {}): Promise<string> {
    const query = listQuery(options);
    query.set('format', 'csv');
    const response = await this.#send({ method: 'GET', path: `/v1/links?${query}`, authenticated: true, operation: 'list links' });
    return response.text();
  }

  /** Deletes one of the account's links; its shortcode becomes free again. */
  async deleteLink(link: LinkRef): Promise<void> {
    const query = refQuery(link);
    const response = await this.#send({ method: 'DELETE', path: `/v1/link?${query}`, authenticated: true, operation: 'delete link' });
    await response.body?.cancel();
  }

  /**
   * Gives the account a new access code and returns the account with it (shown this once).
   * The old code stops working everywhere within a second; this client keeps sending it, so
   * continue with `withAccessCode(account.AccessCode)`.
   */
  async rotateAccessCode(): Promise<Account> {
    return this.#json<Account>({ method: 'POST', path: '/v1/rotate_access_code', authenticated: true, operation: 'rotate access code' });
  }

  /** Deletes the account and every link it holds. Cannot be undone. */
  async deleteAccount(): Promise<void> {
    const response = await this.#send({ method: 'DELETE', path: '/v1/account', authenticated: true, operation: 'delete account' });
    await response.body?.cancel();
  }

  /**
   * Looks a link up. This counts one access, and the answer includes it. A protected link
   * needs its password (401 without it, or with a wrong one).
   */
  async resolve(link: LinkRef, options: ResolveOptions = {}): Promise<Link> {
    const { shortCode, domain } = refOf(link);
    const path = `/v1/get/${encodeURIComponent(shortCode)}`;
    if (options.password !== undefined) {
      // In a body, so that the password stays out of URLs and the logs that keep them.
      const body: Record<string, string> = { password: options.password };
      if (domain !== null) body.domain = domain;
      return this.#json<Link>({ method: 'POST', path, authenticated: false, operation: 'resolve link', body });
    }
    const query = domain === null ? '' : `?${new URLSearchParams({ domain })}`;
    return this.#json<Link>({ method: 'GET', path: `${path}${query}`, authenticated: false, operation: 'resolve link' });
  }

  /**
   * Requests the short URL itself, as a browser would, without following the redirect, and
   * returns its `Location`: the target, normalised by the WHATWG URL parser. Counts one access.
   * Not in browsers: their `fetch` hides a redirect's `Location` from scripts (use `resolve`).
   */
  async follow(shortCode: string): Promise<string> {
    const response = await this.#send({
      method: 'GET', path: `/${encodeURIComponent(shortCode)}`, authenticated: false, operation: 'resolve link', redirect: 'manual',
    });
    await response.body?.cancel();
    const location = response.headers.get('location');
    if (response.status < 300 || response.status > 399 || location === null) {
      throw new ShortlinkError(response.status, `Unable to resolve link: expected a redirect, got HTTP ${response.status}`);
    }
    return location;
  }

  /** Visit statistics of one link or of the whole account (`GET /v1/stats`). */
  async stats(options: StatsOptions = {}): Promise<Statistics> {
    return this.#json<Statistics>({ method: 'GET', path: `/v1/stats?${statsQuery(options)}`, authenticated: true, operation: 'get statistics' });
  }

  /** The statistics' series as CSV (`time,visits,bots`, one row per interval). */
  async statsCsv(options: StatsOptions = {}): Promise<string> {
    const query = statsQuery(options);
    query.set('format', 'csv');
    const response = await this.#send({ method: 'GET', path: `/v1/stats?${query}`, authenticated: true, operation: 'get statistics' });
    return response.text();
  }

  /**
   * Registers a webhook for these event types (`link.created`, `link.updated`, `link.deleted`,
   * `link.visited`, `account.rotated`). The answer's `Secret` verifies the deliveries'
   * signatures and is shown this once. At most 5 per account.
   */
  async createWebhook(url: string, events: readonly string[]): Promise<CreatedWebhook> {
    const query = new URLSearchParams({ url, events: events.join(',') });
    return this.#json<CreatedWebhook>({ method: 'POST', path: `/v1/webhooks?${query}`, authenticated: true, operation: 'manage webhooks' });
  }

  /** The account's webhooks, oldest first, without their secrets. */
  async listWebhooks(): Promise<Webhook[]> {
    return this.#json<Webhook[]>({ method: 'GET', path: '/v1/webhooks', authenticated: true, operation: 'manage webhooks' });
  }

  /** Deletes one of the account's webhooks; its pending events go with it. */
  async deleteWebhook(id: string): Promise<void> {
    const query = new URLSearchParams({ id });
    const response = await this.#send({ method: 'DELETE', path: `/v1/webhooks?${query}`, authenticated: true, operation: 'manage webhooks' });
    await response.body?.cancel();
  }

  /** The last 100 delivery attempts of one of the account's webhooks, newest first. */
  async webhookDeliveries(id: string): Promise<Delivery[]> {
    const query = new URLSearchParams({ id });
    return this.#json<Delivery[]>({ method: 'GET', path: `/v1/webhooks/deliveries?${query}`, authenticated: true, operation: 'manage webhooks' });
  }

  /**
   * The domains the account's links may use, the default (the service's own) first. A short
   * URL on a domain is its `Origin + "/" + ShortCode`.
   */
  async listDomains(): Promise<Domain[]> {
    return this.#json<Domain[]>({ method: 'GET', path: '/v1/domains', authenticated: true, operation: 'manage domains' });
  }

  /**
   * The account's events, live (`GET /v1/events`), as they happen on any instance: iterate
   * with `for await`. The iteration ends when the service closes the stream (a restart) or
   * `signal` aborts; nothing is replayed, so reconnect and re-read what you show. The client's
   * timeout applies only until the stream opens.
   */
  async *events(options: EventsOptions = {}): AsyncGenerator<StreamedEvent, void, undefined> {
    if (this.#accessCode === undefined) throw new ShortlinkError(401, 'Unable to handle request: the client has no access code');
    const controller = new AbortController();
    const stop = () => controller.abort(options.signal?.reason);
    // A function: TypeScript would keep the first check's narrowing for the later ones.
    const aborted = () => options.signal?.aborted === true;
    if (aborted()) return;
    options.signal?.addEventListener('abort', stop, { once: true });
    const opening = setTimeout(() => controller.abort(new DOMException('The stream did not open in time', 'TimeoutError')), this.#timeoutMs);
    try {
      let response: Response;
      try {
        response = await this.#fetch(`${this.baseUrl}/v1/events`, {
          headers: { authorization: `Bearer ${this.#accessCode}`, accept: 'text/event-stream' },
          redirect: 'error',
          signal: controller.signal,
        });
      } catch (error) {
        if (aborted()) return;
        throw error;
      }
      clearTimeout(opening);
      if (response.status < 200 || response.status > 299) throw await errorOf(response, 'handle request');
      if (response.body === null) return;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        let chunk: ReadableStreamReadResult<string>;
        try {
          chunk = await reader.read();
        } catch (error) {
          if (aborted()) return;
          throw error;
        }
        if (chunk.done) return;
        buffer += chunk.value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const event = parseFrame(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (event !== undefined) yield event;
        }
      }
    } finally {
      clearTimeout(opening);
      options.signal?.removeEventListener('abort', stop);
      controller.abort();
    }
  }

  // ---- Bulk create (CONTRACT §8.4) ----

  /**
   * Creates up to 100 links in one request (`POST /v1/links`). Each is created on its own and
   * answered in its place: `{ShortUrl}`, or `{Status, Error}` with what a single create would
   * have answered; one failure never fails the others. Only a request that is refused as a
   * whole (no valid credential, no items, more than 100) throws.
   */
  async createLinks(links: readonly BulkLink[]): Promise<BulkCreateResult[]> {
    return this.#json<BulkCreateResult[]>({
      method: 'POST', path: '/v1/links', authenticated: true, operation: 'create links', body: links.map(bulkItem),
    });
  }

  // ---- API keys (CONTRACT §8.5) ----

  /**
   * The account's API keys (`/v1/keys`), with the access code only. A key is used like the
   * access code: `new ShortlinkClient({ baseUrl, accessCode: created.Key })`, and allows only
   * what its scopes name.
   */
  readonly keys = {
    /** Creates a key; its `Key` (`slk_…`) is shown this once. At most 20 per account. */
    create: (name: string, scopes: readonly ApiKeyScope[]): Promise<CreatedApiKey> =>
      this.#json<CreatedApiKey>({ method: 'POST', path: '/v1/keys', authenticated: true, operation: 'manage keys', body: { name, scopes: scopes.join(',') } }),
    /** The account's keys, oldest first, without the keys themselves. */
    list: (): Promise<ApiKey[]> => this.#json<ApiKey[]>({ method: 'GET', path: '/v1/keys', authenticated: true, operation: 'manage keys' }),
    /** Deletes a key: it is refused everywhere within a second. */
    delete: async (id: string): Promise<void> => {
      const query = new URLSearchParams({ id });
      const response = await this.#send({ method: 'DELETE', path: `/v1/keys?${query}`, authenticated: true, operation: 'manage keys' });
      await response.body?.cancel();
    },
  };

  async #json<T>(spec: RequestSpec): Promise<T> {
    const response = await this.#send(spec);
    return (await response.json()) as T;
  }

  async #send(spec: RequestSpec): Promise<Response> {
    if (spec.authenticated && this.#accessCode === undefined) {
      throw new ShortlinkError(401, `Unable to ${spec.operation}: the client has no access code`);
    }
    return send(this.#fetch, `${this.baseUrl}${spec.path}`, this.#timeoutMs, spec, spec.authenticated ? this.#accessCode : undefined);
  }
}

/** What an API key may be allowed. */
export type ApiKeyScope = 'links:read' | 'links:write' | 'stats:read' | 'webhooks';

/** One item's outcome in `createLinks`: `{ShortUrl}`, or `{Status, Error}` as a single create would have answered. */
export type BulkCreateResult = BulkCreated | BulkRefused;

/** One link of a bulk create (`createLinks`): its target and `createLink`'s options. */
export interface BulkLink extends CreateLinkOptions {
  readonly url: string;
}

/** A bulk item as the service reads it: `createLink`'s JSON body. */
function bulkItem(link: BulkLink): Record<string, unknown> {
  return createBody(link.url, link);
}

/** The JSON body of a create (`POST /v1/link`, or one item of a bulk create). */
function createBody(url: string, options: CreateLinkOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { url };
  if (options.short !== undefined) body.short = options.short;
  if (options.title !== undefined) body.title = options.title;
  if (options.tags !== undefined) body.tags = [...options.tags];
  if (options.expires !== undefined) body.expires = timeText(options.expires);
  if (options.maxVisits !== undefined) body.max_visits = options.maxVisits;
  if (options.domain !== undefined) body.domain = options.domain;
  if (options.forwardQuery !== undefined) body.forward_query = options.forwardQuery;
  if (options.rules !== undefined) body.rules = [...options.rules];
  if (options.password !== undefined) body.password = options.password;
  return body;
}

function emptyAsNull(domain: string | null | undefined): string | null {
  return domain === undefined || domain === null || domain === '' ? null : domain;
}

/** A LinkRef's shortcode and domain (null: the default domain). */
function refOf(link: LinkRef): { shortCode: string; domain: string | null } {
  return typeof link === 'string' ? { shortCode: link, domain: null } : { shortCode: link.shortCode, domain: emptyAsNull(link.domain) };
}

/** `short` and, off the default domain, `domain`: how a query names a link. */
function refQuery(link: LinkRef): URLSearchParams {
  const { shortCode, domain } = refOf(link);
  const query = new URLSearchParams({ short: shortCode });
  if (domain !== null) query.set('domain', domain);
  return query;
}

/** One Server-Sent Events frame as an event; undefined for a comment or `retry:` frame. */
function parseFrame(frame: string): StreamedEvent | undefined {
  let id = '';
  let data = '';
  for (const line of frame.split('\n')) {
    if (line.startsWith('id:')) id = line.slice(3).trim();
    else if (line.startsWith('data:')) data += line.slice(line.startsWith('data: ') ? 6 : 5);
  }
  if (data === '') return undefined;
  return { ...(JSON.parse(data) as ShortlinkEvent), id };
}

function timeText(time: Date | string): string {
  return typeof time === 'string' ? time : time.toISOString();
}

/** `URL.parse` without it: that arrived in Node 22, and the client runs on Node 18. */
function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

function listQuery(options: ListLinksOptions): URLSearchParams {
  const query = new URLSearchParams();
  if (options.domain !== undefined) query.set('domain', options.domain);
  if (options.q !== undefined) query.set('q', options.q);
  if (options.tags !== undefined && options.tags.length > 0) query.set('tag', options.tags.join(','));
  if (options.limit !== undefined) query.set('limit', String(options.limit));
  if (options.order !== undefined) query.set('order', options.order);
  if (options.cursor !== undefined) query.set('cursor', options.cursor);
  return query;
}

function statsQuery(options: StatsOptions): URLSearchParams {
  const query = new URLSearchParams();
  if (options.short !== undefined) query.set('short', options.short);
  if (options.domain !== undefined && options.domain !== '') query.set('domain', options.domain);
  if (options.from !== undefined) query.set('from', timeText(options.from));
  if (options.to !== undefined) query.set('to', timeText(options.to));
  if (options.interval !== undefined) query.set('interval', options.interval);
  return query;
}

/** One request; a success (or, with `redirect: 'manual'`, a redirect) or a ShortlinkError. */
async function send(fetcher: typeof fetch, url: string, timeoutMs: number, spec: RequestSpec, bearer: string | undefined): Promise<Response> {
  const headers: Record<string, string> = {};
  if (bearer !== undefined) headers.authorization = `Bearer ${bearer}`;
  let body: string | undefined;
  if (spec.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(spec.body);
  }
  const response = await fetcher(url, {
    method: spec.method,
    headers,
    ...(body === undefined ? {} : { body }),
    redirect: spec.redirect ?? 'error',
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (response.status >= 200 && response.status < 300) return response;
  if (spec.redirect === 'manual' && response.status >= 300 && response.status < 400) return response;
  throw await errorOf(response, spec.operation);
}

/** One page of an admin list; `next` is the cursor of the following page, undefined on the last. */
export interface AdminPage<T> {
  readonly items: T[];
  readonly next: string | undefined;
}

export interface AdminPageOptions {
  /** 1 to 1000; the service's default is 100. */
  readonly limit?: number;
  /** From the previous page's `next`. */
  readonly cursor?: string;
}

export interface AdminLinkSearch extends AdminPageOptions {
  /** Targets on this host or its subdomains. */
  readonly host?: string;
  /** Case-insensitive text in the shortcode, target or title. */
  readonly q?: string;
}

/** A domain's fallbacks (`putDomain`): each one omitted is none. */
export interface DomainFallbacks {
  /** Where a visit to an unknown shortcode of the domain is sent. */
  readonly notFoundUrl?: string;
  /** Where a visit to `/` of the domain is sent; not the domain's own root. */
  readonly rootUrl?: string;
  /** Where a visit to an expired, used-up or disabled link of the domain is sent. */
  readonly expiredUrl?: string;
}

export interface AdminClientOptions extends Omit<ShortlinkClientOptions, 'accessCode'> {
  /** ADMIN_TOKEN, sent as `Authorization: Bearer <token>`. */
  readonly token: string;
}

/**
 * The administration API (`/v1/admin/…`, enabled by ADMIN_TOKEN on the server). A separate
 * class: the admin token and an access code never stand in for each other.
 */
export class ShortlinkAdminClient {
  readonly baseUrl: string;
  readonly #token: string;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: AdminClientOptions) {
    this.baseUrl = new ShortlinkClient(options).baseUrl;
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  /** One page of accounts, by uid. */
  async listAccounts(options: AdminPageOptions = {}): Promise<AdminPage<AdminAccount>> {
    return this.#page<AdminAccount>('/v1/admin/accounts', pageQuery(options));
  }

  /** Changes an account's MaxLinks and/or disables (or enables) it; answers the account. */
  async updateAccount(uid: number, changes: { readonly maxLinks?: number; readonly disabled?: boolean }): Promise<AdminAccount> {
    const body: Record<string, string> = { uid: String(uid) };
    if (changes.maxLinks !== undefined) body.max_links = String(changes.maxLinks);
    if (changes.disabled !== undefined) body.disabled = String(changes.disabled);
    const response = await this.#send({ method: 'PATCH', path: '/v1/admin/account', body });
    return (await response.json()) as AdminAccount;
  }

  /** One page of links across accounts, oldest first. */
  async searchLinks(search: AdminLinkSearch = {}): Promise<AdminPage<LinkDetails>> {
    const query = pageQuery(search);
    if (search.host !== undefined) query.set('host', search.host);
    if (search.q !== undefined) query.set('q', search.q);
    return this.#page<LinkDetails>('/v1/admin/links', query);
  }

  /** Deletes any account's link; its shortcode becomes free again (on its domain). */
  async takeDownLink(link: LinkRef): Promise<void> {
    const response = await this.#send({ method: 'DELETE', path: `/v1/admin/link?${refQuery(link)}` });
    await response.body?.cancel();
  }

  /**
   * Registers the domain of `origin` (like `https://go.example.com`), or sets the fallbacks of
   * one already registered, as given: a fallback omitted is none. The default domain's host
   * sets the default domain's fallbacks.
   */
  async putDomain(origin: string, fallbacks: DomainFallbacks = {}): Promise<AdminDomain> {
    const body: Record<string, string> = { origin };
    if (fallbacks.notFoundUrl !== undefined) body.not_found_url = fallbacks.notFoundUrl;
    if (fallbacks.rootUrl !== undefined) body.root_url = fallbacks.rootUrl;
    if (fallbacks.expiredUrl !== undefined) body.expired_url = fallbacks.expiredUrl;
    const response = await this.#send({ method: 'PUT', path: '/v1/admin/domain', body }, 'manage domains');
    return (await response.json()) as AdminDomain;
  }

  /** Every domain with its fallbacks and links: the default first (`DateCreated` null), then by host. */
  async listDomains(): Promise<AdminDomain[]> {
    const response = await this.#send({ method: 'GET', path: '/v1/admin/domains' }, 'manage domains');
    return (await response.json()) as AdminDomain[];
  }

  /** Removes a registered domain; refused (409) while links use it, and for the default domain (400). */
  async deleteDomain(host: string): Promise<void> {
    const response = await this.#send({ method: 'DELETE', path: `/v1/admin/domain?${new URLSearchParams({ host })}` }, 'manage domains');
    await response.body?.cancel();
  }

  async #page<T>(path: string, query: URLSearchParams): Promise<AdminPage<T>> {
    const text = query.toString();
    const response = await this.#send({ method: 'GET', path: text === '' ? path : `${path}?${text}` });
    const next = /<([^>]*)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    return { items: (await response.json()) as T[], next: next === undefined ? undefined : new URL(next).searchParams.get('cursor') ?? undefined };
  }

  #send(spec: Omit<RequestSpec, 'authenticated' | 'operation'>, operation = 'administer'): Promise<Response> {
    return send(this.#fetch, `${this.baseUrl}${spec.path}`, this.#timeoutMs, { ...spec, authenticated: true, operation }, this.#token);
  }
}

function pageQuery(options: AdminPageOptions): URLSearchParams {
  const query = new URLSearchParams();
  if (options.limit !== undefined) query.set('limit', String(options.limit));
  if (options.cursor !== undefined) query.set('cursor', options.cursor);
  return query;
}

/** The shortcode of a short URL: its last path segment (shortcodes hold no `/`). */
function shortCodeOf(shortUrl: string): string {
  const path = parseUrl(shortUrl)?.pathname ?? shortUrl;
  const last = path.slice(path.lastIndexOf('/') + 1);
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

async function errorOf(response: Response, operation: string): Promise<ShortlinkError> {
  const text = await response.text().catch(() => '');
  const isPlain = (response.headers.get('content-type') ?? '').startsWith('text/plain');
  // Errors are one plain-text line; anything else (the HTML page of an unknown short URL, a
  // proxy's error page) is replaced by a line of our own.
  let message = isPlain ? text.trim().split('\n')[0] ?? '' : '';
  if (message === '') {
    message = response.status === 404
      ? `Unable to ${operation}: not found`
      : `Unable to ${operation}: HTTP ${response.status}${response.statusText === '' ? '' : ` ${response.statusText}`}`;
  }
  const retryAfter = Number(response.headers.get('retry-after') ?? NaN);
  return new ShortlinkError(response.status, message, Number.isFinite(retryAfter) ? retryAfter : undefined);
}
