import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import { pino } from 'pino';
import type { CountedEvent } from '../metrics/metrics.ts';
import { clientAddress } from './client-address.ts';
import { redactText, redactUrl } from './redact.ts';
import type { RequestDeadline } from './request-deadline.ts';

/** A User-Agent longer than this is cut in the log: the header may be up to 16 KiB. */
const USER_AGENT_LOG_CHARS = 256;

const { chindingsSym, formattersSym, hooksSym, lsCacheSym, messageKeySym, needsMetadataGsym, streamSym, timeSym } = pino.symbols;
/** pino's number for `info`. */
const INFO = 30;

/** A string field as pino writes it (its own escaping is JSON's), or nothing when absent. */
function field(name: string, value: string | undefined): string {
  return value === undefined ? '' : `,"${name}":${JSON.stringify(value)}`;
}

/**
 * The `request completed` line at info, written the way pino would write
 * `log.info(fields, 'request completed')` (level, time, the logger's bindings with the
 * request id, the fields in order, msg), byte for byte, without going through pino's generic
 * serializer: that loop over the object's keys measured about 3 µs a line, most of a
 * redirect's logging (docs/performance.md). Answers false (the caller logs through pino) when the logger
 * is set up in a way this does not reproduce (formatters, hooks, a multistream).
 */
export function writeCompletedLine(
  log: FastifyBaseLogger, method: string, url: string, statusCode: number, responseTime: number,
  remoteAddress: string | undefined, userAgent: string | undefined,
): boolean {
  // pino's internals, named by `pino.symbols` (stable since pino 7).
  const internals = log as unknown as Record<symbol, unknown>;
  const stream = internals[streamSym] as { write(line: string): void; [key: symbol]: unknown } | undefined;
  const formatters = internals[formattersSym] as { log?: unknown } | undefined;
  const hooks = internals[hooksSym] as { streamWrite?: unknown } | undefined;
  const levelPrefix = (internals[lsCacheSym] as Record<number, string> | undefined)?.[INFO];
  if (stream === undefined || levelPrefix === undefined || internals[messageKeySym] !== 'msg' || formatters?.log !== undefined ||
      hooks?.streamWrite !== undefined || stream[needsMetadataGsym] === true) {
    return false;
  }
  if (!(log as unknown as { isLevelEnabled(level: string): boolean }).isLevelEnabled('info')) return true;
  const time = (internals[timeSym] as () => string)();
  stream.write(
    `${levelPrefix}${time}${internals[chindingsSym] as string}${field('method', method)}${field('url', url)}` +
      `,"statusCode":${statusCode},"responseTime":${Number.isFinite(responseTime) ? responseTime : null}` +
      `${field('remoteAddress', remoteAddress)}${field('userAgent', userAgent)},"msg":"request completed"}\n`,
  );
  return true;
}

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
    const loggedAgent = userAgent === undefined ? undefined : redactText(userAgent.slice(0, USER_AGENT_LOG_CHARS));
    if (!error && config?.quietLog !== true) {
      const written = writeCompletedLine(
        request.log, request.method, redactUrl(request.url), reply.statusCode, Math.round(elapsed * 100) / 100, clientAddress(request), loggedAgent,
      );
      if (written) return;
    }
    const fields = {
      method: request.method,
      url: redactUrl(request.url),
      statusCode: reply.statusCode,
      responseTime: Math.round(elapsed * 100) / 100,
      // After TRUST_PROXY: the address rate limits count.
      remoteAddress: clientAddress(request),
      // Redacted like the URL: a client may put its access code anywhere.
      userAgent: loggedAgent,
    };
    if (error) request.log.error({ ...fields, err: error }, 'request failed');
    else if (config?.quietLog === true) request.log.debug(fields, 'request completed');
    else request.log.info(fields, 'request completed');
  }
}
