/**
 * Webhook storage (CONTRACT §7.5, ADR 21): the registrations, the transactional outbox and
 * the recent delivery attempts, as both engines keep them, with the SQL they share. The
 * outbox rows of a change are written by the change's own transaction (the stores call
 * `OUTBOX_INSERT` there); the dispatcher (src/webhooks/) claims, delivers and settles them
 * through `WebhookStore`.
 */
import type { EventType } from '../events/events.ts';

export {
  DELIVERIES_KEPT, MAX_WEBHOOKS, deliveryData, type ClaimOptions, type CollectOptions, type CreateWebhookResult,
  type DeleteWebhookResult, type DeliveriesResult, type DeliveryRecord, type NewWebhook, type OutboxEvent, type Settlement,
  type WebhookRecord, type WebhookStore,
} from '../webhooks/webhook-store.ts';
import type { DeliveryRecord, WebhookRecord } from '../webhooks/webhook-store.ts';
import { visitItem } from '../events/payloads.ts';

/** What a webhook holds besides its row, each table keyed by `webhook_id`. */
export const ACCOUNT_WEBHOOK_TABLES = ['webhook_events', 'webhook_visits', 'webhook_deliveries'] as const;

/** An event type as a comma-joined event list holds it, a comma each side (subscribedWhere). */
export function subscribedTo(type: EventType): string {
  return `,${type},`;
}

/**
 * Writes one outbox row per webhook of the account subscribed to the event's type:
 * parameters event id, type, timestamp, data (JSON), account uid, subscribedTo(type).
 * With no such webhook (the usual case) it inserts nothing after one index probe.
 */
export function outboxInsertSql(p: (n: number) => string, find: SubstringPosition): string {
  return `INSERT INTO webhook_events (event_id, webhook_id, type, occurred_at, data)
    SELECT ${p(1)}, id, ${p(2)}, ${p(3)}, ${p(4)} FROM webhooks
     WHERE ${subscribedWhere(find, p(5), p(6))}`;
}

/** The engine's position of a substring: SQLite's instr, PostgreSQL's strpos. */
export type SubstringPosition = 'instr' | 'strpos';

/**
 * The webhooks of `account` subscribed to the type `marker` names (subscribedTo). A position
 * search, not LIKE: SQLite prepares a statement again whenever a parameter that is a LIKE
 * pattern is bound (measured: 2.5 µs a probe, against 0.2 µs).
 */
export function subscribedWhere(find: SubstringPosition, account: string, marker: string): string {
  return `account_uid = ${account} AND ${find}(',' || events || ',', ${marker}) > 0`;
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
    items.push(visitItem(row.shortCode, {
      Time: row.time, Bot: Number(row.bot) === 1, Referrer: row.referrer, Country: row.country,
      Browser: row.browser, OperatingSystem: row.os, Device: row.device,
    }));
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
