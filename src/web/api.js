// Talking to the public HTTP API, as any other client does: one function per operation the
// page uses. The shapes on the wire are the server's own TypeBox schemas, imported as types.
import { session } from './session.js';

/** @import { Account, Link } from '../http/schemas.ts' */
/** @typedef {import('typebox').Static<typeof import('../http/schemas.ts').CreateLinkBody>} CreateLinkBody */

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
async function call(method, path, { params, body, auth = true } = {}) {
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
  return text;
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
 * The words to show for a failure: the API's own, or a plain one for a fault in this page.
 * @param {unknown} error
 */
export function messageOf(error) {
  return error instanceof ApiError ? error.message : 'Something went wrong in this page. Reload it and try again.';
}

/** @returns {Promise<Account>} a new account, access code included (shown this once) */
export async function newAccount() {
  return parseJson(await call('POST', '/v1/new_account', { auth: false }));
}

/** @returns {Promise<Account>} the signed-in account */
export async function getAccount() {
  return parseJson(await call('GET', '/v1/get_account'));
}

/** @returns {Promise<Link[]>} the signed-in account's links */
export async function listLinks() {
  const links = parseJson(await call('GET', '/v1/links'));
  return Array.isArray(links) ? links : [];
}

/**
 * @param {CreateLinkBody} body
 * @returns {Promise<string>} the new short URL
 */
export async function createLink(body) {
  return call('POST', '/v1/link', { body });
}

/** @param {string} short */
export async function deleteLink(short) {
  await call('DELETE', '/v1/link', { params: { short } });
}

/**
 * Resolves a shortcode without an account (which counts as one access).
 * @param {string} code
 * @returns {Promise<Link>}
 */
export async function lookUp(code) {
  return parseJson(await call('GET', `/v1/get/${encodeURIComponent(code)}`, { auth: false }));
}
