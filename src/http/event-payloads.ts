/**
 * The domain's committed changes as ServiceEvents (CONTRACT §7.5), in the wire shapes of the
 * presenters, published live (ADR 19). Visits come from the count batch, once it has
 * committed: one `link.visited` per account per batch, at most VISITS_PER_EVENT visits each,
 * and only for accounts someone listens to, so a batch nobody listens to costs one check.
 */
import type { AccountEventSink, LinkEventSink } from '../events/domain-events.ts';
import { EventType, type VisitEventItem } from '../events/events.ts';
import { serviceEvent, type LiveEventsHub } from '../events/live-events.ts';
import type { BatchListener } from '../store/group-commit.ts';
import type { LinkRecord } from '../store/store.ts';
import { linkDetailsBody } from './presenters.ts';
import { visitItem } from '../events/payloads.ts';

/** Visits per `link.visited` event: a busy account's batch becomes several events. */
export const VISITS_PER_EVENT = 100;

export interface EventPublisher {
  readonly links: LinkEventSink;
  readonly accounts: AccountEventSink;
  /** Watches the store's count batches (Store.watchCounts). */
  readonly countsCommitted: BatchListener<LinkRecord>;
}

export function createEventPublisher(live: LiveEventsHub, clock: () => Date): EventPublisher {
  // Changes carry the id of their outbox event (the webhook-id); visit batches get their own.
  const publish = (type: EventType, uid: number, data: unknown, id?: string) => live.publish(serviceEvent(type, uid, data, clock(), id));
  return {
    links: {
      linkCreated: (link, eventId) => publish(EventType.LinkCreated, link.createdBy, linkDetailsBody(link), eventId),
      linkUpdated: (link, eventId) => publish(EventType.LinkUpdated, link.createdBy, linkDetailsBody(link), eventId),
      linkDeleted: (link, eventId) => publish(EventType.LinkDeleted, link.createdBy, linkDetailsBody(link), eventId),
    },
    accounts: {
      accountRotated: (uid, eventId) => publish(EventType.AccountRotated, uid, { Uid: uid }, eventId),
    },
    countsCommitted(calls, outcomes) {
      // The whole cost of a batch nobody listens to. Otherwise the events are made after the
      // batch's callers have been answered.
      if (live.anyone()) setImmediate(publishVisits, calls, outcomes);
    },
  };

  function publishVisits(calls: Parameters<BatchListener<LinkRecord>>[0], outcomes: Parameters<BatchListener<LinkRecord>>[1]): void {
    let byAccount: Map<number, VisitEventItem[]> | undefined;
    for (let i = 0; i < calls.length; i++) {
      const outcome = outcomes[i];
      if (outcome === undefined || outcome.refused !== undefined) continue;
      const uid = outcome.row.createdBy;
      if (!live.wants(String(uid))) continue;
      const call = calls[i]!;
      const visit = call.visit;
      const item = visitItem(call.code, {
        Time: call.now,
        // With STATS=off no visit is classified: the classes are empty.
        Bot: visit?.bot ?? false,
        Referrer: visit?.referrer ?? '',
        Country: visit?.country ?? '',
        Browser: visit?.browser ?? '',
        OperatingSystem: visit?.os ?? '',
        Device: visit?.device ?? '',
      });
      byAccount ??= new Map();
      const list = byAccount.get(uid);
      if (list === undefined) byAccount.set(uid, [item]);
      else list.push(item);
    }
    if (byAccount === undefined) return;
    for (const [uid, visits] of byAccount) {
      for (let start = 0; start < visits.length; start += VISITS_PER_EVENT) {
        publish(EventType.LinkVisited, uid, { visits: visits.slice(start, start + VISITS_PER_EVENT) });
      }
    }
  }
}
