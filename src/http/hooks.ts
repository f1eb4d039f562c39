import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Operation } from './operations.ts';
import { REQUEST_ID_HEADER } from './request-id.ts';
import { sendError } from './send-error.ts';

export interface RequestHookOptions {
  /** Told about every request; warns of proxy headers nobody reads (forwarded-warning.ts). */
  readonly inspectForwarded?: ((request: FastifyRequest) => void) | undefined;
}

/** True when the request names its Host more than once (Node keeps the first and drops the rest). */
export function hasSeveralHosts(rawHeaders: readonly string[]): boolean {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host' && ++seen > 1) return true;
  }
  return false;
}

/**
 * True when every expectation the `Expect` list names is one this server meets: only
 * `100-continue` (RFC 9110 §10.1.1; the field is a comma-separated list).
 */
export function expectationsMet(expect: string): boolean {
  return expect.split(',').every((item) => item.trim().toLowerCase() === '100-continue');
}

/**
 * Headers every answer carries, and the refusal of requests HTTP itself forbids: a Host-less
 * or several-Host HTTP/1.1 request (RFC 9112 §3.2: 400), and an expectation other than
 * `100-continue` (RFC 9110 §10.1.1: 417), in the contract's plain text.
 */
export function registerRequestHooks(app: FastifyInstance, { inspectForwarded }: RequestHookOptions = {}): void {
  // Node answers an unknown Expect with a bare 417 itself unless someone listens for it;
  // listening hands the request to Fastify like any other, and the hook below refuses it.
  app.server.on('checkExpectation', (req, res) => app.server.emit('request', req, res));
  // Node sends `100 Continue` for any list that mentions 100-continue (`100-continue, bogus`
  // too) unless someone listens: only a list of nothing else is told to go on; the rest is
  // handed over without it and refused below, so the client never sends its body.
  app.server.on('checkContinue', (req, res) => {
    if (expectationsMet(String(req.headers.expect))) res.writeContinue();
    app.server.emit('request', req, res);
  });
  // Callback style on purpose: this runs on every request, and an async hook costs a promise.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header(REQUEST_ID_HEADER, request.id);
    const headers = request.headers;
    if (headers.host === undefined && request.raw.httpVersion === '1.1') {
      sendError(reply, Operation.Other, 400, 'the Host header is required');
      return;
    }
    if (hasSeveralHosts(request.raw.rawHeaders)) {
      sendError(reply, Operation.Other, 400, 'the Host header must be sent once');
      return;
    }
    const expect = headers.expect;
    if (expect !== undefined && !expectationsMet(expect)) {
      sendError(reply, Operation.Other, 417, 'the Expect header is not supported (only 100-continue is)');
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
