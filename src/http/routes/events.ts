/**
 * `GET /v1/events` (CONTRACT §7.5, ADR 19): the account's events as Server-Sent Events, live
 * from the moment the stream opens (no replay: `Last-Event-ID` is ignored; webhooks are the
 * durable way). Each event is `id:`, `event:` (its type) and `data:` (its `{type, timestamp,
 * data}` JSON) lines; a comment line every 15 s keeps proxies from closing an idle stream.
 *
 * A stream is a request that never finishes by itself, so it is taken off the whole-request
 * deadline once it has begun, counted against caps (per account and in all), dropped when
 * its reader falls too far behind, and ended when the server closes, so that shutdown
 * (guarantee 6) does not wait for it.
 */
import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { assertActive } from '../../accounts/account-service.ts';
import { DomainError, ErrorCode } from '../../errors.ts';
import type { LiveEvents, ServiceEvent } from '../../events/events.ts';
import { EventSchema } from '../event-schemas.ts';
import { Operation } from '../operations.ts';
import { accountOf, type Authenticate } from '../route-helpers.ts';
import { ACCESS_CODE_SECURITY, AuthQuery, errorResponses } from '../schemas.ts';

export interface EventStreamBounds {
  readonly perAccount: number;
  readonly total: number;
  readonly heartbeatMs: number;
  readonly maxQueuedBytes: number;
  readonly retryMs: number;
}

export const EVENT_STREAM_BOUNDS: EventStreamBounds = {
  /** Streams one account may hold open at once (tabs, CLIs). */
  perAccount: 10,
  /** Streams this process holds open at once. */
  total: 1000,
  /** A comment line this often. */
  heartbeatMs: 15_000,
  /** Bytes queued for a reader that does not keep up before its stream is closed. */
  maxQueuedBytes: 1 << 20,
  /** What the stream asks EventSource to wait before reconnecting. */
  retryMs: 3000,
};

export interface EventRoutesDeps {
  readonly live: LiveEvents;
  readonly authenticate: Authenticate;
  /** Takes a request off the whole-request deadline (request-deadline.ts). */
  readonly untimed: (reply: FastifyReply) => void;
  /** True once the server has begun to close: no new streams then. */
  readonly isClosing: () => boolean;
  /** Tests shorten them. */
  readonly bounds?: Partial<EventStreamBounds>;
}

/** One event as SSE lines. The JSON has no line breaks, so one `data:` line carries it. */
export function sseFrame(event: ServiceEvent): string {
  const body = JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${body}\n\n`;
}

export function registerEventRoutes(app: FastifyInstance, { live, authenticate, untimed, isClosing, bounds: given = {} }: EventRoutesDeps): void {
  const bounds = { ...EVENT_STREAM_BOUNDS, ...given };
  const open = new Set<PassThrough>();
  const perAccount = new Map<number, number>();

  // Before the listener closes: each stream ends, its answer completes, and the connection
  // guard closes its connection (connection-guard.ts).
  app.addHook('preClose', (done) => {
    for (const stream of open) stream.end(': closing\n\n');
    done();
  });

  app.get(
    '/v1/events',
    {
      config: { operation: Operation.Other },
      onRequest: authenticate,
      schema: {
        operationId: 'streamEvents',
        summary: 'The account\'s events, live (Server-Sent Events)',
        description:
          'Owner only. A `text/event-stream` that stays open: each event of the account (`link.created`, `link.updated`, ' +
          '`link.deleted`, `link.visited`, `account.rotated`) once its change has committed, from any instance, as ' +
          '`id:`, `event:` (the type) and `data:` (the JSON below) lines; a `:` comment line every 15 s. The `id:` of a ' +
          'change (all types but `link.visited`) is the `webhook-id` of its webhook deliveries. Live only: ' +
          'nothing is replayed on reconnect (`Last-Event-ID` is ignored); webhooks deliver durably. At most ' +
          `${EVENT_STREAM_BOUNDS.perAccount} streams per account (429 beyond). Browsers: use fetch() with the ` +
          'Authorization header, so the access code stays out of URLs.',
        tags: ['events'],
        security: ACCESS_CODE_SECURITY,
        querystring: AuthQuery,
        response: {
          200: {
            description: 'The stream; each `data:` line is one event',
            content: {
              'text/event-stream': {
                schema: {
                  type: 'string',
                  examples: [
                    'id: msg_3f0c…\nevent: link.visited\ndata: {"type":"link.visited","timestamp":"2026-11-25T19:00:00.000Z",' +
                      '"data":{"visits":[{"ShortCode":"abc123","Time":"2026-11-25T19:00:00.000Z","Bot":false,"Referrer":"(direct)",' +
                      '"Country":"ZZ","Browser":"Firefox","OperatingSystem":"Linux","Device":"desktop"}]}}\n\n',
                  ],
                  contentMediaType: 'text/event-stream',
                },
              },
              // Not a second way to read the stream: the schema of one `data:` line's JSON.
              'application/json': { schema: EventSchema },
            },
          },
          ...errorResponses(Operation.Other, [400, 401, 403, 429, 503]),
        },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const account = accountOf(request);
      assertActive(account);
      if (isClosing()) {
        throw new DomainError(ErrorCode.StorageUnavailable, 'the server is shutting down', { retryAfter: 1 });
      }
      const held = perAccount.get(account.uid) ?? 0;
      if (held >= bounds.perAccount) {
        throw new DomainError(ErrorCode.RateLimited, `at most ${bounds.perAccount} event streams may be open per account`, { retryAfter: 5 });
      }
      if (open.size >= bounds.total) {
        throw new DomainError(ErrorCode.RateLimited, 'too many event streams are open; try again later', { retryAfter: 5 });
      }

      const stream = new PassThrough();
      open.add(stream);
      perAccount.set(account.uid, held + 1);
      const unsubscribe = live.subscribe(String(account.uid), (event) => {
        if (stream.writableLength > bounds.maxQueuedBytes) {
          // The reader has fallen behind by a megabyte: it reconnects, live again.
          stream.destroy();
          return;
        }
        stream.write(sseFrame(event));
      });
      const heartbeat = setInterval(() => stream.write(': heartbeat\n\n'), bounds.heartbeatMs);
      heartbeat.unref();
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        clearInterval(heartbeat);
        unsubscribe();
        open.delete(stream);
        const left = (perAccount.get(account.uid) ?? 1) - 1;
        if (left > 0) perAccount.set(account.uid, left);
        else perAccount.delete(account.uid);
      };
      stream.once('close', release);
      // The client went away: the stream is done.
      reply.raw.once('close', () => stream.destroy());

      stream.write(`retry: ${bounds.retryMs}\n: connected\n\n`);
      untimed(reply);
      reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-store')
        // Proxies that buffer answers (nginx) pass this one on as it comes.
        .header('x-accel-buffering', 'no');
      return reply.send(stream);
    },
  );
}
