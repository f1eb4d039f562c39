/**
 * SQLite schema: the numbered migrations and `applyMigrations`, the same names and the same
 * scheme as ../postgres/migrations.ts (src/store/migration.ts).
 */
import type { DatabaseSync } from 'node:sqlite';
import { MIGRATIONS_TABLE, pendingMigrations, type Migration } from '../migration.ts';
import { retryWhileBusy } from './busy.ts';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'accounts and links',
    sql: `
  CREATE TABLE accounts (
    uid          INTEGER PRIMARY KEY AUTOINCREMENT,
    code_hash    TEXT    NOT NULL UNIQUE,
    date_created TEXT    NOT NULL,
    max_links    INTEGER NOT NULL CHECK (max_links >= 0),
    -- Links held right now; the cap is enforced by a conditional update of this column.
    link_count   INTEGER NOT NULL DEFAULT 0 CHECK (link_count >= 0)
  );
  CREATE TABLE links (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    short_code   TEXT    NOT NULL UNIQUE,
    points_to    TEXT    NOT NULL,
    created_by   INTEGER NOT NULL REFERENCES accounts (uid),
    accesses     INTEGER NOT NULL DEFAULT 0,
    date_created TEXT    NOT NULL
  );
  CREATE INDEX links_by_account ON links (created_by, id);
  `,
  },
  {
    version: 2,
    // CONTRACT §7.1-7.3. Tags are kept lower-case and comma-joined ('' for none); ExpiresAt
    // as \`toISOString()\` text (UTC), so it compares as text; a disabled account's links
    // answer 410 and its calls 403.
    name: 'link details and account control',
    sql: `
  ALTER TABLE links ADD COLUMN title TEXT;
  ALTER TABLE links ADD COLUMN tags TEXT NOT NULL DEFAULT '';
  ALTER TABLE links ADD COLUMN expires_at TEXT;
  ALTER TABLE links ADD COLUMN max_visits INTEGER CHECK (max_visits IS NULL OR max_visits >= 1);
  ALTER TABLE accounts ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1));
  `,
  },
  {
    version: 3,
    // CONTRACT §7.4, ADR 20. The journal takes each batch's visits in the count transaction
    // (appended at the table's tail); the fold moves them into the rollups off the hot path.
    // Hours are counted since the Unix epoch (UTC); a folded day sits at its first hour.
    // No foreign keys: a deleted link's rows are swept by the daily fold.
    name: 'visit statistics',
    sql: `
  CREATE TABLE stats_journal (
    id       INTEGER PRIMARY KEY,
    link_id  INTEGER NOT NULL,
    hour     INTEGER NOT NULL,
    bot      INTEGER NOT NULL CHECK (bot IN (0, 1)),
    referrer TEXT    NOT NULL,
    country  TEXT    NOT NULL,
    browser  TEXT    NOT NULL,
    os       TEXT    NOT NULL,
    device   TEXT    NOT NULL,
    visits   INTEGER NOT NULL
  );
  CREATE TABLE stats_rollups (
    link_id INTEGER NOT NULL,
    hour    INTEGER NOT NULL,
    dim     INTEGER NOT NULL,
    value   TEXT    NOT NULL,
    visits  INTEGER NOT NULL,
    PRIMARY KEY (link_id, hour, dim, value)
  ) WITHOUT ROWID;
  CREATE INDEX stats_rollups_by_hour ON stats_rollups (hour);
  `,
  },
];

/**
 * Brings the schema up to date and returns how many migrations it applied. The write lock
 * (BEGIN IMMEDIATE) makes concurrent starts apply each migration once.
 *
 * Releases before this one recorded the version in `PRAGMA user_version` only; such a file
 * has no version table yet, and its versions are recorded from that number first. The
 * pragma is still kept equal to the latest version, so that an older release opening the
 * file does not try to apply migration 1 again.
 *
 * While another connection holds the write lock, waits for it without blocking the event
 * loop (sqlite/busy.ts), for up to `lockWaitMs`.
 */
export function applyMigrations(db: DatabaseSync, { lockWaitMs = 5000 }: { lockWaitMs?: number } = {}): Promise<number> {
  return retryWhileBusy(() => migrate(db), lockWaitMs);
}

/** One attempt: applies everything pending in one transaction, or throws having applied nothing. */
function migrate(db: DatabaseSync): number {
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
      version    INTEGER PRIMARY KEY,
      applied_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    )`);
    const record = db.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (version) VALUES (?)`);
    let { current } = db.prepare(`SELECT coalesce(max(version), 0) AS current FROM ${MIGRATIONS_TABLE}`).get() as { current: number };
    const { user_version: legacy } = db.prepare('PRAGMA user_version').get() as { user_version: number };
    for (; current < legacy; current++) record.run(current + 1);
    const pending = pendingMigrations(MIGRATIONS, current);
    for (const migration of pending) {
      db.exec(migration.sql);
      record.run(migration.version);
    }
    if (legacy < MIGRATIONS.length) db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
    db.exec('COMMIT');
    return pending.length;
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
