/**
 * Account control and administration for SQLite, written once for the server's store and the
 * CLI's admin store (the same name as ../postgres/administration.ts). Every function is
 * synchronous and expects its caller's transaction: the store runs writes in its write batch
 * and reads in its shared read, the admin store in its own `BEGIN IMMEDIATE`.
 */
import type { DatabaseSync } from 'node:sqlite';
import { EventType } from '../../events/events.ts';
import { linkDetailsData } from '../../events/payloads.ts';
import type { AccountChanges, AdminAccount, FoundLink, LinkSearch, UpdateAccountResult } from '../admin.ts';
import { ADMIN_ACCOUNT_COLUMNS } from '../columns.ts';
import { detailsOf, LINK_DETAILS_COLUMNS, type LinkDetailsRow } from '../link-rows.ts';
import type { AccountRecord, LinkDetailsRecord } from '../store.ts';
import { ACCOUNT_WEBHOOK_TABLES } from '../webhooks.ts';
import { GIVE_BACK_SLOT } from './cap.ts';
import { prepareOutbox } from './webhooks.ts';

/** SQLite keeps `disabled` as 0 or 1; the records say true or false. */
export function accountOf<T extends AccountRecord>(row: unknown): T {
  const record = row as Record<string, unknown>;
  return { ...record, disabled: record.disabled === 1 } as unknown as T;
}

export interface SqliteAdministration {
  deleteAccount(uid: number): boolean;
  findAccount(uid: number): AdminAccount | undefined;
  listAccounts(after: number, limit: number): AdminAccount[];
  updateAccount(uid: number, changes: AccountChanges): UpdateAccountResult;
  searchLinks(search: LinkSearch): FoundLink[];
  takeDownLink(shortCode: string, eventId?: string): LinkDetailsRecord | undefined;
}

export function prepareAdministration(db: DatabaseSync): SqliteAdministration {
  const statements = {
    deleteLinksOf: db.prepare('DELETE FROM links WHERE created_by = ?'),
    // The account's webhooks go with it (CONTRACT §7.2), with their outbox, waiting visits and log.
    deleteWebhooksOf: ACCOUNT_WEBHOOK_TABLES.map((table) =>
      db.prepare(`DELETE FROM ${table} WHERE webhook_id IN (SELECT id FROM webhooks WHERE account_uid = ?)`)),
    deleteWebhooks: db.prepare('DELETE FROM webhooks WHERE account_uid = ?'),
    deleteApiKeys: db.prepare('DELETE FROM api_keys WHERE account_uid = ?'),
    deleteAccount: db.prepare('DELETE FROM accounts WHERE uid = ?'),
    findAccount: db.prepare(`SELECT ${ADMIN_ACCOUNT_COLUMNS} FROM accounts WHERE uid = ?`),
    listAccounts: db.prepare(`SELECT ${ADMIN_ACCOUNT_COLUMNS} FROM accounts WHERE uid > ? ORDER BY uid LIMIT ?`),
    updateAccount: db.prepare(
      `UPDATE accounts SET max_links = coalesce(?2, max_links), disabled = coalesce(?3, disabled)
       WHERE uid = ?1 AND link_count <= coalesce(?2, max_links) RETURNING ${ADMIN_ACCOUNT_COLUMNS}`,
    ),
    // instr() rather than LIKE: the text needs no escaping of % and _.
    searchLinks: db.prepare(
      `SELECT id, ${LINK_DETAILS_COLUMNS} FROM links
       WHERE id > ?1
         AND (?2 IS NULL OR instr(lower(short_code), ?2) > 0 OR instr(lower(points_to), ?2) > 0
              OR instr(lower(coalesce(title, '')), ?2) > 0)
         AND (?3 IS NULL OR instr(lower(points_to), ?3) > 0 OR instr(lower(points_to), ?4) > 0)
       ORDER BY id LIMIT ?5`,
    ),
    takeDown: db.prepare(`DELETE FROM links WHERE short_code = ? RETURNING ${LINK_DETAILS_COLUMNS}`),
    giveBackSlot: db.prepare(GIVE_BACK_SLOT),
  };
  const outbox = prepareOutbox(db);

  function findAccount(uid: number): AdminAccount | undefined {
    const row = statements.findAccount.get(uid);
    return row === undefined ? undefined : accountOf<AdminAccount>(row);
  }

  return {
    deleteAccount(uid) {
      for (const statement of statements.deleteWebhooksOf) statement.run(uid);
      statements.deleteWebhooks.run(uid);
      statements.deleteApiKeys.run(uid);
      statements.deleteLinksOf.run(uid);
      return statements.deleteAccount.run(uid).changes === 1;
    },

    findAccount,

    listAccounts(after, limit) {
      return statements.listAccounts.all(after, limit).map((row) => accountOf<AdminAccount>(row));
    },

    updateAccount(uid, { maxLinks, disabled }) {
      const before = findAccount(uid);
      if (before === undefined) return { outcome: 'not_found' };
      const row = statements.updateAccount.get(uid, maxLinks ?? null, disabled === undefined ? null : Number(disabled));
      if (row === undefined) return { outcome: 'below_held', linkCount: before.linkCount };
      return { outcome: 'updated', previous: before, account: accountOf<AdminAccount>(row) };
    },

    searchLinks({ after, limit, text, targetContains = [] }) {
      const rows = statements.searchLinks.all(
        after, text ?? null, targetContains[0] ?? null, targetContains[1] ?? targetContains[0] ?? null, limit,
      );
      return rows.map((row) => ({ id: Number(row.id), link: detailsOf(row as unknown as LinkDetailsRow) }));
    },

    takeDownLink(shortCode, eventId) {
      const row = statements.takeDown.get(shortCode) as LinkDetailsRow | undefined;
      if (row === undefined) return undefined;
      const link = detailsOf(row);
      statements.giveBackSlot.run(link.createdBy);
      // The owner's integrations hear of it as of their own delete (docs/webhooks.md).
      outbox.write(EventType.LinkDeleted, new Date().toISOString(), linkDetailsData(link), link.createdBy, eventId);
      return link;
    },
  };
}
