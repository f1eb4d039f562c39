/**
 * Builds benchmark databases: N links spread over accounts of 20 links each, in the real
 * schema (the server's own migrations), written in large batches.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { hashAccessCode, newAccessCode } from '../src/accounts/access-code.ts';
import { openPostgresStore } from '../src/store/postgres/store.ts';
import { openSqliteStore } from '../src/store/sqlite/store.ts';
import { createPostgresDatabase } from '../test/helpers/services.ts';

export interface Preloaded {
  /** What to put in DATABASE_URL. */
  readonly path: string;
  readonly codes: readonly string[];
  /** An account holding 20 links (for the list benchmark). */
  readonly accessCode: string;
  /** An account with a huge cap (for the create benchmark). */
  readonly bigAccessCode: string;
  totalAccesses(): Promise<number>;
  /** Database size per preloaded link, measured right after the preload (before any load). */
  readonly bytesPerLink: number;
  remove(): Promise<void>;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

interface Plan {
  codes: string[];
  accessCode: string;
  bigAccessCode: string;
  /** Accounts in order: [codeHash, maxLinks, linkCount]; the first is the big one. */
  accounts: [string, number, number][];
  /** Per link, the 1-based index of its account in `accounts`. */
  owners: number[];
}

function plan(links: number): Plan {
  const accessCode = newAccessCode();
  const bigAccessCode = newAccessCode();
  const accounts: [string, number, number][] = [[hashAccessCode(bigAccessCode), 100_000_000, 0]];
  const codes: string[] = [];
  const owners: number[] = [];
  const seen = new Set<string>();
  while (codes.length < links) {
    const bytes = randomBytes(6);
    let code = '';
    for (const byte of bytes) code += ALPHABET[byte % 62];
    if (seen.has(code)) continue;
    seen.add(code);
    if (codes.length % 20 === 0) {
      accounts.push([hashAccessCode(codes.length === 0 ? accessCode : newAccessCode()), 20, Math.min(20, links - codes.length)]);
    }
    codes.push(code);
    owners.push(accounts.length);
  }
  return { codes, accessCode, bigAccessCode, accounts, owners };
}

const target = (i: number) => `https://example.com/articles/${i}?utm_source=bench`;

export async function preloadSqlite(links: number): Promise<Preloaded> {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-bench-'));
  const path = join(dir, 'bench.db');
  await (await openSqliteStore({ path })).close(); // creates the schema
  const p = plan(links);
  const now = new Date().toISOString();
  const db = new DatabaseSync(path);
  const addAccount = db.prepare('INSERT INTO accounts (code_hash, date_created, max_links, link_count) VALUES (?, ?, ?, ?)');
  const addLink = db.prepare('INSERT INTO links (short_code, points_to, created_by, date_created) VALUES (?, ?, ?, ?)');
  db.exec('BEGIN');
  for (const [hash, max, count] of p.accounts) addAccount.run(hash, now, max, count);
  p.codes.forEach((code, i) => addLink.run(code, target(i), p.owners[i]!, now));
  db.exec('COMMIT');
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  const bytesPerLink = Math.round(statSync(path).size / links);
  return {
    bytesPerLink,
    path,
    codes: p.codes,
    accessCode: p.accessCode,
    bigAccessCode: p.bigAccessCode,
    async totalAccesses() {
      const reader = new DatabaseSync(path);
      const row = reader.prepare('SELECT SUM(accesses) AS total FROM links').get() as { total: number };
      reader.close();
      return row.total;
    },
    async remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function preloadPostgres(adminUrl: string, links: number): Promise<Preloaded> {
  const database = await createPostgresDatabase(adminUrl);
  await (await openPostgresStore({ url: database.url, max: 1 })).close(); // creates the schema
  const p = plan(links);
  const now = new Date().toISOString();
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  const accounts = p.accounts.map(([code_hash, max_links, link_count]) => ({ code_hash, date_created: now, max_links, link_count }));
  await sql`INSERT INTO accounts ${sql(accounts, 'code_hash', 'date_created', 'max_links', 'link_count')}`;
  for (let from = 0; from < links; from += 10_000) {
    const rows = p.codes.slice(from, from + 10_000).map((short_code, i) => ({
      short_code,
      points_to: target(from + i),
      created_by: p.owners[from + i]!,
      date_created: now,
    }));
    await sql`INSERT INTO links ${sql(rows, 'short_code', 'points_to', 'created_by', 'date_created')}`;
  }
  await sql`VACUUM ANALYZE`;
  // Both tables with their indexes, like the SQLite file size.
  const [size] = await sql<{ bytes: string }[]>`
    SELECT (pg_total_relation_size('links') + pg_total_relation_size('accounts'))::text AS bytes`;
  const bytesPerLink = Math.round(Number(size!.bytes) / links);
  return {
    bytesPerLink,
    path: database.url,
    codes: p.codes,
    accessCode: p.accessCode,
    bigAccessCode: p.bigAccessCode,
    async totalAccesses() {
      const [row] = await sql<{ total: string }[]>`SELECT SUM(accesses)::text AS total FROM links`;
      return Number(row!.total);
    },
    async remove() {
      await sql.end();
      await database.drop();
    },
  };
}

/** Removes every key under `prefix` (the benchmark's own rate-limit windows). */
export async function clearRedisPrefix(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  redis.disconnect();
}
