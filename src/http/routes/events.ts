/**
 * `GET /v1/events` (CONTRACT §7.5, ADR 19): the account's events as Server-Sent Events, live
 * from the moment the stream opens (no replay: `Last-Event-ID` is ignored; webhooks are the
 * durable way). Each event is `id:`, `event:` (its type) and `data:` (its `{type, timestamp,
 * data}` JSON) lines; a comment line every 15 s keeps proxies from closing an idle stream.
 *
 * A stream is a request that never finishes by itself, so it is taken off the whole-request
 * deadline once it has begun, counted against caps (per account across every process, via
 * a lease in the database, src/events/stream-leases.ts; and in all, per process), dropped
 * when its reader falls too far behind, ended when the credential it was opened with stops
 * being valid (rotated, account disabled or deleted: within 1 s, on every instance), and
 * ended when the server closes, so that shutdown (guarantee 6) does not wait for it.
 */
import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hashAccessCode } from '../../accounts/access-code.ts';
import { accountDisabled, assertActive } from '../../accounts/account-service.ts';
import { DomainError, ErrorCode } from '../../errors.ts';
import { EventType, type LiveEvents, type ServiceEvent } from '../../events/events.ts';
import { createStreamLeases } from '../../events/stream-leases.ts';
import type { StreamSlotStore } from '../../store/stream-slots.ts';
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
  readonly credentialCheckMs: number;
  readonly slotLeaseMs: number;
}

export const EVENT_STREAM_BOUNDS: EventStreamBounds = {
  /** Streams one account may hold open at once (tabs, CLIs), on every process together. */
  perAccount: 10,
  /** Streams this process holds open at once. */
  total: 1000,
  /** A comment line this often. */
  heartbeatMs: 15_000,
  /** Bytes queued for a reader that does not keep up before its stream is closed. */
  maxQueuedBytes: 1 << 20,
  /** What the stream asks EventSource to wait before reconnecting. */
  retryMs: 3000,
  /**
   * How often each process asks the database whether its streams' credentials still hold:
   * a rotated code, a disabled or deleted account ends its streams within this (and a query).
   */
  credentialCheckMs: 250,
  /** How long the slots of a process that died keep counting against their accounts' cap. */
  slotLeaseMs: 30_000,
};

