/**
 * What each concept's calls share on PostgreSQL (accounts.ts, links.ts, …): the pool, the
 * storage deadline, the outbox and the administration calls. store.ts makes it once and hands
 * it to every concept's factory, as sqlite/engine.ts does for SQLite.
 */
import type { PostgresAdministration } from './administration.ts';
import type { Sql } from './connection.ts';
import type { PostgresOutbox } from './webhooks.ts';

export interface PostgresEngine {
  readonly sql: Sql;
  /** STORAGE_TIMEOUT in milliseconds. */
  readonly timeoutMs: number;
  /** Runs one query (or transaction) within the storage deadline, its errors translated. */
  timed<R>(work: () => PromiseLike<R>): Promise<Awaited<R>>;
  readonly outbox: PostgresOutbox;
  readonly administration: PostgresAdministration;
}

/** A concept's calls, and what closing must wait for (its batches in flight). */
export interface Drained<T> {
  readonly calls: T;
  drain(): Promise<void>;
}
