import { pino } from 'pino';

/** Where the app's JSON log lines go. */
export interface LogStream {
  write(line: string): void;
}

/**
 * Standard output with writes gathered into 4 KiB chunks: under load, one write(2) per ~20
 * request lines instead of one each (measured: about a fifth more resolutions per second).
 * A timer flushes at least every 100 ms, so a quiet server's lines are never held longer;
 * pino flushes the rest when the process exits. Only a `kill -9` can lose the last lines.
 */
export function createBufferedStdout(): LogStream {
  const stream = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => {
    try {
      stream.flush(); // no callback: a callback would add a listener per call
    } catch {
      // destroyed at exit; nothing left to flush
    }
  }, 100).unref();
  return stream;
}
