/**
 * Webhook storage (CONTRACT §7.5, ADR 21): the registrations, the transactional outbox and
 * the recent delivery attempts, as both engines keep them, with the SQL they share. The
 * outbox rows of a change are written by the change's own transaction (the stores call
 * `OUTBOX_INSERT` there); the dispatcher (src/webhooks/) claims, delivers and settles them
 * through `WebhookStore`.
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
  /** Leases due events (at most one per webhook per call), oldest first. */
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

/** What a webhook holds besides its row, each table keyed by `webhook_id`. */
export const ACCOUNT_WEBHOOK_TABLES = ['webhook_events', 'webhook_visits', 'webhook_deliveries'] as const;

/** A `LIKE` pattern matching a comma-joined event list that holds `type`. */
export function subscribedTo(type: EventType): string {
  return `%,${type},%`;
}

/**
 * Writes one outbox row per webhook of the account subscribed to the event's type:
 * parameters event id, type, timestamp, data (JSON), account uid, subscribedTo(type).
 * With no such webhook (the usual case) it inserts nothing after one index probe.
 */
export function outboxInsertSql(p: (n: number) => string): string {
  return `INSERT INTO webhook_events (event_id, webhook_id, type, occurred_at, data)
    SELECT ${p(1)}, id, ${p(2)}, ${p(3)}, ${p(4)} FROM webhooks
     WHERE account_uid = ${p(5)} AND (',' || events || ',') LIKE ${p(6)}`;
}

/** Whether any webhook subscribes to link.visited: asked once per count batch (a partial index). */
export const ANY_VISITED_WEBHOOK_SQL = 'SELECT 1 AS found FROM webhooks WHERE visited = 1 LIMIT 1';

/**
 * The count batch's time as a link.visited `Time`: its second. A busy link's batches of one
 * second share it, so the collector's events show a second, not a batch.
 */
export function visitSecond(now: string): string {
  return `${now.slice(0, 19)}.000Z`;
}

/** A waiting row `v` of webhook `w` with the tally's shortcode, second and classes (parameters 1–8). */
const SAME_WAITING_ROW = `v.webhook_id = w.id AND v.short_code = ?1 AND v.time = ?2 AND v.bot = ?3 AND v.referrer = ?4
  AND v.country = ?5 AND v.browser = ?6 AND v.os = ?7 AND v.device = ?8`;

/**
 * SQLite: one tally of a count batch (a link's visits with the same classes) for every
 * link.visited webhook of the link's owner, written in the count transaction with the
 * shortcode it was visited under, so nothing later needs the link (ADR 24): a link deleted
 * right after its visits still has them delivered. First added to each such webhook's newest
 * waiting row of the same shortcode, second and classes (so a busy link's batches of one
 * second stay one row), then inserted for the webhooks that had none. Safe because SQLite
 * writers take turns: a collector reads, shrinks and deletes waiting rows in one
 * transaction, never between these two statements. Parameters: shortcode, time
 * (visitSecond), bot, referrer, country, browser, os, device, visits, owner's account uid.
 */
export const VISITS_TO_WEBHOOKS_SQL = [
  `UPDATE webhook_visits SET visits = visits + ?9 WHERE id IN (
     SELECT (SELECT max(v.id) FROM webhook_visits v WHERE ${SAME_WAITING_ROW})
       FROM webhooks w WHERE w.account_uid = ?10 AND w.visited = 1)`,
  `INSERT INTO webhook_visits (webhook_id, short_code, time, bot, referrer, country, browser, os, device, visits)
   SELECT w.id, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 FROM webhooks w
    WHERE w.account_uid = ?10 AND w.visited = 1 AND NOT EXISTS (SELECT 1 FROM webhook_visits v WHERE ${SAME_WAITING_ROW})`,
] as const;

/** A `WebhookRecord` (the events column is split by the caller: webhookOf). */
export const WEBHOOK_COLUMNS = 'id, account_uid AS "accountUid", url, events, date_created AS "dateCreated"';

export function webhookOf(row: Record<string, unknown>): WebhookRecord {
  return {
    id: row.id as string,
    accountUid: Number(row.accountUid),
    url: row.url as string,
    events: (row.events as string).split(',') as EventType[],
    dateCreated: row.dateCreated as string,
  };
}

/** A `DeliveryRecord`. */
export const DELIVERY_COLUMNS = 'event_id AS "eventId", type, attempt, time, status, error';

export function deliveryOf(row: Record<string, unknown>): DeliveryRecord {
  return {
    eventId: row.eventId as string,
    type: row.type as EventType,
    attempt: Number(row.attempt),
    time: row.time as string,
    status: row.status === null ? null : Number(row.status),
    error: (row.error as string | null) ?? null,
  };
}

/** The visit rows of one webhook, as collected into a link.visited event. */
export interface WaitingVisitRow {
  readonly id: number;
  readonly shortCode: string;
  readonly time: string;
  readonly bot: number;
  readonly referrer: string;
  readonly country: string;
  readonly browser: string;
  readonly os: string;
  readonly device: string;
  readonly visits: number;
}

export const WAITING_VISIT_COLUMNS =
  'id, short_code AS "shortCode", time, bot, referrer, country, browser, os, device, visits';

/**
 * Folds a webhook's waiting visits into one row per link, hour and classes (Time becomes the
 * hour's start): the backlog of a receiver that is down stays bounded by what the hour's
 * statistics hold, and no visit is dropped. Parameter: the webhook id. Run, then
 * FOLD_VISITS_DELETE with the highest id read before (both in one transaction).
 */
export function foldVisitsSql(p: (n: number) => string): string {
  return `INSERT INTO webhook_visits (webhook_id, short_code, time, bot, referrer, country, browser, os, device, visits)
    SELECT webhook_id, short_code, substr(time, 1, 13) || ':00:00.000Z', bot, referrer, country, browser, os, device, sum(visits)
      FROM webhook_visits WHERE webhook_id = ${p(1)} AND id <= ${p(2)}
     GROUP BY webhook_id, short_code, substr(time, 1, 13), bot, referrer, country, browser, os, device`;
}

/**
 * The `data` of a link.visited event for a batch of waiting rows, at most `max` visits, in
 * the outbox's compact form: each distinct item once, with how many visits it stands for
 * (`{"items":[…],"counts":[…]}`); deliveryData() expands it when the event is sent, so a
 * 10,000-visit event is a few rows' worth of bytes in the database. Answers the data, how
 * many visits it holds, the id of the last row used up whole, and the partly used row (its
 * id and what remains of it), if any.
 */
export function takeVisits(rows: readonly WaitingVisitRow[], max: number): {
  data: string;
  count: number;
  usedThrough: number | undefined;
  partial: { id: number; remaining: number } | undefined;
} {
  const items: unknown[] = [];
  const counts: number[] = [];
  let count = 0;
  let usedThrough: number | undefined;
  let partial: { id: number; remaining: number } | undefined;
  for (const row of rows) {
    const room = max - count;
    if (room <= 0) break;
    const take = Math.min(room, Number(row.visits));
    items.push({
      ShortCode: row.shortCode, Time: row.time, Bot: Number(row.bot) === 1, Referrer: row.referrer, Country: row.country,
      Browser: row.browser, OperatingSystem: row.os, Device: row.device,
    });
    counts.push(take);
    count += take;
    if (take < Number(row.visits)) {
      partial = { id: Number(row.id), remaining: Number(row.visits) - take };
      break;
    }
    usedThrough = Number(row.id);
  }
  return { data: JSON.stringify({ items, counts }), count, usedThrough, partial };
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
