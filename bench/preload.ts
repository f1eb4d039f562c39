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

/** A database for the list benchmark: one account of `large` links and one of 20, alike. */
export interface PreloadedListing {
  readonly path: string;
  /** The account holding `large` links. */
  readonly largeAccessCode: string;
  /** The account holding 20 links. */
  readonly smallAccessCode: string;
  /** Row ids spread over the large account, for cursors deep into its list. */
  readonly largeIds: readonly number[];
  remove(): Promise<void>;
}

/**
 * The rows of one account's links for the list benchmark: every 10th link has a title with
 * "Campaign" in it and the tag `promo`, every 3rd the tag `news`; targets all differ.
 */
function listingRows(count: number, owner: number, prefix: string, now: string) {
  return Array.from({ length: count }, (_, i) => ({
    short_code: `${prefix}${i.toString(36).padStart(5, '0')}`,
    points_to: `https://example.com/articles/${i}?utm_source=bench`,
    created_by: owner,
    date_created: now,
    title: i % 10 === 0 ? `Campaign ${i}` : null,
    tags: [i % 10 === 0 ? 'promo' : '', i % 3 === 0 ? 'news' : ''].filter((tag) => tag !== '').join(','),
  }));
}

export async function preloadListingSqlite(large: number): Promise<PreloadedListing> {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-bench-list-'));
  const path = join(dir, 'bench.db');
  await (await openSqliteStore({ path })).close();
  const largeAccessCode = newAccessCode();
  const smallAccessCode = newAccessCode();
  const now = new Date().toISOString();
  const db = new DatabaseSync(path);
  const addAccount = db.prepare('INSERT INTO accounts (code_hash, date_created, max_links, link_count) VALUES (?, ?, ?, ?)');
  const addLink = db.prepare('INSERT INTO links (short_code, points_to, created_by, date_created, title, tags) VALUES (?, ?, ?, ?, ?, ?)');
  db.exec('BEGIN');
  addAccount.run(hashAccessCode(largeAccessCode), now, large, large);
  addAccount.run(hashAccessCode(smallAccessCode), now, 20, 20);
  // Interleaved, as accounts fill up side by side in a real database.
  const big = listingRows(large, 1, 'L', now);
  const small = listingRows(20, 2, 'S', now);
  big.forEach((row, i) => {
    addLink.run(row.short_code, row.points_to, row.created_by, row.date_created, row.title, row.tags);
    const other = small[Math.floor(i / (large / 20))];
    if (i % (large / 20) === 0 && other !== undefined) addLink.run(other.short_code, other.points_to, other.created_by, other.date_created, other.title, other.tags);
  });
  db.exec('COMMIT');
  const ids = (db.prepare('SELECT id FROM links WHERE created_by = 1 ORDER BY id').all() as { id: number }[]).map((row) => row.id);
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  return {
    path, largeAccessCode, smallAccessCode,
    largeIds: Array.from({ length: 20 }, (_, i) => ids[Math.floor((i * ids.length) / 20)]!),
    async remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function preloadListingPostgres(adminUrl: string, large: number): Promise<PreloadedListing> {
  const database = await createPostgresDatabase(adminUrl);
  await (await openPostgresStore({ url: database.url, max: 1 })).close();
  const largeAccessCode = newAccessCode();
  const smallAccessCode = newAccessCode();
  const now = new Date().toISOString();
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  await sql`INSERT INTO accounts (code_hash, date_created, max_links, link_count) VALUES
    (${hashAccessCode(largeAccessCode)}, ${now}, ${large}, ${large}), (${hashAccessCode(smallAccessCode)}, ${now}, 20, 20)`;
  const big = listingRows(large, 1, 'L', now);
  const small = listingRows(20, 2, 'S', now);
  const columns = ['short_code', 'points_to', 'created_by', 'date_created', 'title', 'tags'] as const;
  for (let from = 0; from < large; from += 5_000) {
    const chunk = big.slice(from, from + 5_000);
    const other = small[Math.floor(from / (large / 20))];
    await sql`INSERT INTO links ${sql(other === undefined ? chunk : [...chunk, other], ...columns)}`;
  }
  await sql`VACUUM ANALYZE`;
  const ids = (await sql<{ id: string }[]>`SELECT id::text FROM links WHERE created_by = 1 ORDER BY id`).map((row) => Number(row.id));
  return {
    path: database.url, largeAccessCode, smallAccessCode,
    largeIds: Array.from({ length: 20 }, (_, i) => ids[Math.floor((i * ids.length) / 20)]!),
    async remove() {
      await sql.end();
      await database.drop();
    },
  };
}
