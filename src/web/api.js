// Talking to the public HTTP API, as any other client does: one function per operation the
// page uses. The shapes on the wire are the server's own TypeBox schemas, imported as types.
import { describeError } from './messages.js';
import { session } from './session.js';

/** @import { Account, ApiKey, CreatedApiKey, CreatedWebhook, Delivery, Domain, Link, LinkDetails, Statistics, Webhook } from '../http/schemas.ts' */

/**
 * One redirect rule as create and edit take it (CONTRACT §8.2).
 * @typedef {{ if: Record<string, string[] | Record<string, string[]>>, to: string }} RuleInput
 */

/**
 * What a create or an edit sends. On an edit an empty string clears that field (`rules` []
 * clears them, `password` '' removes it); on a create an empty field is simply left out.
 * @typedef {{ url?: string, short?: string, title?: string, tags?: string, expires?: string, max_visits?: string,
 *   domain?: string, forward_query?: 'true' | 'false', rules?: RuleInput[], password?: string }} LinkFields
 */

/**
 * What addresses one link: its shortcode and its domain (null or absent: the default domain).
 * Every call about one link sends both, or it would reach the default domain's link of the
 * same code.
 * @typedef {{ ShortCode: string, Domain?: string | null }} LinkId
 */

/**
 * The parameters naming a link: `short`, and `domain` when it is not the default's.
 * @param {LinkId} link
 * @returns {{ short: string, domain?: string }}
 */
export function linkParams(link) {
  return typeof link.Domain === 'string' && link.Domain !== '' ? { short: link.ShortCode, domain: link.Domain } : { short: link.ShortCode };
}

/** One page of the owner's links and the cursor of the next, if more remain. @typedef {{ links: LinkDetails[], next: string | null }} LinkPage */

/** A failed call, carrying the API's own error line (status 0: no answer, or one not understood). */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * One API call. Answers the body text; throws an ApiError carrying the API's own error line.
 * @param {string} method
 * @param {string} path
 * @param {{ params?: Record<string, string>, body?: unknown, auth?: boolean }} [options]
 * @returns {Promise<string>}
 */
async function call(method, path, options = {}) {
  return (await exchange(method, path, options)).text;
}

/**
 * One API call, answering the body text and the headers (for the list's Link header).
 * @param {string} method
 * @param {string} path
 * @param {{ params?: Record<string, string>, body?: unknown, auth?: boolean }} [options]
 * @returns {Promise<{ text: string, headers: Headers }>}
 */
