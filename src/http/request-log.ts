import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { CountedEvent } from '../metrics/metrics.ts';
import { redactText, redactUrl } from './redact.ts';
import type { RequestDeadline } from './request-deadline.ts';

/** A User-Agent longer than this is cut in the log: the header may be up to 16 KiB. */
const USER_AGENT_LOG_CHARS = 256;

/** Told about every finished request: route pattern (undefined when none matched), method, status, counted event, milliseconds. */
export type ObserveRequest = (
  route: string | undefined,
  method: string,
  status: number,
  countedEvent: CountedEvent | undefined,
  elapsedMs: number,
) => void;

/**
 * One log line per request, written when the response is done, with the URL redacted, the
 * client's address and its User-Agent.
 * Fastify's default writes two lines per request and logs the raw URL, which would put an
 * `auth=` access code into the log. Every line of a request carries its id (`reqId`, the
 * `X-Request-Id` it was answered with): Fastify binds it to `request.log`.
 *
 * Fastify calls `requestCompleted` once for every request that was routed (also 404s), and
 * the framework-error handler (error-handlers.ts) calls it for those refused before routing.
 * So it is also where metrics learn about requests, and where the whole-request deadline
 * starts and stops its clock: no extra hook runs per request.
 */
export class RequestLog extends LogController {
  readonly #observe: ObserveRequest | undefined;
  readonly #deadline: RequestDeadline | undefined;

  constructor(observe?: ObserveRequest, deadline?: RequestDeadline) {
    super({ requestIdLogLabel: 'reqId' });
    this.#observe = observe;
    this.#deadline = deadline;
  }

  override incomingRequest(_request: FastifyRequest, reply: FastifyReply): void {
    this.#deadline?.start(reply);
  }

  override routeNotFound(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    this.#deadline?.finish(reply);
    const route = request.routeOptions;
    const config = route.config as Partial<typeof route.config> | undefined;
    const elapsed = reply.elapsedTime;
    this.#observe?.(route.url, request.method, reply.statusCode, config?.countedEvent, elapsed);
    const userAgent = request.headers['user-agent'];
    const fields = {
      method: request.method,
      url: redactUrl(request.url),
      statusCode: reply.statusCode,
      responseTime: Math.round(elapsed * 100) / 100,
      // After TRUST_PROXY: the address rate limits count.
      remoteAddress: request.ip,
      // Redacted like the URL: a client may put its access code anywhere.
      userAgent: userAgent === undefined ? undefined : redactText(userAgent.slice(0, USER_AGENT_LOG_CHARS)),
    };
    if (error) request.log.error({ ...fields, err: error }, 'request failed');
    else if (config?.quietLog === true) request.log.debug(fields, 'request completed');
    else request.log.info(fields, 'request completed');
  }
}
