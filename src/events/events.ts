/**
 * The events of CONTRACT §7.5, as both of their consumers see them: webhook deliveries (the
 * outbox, written in the change's own transaction) and the live stream (`GET /v1/events`,
 * fed after the change is committed). One shape, so a receiver and a stream reader get the
 * same `{type, timestamp, data}`.
 */

export const EventType = {
  LinkCreated: 'link.created',
  LinkUpdated: 'link.updated',
  LinkDeleted: 'link.deleted',
  LinkVisited: 'link.visited',
  AccountRotated: 'account.rotated',
} as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

/** Every event type, in the contract's order. */
export const EVENT_TYPES: readonly EventType[] = Object.values(EventType);

/** One visit as `link.visited` carries it in `data.visits`. */
export interface VisitEventItem {
  readonly ShortCode: string;
  readonly Time: string;
  readonly Bot: boolean;
  readonly Referrer: string;
  readonly Country: string;
  readonly Browser: string;
  readonly OperatingSystem: string;
  readonly Device: string;
  /** The link's domain (host), only for a link off the default domain. */
  readonly Domain?: string;
}

/** An event of one account, after its change was committed. */
export interface ServiceEvent {
  /** Stable identity: the `webhook-id` of its deliveries and the SSE `id:` line. */
  readonly id: string;
  readonly accountUid: string;
  readonly type: EventType;
  /** RFC 3339, UTC. */
  readonly timestamp: string;
  /** LinkDetails for link.*, `{Uid}` for account.rotated, `{visits}` for link.visited. */
  readonly data: unknown;
}

/**
 * The live side: events published once committed, heard by every stream of the account,
 * on this process and (with a cross-instance transport) on every other.
 */
export interface LiveEvents {
  publish(event: ServiceEvent): void;
  /** Listens to one account's events; the answer stops listening. */
  subscribe(accountUid: string, listener: (event: ServiceEvent) => void): () => void;
  close(): Promise<void>;
}
