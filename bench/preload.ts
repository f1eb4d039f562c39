/**
 * Builds a benchmark database: N links spread over accounts of 20 links each, written
 * through the real schema (the server's own migrations) in large transactions.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { hashAccessCode, newAccessCode } from '../src/accounts/access-code.ts';
import { openSqliteStore } from '../src/store/sqlite.ts';

export interface Preloaded {
  readonly path: string;
  readonly codes: readonly string[];
  /** An account holding 20 links (for the list benchmark). */
  readonly accessCode: string;
  /** An account with a huge cap (for the create benchmark). */
  readonly bigAccessCode: string;
  totalAccesses(): number;
  remove(): void;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export async function preloadSqlite(links: number): Promise<Preloaded> {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-bench-'));
  const path = join(dir, 'bench.db');
  await openSqliteStore({ path }).close(); // creates the schema
  const db = new DatabaseSync(path);
  const now = new Date().toISOString();
  const accessCode = newAccessCode();
  const bigAccessCode = newAccessCode();
  const addAccount = db.prepare('INSERT INTO accounts (code_hash, date_created, max_links, link_count) VALUES (?, ?, ?, ?) RETURNING uid');
  const addLink = db.prepare('INSERT INTO links (short_code, points_to, created_by, date_created) VALUES (?, ?, ?, ?)');
  const codes: string[] = [];
  const seen = new Set<string>();
  const bytes = randomBytes(links * 8);
  db.exec('BEGIN');
  addAccount.get(hashAccessCode(bigAccessCode), now, 100_000_000, 0);
  let uid = 0;
  for (let i = 0; i < links; i++) {
    if (i % 20 === 0) {
      const holder = i === 0 ? accessCode : newAccessCode();
      uid = (addAccount.get(hashAccessCode(holder), now, 20, Math.min(20, links - i)) as { uid: number }).uid;
    }
    let code = '';
    for (let j = 0; j < 6; j++) code += ALPHABET[bytes[i * 8 + j]! % 62];
    if (seen.has(code)) {
      i--;
      randomBytes(8).copy(bytes, i * 8 + 8);
      continue;
    }
    seen.add(code);
    codes.push(code);
    addLink.run(code, `https://example.com/articles/${i}?utm_source=bench`, uid, now);
  }
  db.exec('COMMIT');
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  return {
    path,
    codes,
    accessCode,
    bigAccessCode,
    totalAccesses() {
      const reader = new DatabaseSync(path);
      const row = reader.prepare('SELECT SUM(accesses) AS total FROM links').get() as { total: number };
      reader.close();
      return row.total;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Database bytes per link: the file after a checkpoint, divided by the links it holds. */
export function sqliteBytes(path: string, links: number): number {
  const db = new DatabaseSync(path);
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  return Math.round(statSync(path).size / links);
}
