/**
 * The `data` of each event type (CONTRACT §7.5), built where the change is made: the stores
 * write it into the webhook outbox inside the change's own transaction, so it must not
 * depend on the HTTP layer. The key order is the contract's (the same as
 * http/presenters.ts's LinkDetails, which a unit test holds them to).
 */
import { randomUUID } from 'node:crypto';
import type { LinkDetailsRecord, NewLink } from '../links/link-store.ts';
import type { LinkDetails } from '../links/link-details-schema.ts';
import type { EventType, VisitEventItem } from './events.ts';
import { codeOf, domainOf, UNLOCKED } from '../links/link-key.ts';
import { rulesFromJson } from '../links/rules.ts';

/** A new event's identity: its `webhook-id` on every delivery attempt (Standard Webhooks' `msg_` form). */
export function newEventId(): string {
  // randomUUID draws from a cached block of entropy (one random call per 128 ids, where
  // randomBytes(16) made one per id): 122 random bits, written as 32 hex digits.
  return `msg_${randomUUID().replaceAll('-', '')}`;
}

/** A link's LinkDetails: the wire schema's own type (src/links/link-details-schema.ts). */
export type LinkDetailsData = LinkDetails;

/** `data` of link.created, link.updated and link.deleted: the link's LinkDetails. */
export function linkDetailsData(link: LinkDetailsRecord): LinkDetailsData {
  return {
    ShortCode: codeOf(link.shortCode),
    PointsTo: link.pointsTo,
    CreatedBy: link.createdBy,
    Accesses: link.accesses,
    DateCreated: link.dateCreated,
    Title: link.title,
    Tags: [...link.tags],
    ExpiresAt: link.expiresAt,
    MaxVisits: link.maxVisits,
    Domain: domainOf(link.shortCode),
    ForwardQuery: link.forwardQuery,
    Protected: link.protected,
    Rules: rulesData(link.rules),
  };
}

/** Stored rules (JSON text of `{if, to}` objects) as LinkDetails shows them: `[{If, To}]`. */
export function rulesData(stored: string | null): LinkDetailsData['Rules'] {
  return rulesFromJson(stored).map((rule) => ({ If: rule.if as LinkDetailsData['Rules'][number]['If'], To: rule.to }));
}

/** `data` of link.created: the new link as it was inserted (no access yet). */
export function newLinkData(link: NewLink): LinkDetailsData {
  return linkDetailsData({
    shortCode: link.shortCode, pointsTo: link.pointsTo, createdBy: link.createdBy, accesses: 0, dateCreated: link.dateCreated,
    title: link.title ?? null, tags: link.tags ?? [], expiresAt: link.expiresAt ?? null, maxVisits: link.maxVisits ?? null,
    forwardQuery: link.forwardQuery ?? false, rules: link.rules ?? null, protected: (link.passwordHash ?? null) !== null,
  });
}

/**
 * One visit of a link.visited event, for the link `key` names: its shortcode first, and, for
 * a link on a registered domain only, `Domain` last (the contract's keys stay as they were for
 * the default domain's links).
 */
export function visitItem(key: string, classes: Omit<VisitEventItem, 'ShortCode' | 'Domain'>): VisitEventItem {
  const bare = key.startsWith(UNLOCKED) ? key.slice(UNLOCKED.length) : key;
  const domain = domainOf(bare);
  return domain === null ? { ShortCode: bare, ...classes } : { ShortCode: codeOf(bare), ...classes, Domain: domain };
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
