/**
 * Event stream slots on SQLite (the same name and calls as ../postgres/stream-slots.ts).
 * Writes run in the store's write batch: BEGIN IMMEDIATE makes a slot's check and insert one
 * step against every other process sharing the file (WORKERS > 1).
 */
import type { DatabaseSync } from 'node:sqlite';
import { acquireResult, streamSlotSql, type StreamSlotStore } from '../stream-slots.ts';
import type { WriteBatch } from './write-batch.ts';

const sqlite = (n: number): string => `?${n}`;

export function prepareStreamSlots(db: DatabaseSync, read: <R>(work: () => R) => Promise<R>, writes: WriteBatch): StreamSlotStore {
  const text = streamSlotSql(sqlite, { disabledFalse: '0', skipLocked: '' });
  const statements = {
    account: db.prepare(text.account),
    held: db.prepare(text.held),
    insert: db.prepare(text.insert),
    current: db.prepare(text.current),
    renew: db.prepare(text.renew),
    sweep: db.prepare(text.sweep),
    release: db.prepare('DELETE FROM stream_slots WHERE id = ?'),
  };
  return {
    acquire(slot, { now, leaseMs, perAccount }) {
      return writes.run(() => {
        const account = statements.account.get(slot.accountUid, slot.codeHash) as { current: number; disabled: number } | undefined;
        const { held } = statements.held.get(slot.accountUid, now) as { held: number };
        const refused = acquireResult(account, held, perAccount);
        if (refused !== undefined) return refused;
        statements.insert.run(slot.id, slot.accountUid, slot.codeHash, slot.holder, now + leaseMs);
        return 'acquired';
      });
    },
    current(holder) {
      return read(() => (statements.current.all(holder) as { id: string }[]).map((row) => row.id));
    },
    renew(holder, { now, leaseMs }) {
      return writes.run(() => {
        statements.renew.run(holder, now + leaseMs);
        statements.sweep.run(now);
      });
    },
    release(ids) {
      return writes.run(() => {
        for (const id of ids) statements.release.run(id);
      });
    },
  };
}
