/**
 * What the domain services tell about their committed changes, in the domain's own records,
 * each with the id its webhook event was written with (the stream shows the same id);
 * the composition root turns them into ServiceEvents with the wire shapes
 * (src/http/event-payloads.ts) and publishes them live (ADR 19).
 */
import type { LinkDetailsRecord } from '../links/link-store.ts';

export interface LinkEventSink {
  linkCreated(link: LinkDetailsRecord, eventId: string): void;
  linkUpdated(link: LinkDetailsRecord, eventId: string): void;
  /** The link as it stood just before it was deleted. */
  linkDeleted(link: LinkDetailsRecord, eventId: string): void;
}

export interface AccountEventSink {
  accountRotated(accountUid: number, eventId: string): void;
}
