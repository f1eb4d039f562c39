import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { redactUrl } from './redact.ts';

/**
 * One log line per request, written when the response is done, with the URL redacted.
 * Fastify's default writes two lines per request and logs the raw URL, which would put an
 * `auth=` access code into the log.
 */
export class RequestLog extends LogController {
  override incomingRequest(): void {}

  override routeNotFound(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const fields = {
      method: request.method,
      url: redactUrl(request.url),
      statusCode: reply.statusCode,
      responseTime: Math.round(reply.elapsedTime * 100) / 100,
    };
    if (error) request.log.error({ ...fields, err: error }, 'request failed');
    else request.log.info(fields, 'request completed');
  }
}
