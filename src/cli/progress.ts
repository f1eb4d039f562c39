import type { Output } from './command.ts';

/** Rows between two progress lines. */
export const PROGRESS_EVERY = 10_000;

/**
 * Counts rows and writes a line to stderr every PROGRESS_EVERY of them, so a long import or
 * export shows it is moving without mixing into the data on stdout.
 */
export function createProgress(stderr: Output, verb: string, every = PROGRESS_EVERY): { tick(): void; readonly count: number } {
  let count = 0;
  const started = performance.now();
  return {
    tick() {
      count++;
      if (count % every === 0) {
        const seconds = (performance.now() - started) / 1000;
        stderr.write(`${verb} ${count.toLocaleString('en-US')} rows (${Math.round(count / Math.max(seconds, 0.001)).toLocaleString('en-US')}/s)\n`);
      }
    },
    get count() {
      return count;
    },
  };
}
