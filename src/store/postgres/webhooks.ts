/**
 * Webhooks on PostgreSQL (the same name and calls as ../sqlite/webhooks.ts): registrations,
 * the outbox writes the store's changes make inside their own transaction, and the
 * dispatcher's claim (`FOR UPDATE SKIP LOCKED` under a lease, so instances never deliver one
 * event at the same time and a killed instance's events go to another once its lease ends).
 */
import { EventType } from '../../events/events.ts';
import { newEventId } from '../../events/payloads.ts';
import {
  DELIVERIES_KEPT, DELIVERY_COLUMNS, deliveryOf, foldVisitsSql, MAX_WEBHOOKS, outboxInsertSql, subscribedTo, takeVisits,
  WAITING_VISIT_COLUMNS, WEBHOOK_COLUMNS, webhookOf,
  type OutboxEvent, type WaitingVisitRow, type WebhookStore,
} from '../webhooks.ts';
import type { Sql } from './connection.ts';
import { guarded } from './errors.ts';
import type postgres from 'postgres';

const postgresParameter = (n: number): string => `$${n}`;

/** No bound per account (a claim without one). */
const UNBOUNDED = 2 ** 31 - 1;
const OUTBOX_INSERT = outboxInsertSql(postgresParameter, 'strpos');
const FOLD_VISITS = foldVisitsSql(postgresParameter);

// One collector at a time per schema across instances (any int4, the same in every instance).
const COLLECT_LOCK = 0x5_7a_75_02;

/** The outbox writes a change makes in its own transaction. */
export interface PostgresOutbox {
  /** One row per webhook of `accountUid` subscribed to `type`, all with the id `eventId`. */
  write(tx: postgres.TransactionSql | Sql, type: EventType, timestamp: string, data: unknown, accountUid: number, eventId?: string): Promise<void>;
}

/** The outbox, for the store's changes and for the admin store's takedowns (CLI). */
export const outbox: PostgresOutbox = {
  async write(tx, type, timestamp, data, accountUid, eventId = newEventId()) {
    await tx.unsafe(OUTBOX_INSERT, [eventId, type, timestamp, JSON.stringify(data), accountUid, subscribedTo(type)]);
  },
};

