/**
 * What each concept's calls share on SQLite (accounts.ts, links.ts, …): the connection, the
 * shared read, the write batch, the outbox and the administration statements. store.ts makes
 * it once and hands it to every concept's factory, as postgres/engine.ts does for PostgreSQL.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { SqliteAdministration } from './administration.ts';
import type { SqliteOutbox } from './webhooks.ts';
import type { WriteBatch } from './write-batch.ts';

export interface SqliteEngine {
  readonly db: DatabaseSync;
  /** Runs a read in this turn's shared read transaction, retrying while the file is busy. */
  read<R>(work: () => R): Promise<R>;
  /** The write batch: every write goes through it, one transaction per batch. */
  readonly writes: WriteBatch;
  readonly outbox: SqliteOutbox;
  readonly administration: SqliteAdministration;
}
