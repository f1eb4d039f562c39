/**
 * Webhooks on SQLite (the same name and calls as ../postgres/webhooks.ts): registrations, the
 * outbox writes the store's changes make inside their own transaction, and the dispatcher's
 * claim and settlement. Writes run in the store's write batch (one COMMIT per batch), so the
 * claim's UPDATE is atomic against every other process sharing the file (WORKERS > 1).
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { EventType } from '../../events/events.ts';
import { newEventId } from '../../events/payloads.ts';
import {
  DELIVERIES_KEPT, DELIVERY_COLUMNS, deliveryOf, foldVisitsSql, MAX_WEBHOOKS, outboxInsertSql, subscribedTo, subscribedWhere, takeVisits,
  WAITING_VISIT_COLUMNS, WEBHOOK_COLUMNS, webhookOf,
  type OutboxEvent, type WaitingVisitRow, type WebhookStore,
} from '../webhooks.ts';
import type { WriteBatch } from './write-batch.ts';

/** The outbox writes a change makes in its own transaction (synchronous: inside the write). */
export interface SqliteOutbox {
  /** One row per webhook of `accountUid` subscribed to `type`, all with the id `eventId`. */
  write(type: EventType, timestamp: string, data: unknown, accountUid: number, eventId?: string): void;
}

const sqlite = (n: number): string => `?${n}`;

/** No bound per account (a claim without one). */
const UNBOUNDED = 2 ** 31 - 1;

/** The outbox on `db`: for the store's changes, and for the admin store's takedowns (CLI). */
export function prepareOutbox(db: DatabaseSync): SqliteOutbox {
  const insert = db.prepare(outboxInsertSql(sqlite, 'instr'));
  // Most accounts have no webhook: one probe of the same index, and the event's JSON is made
  // only for an account that has one. Inside the change's transaction, like the insert, so a
  // webhook registered concurrently is either seen here or registered after the change.
  const anySubscribed = db.prepare(`SELECT 1 FROM webhooks WHERE ${subscribedWhere('instr', sqlite(1), sqlite(2))} LIMIT 1`);
  anySubscribed.setReturnArrays(true);
  return {
    write(type, timestamp, data, accountUid, eventId) {
      const subscribed = subscribedTo(type);
      if (anySubscribed.get(accountUid, subscribed) === undefined) return;
      insert.run(eventId ?? newEventId(), type, timestamp, JSON.stringify(data), accountUid, subscribed);
    },
  };
}

