/** The accounts port (accounts/account-store.ts) on SQLite. */
import type { AccountRecord, AccountStore, NewAccount } from '../../accounts/account-store.ts';
import { EventType } from '../../events/events.ts';
import { accountRotatedData } from '../../events/payloads.ts';
import { ACCOUNT_COLUMNS } from '../columns.ts';
import { accountOf } from './administration.ts';
import type { SqliteEngine } from './engine.ts';

export function accountCalls({ db, read, writes, outbox, administration }: SqliteEngine): AccountStore {
  const insertAccount = db.prepare(
    `INSERT INTO accounts (code_hash, date_created, max_links) VALUES (?, ?, ?) RETURNING ${ACCOUNT_COLUMNS}`,
  );
  const findAccount = db.prepare(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE code_hash = ?`);
  const rotate = db.prepare(`UPDATE accounts SET code_hash = ?3 WHERE uid = ?1 AND code_hash = ?2 RETURNING ${ACCOUNT_COLUMNS}`);
  return {
    createAccount(account: NewAccount) {
      return writes.run(() => accountOf<AccountRecord>(insertAccount.get(account.codeHash, account.dateCreated, account.maxLinks)));
    },

    findAccountByCodeHash(codeHash: string) {
      return read(() => {
        const row = findAccount.get(codeHash);
        return row === undefined ? undefined : accountOf<AccountRecord>(row);
      });
    },

    rotateAccessCode(uid, codeHash, newCodeHash, eventId) {
      return writes.run(() => {
        const row = rotate.get(uid, codeHash, newCodeHash);
        if (row === undefined) return undefined;
        outbox.write(EventType.AccountRotated, new Date().toISOString(), accountRotatedData(uid), uid, eventId);
        return accountOf<AccountRecord>(row);
      });
    },

    deleteAccount(uid) {
      return writes.run(() => administration.deleteAccount(uid));
    },
  };
}
