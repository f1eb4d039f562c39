/**
 * What live event streams need from storage (the stream-slots port, ADR 19): leases in the
 * database every process shares, so that the per-account cap counts every worker's and
 * instance's streams, and so that a process can ask which of its streams still hold a valid
 * credential. Each engine under src/store/ implements it (store/{sqlite,postgres}/stream-slots.ts).
 */

export interface StreamSlot {
  /** Unique per stream. */
  readonly id: string;
  readonly accountUid: number;
  /** The digest of the access code the stream was opened with. */
  readonly codeHash: string;
  /** The process holding it (one name per process start). */
  readonly holder: string;
}

/**
 * `acquired`; `full` (the account holds `perAccount` unexpired slots); `invalid` (no such
 * account, or its access code is no longer this one); `disabled`.
 */
export type AcquireResult = 'acquired' | 'full' | 'invalid' | 'disabled';

export interface StreamSlotStore {
  /**
   * Takes a slot for the stream, leased until `now + leaseMs` (milliseconds since the epoch),
   * if its credential is current and the account holds fewer than `perAccount` unexpired
   * slots; settled under the account row's lock, so two processes never both take the last.
   */
  acquire(slot: StreamSlot, options: { readonly now: number; readonly leaseMs: number; readonly perAccount: number }): Promise<AcquireResult>;
  /** The ids of `holder`'s slots whose credential is still current (a swept slot is not). */
  current(holder: string): Promise<string[]>;
  /** Extends every slot of `holder` to `now + leaseMs`, and sweeps every slot that ran out. */
  renew(holder: string, options: { readonly now: number; readonly leaseMs: number }): Promise<void>;
  /** Gives the slots back. */
  release(ids: readonly string[]): Promise<void>;
}

