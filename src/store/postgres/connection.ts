/**
 * One way to connect to PostgreSQL, shared by the server's store and the admin store: the
 * same pool settings and the same migrations. The same name as ../sqlite/connection.ts.
 */
import type postgresModule from 'postgres';
import postgres, { driverProblem } from './driver.ts';
import { applyMigrations } from './migrations.ts';

export type Sql = postgresModule.Sql<Record<string, never>>;

export interface PostgresConnectOptions {
  readonly url: string;
  /**
   * Connections in the pool, at most. The driver never opens more: a query that finds every
   * connection busy is pipelined onto one or waits in its queue, so a full pool means
   * waiting, not failing (test/store/postgres-pool.test.ts).
   */
  readonly max: number;
  /**
   * Named prepared statements (true when omitted). A pooler in transaction mode (PgBouncer
   * before 1.21) hands each transaction any server connection, where a statement prepared on
   * another one does not exist; false makes every query an unnamed statement, parsed each time.
   */
  readonly prepare?: boolean;
  /** Shown in pg_stat_activity. */
  readonly applicationName: string;
}

/**
 * A connection pool with the project's settings (numbers for int8, fast reconnects), its
 * schema migrated.
 */
export async function connect(options: PostgresConnectOptions): Promise<Sql> {
  return (await connectMigrated(options)).sql;
}

/** As connect(), also saying how many migrations it applied (`shortlink migrate` reports it). */
export async function connectMigrated(options: PostgresConnectOptions): Promise<{ sql: Sql; applied: number }> {
  // Unpatched, a restart of PostgreSQL under load could kill the process (ADR 23).
  const problem = driverProblem();
  if (problem !== undefined) throw new Error(`the PostgreSQL driver lacks its connection fix: ${problem}`);
  const sql: Sql = postgres(options.url, {
    max: options.max,
    prepare: options.prepare ?? true,
    onnotice: () => {},
    connect_timeout: 5,
    idle_timeout: 60,
    // postgres.js waits before reconnecting a failed connection, up to 20 s after a few
    // failures, and queues queries meanwhile: during an outage requests would hang instead of
    // answering 503, and recovery would lag the database's return by as long. A connection is
    // only retried when a query needs it, so retrying at once costs one refused connect per
    // request while the database is down.
    backoff: () => 0,
    // int8 columns (uid, accesses) fit in a double for any realistic count.
    types: { bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: (value: string) => Number(value) } },
    connection: { application_name: options.applicationName },
  }) as unknown as Sql;
  try {
    return { sql, applied: await applyMigrations(sql) };
  } catch (error) {
    await sql.end({ timeout: 1 });
    throw error;
  }
}