export function prepareWebhooks(sql: Sql, timed: <R>(work: () => PromiseLike<R>) => Promise<Awaited<R>>): { store: WebhookStore; outbox: PostgresOutbox } {
  async function removeWebhook(tx: postgres.TransactionSql, id: string): Promise<void> {
    await tx`DELETE FROM webhook_events WHERE webhook_id = ${id}`;
    await tx`DELETE FROM webhook_visits WHERE webhook_id = ${id}`;
    await tx`DELETE FROM webhook_deliveries WHERE webhook_id = ${id}`;
    await tx`DELETE FROM webhooks WHERE id = ${id}`;
  }

  const store: WebhookStore = {
    async create(webhook) {
      // One statement: the conditional update takes a slot (it waits for a concurrent
      // create's row lock and sees its count), the insert happens only with a slot.
      const rows = await timed(() => sql`
        WITH slot AS (
          UPDATE accounts SET webhook_count = webhook_count + 1
           WHERE uid = ${webhook.accountUid} AND webhook_count < ${MAX_WEBHOOKS} RETURNING uid
        )
        INSERT INTO webhooks (id, account_uid, url, events, visited, secret, date_created)
        SELECT ${webhook.id}, uid, ${webhook.url}, ${webhook.events.join(',')},
               ${webhook.events.includes(EventType.LinkVisited) ? 1 : 0}, ${webhook.sealedSecret}, ${webhook.dateCreated}
          FROM slot RETURNING id`);
      return rows.length === 1 ? 'created' : 'cap_reached';
    },

    async list(accountUid) {
      const rows = await timed(() => sql<Record<string, unknown>[]>`
        SELECT ${sql.unsafe(WEBHOOK_COLUMNS)} FROM webhooks WHERE account_uid = ${accountUid} ORDER BY seq`);
      return rows.map((row) => webhookOf(row));
    },

    delete(id, accountUid) {
      return timed(() => sql.begin(async (tx) => {
        const [row] = await tx<{ accountUid: number }[]>`SELECT account_uid AS "accountUid" FROM webhooks WHERE id = ${id} FOR UPDATE`;
        if (row === undefined) return 'not_found' as const;
        if (Number(row.accountUid) !== accountUid) return 'not_owner' as const;
        await removeWebhook(tx, id);
        await tx`UPDATE accounts SET webhook_count = webhook_count - 1 WHERE uid = ${accountUid}`;
        return 'deleted' as const;
      }));
    },

    async deliveries(id, accountUid) {
      const [row] = await timed(() => sql<{ accountUid: number }[]>`SELECT account_uid AS "accountUid" FROM webhooks WHERE id = ${id}`);
      if (row === undefined) return { status: 'not_found' };
      if (Number(row.accountUid) !== accountUid) return { status: 'not_owner' };
      const rows = await timed(() => sql<Record<string, unknown>[]>`
        SELECT ${sql.unsafe(DELIVERY_COLUMNS)} FROM webhook_deliveries WHERE webhook_id = ${id} ORDER BY id DESC LIMIT ${DELIVERIES_KEPT}`);
      return { status: 'found', deliveries: rows.map((r) => deliveryOf(r)) };
    },

    async claim({ now, leaseMs, owner, limit, busyWebhooks, perAccount = UNBOUNDED, accountsInFlight = new Map() }) {
      // Candidates (the oldest due event of each webhook, numbered per account: WebhookStore.claim)
      // are read without locks, then locked with SKIP LOCKED, which rechecks them against
      // their newest version: an event another instance leased meanwhile is skipped, never
      // delivered twice at once.
      const rows = await timed(() => sql<Record<string, unknown>[]>`
        WITH heads AS (
          SELECT DISTINCT ON (webhook_id) seq, webhook_id, next_at FROM webhook_events
           WHERE next_at <= ${now} AND lease_until <= ${now} AND NOT (webhook_id = ANY(${sql.array([...busyWebhooks], 25)}::text[]))
           ORDER BY webhook_id, next_at, seq
        ), candidates AS (
          SELECT h.seq, h.next_at,
                 coalesce(f.n, 0) + row_number() OVER (PARTITION BY w.account_uid ORDER BY h.next_at, h.seq) AS slot
            FROM heads h JOIN webhooks w ON w.id = h.webhook_id
            LEFT JOIN unnest(${sql.array([...accountsInFlight.keys()], 20)}::bigint[], ${sql.array([...accountsInFlight.values()], 20)}::bigint[]) AS f(uid, n)
              ON f.uid = w.account_uid
        ), due AS (
          SELECT e.seq FROM webhook_events e JOIN candidates c ON e.seq = c.seq
           WHERE e.next_at <= ${now} AND e.lease_until <= ${now} AND c.slot <= ${perAccount}
           ORDER BY c.slot, c.next_at, c.seq LIMIT ${limit}
             FOR UPDATE OF e SKIP LOCKED
        ), leased AS (
          UPDATE webhook_events e SET lease_until = ${now + leaseMs}, lease_owner = ${owner}
            FROM due WHERE e.seq = due.seq
          RETURNING e.seq, e.event_id, e.webhook_id, e.type, e.occurred_at, e.data, e.attempts
        )
        SELECT l.seq, l.event_id AS "eventId", l.webhook_id AS "webhookId", w.account_uid AS "accountUid", l.type,
               l.occurred_at AS "timestamp", l.data, l.attempts, w.url, w.secret
          FROM leased l JOIN webhooks w ON w.id = l.webhook_id
         ORDER BY l.seq`);
      return rows.map((row): OutboxEvent => ({
        seq: Number(row.seq), eventId: row.eventId as string, webhookId: row.webhookId as string,
        accountUid: Number(row.accountUid), url: row.url as string,
        sealedSecret: row.secret as string, type: row.type as EventType, timestamp: row.timestamp as string,
        data: row.data as string, attempts: Number(row.attempts),
      }));
    },

    async settle(event, owner, settlement) {
      await timed(() => sql.begin(async (tx) => {
        if (settlement.outcome === 'released') {
          await tx`UPDATE webhook_events SET lease_until = 0, lease_owner = NULL WHERE seq = ${event.seq} AND lease_owner = ${owner}`;
          return;
        }
        if (settlement.outcome === 'retry') {
          await tx`UPDATE webhook_events SET attempts = attempts + 1, next_at = ${settlement.nextAttemptAt}, lease_until = 0, lease_owner = NULL
                    WHERE seq = ${event.seq} AND lease_owner = ${owner}`;
        } else {
          await tx`DELETE FROM webhook_events WHERE seq = ${event.seq} AND lease_owner = ${owner}`;
        }
        // The attempt was made whoever holds the lease now: it is logged either way.
        const d = settlement.delivery;
        await tx`
          INSERT INTO webhook_deliveries (webhook_id, event_id, type, attempt, time, status, error)
          SELECT id, ${d.eventId}, ${d.type}, ${d.attempt}, ${d.time}, ${d.status}, ${d.error} FROM webhooks WHERE id = ${event.webhookId}`;
        await tx`
          DELETE FROM webhook_deliveries WHERE webhook_id = ${event.webhookId} AND id <= (
            SELECT id FROM webhook_deliveries WHERE webhook_id = ${event.webhookId} ORDER BY id DESC LIMIT 1 OFFSET ${DELIVERIES_KEPT})`;
      }));
    },

    collectVisits({ now, maxVisits, foldAbove }) {
      return timed(() => sql.begin(async (tx) => {
        const [lock] = await tx<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(${COLLECT_LOCK}, hashtext(current_schema())) AS locked`;
        if (lock?.locked !== true) return 0;
        const hooks = await tx<{ webhookId: string }[]>`
          SELECT DISTINCT v.webhook_id AS "webhookId" FROM webhook_visits v
           WHERE NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.webhook_id = v.webhook_id AND e.type = ${EventType.LinkVisited})`;
        let made = 0;
        for (const { webhookId } of hooks) {
          const read = () => tx.unsafe<WaitingVisitRow[]>(
            `SELECT ${WAITING_VISIT_COLUMNS} FROM webhook_visits WHERE webhook_id = $1 ORDER BY id LIMIT $2`, [webhookId, maxVisits]);
          let rows = await read();
          // A backlog (more rows than one event takes): fold it when it has grown past the bound.
          if (rows.length === maxVisits) {
            const [waiting] = await tx<{ n: number; last: number }[]>`
              SELECT count(*)::int AS n, max(id) AS last FROM webhook_visits WHERE webhook_id = ${webhookId}`;
            if (waiting !== undefined && waiting.n > foldAbove) {
              await tx.unsafe(FOLD_VISITS, [webhookId, waiting.last]);
              await tx`DELETE FROM webhook_visits WHERE webhook_id = ${webhookId} AND id <= ${waiting.last}`;
              rows = await read();
            }
          }
          const { data, count, usedThrough, partial } = takeVisits(rows, maxVisits);
          if (count === 0) continue;
          if (usedThrough !== undefined) await tx`DELETE FROM webhook_visits WHERE webhook_id = ${webhookId} AND id <= ${usedThrough}`;
          if (partial !== undefined) await tx`UPDATE webhook_visits SET visits = ${partial.remaining} WHERE id = ${partial.id}`;
          await tx`
            INSERT INTO webhook_events (event_id, webhook_id, type, occurred_at, data)
            VALUES (${newEventId()}, ${webhookId}, ${EventType.LinkVisited}, ${now}, ${data})`;
          made++;
        }
        return made;
      }));
    },

    async pending() {
      const [row] = await guarded(() => sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_events`);
      return row?.n ?? 0;
    },
  };
  return { store, outbox };
}
