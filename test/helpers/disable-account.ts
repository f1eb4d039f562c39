/**
 * Disables an account straight in a test database (accounts.disabled), for tests of how the
 * links and calls of a disabled account answer, independent of the admin routes.
 */
import { DatabaseSync } from 'node:sqlite';
import postgres from 'postgres';
import type { StorageConfig } from '../../src/config.ts';

export async function disableAccountForTest(storage: StorageConfig, uid: number, disabled = true): Promise<void> {
  if (storage.kind === 'sqlite') {
    const db = new DatabaseSync(storage.path);
    try {
      db.exec('PRAGMA busy_timeout = 5000');
      db.prepare('UPDATE accounts SET disabled = ? WHERE uid = ?').run(disabled ? 1 : 0, uid);
    } finally {
      db.close();
    }
    return;
  }
  const sql = postgres(storage.url, { max: 1, onnotice: () => {} });
  try {
    await sql`UPDATE accounts SET disabled = ${disabled} WHERE uid = ${uid}`;
  } finally {
    await sql.end();
  }
}
