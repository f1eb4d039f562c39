import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Metrics } from '../../metrics/metrics.ts';
import { Operation } from '../operations.ts';
import { PUBLIC_SECURITY, SecurityScheme, textResponse } from '../schemas.ts';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** True when the request carries `Authorization: Bearer <token>` (scheme case-insensitive). */
function carriesToken(request: FastifyRequest, expected: Buffer): boolean {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return false;
  const match = /^bearer +(\S+)\s*$/i.exec(header);
  // Digests have equal lengths, so the comparison takes the same time whatever was sent.
  return match !== null && timingSafeEqual(digest(match[1]!), expected);
}

/**
 * `/metrics`: the Prometheus text exposition. With a token configured (`METRICS_TOKEN`) a
 * scrape must send it as a Bearer token; without one, anyone who can reach the port can read
 * the numbers (none of which names a link or an account).
 */
export interface MetricsRouteDeps {
  readonly metrics: Metrics;
  /** METRICS_TOKEN: the Bearer token a scrape must send; anyone may scrape when undefined. */
  readonly token: string | undefined;
}

export function registerMetricsRoute(app: FastifyInstance, { metrics, token }: MetricsRouteDeps): void {
  const expected = token === undefined ? undefined : digest(token);
  // HEAD answers the headers GET would (a monitor checking the endpoint), without the body.
  const schema = (head: boolean) => ({
        operationId: head ? 'metricsHead' : 'metrics',
        summary: head ? 'Prometheus metrics, headers only' : 'Prometheus metrics',
        description:
          'Requests by route pattern and status with latency histograms, resolutions, redirects, links and accounts ' +
          'created or deleted, storage latency, group-commit batches, and Node process metrics. ' +
          (token === undefined ? 'Open: no METRICS_TOKEN is configured.' : 'Needs the METRICS_TOKEN as a Bearer token.'),
        tags: ['operations'],
        security: token === undefined ? PUBLIC_SECURITY : [{ [SecurityScheme.Metrics]: [] }],
        response: {
          200: textResponse('Prometheus text format 0.0.4'),
          ...(token === undefined
            ? {}
            : {
                401: {
                  ...textResponse('No valid metrics token', `Unable to ${Operation.Other}: a valid metrics token is required`),
                  headers: { 'WWW-Authenticate': { type: 'string', description: 'Bearer realm="shortlink"' } },
                },
              }),
        },
  });
  const scrape = async (request: FastifyRequest, reply: FastifyReply) => {
      if (expected !== undefined && !carriesToken(request, expected)) {
        return reply
          .code(401)
          // The contract's one WWW-Authenticate for every 401 (§3).
          .header('www-authenticate', 'Bearer realm="shortlink"')
          .type('text/plain; charset=utf-8')
          .send(`Unable to ${Operation.Other}: a valid metrics token is required`);
      }
      const body = await metrics.render();
      return reply.header('cache-control', 'no-store').type(metrics.contentType).send(body);
  };
  app.get('/metrics', { config: { quietLog: true }, schema: schema(false) }, scrape);
  app.head('/metrics', { config: { quietLog: true }, schema: schema(true) }, scrape);
}
