/**
 * Account control and administration for PostgreSQL, written once for the server's store and
 * the CLI's admin store (the same name as ../sqlite/administration.ts). Each call is one
 * statement or one transaction on the pool it is given.
 */
import { EventType } from '../../events/events.ts';
import { linkDetailsData } from '../../events/payloads.ts';
import type { AccountChanges, AdminAccount, FoundLink, LinkSearch, UpdateAccountResult } from '../admin.ts';
import { ADMIN_ACCOUNT_COLUMNS } from '../columns.ts';
import { detailsOf, LINK_DETAILS_COLUMNS, type LinkDetailsRow } from '../link-rows.ts';
import type { LinkDetailsRecord } from '../store.ts';
import { ACCOUNT_WEBHOOK_TABLES } from '../webhooks.ts';
import type { Sql } from './connection.ts';
import { outbox } from './webhooks.ts';

export interface PostgresAdministration {
  deleteAccount(uid: number): Promise<boolean>;
  findAccount(uid: number): Promise<AdminAccount | undefined>;
  listAccounts(after: number, limit: number): Promise<AdminAccount[]>;
  updateAccount(uid: number, changes: AccountChanges): Promise<UpdateAccountResult>;
  searchLinks(search: LinkSearch): Promise<FoundLink[]>;
  takeDownLink(shortCode: string, eventId?: string): Promise<LinkDetailsRecord | undefined>;
}

export function administration(sql: Sql): PostgresAdministration {
  return {
    async deleteAccount(uid) {
      return sql.begin(async (tx) => {
        // The account row first: a create for it (shortlink_take_slot updates that row) waits,
        // then finds no account; every later statement sees the links committed before.
        const [locked] = await tx`SELECT uid FROM accounts WHERE uid = ${uid} FOR UPDATE`;
        if (locked === undefined) return false;
        // The account's webhooks go with it (CONTRACT §7.2), with their outbox, waiting visits and log.
        for (const table of ACCOUNT_WEBHOOK_TABLES) {
          await tx.unsafe(`DELETE FROM ${table} WHERE webhook_id IN (SELECT id FROM webhooks WHERE account_uid = $1)`, [uid]);
        }
        await tx`DELETE FROM webhooks WHERE account_uid = ${uid}`;
        await tx`DELETE FROM links WHERE created_by = ${uid}`;
        await tx`DELETE FROM accounts WHERE uid = ${uid}`;
        return true;
      }) as Promise<boolean>;
    },

    async findAccount(uid) {
      const [row] = await sql<AdminAccount[]>`SELECT ${sql.unsafe(ADMIN_ACCOUNT_COLUMNS)} FROM accounts WHERE uid = ${uid}`;
      return row;
    },

    async listAccounts(after, limit) {
      return [...await sql<AdminAccount[]>`
        SELECT ${sql.unsafe(ADMIN_ACCOUNT_COLUMNS)} FROM accounts WHERE uid > ${after} ORDER BY uid LIMIT ${limit}`];
    },

    async updateAccount(uid, { maxLinks, disabled }) {
      return sql.begin(async (tx): Promise<UpdateAccountResult> => {
        // Locked: creates (which take a slot by updating this row) wait, so the count is exact.
        const [before] = await tx<AdminAccount[]>`
          SELECT ${sql.unsafe(ADMIN_ACCOUNT_COLUMNS)} FROM accounts WHERE uid = ${uid} FOR UPDATE`;
        if (before === undefined) return { outcome: 'not_found' };
        if (maxLinks !== undefined && before.linkCount > maxLinks) return { outcome: 'below_held', linkCount: before.linkCount };
        const [after] = await tx<AdminAccount[]>`
          UPDATE accounts SET max_links = ${maxLinks ?? before.maxLinks}, disabled = ${disabled ?? before.disabled}
          WHERE uid = ${uid} RETURNING ${sql.unsafe(ADMIN_ACCOUNT_COLUMNS)}`;
        return { outcome: 'updated', previous: before, account: after! };
      }) as Promise<UpdateAccountResult>;
    },

    async searchLinks({ after, limit, text, targetContains = [] }) {
      const first = targetContains[0] ?? null;
      const second = targetContains[1] ?? first;
      // strpos() rather than LIKE: the text needs no escaping of % and _.
      const rows = await sql<Record<string, unknown>[]>`
        SELECT id, ${sql.unsafe(LINK_DETAILS_COLUMNS)} FROM links
        WHERE id > ${after}
          AND (${text ?? null}::text IS NULL OR strpos(lower(short_code), ${text ?? null}::text) > 0
               OR strpos(lower(points_to), ${text ?? null}::text) > 0
               OR strpos(lower(coalesce(title, '')), ${text ?? null}::text) > 0)
          AND (${first}::text IS NULL OR strpos(lower(points_to), ${first}::text) > 0
               OR strpos(lower(points_to), ${second}::text) > 0)
        ORDER BY id LIMIT ${limit}`;
      return rows.map((row) => ({ id: Number(row.id), link: detailsOf(row as unknown as LinkDetailsRow) }));
    },

    async takeDownLink(shortCode, eventId) {
      // One transaction: the delete, the owner's freed slot and the owner's link.deleted
      // outbox rows (docs/webhooks.md) commit together.
      return sql.begin(async (tx): Promise<LinkDetailsRecord | undefined> => {
        const [row] = await tx<LinkDetailsRow[]>`
          DELETE FROM links WHERE short_code = ${shortCode} RETURNING ${sql.unsafe(LINK_DETAILS_COLUMNS)}`;
        if (row === undefined) return undefined;
        const link = detailsOf(row);
        await tx`UPDATE accounts SET link_count = link_count - 1 WHERE uid = ${link.createdBy}`;
        await outbox.write(tx, EventType.LinkDeleted, new Date().toISOString(), linkDetailsData(link), link.createdBy, eventId);
        return link;
      }) as Promise<LinkDetailsRecord | undefined>;
    },
  };
}