export function prepareWebhooks(
  db: DatabaseSync,
  read: <R>(work: () => R) => Promise<R>,
  writes: WriteBatch,
): { store: WebhookStore; outbox: SqliteOutbox } {
  const statements = {
    takeSlot: db.prepare(`UPDATE accounts SET webhook_count = webhook_count + 1 WHERE uid = ? AND webhook_count < ${MAX_WEBHOOKS}`),
    giveBackSlot: db.prepare('UPDATE accounts SET webhook_count = webhook_count - 1 WHERE uid = ?'),
    insert: db.prepare(
      'INSERT INTO webhooks (id, account_uid, url, events, visited, secret, date_created) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    list: db.prepare(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE account_uid = ? ORDER BY seq`),
    owner: db.prepare('SELECT account_uid AS "accountUid" FROM webhooks WHERE id = ?'),
    deleteEvents: db.prepare('DELETE FROM webhook_events WHERE webhook_id = ?'),
    deleteVisits: db.prepare('DELETE FROM webhook_visits WHERE webhook_id = ?'),
    deleteDeliveries: db.prepare('DELETE FROM webhook_deliveries WHERE webhook_id = ?'),
    deleteWebhook: db.prepare('DELETE FROM webhooks WHERE id = ?'),
    deliveries: db.prepare(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id DESC LIMIT ${DELIVERIES_KEPT}`),
    // At most one event per webhook per claim (its oldest due), none of a busy webhook's;
    // fair across accounts (WebhookStore.claim): ?6 holds the accounts' attempts in flight as a JSON
    // object, ?7 the bound per account.
    claim: db.prepare(
      `UPDATE webhook_events SET lease_until = ?1 + ?2, lease_owner = ?3
        WHERE seq IN (
          SELECT seq FROM (
            SELECT h.seq, h.next_at,
                   coalesce(f.value, 0) + row_number() OVER (PARTITION BY w.account_uid ORDER BY h.next_at, h.seq) AS slot
              FROM (SELECT seq, webhook_id, next_at, row_number() OVER (PARTITION BY webhook_id ORDER BY next_at, seq) AS n
                      FROM webhook_events
                     WHERE next_at <= ?1 AND lease_until <= ?1 AND webhook_id NOT IN (SELECT value FROM json_each(?4))) h
              JOIN webhooks w ON w.id = h.webhook_id
              LEFT JOIN json_each(?6) f ON f.key = CAST(w.account_uid AS TEXT)
             WHERE h.n = 1
          ) WHERE slot <= ?7 ORDER BY slot, next_at, seq LIMIT ?5)
        RETURNING seq, event_id AS "eventId", webhook_id AS "webhookId", type, occurred_at AS "timestamp", data, attempts`,
    ),
    target: db.prepare('SELECT url, secret, account_uid AS "accountUid" FROM webhooks WHERE id = ?'),
    finish: db.prepare('DELETE FROM webhook_events WHERE seq = ? AND lease_owner = ?'),
    reschedule: db.prepare(
      'UPDATE webhook_events SET attempts = attempts + 1, next_at = ?3, lease_until = 0, lease_owner = NULL WHERE seq = ?1 AND lease_owner = ?2',
    ),
    release: db.prepare('UPDATE webhook_events SET lease_until = 0, lease_owner = NULL WHERE seq = ? AND lease_owner = ?'),
    recordDelivery: db.prepare(
      `INSERT INTO webhook_deliveries (webhook_id, event_id, type, attempt, time, status, error)
       SELECT id, ?2, ?3, ?4, ?5, ?6, ?7 FROM webhooks WHERE id = ?1`,
    ),
    trimDeliveries: db.prepare(
      `DELETE FROM webhook_deliveries WHERE webhook_id = ?1 AND id <= (
         SELECT id FROM webhook_deliveries WHERE webhook_id = ?1 ORDER BY id DESC LIMIT 1 OFFSET ${DELIVERIES_KEPT})`,
    ),
    webhooksWithVisits: db.prepare(
      `SELECT DISTINCT v.webhook_id AS "webhookId" FROM webhook_visits v
        WHERE NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.webhook_id = v.webhook_id AND e.type = '${EventType.LinkVisited}')`,
    ),
    visitRows: db.prepare(`SELECT ${WAITING_VISIT_COLUMNS} FROM webhook_visits WHERE webhook_id = ? ORDER BY id LIMIT ?`),
    waitingCount: db.prepare('SELECT count(*) AS n, max(id) AS last FROM webhook_visits WHERE webhook_id = ?'),
    foldVisits: db.prepare(foldVisitsSql(sqlite)),
    forgetVisits: db.prepare('DELETE FROM webhook_visits WHERE webhook_id = ? AND id <= ?'),
    shrinkVisit: db.prepare('UPDATE webhook_visits SET visits = ? WHERE id = ?'),
    webhookAccount: db.prepare('SELECT account_uid AS "accountUid" FROM webhooks WHERE id = ?'),
    insertEvent: db.prepare(
      'INSERT INTO webhook_events (event_id, webhook_id, type, occurred_at, data) VALUES (?, ?, ?, ?, ?)',
    ),
    pending: db.prepare('SELECT count(*) AS n FROM webhook_events'),
  } satisfies Record<string, StatementSync>;

  function removeWebhook(id: string): void {
    statements.deleteEvents.run(id);
    statements.deleteVisits.run(id);
    statements.deleteDeliveries.run(id);
    statements.deleteWebhook.run(id);
  }

  const outbox = prepareOutbox(db);

  const store: WebhookStore = {
    create(webhook) {
      return writes.run(() => {
        if (statements.takeSlot.run(webhook.accountUid).changes === 0) return 'cap_reached';
        statements.insert.run(
          webhook.id, webhook.accountUid, webhook.url, webhook.events.join(','),
          webhook.events.includes(EventType.LinkVisited) ? 1 : 0, webhook.sealedSecret, webhook.dateCreated,
        );
        return 'created';
      });
    },

    list(accountUid) {
      return read(() => statements.list.all(accountUid).map((row) => webhookOf(row)));
    },

    delete(id, accountUid) {
      return writes.run(() => {
        const row = statements.owner.get(id) as { accountUid: number } | undefined;
        if (row === undefined) return 'not_found';
        if (row.accountUid !== accountUid) return 'not_owner';
        removeWebhook(id);
        statements.giveBackSlot.run(accountUid);
        return 'deleted';
      });
    },

    deliveries(id, accountUid) {
      return read(() => {
        const row = statements.owner.get(id) as { accountUid: number } | undefined;
        if (row === undefined) return { status: 'not_found' };
        if (row.accountUid !== accountUid) return { status: 'not_owner' };
        return { status: 'found', deliveries: statements.deliveries.all(id).map((r) => deliveryOf(r)) };
      });
    },

    claim({ now, leaseMs, owner, limit, busyWebhooks, perAccount = UNBOUNDED, accountsInFlight = new Map() }) {
      return writes.run(() => {
        const rows = statements.claim.all(
          now, leaseMs, owner, JSON.stringify(busyWebhooks), limit, JSON.stringify(Object.fromEntries(accountsInFlight)), perAccount,
        );
        const events: OutboxEvent[] = [];
        for (const row of rows) {
          const target = statements.target.get(row.webhookId as string) as { url: string; secret: string; accountUid: number } | undefined;
          if (target === undefined) continue;
          events.push({
            seq: Number(row.seq), eventId: row.eventId as string, webhookId: row.webhookId as string,
            accountUid: Number(target.accountUid), url: target.url,
            sealedSecret: target.secret, type: row.type as EventType, timestamp: row.timestamp as string,
            data: row.data as string, attempts: Number(row.attempts),
          });
        }
        return events;
      });
    },

    settle(event, owner, settlement) {
      return writes.run(() => {
        if (settlement.outcome === 'released') {
          statements.release.run(event.seq, owner);
          return;
        }
        if (settlement.outcome === 'retry') statements.reschedule.run(event.seq, owner, settlement.nextAttemptAt);
        else statements.finish.run(event.seq, owner);
        // The attempt was made whoever holds the lease now: it is logged either way.
        const d = settlement.delivery;
        statements.recordDelivery.run(event.webhookId, d.eventId, d.type, d.attempt, d.time, d.status, d.error);
        statements.trimDeliveries.run(event.webhookId);
      });
    },

    collectVisits({ now, maxVisits, foldAbove }) {
      return writes.run(() => {
        let made = 0;
        for (const { webhookId } of statements.webhooksWithVisits.all() as { webhookId: string }[]) {
          let rows = statements.visitRows.all(webhookId, maxVisits) as unknown as WaitingVisitRow[];
          // A backlog (more rows than one event takes): fold it when it has grown past the bound.
          if (rows.length === maxVisits) {
            const waiting = statements.waitingCount.get(webhookId) as { n: number; last: number };
            if (waiting.n > foldAbove) {
              statements.foldVisits.run(webhookId, waiting.last);
              statements.forgetVisits.run(webhookId, waiting.last);
              rows = statements.visitRows.all(webhookId, maxVisits) as unknown as WaitingVisitRow[];
            }
          }
          const { data, count, usedThrough, partial } = takeVisits(rows, maxVisits);
          if (count === 0) continue;
          if (usedThrough !== undefined) statements.forgetVisits.run(webhookId, usedThrough);
          if (partial !== undefined) statements.shrinkVisit.run(partial.remaining, partial.id);
          statements.insertEvent.run(newEventId(), webhookId, EventType.LinkVisited, now, data);
          made++;
        }
        return made;
      });
    },

    pending() {
      return read(() => Number((statements.pending.get() as { n: number }).n));
    },
  };
  return { store, outbox };
}
