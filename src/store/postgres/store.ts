import { DEFAULT_STORAGE_TIMEOUT_MS, withDeadline } from '../deadline.ts';
import type { PingOptions, Store } from '../store.ts';
import { administration } from './administration.ts';
import { connect } from './connection.ts';
import { guarded } from './errors.ts';
import { prepareWebhooks } from './webhooks.ts';
import { prepareStreamSlots } from './stream-slots.ts';
import { accountCalls } from './accounts.ts';
import type { PostgresEngine } from './engine.ts';
import { linkCalls } from './links.ts';
import { countingCalls } from '../counting-calls.ts';
import { statsCalls } from './stats.ts';
import { createCounter } from './counting.ts';
import { prepareApiKeys } from './api-keys.ts';
import { prepareDomains } from './domains.ts';

export interface PostgresOptions {
  readonly url: string;
  /** Connections in the pool (10 when omitted). */
  readonly max?: number;
  /** Named prepared statements (true when omitted); false behind PgBouncer in transaction mode. */
  readonly prepare?: boolean;
  /**
   * The storage deadline (STORAGE_TIMEOUT), default 5 s: a call the database has not answered
   * by then fails as storage unavailable (a frozen server, a lost network, crash recovery).
   */
  readonly timeoutMs?: number;
}

/** Connects to PostgreSQL, runs migrations, and returns it as a Store. */
export async function openPostgresStore(options: PostgresOptions): Promise<Store> {
  const sql = await connect({
    url: options.url, max: options.max ?? 10, prepare: options.prepare ?? true, applicationName: 'shortlink',
  });
  const timeoutMs = options.timeoutMs ?? DEFAULT_STORAGE_TIMEOUT_MS;
  // Single queries race the deadline; batched ones get it from their batcher, which also
  // knows whether the batch was sent. A timed-out query stays queued in the driver and runs
  // when the server answers again: withdrawing it (query.cancel()) would, for one already
  // sent, open a cancel connection whose failure nothing could catch.
  const timed = <R>(work: () => PromiseLike<R>): Promise<Awaited<R>> => withDeadline(guarded(work), timeoutMs);

  const counter = createCounter(sql, timeoutMs);

  const webhooks = prepareWebhooks(sql, timed);
  const engine: PostgresEngine = { sql, timeoutMs, timed, outbox: webhooks.outbox, administration: administration(sql) };
  const accounts = accountCalls(engine);
  const links = linkCalls(engine);
  const admin = engine.administration;
  let closed = false;

  return {
    engine: 'postgres',
    webhooks: webhooks.store,
    apiKeys: prepareApiKeys(sql, timed),
    domains: prepareDomains(sql, timed),
    streamSlots: prepareStreamSlots(sql, timed),
    ...accounts.calls,
    ...links.calls,
    ...countingCalls(counter),
    ...statsCalls(engine),

    listAccounts(after, limit) {
      return timed(() => admin.listAccounts(after, limit));
    },

    updateAccount(uid, changes) {
      return timed(() => admin.updateAccount(uid, changes));
    },

    searchLinks(search) {
      return timed(() => admin.searchLinks(search));
    },

    takeDownLink(shortCode, eventId) {
      return timed(() => admin.takeDownLink(shortCode, eventId));
    },

    async ping(options?: PingOptions) {
      // txid_current() assigns a transaction id, so the commit writes to the WAL.
      await timed(() => (options?.write === true ? sql`SELECT txid_current()` : sql`SELECT 1`));
    },

    async close() {
      if (closed) return;
      closed = true;
      await counter.drain();
      await links.drain();
      await accounts.drain();
      // Every call has been answered by now (by its deadline at the latest). What still runs
      // is a batch given up on, or a statement stuck on a frozen server: a second's grace,
      // then the connections are destroyed, so that the shutdown ends in time (issue 23).
      await sql.end({ timeout: 1 });
    },
  };
}
