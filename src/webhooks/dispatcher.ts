/**
 * The webhook dispatcher (CONTRACT §7.5, ADR 21): takes due events from the outbox under a
 * lease, delivers them off the request path, and settles each (delivered, retried later, or
 * failed). Every process runs one; the store's claim makes sure an event is delivered by one
 * of them at a time, and a process killed mid-delivery leaves its events to the others once
 * their lease has passed. Concurrency is bounded in total, per account and per webhook, and
 * the claim serves the accounts with the fewest attempts in flight first, so a receiver that
 * hangs costs its own account's slots: another account's event takes the next free slot,
 * however long the hanging account's backlog. Once a second, the visits waiting for
 * each link.visited webhook become one event (collectVisits).
 */
import { randomBytes } from 'node:crypto';
import { deliveryData, type OutboxEvent, type Settlement, type WebhookStore } from './webhook-store.ts';
import { nextAttemptAt } from './backoff.ts';
import { deliver as httpDeliver, type Deliver } from './deliver.ts';
import type { SecretBox } from './secret-box.ts';
import { webhookHeaders } from './signature.ts';
import type { ResolveAll } from './target-address.ts';

/** What the dispatcher reports, for /metrics. */
export interface DispatcherObserver {
  delivered(type: string, seconds: number): void;
  failed(type: string): void;
  attempted(type: string, ok: boolean, seconds: number): void;
}

export interface DispatcherOptions {
  readonly store: WebhookStore;
  readonly secrets: SecretBox;
  readonly allowPrivate: boolean;
  readonly onError?: (error: unknown, what: string) => void;
  /**
   * A target refused after DNS at delivery: its detail (what the host resolved to, or the
   * resolver's error) is for the operator's log; the account's deliveries show one fixed reason.
   */
  readonly onRefused?: (refusal: { readonly webhookId: string; readonly host: string; readonly reason: string }) => void;
  readonly observer?: DispatcherObserver;
  readonly clock?: () => number;
  /** How often due events are looked for when there was nothing to do (ms). */
  readonly pollMs?: number;
  /** How long a claimed event is this process's (ms): longer than an attempt can take. */
  readonly leaseMs?: number;
  /** One attempt's bound (ms), 10 s by the contract. */
  readonly timeoutMs?: number;
  readonly maxConcurrent?: number;
  /** Attempts of one account at a time (below maxConcurrent, so hanging receivers of one account never hold every slot). */
  readonly perAccount?: number;
  readonly perWebhook?: number;
  /** How often waiting visits become link.visited events (ms): at most one per webhook each time. */
  readonly collectEveryMs?: number;
  readonly maxVisitsPerEvent?: number;
  readonly foldVisitsAbove?: number;
  readonly deliver?: Deliver;
  readonly resolve?: ResolveAll;
}

export interface Dispatcher {
  /** This dispatcher's lease owner name (logged at start, so an operator can tell who holds what). */
  readonly owner: string;
  /** Looks for due events now (a change was just committed here). */
  wake(): void;
  /** Stops claiming, aborts attempts in flight (their events are released, due at once) and waits for them. */
  stop(): Promise<void>;
}

export const DISPATCH_DEFAULTS = {
  pollMs: 1000,
  leaseMs: 30_000,
  timeoutMs: 10_000,
  maxConcurrent: 32,
  perAccount: 4,
  perWebhook: 2,
  collectEveryMs: 1000,
  maxVisitsPerEvent: 10_000,
  foldVisitsAbove: 50_000,
} as const;

