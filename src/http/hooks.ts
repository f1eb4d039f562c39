import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Operation } from './operations.ts';
import { REQUEST_ID_HEADER } from './request-id.ts';
import { sendError } from './send-error.ts';

export interface RequestHookOptions {
  /** Told about every request; warns of proxy headers nobody reads (forwarded-warning.ts). */
  readonly inspectForwarded?: ((request: FastifyRequest) => void) | undefined;
}

/** Headers every answer carries, and the refusal of a Host-less HTTP/1.1 request. */
export function registerRequestHooks(app: FastifyInstance, { inspectForwarded }: RequestHookOptions = {}): void {
  // Callback style on purpose: this runs on every request, and an async hook costs a promise.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header(REQUEST_ID_HEADER, request.id);
    const headers = request.headers;
    if (headers.host === undefined && request.raw.httpVersion === '1.1') {
      sendError(reply, Operation.Other, 400, 'the Host header is required');
      return;
    }
    inspectForwarded?.(request);
    done();
  });
}

/**
 * Fastify marks requests that *arrive* after close() began with `Connection: close`, but not
 * the ones already in flight: their connection would stay open after the answer, idle until
 * the keep-alive timeout, and hold shutdown up for that long (or, if the client keeps using
 * it, until the shutdown deadline). Close those connections after their answer too.
 *
 * Returns whether closing has begun (`/readyz` answers 503 from then on).
 */
export function registerClosingHooks(app: FastifyInstance): () => boolean {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  return () => closing;
}
