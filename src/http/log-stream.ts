import { pino } from 'pino';

/** Where the app's JSON log lines go. */
export interface LogStream {
  write(line: string): void;
}

/** Characters gathered before they are handed to the writer: about 64 KiB of JSON lines. */
const CHUNK_CHARS = 65_536;

/** Every buffered stdout's hand-over, run before pino's own flush at exit. */
const handOvers = new Set<() => void>();
let exitHooked = false;

/**
 * Standard output with writes gathered into 64 KiB chunks: under load, one write(2) per ~250
 * request lines instead of one each. A write costs far more CPU than its bytes suggest (each
 * asynchronous write is a round trip through libuv's thread pool): with 4 KiB chunks
 * (~15 lines) `npm run bench:cpu` measured 37.5–39.5 µs per redirect, with 16 KiB 33.5 and
 * with 64 KiB 33.5, in the same runs (docs/performance.md). A timer hands the rest over at
 * least every 100 ms, so a quiet server's lines are never held longer; at exit the rest is
 * handed over and pino flushes it. Only a `kill -9` can lose the last lines.
 *
 * The lines are gathered here, in an array joined once per chunk, and not by SonicBoom's
 * `minLength`: SonicBoom appends each line to its pending string and measures that string's
 * UTF-8 length on every write, which flattens the whole growing string each time (measured:
 * 3.8 µs of CPU per line, against 0.9 µs here). SonicBoom still does the writing, with its
 * handling of partial writes, EAGAIN and a closed pipe.
 */
export function createBufferedStdout(): LogStream {
  const stream = pino.destination({ dest: 1, sync: false, minLength: 0 });
  let lines: string[] = [];
  let chars = 0;
  const handOver = () => {
    if (lines.length === 0) return;
    const chunk = lines.join('');
    lines = [];
    chars = 0;
    try {
      stream.write(chunk);
    } catch {
      // destroyed at exit; nothing left to write to
    }
  };
  setInterval(handOver, 100).unref();
  handOvers.add(handOver);
  if (!exitHooked) {
    exitHooked = true;
    // Prepended: pino's own exit handler (flushSync, or flush and end) must find these lines.
    const handOverAll = () => handOvers.forEach((hand) => hand());
    process.prependListener('beforeExit', handOverAll);
    process.prependListener('exit', handOverAll);
  }
  return {
    write(line) {
      lines.push(line);
      chars += line.length;
      if (chars >= CHUNK_CHARS) handOver();
    },
  };
}
