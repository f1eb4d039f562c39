/** The accounts port (accounts/account-store.ts) on PostgreSQL. */
import type { AccountRecord, AccountStore, NewAccount } from '../../accounts/account-store.ts';
import { EventType } from '../../events/events.ts';
import { accountRotatedData } from '../../events/payloads.ts';
import { createBatcher } from '../batcher.ts';
import { ACCOUNT_COLUMNS } from '../columns.ts';
import type { Drained, PostgresEngine } from './engine.ts';
import { guarded, refusedByServer } from './errors.ts';

export function accountCalls({ sql, timeoutMs, timed, outbox, administration }: PostgresEngine): Drained<AccountStore> {
  // Creates are batched like link creates (links.ts): one INSERT for all that arrive together.
  const accountCreates = createBatcher<NewAccount, AccountRecord>(async (accounts) => {
    const rows = await guarded(() => sql<(AccountRecord & { codeHash: string })[]>`
      INSERT INTO accounts (code_hash, date_created, max_links)
      SELECT * FROM unnest(
        ${sql.array(accounts.map((a) => a.codeHash), 25)}::text[],
        ${sql.array(accounts.map((a) => a.dateCreated), 25)}::text[],
        ${sql.array(accounts.map((a) => a.maxLinks), 23)}::int[])
      RETURNING code_hash AS "codeHash", ${sql.unsafe(ACCOUNT_COLUMNS)}`);
    const byHash = new Map(rows.map(({ codeHash, ...account }) => [codeHash, account]));
    return accounts.map((a) => byHash.get(a.codeHash)!);
  }, { retryAlone: refusedByServer, timeoutMs });

  const calls: AccountStore = {
    createAccount(account: NewAccount) {
      return accountCreates.run(account);
    },

    async findAccountByCodeHash(codeHash: string) {
      const [row] = await timed(() => sql<AccountRecord[]>`
        SELECT ${sql.unsafe(ACCOUNT_COLUMNS)} FROM accounts WHERE code_hash = ${codeHash}`);
      return row;
    },

    rotateAccessCode(uid, codeHash, newCodeHash, eventId) {
      // One transaction: the new digest and the account.rotated outbox rows commit together.
      return timed(() => sql.begin(async (tx) => {
        const [row] = await tx<AccountRecord[]>`
          UPDATE accounts SET code_hash = ${newCodeHash} WHERE uid = ${uid} AND code_hash = ${codeHash}
          RETURNING ${sql.unsafe(ACCOUNT_COLUMNS)}`;
        if (row !== undefined) await outbox.write(tx, EventType.AccountRotated, new Date().toISOString(), accountRotatedData(uid), uid, eventId);
        return row === undefined ? undefined : { ...row };
      })) as Promise<AccountRecord | undefined>;
    },

    deleteAccount(uid) {
      return timed(() => administration.deleteAccount(uid));
    },
  };
  return { calls, drain: () => accountCreates.drain() };
}
