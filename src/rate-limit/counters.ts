/**
 * Fixed-window counters behind the rate limits. A window starts at a key's first event and
 * lasts `windowMs`; `hit` counts one event, `peek` only reads.
 */
export interface WindowState {
  /** Events counted in the current window, this one included for `hit`. */
  readonly count: number;
  /** Milliseconds until the window ends. */
  readonly resetMs: number;
}

export interface Counters {
  hit(key: string, windowMs: number): Promise<WindowState>;
  peek(key: string): Promise<WindowState>;
  close(): Promise<void>;
}

const EMPTY: WindowState = { count: 0, resetMs: 0 };

/**
 * Counters in this process's memory. Expired windows are swept once a minute, and the map is
 * bounded: past `maxKeys` the oldest windows are dropped first (an attacker rotating
 * addresses can reset their own counters, but cannot exhaust memory).
 */
export function createMemoryCounters(options: { maxKeys?: number; now?: () => number } = {}): Counters {
  const maxKeys = options.maxKeys ?? 100_000;
  const now = options.now ?? Date.now;
  const windows = new Map<string, { count: number; resetAt: number }>();
  const sweep = setInterval(() => {
    const time = now();
    for (const [key, window] of windows) if (window.resetAt <= time) windows.delete(key);
  }, 60_000);
  sweep.unref();

  return {
    async hit(key, windowMs) {
      const time = now();
      let window = windows.get(key);
      if (window === undefined || window.resetAt <= time) {
        if (window !== undefined) windows.delete(key);
        if (windows.size >= maxKeys) windows.delete(windows.keys().next().value!);
        window = { count: 0, resetAt: time + windowMs };
        windows.set(key, window);
      }
      window.count++;
      return { count: window.count, resetMs: window.resetAt - time };
    },
    async peek(key) {
      const window = windows.get(key);
      const time = now();
      return window === undefined || window.resetAt <= time ? EMPTY : { count: window.count, resetMs: window.resetAt - time };
    },
    async close() {
      clearInterval(sweep);
      windows.clear();
    },
  };
}
