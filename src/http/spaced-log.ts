/**
 * Spaces out repeated log lines. During an outage every request fails for the same reason:
 * a line (with its stack) per request once wrote 45 MB in 8 s across three instances. This
 * lets one line per cause through per interval, and that line says how many were held back.
 */
export interface SpacedLog {
  /**
   * Calls `write` unless a line for `cause` was written less than an interval ago; `write`
   * gets how many lines for that cause were held back since the last one written.
   */
  report(cause: string, write: (suppressed: number) => void): void;
}

export interface SpacedLogOptions {
  /** At most one line per cause this often. */
  readonly intervalMs?: number;
  readonly now?: () => number;
  /** Causes remembered at once; past this, the oldest are forgotten (unbounded variety must not grow memory). */
  readonly maxCauses?: number;
}

/** The interval the Redis warning uses too (rate-limit/create-counters.ts). */
export const LOG_SPACING_MS = 10_000;

export function createSpacedLog({ intervalMs = LOG_SPACING_MS, now = Date.now, maxCauses = 100 }: SpacedLogOptions = {}): SpacedLog {
  const causes = new Map<string, { lastMs: number; suppressed: number }>();
  return {
    report(cause, write) {
      const time = now();
      const seen = causes.get(cause);
      if (seen !== undefined && time - seen.lastMs < intervalMs) {
        seen.suppressed++;
        return;
      }
      const suppressed = seen?.suppressed ?? 0;
      causes.delete(cause); // re-inserted last: the Map's order is then oldest first
      if (causes.size >= maxCauses) causes.delete(causes.keys().next().value!);
      causes.set(cause, { lastMs: time, suppressed: 0 });
      write(suppressed);
    },
  };
}

/**
 * What makes two failures "the same": the error's code or message, and its cause's (the
 * driver error behind `storage unavailable`), without the stack.
 */
export function causeOf(error: unknown): string {
  const describe = (value: unknown): string => {
    if (typeof value !== 'object' || value === null) return String(value);
    const e = value as { name?: unknown; code?: unknown; message?: unknown };
    return `${String(e.name)}:${String(e.code ?? '')}:${String(e.message ?? '')}`;
  };
  const cause = typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
  return (cause === undefined ? describe(error) : `${describe(error)} <- ${describe(cause)}`).slice(0, 300);
}
