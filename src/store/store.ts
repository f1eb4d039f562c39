/**
 * The storage boundary: the server's Store is the ports the domain defines (accounts, links,
 * statistics, administration, webhooks), implemented by each engine. Every rule that needs
 * atomicity (the link cap, unique shortcodes, exact access counts) is settled inside one call,
 * by the database, never by a read followed by a write in the caller. Every implementation
 * passes test/store/contract.ts.
 */
import type { AccountStore } from '../accounts/account-store.ts';
import type { ApiKeyStore } from '../accounts/api-key-store.ts';
import type { DomainStore } from '../domains/domain-store.ts';
import type { Administration } from '../admin/administration.ts';
import type { LinkStore } from '../links/link-store.ts';
import type { StatsStore } from '../stats/stats-store.ts';
import type { WebhookStore } from '../webhooks/webhook-store.ts';
import type { StreamSlotStore } from '../events/stream-slot-store.ts';

// The records, where the engines and tests have always found them.
export type { AccountRecord, AccountStore, NewAccount } from '../accounts/account-store.ts';
export type {
  CreateLinkResult, DeleteLinkResult, LinkChanges, LinkDetailsInput, LinkDetailsRecord, LinkPage, LinkQuery, LinkRecord,
  LinkRefusal, LinkStore, NewLink, ResolvedLink, UpdateLinkResult,
} from '../links/link-store.ts';
export type { FoldOptions, StatsRows, StatsScope, StatsStore } from '../stats/stats-store.ts';

export interface PingOptions {
  /** Commit a write that changes nothing, through the same write path as the store's writes. */
  readonly write?: boolean;
}

/**
 * The server's store. It also carries the administration calls (`/v1/admin/…`), which the CLI's
 * AdminStore runs through the same per-engine code (sqlite/administration.ts,
 * postgres/administration.ts).
 */
export interface Store extends AccountStore, LinkStore, StatsStore, Administration {
  /** Which engine this is, for logs and health output. */
  readonly engine: string;

  /**
   * Webhook registrations, the outbox and the delivery log (CONTRACT §7.5). The outbox rows
   * of createLink, updateLink, deleteLink, rotateAccessCode and resolveLink are written by
   * those calls, in their own transaction. Each takes the id its event is to have
   * (`eventId`, made by the caller with newEventId(), so that the live stream shows the
   * same id as the webhook deliveries); a fresh one when omitted.
   */
  readonly webhooks: WebhookStore;

  /** The leases of live event streams: the per-account cap across processes, and their credentials' checks. */
  readonly streamSlots: StreamSlotStore;

  /** API keys (CONTRACT §8.5): an account's keys, found by digest; deleting the account removes them. */
  readonly apiKeys: ApiKeyStore;

  /** Registered domains and the default domain's fallbacks (CONTRACT §8.1). */
  readonly domains: DomainStore;

  /**
   * Resolves when the database answers a trivial query; with `write`, when it also commits a
   * write that changes nothing (a full disk or a read-only file fails that, not a read).
   */
  ping(options?: PingOptions): Promise<void>;

  /** Finishes pending writes and releases the database. */
  close(): Promise<void>;
}
