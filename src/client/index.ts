/**
 * A typed client for the Shortlink HTTP API, built on the global `fetch`.
 *
 *     import { ShortlinkClient } from 'shortlink/client';
 *     const anonymous = new ShortlinkClient({ baseUrl: 'http://localhost:8080' });
 *     const account = await anonymous.newAccount();
 *     const client = anonymous.withAccessCode(account.AccessCode);
 *     const shortUrl = await client.createLink('https://example.com/a/long/path');
 *
 * Every answer other than a success becomes a `ShortlinkError` carrying the HTTP status and
 * the service's one-line message (`Unable to create link: …`).
 */

import type { Account, Link } from '../http/schemas.ts';

/**
 * An account (`newAccount`, `getAccount`) and a link (`resolve`, `listLinks`): the types of
 * the service's own response schemas, so the client cannot drift from what the service sends.
 * Type-only: the client loads nothing of the server at run time. The AccessCode is the
 * account's only credential; keep it, the service cannot show it again.
 */
export type { Account, Link };

export interface CreateLinkOptions {
  /** A shortcode of your choice (5–2000 of `A–Z a–z 0–9 - . _ ~`); generated when omitted. */
  readonly short?: string;
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

type Method = 'GET' | 'POST' | 'DELETE';

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
    const parsed = URL.parse(options.baseUrl);
    if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new TypeError(`baseUrl must be an http(s) URL, got ${JSON.stringify(options.baseUrl)}`);
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#accessCode = options.accessCode;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#fetch = options.fetch ?? globalThis.fetch;
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
    const body: Record<string, string> = { url };
    if (options.short !== undefined) body.short = options.short;
    const response = await this.#send({ method: 'POST', path: '/v1/link', authenticated: true, operation: 'create link', body });
    return response.text();
  }

  /** The account's links, oldest first. */
  async listLinks(): Promise<Link[]> {
    return this.#json<Link[]>({ method: 'GET', path: '/v1/links', authenticated: true, operation: 'list links' });
  }

  /** Deletes one of the account's links; its shortcode becomes free again. */
  async deleteLink(shortCode: string): Promise<void> {
    const query = new URLSearchParams({ short: shortCode });
    const response = await this.#send({ method: 'DELETE', path: `/v1/link?${query}`, authenticated: true, operation: 'delete link' });
    await response.body?.cancel();
  }

  /** Looks a link up. This counts one access, and the answer includes it. */
  async resolve(shortCode: string): Promise<Link> {
    return this.#json<Link>({
      method: 'GET', path: `/v1/get/${encodeURIComponent(shortCode)}`, authenticated: false, operation: 'resolve link',
    });
  }

  /**
   * Requests the short URL itself, as a browser would, without following the redirect, and
   * returns its `Location`: the target, normalised by the WHATWG URL parser. Counts one access.
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

  async #json<T>(spec: RequestSpec): Promise<T> {
    const response = await this.#send(spec);
    return (await response.json()) as T;
  }

  async #send(spec: RequestSpec): Promise<Response> {
    const headers: Record<string, string> = {};
    if (spec.authenticated) {
      if (this.#accessCode === undefined) {
        throw new ShortlinkError(401, `Unable to ${spec.operation}: the client has no access code`);
      }
      headers.authorization = `Bearer ${this.#accessCode}`;
    }
    let body: string | undefined;
    if (spec.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(spec.body);
    }
    const response = await this.#fetch(`${this.baseUrl}${spec.path}`, {
      method: spec.method,
      headers,
      ...(body === undefined ? {} : { body }),
      redirect: spec.redirect ?? 'error',
      signal: AbortSignal.timeout(this.#timeoutMs),
    });
    if (response.status >= 200 && response.status < 300) return response;
    if (spec.redirect === 'manual' && response.status >= 300 && response.status < 400) return response;
    throw await errorOf(response, spec.operation);
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
