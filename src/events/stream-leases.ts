/**
 * The slots of this process's live event streams (`GET /v1/events`, ADR 19), held as leases
 * in the shared database (src/store/stream-slots.ts):
 *
 * - the per-account cap counts every worker's and instance's streams, since a slot is taken
 *   there under the account row's lock;
 * - every `checkMs` (while this process holds a stream), one query answers which of its
 *   streams still have a current credential; the others are ended. A rotation, a disabled or
 *   deleted account, made here, on another instance or by the CLI, ends its streams
 *   everywhere within about `checkMs` (the contract's "within 1 s");
 * - the leases are renewed every `leaseMs / 3` and given back when their stream ends; those
 *   of a process that died run out after `leaseMs`.
 *
 * A check or renewal that fails (storage away) changes nothing: the streams stay, and the
 * next tick asks again.
 */
import { randomUUID } from 'node:crypto';
import type { AcquireResult, StreamSlotStore } from './stream-slot-store.ts';

export interface StreamLeaseOptions {
  readonly slots: StreamSlotStore;
  /** How often the credentials of this process's streams are checked (250 ms). */
  readonly checkMs?: number;
  /** How long a slot outlives a process that stopped renewing it (30 s). */
  readonly leaseMs?: number;
  /** Told when a check, a renewal or a release fails; never rethrown. */
  readonly onError?: (error: unknown) => void;
  readonly clock?: () => number;
}

export interface StreamLeases {
  /**
   * Takes a slot for a stream opened with the access code whose digest is `codeHash`, if the
   * account holds fewer than `perAccount` on every process together; on `acquired`, `revoked` is called once if its credential stops being current, and `release`
   * gives the slot back (call it when the stream ends, whatever ended it).
   */
  acquire(accountUid: number, codeHash: string, perAccount: number, revoked: () => void): Promise<{ result: Exclude<AcquireResult, 'acquired'> } | { result: 'acquired'; release: () => void }>;
  /**
   * Checks the credentials now rather than at the next tick (an `account.rotated` was heard);
   * resolves once a check that began after this call has ended (revoking what it found),
   * or failed.
   */
  checkSoon(): Promise<void>;
  /** Stops checking and gives back every slot still held (and waits for releases under way). */
  close(): Promise<void>;
}

interface Held {
  readonly revoked: () => void;
  /** Order of taking: a check answers only for the slots taken before it began. */
  readonly seq: number;
}

export function createStreamLeases({
  slots, checkMs = 250, leaseMs = 30_000, onError = () => undefined, clock = Date.now,
}: StreamLeaseOptions): StreamLeases {
  const holder = randomUUID();
  const held = new Map<string, Held>();
  let seq = 0;
  let timer: NodeJS.Timeout | undefined;
  let checking = false;
  let again = false;
  // Told when the next check to begin has ended.
  let waiting: (() => void)[] = [];
  // Releases under way: close() waits for them, so none reaches a store already closed.
  const releasing = new Set<Promise<void>>();
  let renewedAt = clock();
  let closed = false;

  function giveBack(ids: readonly string[]): void {
    const pending = slots.release(ids).catch(onError);
    releasing.add(pending);
    void pending.finally(() => releasing.delete(pending));
  }

  function release(id: string): void {
    if (!held.delete(id)) return;
    if (held.size === 0) stop();
    giveBack([id]);
  }

  function stop(): void {
    clearInterval(timer);
    timer = undefined;
  }

  /** One check (and renewal when due); `soon` asks for another after one under way, whose answer may predate the change. */
  async function tick(soon = false): Promise<void> {
    if (checking) {
      again ||= soon;
      return;
    }
    checking = true;
    again = false;
    const told = waiting;
    waiting = [];
    try {
      const upTo = seq;
      const current = new Set(await slots.current(holder));
      for (const [id, entry] of held) {
        if (entry.seq < upTo && !current.has(id)) {
          release(id);
          entry.revoked();
        }
      }
      if (held.size > 0 && clock() - renewedAt >= leaseMs / 3) {
        renewedAt = clock();
        await slots.renew(holder, { now: renewedAt, leaseMs });
      }
    } catch (error) {
      onError(error);
    } finally {
      checking = false;
      for (const tell of told) tell();
    }
    if (again) await tick();
  }

  return {
    async acquire(accountUid, codeHash, perAccount, revoked) {
      const id = randomUUID();
      const result = await slots.acquire({ id, accountUid, codeHash, holder }, { now: clock(), leaseMs, perAccount });
      if (result !== 'acquired') return { result };
      if (closed) {
        giveBack([id]);
        return { result: 'full' };
      }
      held.set(id, { revoked, seq: seq++ });
      if (timer === undefined) {
        // A renewal is due a third of a lease after the first slot, not after the last renewal long ago.
        renewedAt = clock();
        timer = setInterval(() => void tick(), checkMs);
        timer.unref();
      }
      return { result: 'acquired', release: () => release(id) };
    },

    checkSoon() {
      if (closed) return Promise.resolve();
      const checked = new Promise<void>((resolve) => waiting.push(resolve));
      void tick(true);
      return checked;
    },

    async close() {
      closed = true;
      stop();
      for (const tell of waiting.splice(0)) tell();
      const ids = [...held.keys()];
      held.clear();
      if (ids.length > 0) giveBack(ids);
      await Promise.all(releasing);
    },
  };
}
