/**
 * The whole-request deadline (issue 13, item 2; ADR 15): a request not answered within
 * `timeoutMs` of being routed is answered 503 `the request took too long` (error-table.ts),
 * whatever it waits for. Storage calls have their own, shorter deadline; this is the net
 * under everything else (a rate-limit counter, a bug).
 *
 * Fastify's `handlerTimeout` does the same with a timer, an AbortController and a 'close'
 * listener for every request, about a microsecond of the redirect's CPU time that nothing
 * here uses (no handler reads `request.signal`). Here every request costs one entry in a
 * linked list (not a Map: see src/deadline-list.ts), and one timer, armed for the oldest
 * request, stands for all of them (ADR 22).
 */
import { errorCodes, type FastifyReply } from 'fastify';
import { DeadlineList, type DeadlineEntry } from '../deadline-list.ts';

export interface RequestDeadline {
  /** The request of `reply` was routed: its clock starts. */
  start(reply: FastifyReply): void;
  /** Its answer is done (or it failed): its clock stops. */
  finish(reply: FastifyReply): void;
}

/** The reply's place in the list of requests in progress. */
const ENTRY = Symbol('shortlink.requestDeadline');
type TimedReply = FastifyReply & { [ENTRY]?: DeadlineEntry<FastifyReply> | undefined };

export function createRequestDeadline(timeoutMs: number, now: () => number = () => performance.now()): RequestDeadline {
  // Every request routed and not yet finished, oldest (so earliest deadline) first.
  const pending = new DeadlineList<FastifyReply>();
  let timer: NodeJS.Timeout | undefined;

  function arm(): void {
    if (timer !== undefined) return;
    const oldest = pending.oldest();
    if (oldest === undefined) return;
    timer = setTimeout(expire, Math.max(0, oldest.deadline - now()));
    // An unanswered request keeps its connection, not the process, alive.
    timer.unref();
  }

  function expire(): void {
    timer = undefined;
    // Timers fire on whole milliseconds: a deadline a fraction ahead counts as reached.
    for (const reply of pending.takeDue(now() + 1)) {
      (reply as TimedReply)[ENTRY] = undefined;
      timeOut(reply);
    }
    arm();
  }

  function timeOut(reply: FastifyReply): void {
    // Answered, or the client is gone (no 'finish' then, so never `finish`ed): nothing to do.
    if (reply.sent || reply.raw.destroyed) return;
    const error = new errorCodes.FST_ERR_HANDLER_TIMEOUT(timeoutMs, reply.request.routeOptions.url ?? '');
    // The answer has begun (a stream): it cannot become an error any more.
    if (reply.raw.headersSent) reply.raw.destroy(error);
    else reply.send(error);
  }

  return {
    start(reply) {
      (reply as TimedReply)[ENTRY] = pending.add(reply, now() + timeoutMs);
      arm();
    },
    finish(reply) {
      const entry = (reply as TimedReply)[ENTRY];
      if (entry === undefined) return;
      (reply as TimedReply)[ENTRY] = undefined;
      pending.remove(entry);
    },
  };
}
