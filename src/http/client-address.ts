/**
 * The client's address as the service counts it (after TRUST_PROXY), worked out once per
 * request. Fastify's `request.ip` runs proxy-addr over X-Forwarded-For, parsing every address
 * in it, on each read; a visit reads it for its statistics, its log line and its rate limits.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** `request.ip` once read (clientAddress); null until then. */
    clientAddress: string | null;
  }
}

/** Declares the per-request slot on `app` (so every request has the same shape). */
export function decorateClientAddress(app: FastifyInstance): void {
  app.decorateRequest('clientAddress', null);
}

/** `request.ip`, read once per request. */
export function clientAddress(request: FastifyRequest): string {
  return (request.clientAddress ??= request.ip);
}
