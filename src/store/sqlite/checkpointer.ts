import { Worker } from 'node:worker_threads';

/**
 * Moves WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the
 * COMMIT that crosses the threshold, copying every dirty page back to the database file
 * while all requests wait; with resolutions spread over many links that is a stall of
 * several milliseconds. A worker thread with its own connection instead runs a PASSIVE
 * checkpoint every 100 ms, which never blocks writers. The main connection keeps a high
 * automatic threshold as a fallback in case the worker stops.
 */
export interface Checkpointer {
  stop(): Promise<void>;
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path, { timeout: 1000 });
const timer = setInterval(() => {
  try { db.exec('PRAGMA wal_checkpoint(PASSIVE)'); } catch { /* busy or closing: next tick */ }
}, 100);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export function startCheckpointer(path: string): Checkpointer {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path } });
  worker.unref();
  return {
    async stop() {
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.ref(); // keep the process alive until the worker has closed its connection
      worker.postMessage('stop');
      await exited;
    },
  };
}