export function startDispatcher(options: DispatcherOptions): Dispatcher {
  const {
    store, secrets, allowPrivate, onError = () => {}, onRefused = () => {}, observer, clock = Date.now, deliver = httpDeliver, resolve,
  } = options;
  const settings = { ...DISPATCH_DEFAULTS, ...definedOf(options) };
  // A name per process start: the leases this process holds.
  const owner = `d_${randomBytes(8).toString('hex')}`;
  const stopping = new AbortController();
  const inFlight = new Map<number, { webhookId: string; accountUid: number; done: Promise<void> }>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let lastCollect = 0;

  function schedule(delayMs: number): void {
    if (stopping.signal.aborted) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      void tick();
    }, delayMs);
    timer.unref();
  }

  async function tick(): Promise<void> {
    if (running !== undefined) {
      again = true;
      return;
    }
    let full = false;
    running = (async () => {
      const now = clock();
      if (now - lastCollect >= settings.collectEveryMs) {
        lastCollect = now;
        try {
          await store.collectVisits({ now: new Date(now).toISOString(), maxVisits: settings.maxVisitsPerEvent, foldAbove: settings.foldVisitsAbove });
        } catch (error) {
          onError(error, 'collecting visits');
        }
      }
      const free = settings.maxConcurrent - inFlight.size;
      if (free <= 0 || stopping.signal.aborted) return;
      let events: OutboxEvent[];
      try {
        events = await store.claim({
          now, leaseMs: settings.leaseMs, owner, limit: free, busyWebhooks: busyWebhooks(),
          perAccount: settings.perAccount, accountsInFlight: accountsInFlight(),
        });
      } catch (error) {
        onError(error, 'claiming events');
        return;
      }
      full = events.length === free;
      for (const event of events) start(event);
    })();
    try {
      await running;
    } finally {
      running = undefined;
    }
    if (stopping.signal.aborted) return;
    if (again || full) {
      again = false;
      schedule(0);
    } else {
      schedule(Math.min(settings.pollMs, settings.collectEveryMs));
    }
  }

  function busyWebhooks(): string[] {
    const counts = new Map<string, number>();
    for (const { webhookId } of inFlight.values()) counts.set(webhookId, (counts.get(webhookId) ?? 0) + 1);
    return [...counts].filter(([, n]) => n >= settings.perWebhook).map(([id]) => id);
  }

  function accountsInFlight(): Map<number, number> {
    const counts = new Map<number, number>();
    for (const { accountUid } of inFlight.values()) counts.set(accountUid, (counts.get(accountUid) ?? 0) + 1);
    return counts;
  }

  function start(event: OutboxEvent): void {
    if (stopping.signal.aborted) {
      void store.settle(event, owner, { outcome: 'released' }).catch((error: unknown) => onError(error, 'releasing an event'));
      return;
    }
    const done = attempt(event).catch((error: unknown) => onError(error, 'delivering an event')).finally(() => {
      inFlight.delete(event.seq);
      // A slot is free: the next event (of this webhook, perhaps) need not wait for the poll.
      if (!stopping.signal.aborted) schedule(0);
    });
    inFlight.set(event.seq, { webhookId: event.webhookId, accountUid: event.accountUid, done });
  }

  async function attempt(event: OutboxEvent): Promise<void> {
    // `{type, timestamp, data}` with data as stored (JSON already): not parsed and written again.
    const body = `{"type":${JSON.stringify(event.type)},"timestamp":${JSON.stringify(event.timestamp)},"data":${deliveryData(event.type, event.data)}}`;
    const started = clock();
    let secret: string;
    try {
      secret = secrets.open(event.sealedSecret);
    } catch {
      // Sealed under another WEBHOOK_SECRET_KEY, or none is set: not deliverable here, and not this event's fault.
      await store.settle(event, owner, settle(event, started, { status: null, error: 'the secret cannot be opened: WEBHOOK_SECRET_KEY changed or is not set' }));
      return;
    }
    const headers = webhookHeaders(secret, event.eventId, Math.floor(started / 1000), body);
    const outcome = await deliver(
      { url: event.url, headers, body },
      { timeoutMs: settings.timeoutMs, allowPrivate, signal: stopping.signal, ...(resolve === undefined ? {} : { resolve }) },
    );
    if (stopping.signal.aborted && outcome.status === null) {
      // Cut short by the shutdown: not an attempt of the receiver's; due again at once, here or elsewhere.
      await store.settle(event, owner, { outcome: 'released' });
      return;
    }
    if (outcome.detail !== undefined) onRefused({ webhookId: event.webhookId, host: URL.parse(event.url)?.hostname ?? '', reason: outcome.detail });
    const seconds = (clock() - started) / 1000;
    observer?.attempted(event.type, outcome.error === null, seconds);
    const settlement = settle(event, clock(), outcome);
    await store.settle(event, owner, settlement);
    if (settlement.outcome === 'delivered') observer?.delivered(event.type, (clock() - Date.parse(event.timestamp)) / 1000);
    if (settlement.outcome === 'failed') observer?.failed(event.type);
  }

  /**
   * 2xx: delivered. 410 Gone: the receiver says this endpoint is gone; the event is failed
   * at once, not retried for a day (the webhook stays, for its owner to delete). Anything
   * else is retried on the schedule until 24 h after the event, then failed.
   */
  function settle(event: OutboxEvent, now: number, outcome: { status: number | null; error: string | null }): Settlement {
    const delivery = {
      eventId: event.eventId, type: event.type, attempt: event.attempts + 1, time: new Date(now).toISOString(),
      status: outcome.status, error: outcome.error,
    };
    if (outcome.error === null) return { outcome: 'delivered', delivery };
    if (outcome.status === 410) return { outcome: 'failed', delivery: { ...delivery, error: 'the receiver answered 410 Gone: not retried' } };
    const next = nextAttemptAt(Date.parse(event.timestamp), event.attempts + 1, now);
    return next === undefined ? { outcome: 'failed', delivery } : { outcome: 'retry', delivery, nextAttemptAt: next };
  }

  schedule(0);

  return {
    owner,
    wake() {
      if (!stopping.signal.aborted) schedule(0);
    },
    async stop() {
      stopping.abort();
      if (timer !== undefined) clearTimeout(timer);
      await running;
      await Promise.all([...inFlight.values()].map((entry) => entry.done));
    },
  };
}

function definedOf(options: DispatcherOptions): Partial<typeof DISPATCH_DEFAULTS> {
  const picked: Record<string, number> = {};
  for (const key of Object.keys(DISPATCH_DEFAULTS) as (keyof typeof DISPATCH_DEFAULTS)[]) {
    const value = options[key];
    if (value !== undefined) picked[key] = value;
  }
  return picked;
}
