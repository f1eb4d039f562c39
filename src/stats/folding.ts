/**
 * Folding off the hot path (ADR 20, ADR 24): the count transaction writes visits into the
 * tuples itself; the tuples of hours that are over are moved into the rollups by folds that
 * run about once a second while visits are recorded (and once a minute regardless, for other
 * processes' leftovers), and hourly detail older than STATS_HOURLY_DAYS is folded into days
 * once an hour. Readers sum the tuples too, so nothing waits for a fold to be visible.
 */
import type { StatsStore } from './stats-store.ts';
import { HOUR_MS, hourOf } from './visit.ts';

export interface StatsFolding {
  /** Tells the folder that this process recorded visits (a fold is due). */
  recorded(): void;
  /** Runs one fold now (hours that are over, and days when `days`); for tests and shutdown. */
  foldNow(days?: boolean): Promise<number>;
  /**
   * No fold starts from now on; resolves once the one in progress (if any) has ended, so that
   * the store can close after it rather than under it.
   */
  stop(): Promise<void>;
}

export interface FoldingOptions {
  readonly store: Pick<StatsStore, 'foldStats'>;
  readonly clock: () => Date;
  readonly hourlyDays: number;
  /** Where a failed fold is reported (storage trouble: it is tried again later). */
  readonly onError: (error: unknown) => void;
  readonly intervalMs?: number;
}

const IDLE_FOLDS_EVERY = 60;
const MAX_FOLDS = 100;
const DAY_FOLDS_EVERY_MS = HOUR_MS;

export function startStatsFolding({ store, clock, hourlyDays, onError, intervalMs = 1000 }: FoldingOptions): StatsFolding {
  let due = false;
  let ticks = 0;
  let lastDayFold = 0;
  let running: Promise<number> | undefined;
  let stopped = false;

  function foldNow(days = false): Promise<number> {
    if (stopped) return Promise.resolve(0);
    if (running !== undefined) return running.then(() => foldNow(days));
    due = false;
    const now = clock().getTime();
    // Days end at UTC midnight: fold whole days only, the ones older than hourlyDays.
    const daysBeforeHour = days ? Math.floor(now / HOUR_MS / 24) * 24 - hourlyDays * 24 : undefined;
    // The hours that are over go on from the tuples to the rollups (ADR 20).
    const hoursBefore = hourOf(now);
    running = (async () => {
      let moved = 0;
      // Folds are small (bounded by the store), each its own transaction; the event loop
      // serves requests between them. A backlog beyond MAX_FOLDS waits for the next tick.
      for (let fold = 0; fold < MAX_FOLDS && !stopped; fold++) {
        const n = await store.foldStats(daysBeforeHour === undefined || fold > 0 ? { hoursBefore } : { hoursBefore, daysBeforeHour });
        moved += n;
        if (n === 0) break;
      }
      return moved;
    })().finally(() => (running = undefined));
    return running;
  }

  const timer = setInterval(() => {
    ticks++;
    const now = Date.now();
    const days = now - lastDayFold >= DAY_FOLDS_EVERY_MS;
    if (!due && !days && ticks % IDLE_FOLDS_EVERY !== 0) return;
    if (running !== undefined) return;
    if (days) lastDayFold = now;
    foldNow(days).catch(onError);
  }, intervalMs);
  timer.unref();

  return {
    recorded() {
      due = true;
    },
    foldNow,
    async stop() {
      stopped = true;
      clearInterval(timer);
      // Its failure was reported where it ran.
      await running?.catch(() => undefined);
    },
  };
}
