import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { holdsSecretShape } from './redact.ts';

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * An id a proxy or client may choose: short, and from characters that need no escaping in
 * a header, a log line or a URL. Anything else (including two headers, which Node joins with
 * ", ") is replaced, so a client cannot forge log lines or bloat them through this header.
 */
const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Fresh ids are this process's random prefix and a counter: unique across processes and
 * restarts (48 random bits), and about five times cheaper than a UUID per request
 * (crypto.randomUUID measured ~150 ns here, this ~30 ns).
 */
const prefix = randomBytes(6).toString('hex');
let counter = 0;

/**
 * Fastify's `genReqId`: keeps a sane incoming `X-Request-Id` (so one id follows a request
 * through the proxy and this service), otherwise makes a fresh one. An id shaped like a
 * secret (a UUID, as access codes are, or an API key) is replaced too: it would be written
 * into every log line of the request and echoed back.
 */
export function requestIdOf(raw: IncomingMessage): string {
  const given = raw.headers[REQUEST_ID_HEADER];
  if (typeof given === 'string' && SANE_ID.test(given) && !holdsSecretShape(given)) return given;
  counter = counter === Number.MAX_SAFE_INTEGER ? 0 : counter + 1;
  return `${prefix}-${counter.toString(36)}`;
}