export interface EventRoutesDeps {
  readonly live: LiveEvents;
  /** Where streams take their slots (the per-account cap across processes) and have their credentials checked. */
  readonly slots: StreamSlotStore;
  /** Told when a credential check or a slot's renewal fails (the streams stay meanwhile). */
  readonly onSlotError?: (error: unknown) => void;
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

export function registerEventRoutes(app: FastifyInstance, { live, slots, onSlotError, authenticate, untimed, isClosing, bounds: given = {} }: EventRoutesDeps): void {
  const bounds = { ...EVENT_STREAM_BOUNDS, ...given };
  const leases = createStreamLeases({ slots, checkMs: bounds.credentialCheckMs, leaseMs: bounds.slotLeaseMs, onError: onSlotError });
  const open = new Set<PassThrough>();

  // Before the listener closes: each stream ends, its answer completes, and the connection
  // guard closes its connection (connection-guard.ts).
  app.addHook('preClose', (done) => {
    for (const stream of open) stream.end(': closing\n\n');
    done();
  });
  // After the streams ended: their slots go back at once, not when their leases run out.
  app.addHook('onClose', () => leases.close());

  /** Refusals before a stream is opened, HEAD's too: 403 disabled, 503 closing, 429 past the process's cap. */
  const admit = (request: FastifyRequest) => {
    const account = accountOf(request);
    assertActive(account);
    if (isClosing()) {
      throw new DomainError(ErrorCode.StorageUnavailable, 'the server is shutting down', { retryAfter: 1 });
    }
    if (open.size >= bounds.total) {
      throw new DomainError(ErrorCode.RateLimited, 'too many event streams are open; try again later', { retryAfter: 5 });
    }
    return account;
  };
  const streamHeaders = (reply: FastifyReply) => reply
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-store')
    // Proxies that buffer answers (nginx) pass this one on as it comes.
    .header('x-accel-buffering', 'no');

  // HEAD answers GET's headers (monitors, link checkers) without opening a stream or taking a slot.
  app.head(
    '/v1/events',
    {
      config: { operation: Operation.Other },
      onRequest: authenticate,
      schema: {
        operationId: 'streamEventsHead',
        summary: 'The event stream\'s headers, without opening it',
        tags: ['events'],
        security: ACCESS_CODE_SECURITY,
        querystring: AuthQuery,
        response: {
          200: { description: 'A stream would open', content: { 'text/event-stream': { schema: { type: 'string', maxLength: 0 } } } },
          ...errorResponses(Operation.Other, [400, 401, 403, 429, 503]),
        },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      admit(request);
      streamHeaders(reply);
      return reply.send('');
    },
  );

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
          `${EVENT_STREAM_BOUNDS.perAccount} streams per account, counted across every worker and instance (429 beyond). ` +
          'A stream ends within 1 s of its access code being rotated, or its account disabled or deleted. Browsers: use fetch() with the ' +
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
      const account = admit(request);
      const stream = new PassThrough();
      // The slot is taken against the database: the credential as it stands now (the account
      // cache may be up to its lifetime behind), and the cap across every process. Once the
      // credential stops being valid (rotated, disabled, deleted), the stream ends with `: revoked`.
      // A stream opened with an API key holds the key's id: deleting the key ends it.
      // (Apps without the keys feature leave the request's apiKey unset.)
      const key = request.apiKey ?? null;
      const credential = key === null ? hashAccessCode(account.accessCode) : `key:${key.id}`;
      const lease = await leases.acquire(account.uid, credential, bounds.perAccount, () => stream.end(': revoked\n\n'));
      if (lease.result !== 'acquired') {
        if (lease.result === 'invalid') throw new DomainError(ErrorCode.Unauthenticated, 'the access code is not valid');
        if (lease.result === 'disabled') throw accountDisabled();
        throw new DomainError(ErrorCode.RateLimited, `at most ${bounds.perAccount} event streams may be open per account`, { retryAfter: 5 });
      }
      if (isClosing() || request.raw.socket?.destroyed === true) {
        // Closing began, or the client left, while the slot was being taken.
        lease.release();
        throw new DomainError(ErrorCode.StorageUnavailable, 'the server is shutting down', { retryAfter: 1 });
      }

      open.add(stream);
      // After an account.rotated, the events that follow wait until a check has said whether
      // this stream's code is the old one: a change made with the new code never reaches it.
      let waiting: string[] | undefined;
      let waitingBytes = 0;
      const send = (frame: string) => {
        if (stream.writableLength + waitingBytes > bounds.maxQueuedBytes) {
          // The reader has fallen behind by a megabyte: it reconnects, live again.
          stream.destroy();
          return;
        }
        if (waiting === undefined) stream.write(frame);
        else {
          waiting.push(frame);
          waitingBytes += frame.length;
        }
      };
      const unsubscribe = live.subscribe(String(account.uid), (event) => {
        send(sseFrame(event));
        if (event.type !== EventType.AccountRotated || waiting !== undefined) return;
        waiting = [];
        void leases.checkSoon().then(() => {
          const frames = waiting ?? [];
          waiting = undefined;
          waitingBytes = 0;
          // Revoked meanwhile: the stream has ended and writes nothing more.
          if (!stream.writableEnded && !stream.destroyed) for (const frame of frames) stream.write(frame);
        });
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
        lease.release();
      };
      stream.once('close', release);
      // The client went away: the stream is done.
      reply.raw.once('close', () => stream.destroy());

      stream.write(`retry: ${bounds.retryMs}\n: connected\n\n`);
      untimed(reply);
      streamHeaders(reply);
      return reply.send(stream);
    },
  );
}
