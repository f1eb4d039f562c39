/**
 * Live events (CONTRACT §7.5, ADR 19): published by the services once a change has committed,
 * and by the count batch once it has; heard by `GET /v1/events` on every process.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { createLiveEventsFor } from '../events/create-live-events.ts';
import type { LiveEventsHub } from '../events/live-events.ts';
import { createEventPublisher, type EventPublisher } from '../http/event-payloads.ts';
import type { Store } from '../store/store.ts';

export interface LiveEventsSetup {
  readonly live: LiveEventsHub;
  readonly events: EventPublisher;
}

/**
 * Uses the caller's hub, or makes and starts one from the config (closed with the app), and
 * publishes every committed count batch on it.
 */
export async function setUpLiveEvents(
  app: FastifyInstance,
  { config, store, clock, live: given }: { config: Config; store: Store; clock: () => Date; live: LiveEventsHub | undefined },
): Promise<LiveEventsSetup> {
  let live = given;
  if (live === undefined) {
    // A transport that is away fails on every reconnect: say so at most every 10 s.
    let warnedAt = -Infinity;
    const own = createLiveEventsFor(config, (error) => {
      if (performance.now() - warnedAt < 10_000) return;
      warnedAt = performance.now();
      app.log.warn({ err: error }, 'live events: transport failed; streams see this process\'s events only until it is back');
    });
    app.addHook('onClose', () => own.close());
    await own.start();
    live = own;
  }
  const events = createEventPublisher(live, clock);
  const unwatchCounts = store.watchCounts(events.countsCommitted);
  app.addHook('onClose', (_instance, done) => {
    unwatchCounts();
    done();
  });
  return { live, events };
}
