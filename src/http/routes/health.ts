import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Operation } from '../operations.ts';
import { errorResponses, MALFORMED_REQUEST_RESPONSE, PUBLIC_SECURITY, textResponse } from '../schemas.ts';
import { PLAIN_TEXT } from '../send-error.ts';

/** One dependency `/readyz` asks about. */
export interface ReadinessCheck {
  /** Named in the answer: `Unable to handle request: <name> unavailable`. */
  readonly name: string;
  /**
   * Resolves when the dependency answers; rejects (or takes too long) when it does not. A
   * rejection carrying `reason` (StorageNotReady) names the failure in the answer instead of
   * `<name> unavailable`, and one with `retry: false` drops the Retry-After.
   */
  check(): Promise<void>;
  /**
   * False for a dependency the service can do without (Redis: rate limits fall back to
   * per-process counters). Its failure is reported in the body, but the instance stays
   * ready: taking every instance out of a load balancer because Redis is away would turn
   * a degraded service into no service. True when omitted.
   */
  readonly required?: boolean;
}

/** A check still pending after this long counts as failed: a probe must answer promptly. */
export const READINESS_TIMEOUT_MS = 2000;


interface Failure {
  /** For the debug log line. */
  readonly detail: string;
  /** For the answer. */
  readonly reason: string;
  readonly retry: boolean;
}

/** Settles with the failure, or undefined when the check passed in time. */
async function run(check: ReadinessCheck, timeoutMs: number): Promise<Failure | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const unavailable = (detail: string): Failure => ({ detail, reason: `${check.name} unavailable`, retry: true });
  const timeout = new Promise<Failure>((resolve) => {
    timer = setTimeout(() => resolve(unavailable(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([check.check().then(() => undefined), timeout]);
  } catch (error) {
    const { reason, retry } = error as { reason?: unknown; retry?: unknown };
    const detail = error instanceof Error ? error.message : String(error);
    return typeof reason === 'string' ? { detail, reason, retry: retry !== false } : unavailable(detail);
  } finally {
    clearTimeout(timer);
  }
}

function sendText(reply: FastifyReply, body: string) {
  return reply.header('cache-control', 'no-store').type(PLAIN_TEXT).send(body);
}

/**
 * The contract's 503, written here rather than thrown: the error handler would log every
 * failed probe as an error, every few seconds, on top of the failures it reports.
 */
function sendUnavailable(reply: FastifyReply, reason: string, retry = true) {
  if (retry) reply.header('retry-after', '1');
  return sendText(reply.code(503), `Unable to ${Operation.Other}: ${reason}`);
}

/**
 * `/healthz` (liveness: the process answers) and `/readyz` (readiness: storage answers,
 * and the service is not shutting down). Neither is rate limited, and both log at debug:
 * probes come every few seconds.
 */
export interface HealthRoutesDeps {
  /** Asked by `/readyz`, all at once. */
  readonly checks: readonly ReadinessCheck[];
  /** True once shutdown has begun. */
  readonly isClosing: () => boolean;
  /** READINESS_TIMEOUT_MS when omitted. */
  readonly timeoutMs?: number;
}

export function registerHealthRoutes(
  app: FastifyInstance,
  { checks, isClosing, timeoutMs = READINESS_TIMEOUT_MS }: HealthRoutesDeps,
): void {
  const config = { quietLog: true };

  const liveSchema = (head: boolean) => ({
    operationId: head ? 'livenessHead' : 'liveness',
    summary: 'Liveness: the process is up',
    description: 'Touches nothing else; answers as long as the event loop runs.',
    tags: ['operations'],
    security: PUBLIC_SECURITY,
    response: { 200: textResponse('Alive', 'ok'), 400: MALFORMED_REQUEST_RESPONSE },
  });
  const live = (_request: FastifyRequest, reply: FastifyReply) => sendText(reply, 'ok');
  app.get('/healthz', { config, schema: liveSchema(false) }, live);
  app.head('/healthz', { config, schema: liveSchema(true) }, live);

  const readySchema = (head: boolean) => ({
    operationId: head ? 'readinessHead' : 'readiness',
    summary: 'Readiness: storage answers and the service is not shutting down',
    description:
      `Asks every dependency (the database; Redis when configured, which only degrades the answer) within ` +
      `${timeoutMs} ms. The database is not ready either while its latest write failed (a full disk answers ` +
      `reads, not writes) until a write or the probe write succeeds, nor once it reported damaged data ` +
      `("storage damaged", without Retry-After: waiting will not cure it). ` +
      `503 once shutdown has begun, so load balancers stop sending requests.`,
    tags: ['operations'],
    security: PUBLIC_SECURITY,
    response: {
      400: MALFORMED_REQUEST_RESPONSE,
      200: textResponse('Ready; names any optional dependency that is away', 'ok'),
      503: {
        ...errorResponses(Operation.Other, [503])[503] as object,
        description: 'Not ready: a required dependency does not answer, or the service is shutting down',
      },
    },
  });
  const ready = async (request: FastifyRequest, reply: FastifyReply) => {
    if (isClosing()) return sendUnavailable(reply, 'shutting down');
    const failures = await Promise.all(checks.map((check) => run(check, timeoutMs)));
    const required: string[] = [];
    const optional: string[] = [];
    let retry = true;
    failures.forEach((failure, i) => {
      if (failure === undefined) return;
      const check = checks[i]!;
      request.log.debug({ check: check.name, reason: failure.detail }, 'readiness check failed');
      (check.required === false ? optional : required).push(failure.reason);
      if (check.required !== false && !failure.retry) retry = false;
    });
    if (required.length > 0) return sendUnavailable(reply, [...required, ...optional].join(', '), retry);
    return sendText(reply, optional.length === 0 ? 'ok' : `ok (${optional.join(', ')})`);
  };
  app.get('/readyz', { config, schema: readySchema(false) }, ready);
  app.head('/readyz', { config, schema: readySchema(true) }, ready);
}
