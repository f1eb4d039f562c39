import cluster, { type Worker } from 'node:cluster';
import { pino } from 'pino';
import type { Config } from './config.ts';
import { relayLiveMessages } from './events/cluster-transport.ts';
import { serveClusterMetrics } from './metrics/cluster-metrics.ts';

/**
 * The primary of `WORKERS=n`: forks n server processes that share the listening port (and
 * the database), replaces any that dies unexpectedly, collects their metrics for whichever
 * of them answers a scrape (cluster-metrics.ts), and on SIGTERM/SIGINT passes the
 * signal on and exits once every worker has finished its requests and exited: 0 when every
 * worker stopped cleanly, 1 when any failed (exited non-zero or was killed) during shutdown.
 */
export function runPrimary(config: Config, workerEnv?: Readonly<Record<string, string | undefined>>): void {
  const log = pino({ level: config.logLevel, base: { pid: process.pid, role: 'primary' } });
  serveClusterMetrics();
  // Live events between the workers when nothing else carries them (ADR 19).
  relayLiveMessages();
  let stopping = false;
  let failedStop = false;
  const workers = new Set<Worker>();

  const fork = () => {
    // Workers re-run this process's entry and read their configuration again: from the
    // environment the primary's configuration came from, when that was not process.env.
    const worker = cluster.fork(workerEnv);
    workers.add(worker);
    let listening = false;
    // A message to a worker that has just died (a live message passed on, a metrics
    // collection) fails as an 'error' event on it, "write EPIPE" or "channel closed": unheard,
    // that would end the primary and every worker with it. Its 'exit' below does what is needed.
    let failedWrite = false;
    worker.on('error', (error: Error) => {
      if (failedWrite) return;
      failedWrite = true;
      log.warn({ worker: worker.process.pid, err: error.message }, 'a message to a worker failed; it is going away');
    });
    worker.on('exit', (code, signal) => {
      workers.delete(worker);
      if (stopping) {
        // A worker still starting has no handler yet and dies of the SIGTERM passed on to it;
        // it had nothing to finish or close.
        const diedStarting = !listening && signal === 'SIGTERM';
        if ((code !== 0 || signal !== null) && !diedStarting) {
          failedStop = true;
          log.error({ worker: worker.process.pid, code, signal }, 'worker failed during shutdown');
        }
        if (workers.size === 0) {
          log.info(failedStop ? 'all workers gone; some failed' : 'all workers stopped');
          process.exit(failedStop ? 1 : 0);
        }
        return;
      }
      log.error({ worker: worker.process.pid, code, signal }, 'worker died; starting another');
      // A worker that cannot start at all (bad database) would otherwise be respawned forever.
      if (code === 1 && !signal && startedWorkers === 0) {
        log.fatal('workers exit at start; giving up');
        process.exit(1);
      }
      fork();
    });
    worker.on('listening', () => {
      listening = true;
      startedWorkers++;
    });
  };

  let startedWorkers = 0;
  for (let i = 0; i < config.workers; i++) fork();
  log.info({ workers: config.workers }, 'started workers');

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down workers');
    for (const worker of workers) worker.process.kill('SIGTERM');
    setTimeout(() => {
      log.error('workers did not stop in time');
      process.exit(1);
    }, config.shutdownDelayMs + config.shutdownTimeoutMs + 500).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
