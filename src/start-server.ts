/**
 * Runs the server for a configuration: opens the store and the rate-limit counters, builds the
 * app, listens, and shuts down cleanly on SIGTERM or SIGINT. With `workers > 1` this process
 * becomes a primary that runs that many such servers (cluster.ts). A failure to start is one
 * line on standard error and exit status 1.
 */
import cluster from 'node:cluster';
import { buildApp } from './app.ts';
import { runPrimary } from './cluster.ts';
import { checkStoragePlace, startWarnings, storagePlace, type Config } from './config.ts';
import { createCounters } from './rate-limit/create-counters.ts';
import { openStore } from './store/open-store.ts';
import type { Store } from './store/store.ts';

export interface StartOptions {
  /**
   * The environment cluster workers start with, on top of this process's: the one the
   * configuration was read from, so that workers (which read it again) see the same.
   */
  readonly workerEnv?: Readonly<Record<string, string | undefined>>;
}

/** How long a stopped process may linger on a connection left open before it exits anyway. */
const LINGER_MS = 500;

/** Writes the one line and ends the process with status 1. */
export function failStart(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** Resolves once the server listens (or, for a cluster primary, once the workers are forked). */
export async function startServer(config: Config, options: StartOptions = {}): Promise<void> {
  if (config.workers > 1 && cluster.isPrimary) {
    // Open once here, so that a bad database stops the start with one line and the schema
    // and WAL mode are in place before the workers race to open the same file.
    await (await openOrFail(config)).close();
    runPrimary(config, options.workerEnv);
  } else {
    await serve(config);
  }
}

async function openOrFail(config: Config): Promise<Store> {
  const misplaced = checkStoragePlace(config.storage);
  if (misplaced !== undefined) failStart(`Unable to start: cannot open the database: ${misplaced}`);
  try {
    return await openStore(config.storage, { soleProcess: config.workers <= 1, timeoutMs: config.storageTimeoutMs });
  } catch (error) {
    failStart(`Unable to start: cannot open the database (${(error as Error).message.split('\n')[0]})`);
  }
}

async function serve(config: Config): Promise<void> {
  const store = await openOrFail(config);
  const counters = createCounters(config);
  let stopping = false;
  // Set by an uncaught exception: the process stops as on SIGTERM, then exits 1.
  let crashed = false;
  const app = await buildApp({ config, store, counters, draining: () => stopping });
  app.log.info(storagePlace(config.storage), 'database opened');
  for (const warning of startWarnings(config)) app.log.warn(warning);
  await counters.connect(app.log);

  async function stop(signal: string): Promise<void> {
    if (stopping) {
      app.log.info({ signal }, 'already shutting down');
      return;
    }
    stopping = true;
    app.log.info({ signal, delayMs: config.shutdownDelayMs }, 'shutting down');
    if (config.shutdownDelayMs > 0) {
      // Unready but still serving, so that load balancers stop routing here before the
      // listener closes and connections would be refused.
      await new Promise((resolve) => setTimeout(resolve, config.shutdownDelayMs));
      app.log.info('closing the listener');
    }
    // If something hangs, give up before the 10 s a supervisor typically allows (counted
    // after the delay).
    const deadline = setTimeout(() => {
      app.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    deadline.unref();
    try {
      await app.close();
      await store.close();
      await counters.close();
      app.log.info('stopped');
      process.exitCode = crashed ? 1 : 0;
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exitCode = 1;
    }
    clearTimeout(deadline);
    // Everything of ours is closed. A connection to a database that froze mid-statement may
    // still be open (the driver ends it politely and the server never answers): it must not
    // hold the process past the supervisor's patience. The timer is unref'd, so a process
    // with nothing left ends by itself at once (issue 23).
    setTimeout(() => process.exit(), LINGER_MS).unref();
    // Everything is closed and the process ends by itself, except that a cluster worker's
    // channel to its primary would keep it alive. A worker exits explicitly, with its outcome:
    // dropping the channel instead (process.disconnect()) makes Node's cluster code exit 0
    // whatever the exit code, and the primary would report a failed stop as a clean one.
    if (cluster.isWorker) process.exit();
  }
  // `on`, not `once`: with no listener left, a repeated signal would take Node's default action
  // and kill the process in the middle of finishing its requests.
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // An exception nothing caught (or a rejection nothing handled) leaves the process in a
  // state no one planned for: one log line, then the SIGTERM path (stop accepting, finish
  // the requests in flight, close the store) and exit 1, so that the supervisor starts a fresh
  // one. Dying at once with a stack would drop every request in flight (ADR 23).
  process.on('uncaughtException', (error, origin) => {
    crashed = true;
    process.exitCode = 1;
    app.log.fatal({ err: error, origin }, 'uncaught exception; shutting down');
    void stop(origin);
  });

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await store.close();
    await counters.close();
    failStart(`Unable to start: cannot listen on ${config.host}:${config.port} (${(error as Error).message})`);
  }
}
