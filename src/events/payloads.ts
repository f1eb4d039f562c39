/**
 * The `data` of each event type (CONTRACT §7.5), built where the change is made: the stores
 * write it into the webhook outbox inside the change's own transaction, so it must not
 * depend on the HTTP layer. The key order is the contract's (the same as
 * http/presenters.ts's LinkDetails, which a unit test holds them to).
 */
import { randomBytes } from 'node:crypto';
import type { LinkDetailsRecord, NewLink } from '../links/link-store.ts';
import type { LinkDetails } from '../links/link-details-schema.ts';
import type { EventType, VisitEventItem } from './events.ts';

/** A new event's identity: its `webhook-id` on every delivery attempt (Standard Webhooks' `msg_` form). */
export function newEventId(): string {
  return `msg_${randomBytes(16).toString('hex')}`;
}

/** A link's LinkDetails: the wire schema's own type (src/links/link-details-schema.ts). */
export type LinkDetailsData = LinkDetails;

/** `data` of link.created, link.updated and link.deleted: the link's LinkDetails. */
export function linkDetailsData(link: LinkDetailsRecord): LinkDetailsData {
  return {
    ShortCode: link.shortCode,
    PointsTo: link.pointsTo,
    CreatedBy: link.createdBy,
    Accesses: link.accesses,
    DateCreated: link.dateCreated,
    Title: link.title,
    Tags: [...link.tags],
    ExpiresAt: link.expiresAt,
    MaxVisits: link.maxVisits,
  };
}

/** `data` of link.created: the new link as it was inserted (no access yet). */
export function newLinkData(link: NewLink): LinkDetailsData {
  return linkDetailsData({
    shortCode: link.shortCode, pointsTo: link.pointsTo, createdBy: link.createdBy, accesses: 0, dateCreated: link.dateCreated,
    title: link.title ?? null, tags: link.tags ?? [], expiresAt: link.expiresAt ?? null, maxVisits: link.maxVisits ?? null,
  });
}

/** `data` of account.rotated. */
export function accountRotatedData(uid: number): { Uid: number } {
  return { Uid: uid };
}

/** `data` of link.visited. */
export function visitsData(visits: readonly VisitEventItem[]): { visits: readonly VisitEventItem[] } {
  return { visits };
}

/** The body of a delivery (and of a stream message): `{type, timestamp, data}`. */
export function eventBody(type: EventType, timestamp: string, data: unknown): string {
  return JSON.stringify({ type, timestamp, data });
}
