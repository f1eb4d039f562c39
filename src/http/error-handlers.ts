import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendNotFoundPage } from '../web/not-found-page.ts';
import { describeError } from './error-table.ts';
import { Operation } from './operations.ts';
import { REQUEST_ID_HEADER } from './request-id.ts';
import type { RequestLog } from './request-log.ts';
import { sendError } from './send-error.ts';
import { causeOf, createSpacedLog, type SpacedLogOptions } from './spaced-log.ts';

function operationOf(request: FastifyRequest): string {
  return request.routeOptions.config.operation ?? Operation.Other;
}

/** True for `/{one-segment}`: the short-URL space, where browsers get the HTML 404 page. */
function isShortUrlPath(url: string): boolean {
  const path = url.split('?', 1)[0]!;
  return path.length > 1 && path.lastIndexOf('/') === 0;
}

/**
 * Errors thrown by routes and requests that match no route, in the contract's words. A 5xx is
 * logged with its detail once per cause per 10 s (`spacing`), with the count of those held
 * back; every request still gets its own request line (request-log.ts).
 */
export function registerErrorHandlers(app: FastifyInstance, spacing: SpacedLogOptions = {}): void {
  const failures = createSpacedLog(spacing);
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const { status, reason, retryAfter } = describeError(error);
    if (status >= 500) {
      failures.report(`${status} ${causeOf(error)}`, (suppressed) =>
        request.log.error(suppressed === 0 ? { err: error } : { err: error, suppressed }, 'request failed'),
      );
    }
    return sendError(reply, operationOf(request), status, reason, retryAfter);
  });
  app.setNotFoundHandler((request, reply) => {
    if (request.method === 'GET' && isShortUrlPath(request.url)) return sendNotFoundPage(reply);
    return sendError(reply, Operation.Other, 404, 'no such route');
  });
}

/** Fastify's `frameworkErrors` option: requests refused before routing (a bad URL, a bad id). */
export function createFrameworkErrorHandler(requestLog: RequestLog) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // Requests refused before routing get no completion listener from Fastify: log them here.
    reply.raw.once('finish', () => requestLog.requestCompleted(null, request, reply));
    // Refused before the onRequest hook that sets it on every other answer.
    reply.header('x-content-type-options', 'nosniff');
    reply.header(REQUEST_ID_HEADER, request.id);
    if (request.method === 'GET' && isShortUrlPath(request.url)) return sendNotFoundPage(reply);
    const { status, reason } = describeError(error);
    return sendError(reply, Operation.Other, status, reason);
  };
}
