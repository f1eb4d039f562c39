/**
 * What webhooks need from storage (the webhooks port, CONTRACT §7.5, ADR 21): registrations,
 * the transactional outbox and the recent delivery attempts. The outbox rows of a change are
 * written by the change's own transaction; the dispatcher claims, delivers and settles them
 * through `WebhookStore`. Each engine under src/store/ implements it.
 */
import type { EventType } from '../events/events.ts';

/** At most this many webhooks per account, settled by a conditional update of `accounts.webhook_count`. */
export const MAX_WEBHOOKS = 5;
/** Delivery attempts kept per webhook (`GET /v1/webhooks/deliveries`). */
export const DELIVERIES_KEPT = 100;

export interface WebhookRecord {
  /** `wh_` and 24 hex digits. */
  readonly id: string;
  readonly accountUid: number;
  readonly url: string;
  readonly events: readonly EventType[];
  readonly dateCreated: string;
}

export interface NewWebhook extends WebhookRecord {
  /** The signing secret as stored: sealed under WEBHOOK_SECRET_KEY when set (src/webhooks/secret-box.ts). */
  readonly sealedSecret: string;
}

export type CreateWebhookResult = 'created' | 'cap_reached';
export type DeleteWebhookResult = 'deleted' | 'not_found' | 'not_owner';

/** One delivery attempt as `GET /v1/webhooks/deliveries` shows it. */
export interface DeliveryRecord {
  readonly eventId: string;
  readonly type: EventType;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** When the attempt ended (ISO). */
  readonly time: string;
  /** The receiver's HTTP status, or null when it did not answer. */
  readonly status: number | null;
  readonly error: string | null;
}

export type DeliveriesResult =
  | { readonly status: 'found'; readonly deliveries: readonly DeliveryRecord[] }
  | { readonly status: 'not_found' | 'not_owner' };

/** An outbox row leased to one dispatcher, with what it needs to deliver it. */
export interface OutboxEvent {
  /** The row's own number (the lease and the settlement name it). */
  readonly seq: number;
  readonly eventId: string;
  readonly webhookId: string;
  /** The webhook's account: the dispatcher bounds and shares its attempts per account. */
  readonly accountUid: number;
  readonly url: string;
  readonly sealedSecret: string;
  readonly type: EventType;
  /** When the change happened (ISO): the body's `timestamp`, and where the 24 h start. */
  readonly timestamp: string;
  /** The event's `data`, as JSON. */
  readonly data: string;
  /** Attempts made so far. */
  readonly attempts: number;
}

export interface ClaimOptions {
  /** Milliseconds since the epoch. */
  readonly now: number;
  /** The lease: another dispatcher may take the event once it has passed. */
  readonly leaseMs: number;
  /** This dispatcher's name (per process start). */
  readonly owner: string;
  readonly limit: number;
  /** Webhooks this dispatcher has at their concurrency bound: none of theirs is claimed. */
  readonly busyWebhooks: readonly string[];
  /**
   * At most this many events of one account in flight at this dispatcher, those of
   * `accountsInFlight` included (a hanging receiver holds its own account's slots, never all
   * of them). Unbounded when absent.
   */
  readonly perAccount?: number;
  /** How many events of each account this dispatcher has in flight (an account absent: none). */
  readonly accountsInFlight?: ReadonlyMap<number, number>;
}

/** What became of a claimed event. `released`: not attempted (shutdown), due again at once. */
export type Settlement =
  | { readonly outcome: 'delivered' | 'failed'; readonly delivery: DeliveryRecord }
  | { readonly outcome: 'retry'; readonly delivery: DeliveryRecord; readonly nextAttemptAt: number }
  | { readonly outcome: 'released' };

export interface CollectOptions {
  /** The events' timestamp (ISO). */
  readonly now: string;
  /** At most this many visits in one link.visited event; the rest wait for the next. */
  readonly maxVisits: number;
  /** A webhook with more waiting visit rows than this has them folded (per link, hour and classes). */
  readonly foldAbove: number;
}

/** The webhook calls of a Store. */
export interface WebhookStore {
  /** Inserts the webhook unless its account already holds MAX_WEBHOOKS, in one atomic step. */
  create(webhook: NewWebhook): Promise<CreateWebhookResult>;
  /** The account's webhooks, oldest first. */
  list(accountUid: number): Promise<WebhookRecord[]>;
  /** Removes the webhook with its pending events and its delivery log, if the account owns it. */
  delete(id: string, accountUid: number): Promise<DeleteWebhookResult>;
  /** The last DELIVERIES_KEPT attempts, newest first, if the account owns the webhook. */
  deliveries(id: string, accountUid: number): Promise<DeliveriesResult>;
  /**
   * Leases due events, fair across accounts: each webhook's oldest due event is a candidate
   * (one per webhook per call); an account's candidates are numbered on from its attempts in
   * flight, oldest first, and the lowest numbers go first, then the oldest. So an account with
   * nothing in flight is served before one that already holds slots, however old the other's
   * backlog (round-robin over accounts, not oldest first overall); candidates numbered past
   * `perAccount` wait.
   */
  claim(options: ClaimOptions): Promise<OutboxEvent[]>;
  /** Records an attempt and settles the event, if `owner` still holds its lease. */
  settle(event: Pick<OutboxEvent, 'seq' | 'webhookId'>, owner: string, settlement: Settlement): Promise<void>;
  /**
   * Turns the visits waiting for each webhook that has no link.visited event pending into
   * one such event (at most `maxVisits` visits); folds long backlogs first. Answers how many
   * events it made.
   */
  collectVisits(options: CollectOptions): Promise<number>;
  /** Events in the outbox (pending, including those being delivered). */
  pending(): Promise<number>;
}

/**
 * An event's `data` as delivered (JSON): as stored, except link.visited's compact form,
 * which becomes `{"visits":[…]}` with each item repeated as many times as it counts.
 */
export function deliveryData(type: EventType, stored: string): string {
  if (type !== 'link.visited') return stored;
  const { items, counts } = JSON.parse(stored) as { items: unknown[]; counts: number[] };
  const parts = items.map((item, i) => {
    const json = JSON.stringify(item);
    const n = counts[i] ?? 1;
    return n === 1 ? json : `${json},`.repeat(n).slice(0, -1);
  });
  return `{"visits":[${parts.join(',')}]}`;
}
