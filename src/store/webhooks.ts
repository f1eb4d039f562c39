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

/**
 * Copies journal rows (the `source` relation: stats_journal's columns) of links whose owner
 * has link.visited webhooks into webhook_visits, per such webhook one row per link, second
 * and classes, with how many visits it stands for. The statistics fold runs it on the rows
 * it moves, in the same transaction: the visits were made durable by the count batch (the
 * journal), and reach the webhooks without a write on the request's path. A busy link's
 * batches of one second become one row (its visits' `Time` is that second), so a webhook
 * costs a few rows a second whatever the traffic, not a row per count batch. Parameter: the
 * fold's time, for rows written before the journal kept one.
 */
export function journalToWebhooksSql(source: string, p: (n: number) => string): string {
  // Only the rows of watched links are grouped (the IN set is built once per statement, from
  // the subscribed accounts' links), and the groups, not the rows, are joined.
  return `INSERT INTO webhook_visits (webhook_id, short_code, time, bot, referrer, country, browser, os, device, visits)
    SELECT w.id, l.short_code, g.at_second || '.000Z', g.bot, g.referrer, g.country, g.browser, g.os, g.device, g.visits
      FROM (SELECT j.link_id, substr(coalesce(j.time, ${p(1)}), 1, 19) AS at_second, j.bot, j.referrer, j.country, j.browser, j.os, j.device,
                   sum(j.visits) AS visits
              FROM ${source} j
             WHERE j.link_id IN (SELECT wl.id FROM webhooks ww JOIN links wl ON wl.created_by = ww.account_uid WHERE ww.visited = 1)
             GROUP BY j.link_id, at_second, j.bot, j.referrer, j.country, j.browser, j.os, j.device) g
      JOIN links l ON l.id = g.link_id
      JOIN webhooks w ON w.account_uid = l.created_by AND w.visited = 1
     ORDER BY g.at_second, l.short_code`;
}

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
