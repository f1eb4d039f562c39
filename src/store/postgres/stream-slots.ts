/**
 * Event stream slots on PostgreSQL (the same name and calls as ../sqlite/stream-slots.ts).
 * A slot is taken in a transaction holding the account row's lock, and counted by a later
 * statement of it (a fresh snapshot under READ COMMITTED): of two instances taking the
 * account's last slot at once, the second sees the first's slot.
 */
import { acquireResult, streamSlotSql, type StreamSlotStore } from '../stream-slots.ts';
import type { Sql } from './connection.ts';

const postgres = (n: number): string => `$${n}`;

export function prepareStreamSlots(sql: Sql, timed: <R>(work: () => PromiseLike<R>) => Promise<Awaited<R>>): StreamSlotStore {
  const text = streamSlotSql(postgres, { disabledFalse: 'false', skipLocked: ' FOR UPDATE SKIP LOCKED' });
  return {
    acquire(slot, { now, leaseMs, perAccount }) {
      return timed(() => sql.begin(async (tx) => {
        const [account] = await tx.unsafe<{ current: boolean; disabled: boolean }[]>(`${text.account} FOR UPDATE`, [slot.accountUid, slot.codeHash]);
        const [count] = await tx.unsafe<{ held: string }[]>(text.held, [slot.accountUid, now]);
        const refused = acquireResult(account, Number(count?.held ?? 0), perAccount);
        if (refused !== undefined) return refused;
        await tx.unsafe(text.insert, [slot.id, slot.accountUid, slot.codeHash, slot.holder, now + leaseMs]);
        return 'acquired' as const;
      }));
    },
    async current(holder) {
      const rows = await timed(() => sql.unsafe<{ id: string }[]>(text.current, [holder]));
      return rows.map((row) => row.id);
    },
    async renew(holder, { now, leaseMs }) {
      await timed(() => sql.unsafe(text.renew, [holder, now + leaseMs]));
      await timed(() => sql.unsafe(text.sweep, [now]));
    },
    async release(ids) {
      if (ids.length === 0) return;
      await timed(() => sql`DELETE FROM stream_slots WHERE id = ANY(${sql.array([...ids], 25)}::text[])`);
    },
  };
}