async function exchange(method, path, { params, body, auth = true } = {}) {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(params ?? {})) url.searchParams.set(name, value);
  /** @type {Record<string, string>} */
  const headers = {};
  if (auth && session.code !== null) headers.authorization = `Bearer ${session.code}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
      redirect: 'error',
    });
  } catch {
    throw new ApiError(0, 'Unable to reach the service: check the connection and try again.');
  }
  const text = await response.text();
  if (!response.ok) {
    const line = text.trim().split('\n', 1)[0] ?? '';
    throw new ApiError(response.status, line !== '' && line.length < 5000 ? line : `The service answered ${response.status}.`);
  }
  return { text, headers: response.headers };
}

/**
 * The `cursor` of the `rel="next"` target in an RFC 8288 Link header, or null when there is
 * none (the last page). Only the cursor is kept: the next request is built here, on this
 * origin, whatever address the header names.
 * @param {string | null} header
 * @returns {string | null}
 */
export function nextCursor(header) {
  if (header === null) return null;
  for (const match of header.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+)*)/g)) {
    const [, target = '', parameters = ''] = match;
    const rels = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(parameters);
    const rel = rels === null ? '' : (rels[1] ?? rels[2] ?? '');
    if (!rel.toLowerCase().split(/\s+/).includes('next')) continue;
    try {
      return new URL(target, location.origin).searchParams.get('cursor');
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * The body of an answer, as the API documents it: the shapes are not checked again here.
 * @param {string} text
 * @returns {any}
 */
function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(0, 'The service sent an answer this page does not understand.');
  }
}

/**
 * The words to show for a failure, from the table of messages.js, and the field they concern.
 * @param {unknown} error
 * @returns {{ field: import('./messages.js').Field, text: string }}
 */
export function explain(error) {
  if (error instanceof ApiError) return describeError(error.status, error.message);
  return { field: 'form', text: 'Something went wrong in this page. Reload it and try again.' };
}

/**
 * The words to show for a failure (see explain).
 * @param {unknown} error
 */
export function messageOf(error) {
  return explain(error).text;
}

/** @param {unknown} error true when an answer says the account is disabled */
export function isDisabledError(error) {
  return error instanceof ApiError && error.status === 403 && /: the account is disabled$/.test(error.message);
}

/** @returns {Promise<Account>} a new account, access code included (shown this once) */
export async function newAccount() {
  return parseJson(await call('POST', '/v1/new_account', { auth: false }));
}

/** @returns {Promise<Account>} the signed-in account */
export async function getAccount() {
  return parseJson(await call('GET', '/v1/get_account'));
}

/** The list's orders (CONTRACT §7.1). @typedef {'oldest' | 'newest' | 'visits'} Order */

/**
 * One page of the signed-in account's links in `order` (the API's default, oldest first,
 * when left out), filtered by `q` (text), `tag` (comma-separated, all must match) and
 * `domain` (a host) when given.
 * @param {{ q?: string, tag?: string, domain?: string, order?: Order, limit: number, cursor?: string | null }} options
 * @returns {Promise<LinkPage>}
 */
export async function listLinks({ q = '', tag = '', domain = '', order = 'oldest', limit, cursor = null }) {
  /** @type {Record<string, string>} */
  const params = { limit: String(limit) };
  if (q !== '') params.q = q;
  if (tag !== '') params.tag = tag;
  if (domain !== '') params.domain = domain;
  if (order !== 'oldest') params.order = order;
  if (cursor !== null) params.cursor = cursor;
  const { text, headers } = await exchange('GET', '/v1/links', { params });
  const links = parseJson(text);
  return { links: Array.isArray(links) ? links : [], next: nextCursor(headers.get('link')) };
}

/**
 * @param {LinkFields} body
 * @returns {Promise<string>} the new short URL
 */
export async function createLink(body) {
  return call('POST', '/v1/link', { body });
}

/**
 * One item of a bulk create's answer (CONTRACT §8.4): the new short URL, or the status and
 * error line a single create would have answered.
 * @typedef {{ ShortUrl: string } | { Status: number, Error: string }} BulkResult
 */

/** How many links one bulk create takes at most (CONTRACT §8.4). */
export const BULK_MAX = 100;

/**
 * Creates up to BULK_MAX links at once (`POST /v1/links`); each item succeeds or fails alone.
 * @param {LinkFields[]} items
 * @returns {Promise<BulkResult[]>} one result per item, in order
 */
export async function createLinks(items) {
  const results = parseJson(await call('POST', '/v1/links', { body: items }));
  if (!Array.isArray(results) || results.length !== items.length) {
    throw new ApiError(0, 'The service sent an answer this page does not understand.');
  }
  return results;
}

/**
 * Changes a link's fields: only those given; an empty string clears one.
 * @param {LinkId} link
 * @param {LinkFields} fields
 * @returns {Promise<LinkDetails>} the link as it now is
 */
export async function updateLink(link, fields) {
  return parseJson(await call('PATCH', '/v1/link', { body: { ...linkParams(link), ...fields } }));
}

/** @returns {Promise<Domain[]>} the domains the account may use, the default first */
export async function listDomains() {
  const domains = parseJson(await call('GET', '/v1/domains'));
  return Array.isArray(domains) ? domains : [];
}

/** @returns {Promise<Account>} the account with its new access code (shown this once) */
export async function rotateAccessCode() {
  return parseJson(await call('POST', '/v1/rotate_access_code'));
}

/** Deletes the signed-in account and every link it holds. */
export async function deleteAccount() {
  await call('DELETE', '/v1/account');
}

/** @param {LinkId} link */
export async function deleteLink(link) {
  await call('DELETE', '/v1/link', { params: linkParams(link) });
}

/**
 * Resolves a shortcode without an account (which counts as one access).
 * @param {string} code
 * @returns {Promise<Link>}
 */
export async function lookUp(code) {
  return parseJson(await call('GET', `/v1/get/${encodeURIComponent(code)}`, { auth: false }));
}

/**
 * What the statistics are asked for: one link (`short`, on `domain` when not the default's)
 * or the whole account (none), over a period (`from`, `to`, RFC 3339) by `interval`.
 * @typedef {{ short?: string, domain?: string | null, from: string, to: string, interval: 'hour' | 'day' | 'month' }} StatsQuery
 */

/** @param {StatsQuery} query */
function statsParams({ short, domain, from, to, interval }) {
  /** @type {Record<string, string>} */
  const params = { from, to, interval };
  if (short !== undefined) Object.assign(params, linkParams({ ShortCode: short, Domain: domain }));
  return params;
}

/**
 * Visit statistics of one link or of the whole account (`GET /v1/stats`).
 * @param {StatsQuery} query
 * @returns {Promise<Statistics>}
 */
export async function getStats(query) {
  return parseJson(await call('GET', '/v1/stats', { params: statsParams(query) }));
}

/**
 * The same statistics' series as CSV (`time,visits,bots`), as the API writes it.
 * @param {StatsQuery} query
 * @returns {Promise<string>}
 */
export async function getStatsCsv(query) {
  return call('GET', '/v1/stats', { params: { ...statsParams(query), format: 'csv' } });
}

/** @returns {Promise<Webhook[]>} the account's webhooks, without their secrets */
export async function listWebhooks() {
  return parseJson(await call('GET', '/v1/webhooks'));
}

/**
 * @param {string} url
 * @param {string[]} events
 * @returns {Promise<CreatedWebhook>} the new webhook with its secret (shown this once)
 */
export async function createWebhook(url, events) {
  return parseJson(await call('POST', '/v1/webhooks', { body: { url, events: events.join(',') } }));
}

/** @param {string} id */
export async function deleteWebhook(id) {
  await call('DELETE', '/v1/webhooks', { params: { id } });
}

/**
 * @param {string} id
 * @returns {Promise<Delivery[]>} the webhook's last delivery attempts
 */
export async function listDeliveries(id) {
  return parseJson(await call('GET', '/v1/webhooks/deliveries', { params: { id } }));
}

/** @returns {Promise<ApiKey[]>} the account's API keys, without the keys themselves */
export async function listKeys() {
  return parseJson(await call('GET', '/v1/keys'));
}

/**
 * @param {string} name
 * @param {string[]} scopes
 * @returns {Promise<CreatedApiKey>} the new key with the key itself (shown this once)
 */
export async function createKey(name, scopes) {
  return parseJson(await call('POST', '/v1/keys', { body: { name, scopes: scopes.join(',') } }));
}

/** @param {string} id */
export async function deleteKey(id) {
  await call('DELETE', '/v1/keys', { params: { id } });
}
