/**
 * The SQL of the stream slots both engines run (the port, StreamSlotStore, is the events'
 * own: events/stream-slot-store.ts). Slots of live event streams (`GET /v1/events`, CONTRACT §7.5, ADR 19), kept in the database
 * every process shares, so that the per-account cap counts the streams of every worker and
 * instance, and so that each process can ask, in one query, which of its streams still have
 * a valid credential (the account exists, its access code is the one the stream was opened
 * with, and it is not disabled).
 *
 * A slot is a lease: its holder (one process) renews all of its slots together, releases
 * each when its stream ends, and the slots of a process that died without releasing them
 * run out after `leaseMs`: they stop counting then, and the next renewal sweeps them.
 */

import type { AcquireResult } from '../events/stream-slot-store.ts';

export type { AcquireResult, StreamSlot, StreamSlotStore } from '../events/stream-slot-store.ts';

/** The statements both engines run, with the engine's placeholders. */
export function streamSlotSql(p: (n: number) => string, { disabledFalse, skipLocked }: { disabledFalse: string; skipLocked: string }) {
  return {
    /**
     * The account's credential as it stands: (the slot's credential still holds, disabled). A
     * slot holds the access code's digest, or `key:` and the id of the API key it was opened
     * with (CONTRACT §8.5: a key with the `webhooks` scope reads the stream; deleting it ends it).
     */
    account: `SELECT (code_hash = ${p(2)} OR EXISTS (SELECT 1 FROM api_keys k WHERE k.account_uid = accounts.uid AND 'key:' || k.id = ${p(2)}))
                AS current, disabled FROM accounts WHERE uid = ${p(1)}`,
    // Lapsed slots are not counted here, only swept by renewals: taking a slot locks no other slot's row.
    held: `SELECT count(*) AS held FROM stream_slots WHERE account_uid = ${p(1)} AND expires_at > ${p(2)}`,
    insert: `INSERT INTO stream_slots (id, account_uid, code_hash, holder, expires_at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)})`,
    current: `SELECT s.id FROM stream_slots s JOIN accounts a ON a.uid = s.account_uid
                WHERE s.holder = ${p(1)} AND a.disabled = ${disabledFalse}
                  AND (a.code_hash = s.code_hash
                       OR EXISTS (SELECT 1 FROM api_keys k WHERE k.account_uid = s.account_uid AND 'key:' || k.id = s.code_hash))`,
    renew: `UPDATE stream_slots SET expires_at = ${p(2)} WHERE holder = ${p(1)}`,
    // Rows another process is sweeping are left to it (PostgreSQL), so two sweeps never deadlock.
    sweep: `DELETE FROM stream_slots WHERE id IN (SELECT id FROM stream_slots WHERE expires_at <= ${p(1)}${skipLocked})`,
  };
}

/** What `acquire` makes of the account's row and its count of slots. */
export function acquireResult(account: { current: unknown; disabled: unknown } | undefined, held: number, perAccount: number): AcquireResult | undefined {
  if (account === undefined || !truthy(account.current)) return 'invalid';
  if (truthy(account.disabled)) return 'disabled';
  return held >= perAccount ? 'full' : undefined;
}

const truthy = (value: unknown): boolean => value === true || value === 1 || value === 1n;
