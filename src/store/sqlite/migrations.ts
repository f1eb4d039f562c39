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
  {
    version: 4,
    // CONTRACT §7.5, ADR 21. The cap of 5 webhooks is a conditional update of
    // accounts.webhook_count, like the link cap. webhook_events is the outbox: one row per
    // event and subscribed webhook, written in the change's transaction and deleted once
    // delivered or failed; next_at and lease_until are milliseconds since the epoch (0: due
    // now, not leased). webhook_visits holds visits waiting to be batched into link.visited
    // (one row per webhook, link and classes per count batch). No foreign keys: the account
    // and webhook deletes remove their rows themselves. Plain rowids, not AUTOINCREMENT (which
    // writes sqlite_sequence on every insert): a new row's id is above every row still there,
    // which is all the ordering these tables need.
    name: 'webhooks',
    sql: `
  ALTER TABLE accounts ADD COLUMN webhook_count INTEGER NOT NULL DEFAULT 0 CHECK (webhook_count >= 0);
  -- When the batch counted the visits (ISO), for link.visited; null in rows from before.
  ALTER TABLE stats_journal ADD COLUMN time TEXT;
  CREATE TABLE webhooks (
    -- Creation order (the list's), whatever the clock says: ids are random.
    seq          INTEGER PRIMARY KEY,
    id           TEXT    NOT NULL UNIQUE,
    account_uid  INTEGER NOT NULL,
    url          TEXT    NOT NULL,
    events       TEXT    NOT NULL,
    visited      INTEGER NOT NULL CHECK (visited IN (0, 1)),
    secret       TEXT    NOT NULL,
    date_created TEXT    NOT NULL
  );
  CREATE INDEX webhooks_by_account ON webhooks (account_uid, visited);
  CREATE TABLE webhook_events (
    seq          INTEGER PRIMARY KEY,
    event_id     TEXT    NOT NULL,
    webhook_id   TEXT    NOT NULL,
    type         TEXT    NOT NULL,
    occurred_at  TEXT    NOT NULL,
    data         TEXT    NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      INTEGER NOT NULL DEFAULT 0,
    lease_until  INTEGER NOT NULL DEFAULT 0,
    lease_owner  TEXT
  );
  CREATE INDEX webhook_events_due ON webhook_events (next_at);
  CREATE INDEX webhook_events_by_webhook ON webhook_events (webhook_id, type);
  CREATE TABLE webhook_visits (
    id         INTEGER PRIMARY KEY,
    webhook_id TEXT    NOT NULL,
    short_code TEXT    NOT NULL,
    time       TEXT    NOT NULL,
    bot        INTEGER NOT NULL,
    referrer   TEXT    NOT NULL,
    country    TEXT    NOT NULL,
    browser    TEXT    NOT NULL,
    os         TEXT    NOT NULL,
    device     TEXT    NOT NULL,
    visits     INTEGER NOT NULL
  );
  CREATE INDEX webhook_visits_by_webhook ON webhook_visits (webhook_id, id);
  CREATE TABLE webhook_deliveries (
    id         INTEGER PRIMARY KEY,
    webhook_id TEXT    NOT NULL,
    event_id   TEXT    NOT NULL,
    type       TEXT    NOT NULL,
    attempt    INTEGER NOT NULL,
    time       TEXT    NOT NULL,
    status     INTEGER,
    error      TEXT
  );
  CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, id);
  `,
  },
  {
    version: 5,
    // ADR 20, "The fold in two stages": the journal is folded into one row per hour, link and
    // visitor classes first, and into the per-dimension rollups once the hour is over. Hour
    // first in the key, so the hours that are over are the table's first rows.
    name: 'statistics tuples',
    sql: `
  CREATE TABLE stats_tuples (
    hour     INTEGER NOT NULL,
    link_id  INTEGER NOT NULL,
    bot      INTEGER NOT NULL CHECK (bot IN (0, 1)),
    referrer TEXT    NOT NULL,
    country  TEXT    NOT NULL,
    browser  TEXT    NOT NULL,
    os       TEXT    NOT NULL,
    device   TEXT    NOT NULL,
    visits   INTEGER NOT NULL,
    PRIMARY KEY (hour, link_id, bot, referrer, country, browser, os, device)
  ) WITHOUT ROWID;
  `,
  },
  {
    version: 6,
    // ADR 24: no journal. The count transaction adds its visits to stats_tuples itself, and
    // writes the visits of links watched by a link.visited webhook to webhook_visits, with
    // the shortcode (so a link deleted right after keeps them). The rows still in the journal
    // go where the fold would have taken them (the webhooks' copy first, while their links
    // are still there to name them), and the journal is emptied but kept: instances of the
    // previous release still append to it during a rolling upgrade, and every fold moves what
    // they wrote (stats-sql.ts, journalLeftoversSql); a later release drops it. The partial index answers
    // "is any link.visited webhook registered?", asked once per count batch; the index by
    // shortcode and second finds the waiting row a batch's visits are added to.
    name: 'visits without a journal',
    sql: `
  INSERT INTO webhook_visits (webhook_id, short_code, time, bot, referrer, country, browser, os, device, visits)
    SELECT w.id, l.short_code, substr(coalesce(j.time, strftime('%Y-%m-%dT%H:%M:%S', 'now')), 1, 19) || '.000Z',
           j.bot, j.referrer, j.country, j.browser, j.os, j.device, j.visits
      FROM stats_journal j
      JOIN links l ON l.id = j.link_id
      JOIN webhooks w ON w.account_uid = l.created_by AND w.visited = 1
     ORDER BY j.id;
  INSERT INTO stats_tuples (hour, link_id, bot, referrer, country, browser, os, device, visits)
    SELECT hour, link_id, bot, referrer, country, browser, os, device, sum(visits) FROM stats_journal WHERE true
     GROUP BY hour, link_id, bot, referrer, country, browser, os, device
  ON CONFLICT (hour, link_id, bot, referrer, country, browser, os, device) DO UPDATE SET visits = stats_tuples.visits + excluded.visits;
  DELETE FROM stats_journal;
  CREATE INDEX webhooks_visited ON webhooks (account_uid) WHERE visited = 1;
  CREATE INDEX webhook_visits_by_second ON webhook_visits (short_code, time);
  `,
  },
  {
    version: 7,
    // ADR 19: the per-account cap of GET /v1/events across workers, and the check that ends a
    // stream whose access code was rotated, or whose account was disabled or deleted.
    name: 'event stream slots',
    sql: `
  CREATE TABLE stream_slots (
    id          TEXT    PRIMARY KEY,
    account_uid INTEGER NOT NULL,
    code_hash   TEXT    NOT NULL,
    holder      TEXT    NOT NULL,
    expires_at  INTEGER NOT NULL
  );
  CREATE INDEX stream_slots_by_account ON stream_slots (account_uid);
  CREATE INDEX stream_slots_by_holder ON stream_slots (holder);
  CREATE INDEX stream_slots_by_expiry ON stream_slots (expires_at);
  `,
  },
  {
    // Issue 30 (CONTRACT §8.5): API keys, stored as the SHA-256 of the key, looked up by it.
    version: 8,
    name: 'api keys',
    sql: `
  CREATE TABLE api_keys (
    seq          INTEGER PRIMARY KEY,
    id           TEXT    NOT NULL UNIQUE,
    account_uid  INTEGER NOT NULL,
    name         TEXT    NOT NULL,
    scopes       TEXT    NOT NULL,
    key_hash     TEXT    NOT NULL UNIQUE,
    date_created TEXT    NOT NULL,
    last_used    TEXT
  );
  CREATE INDEX api_keys_by_account ON api_keys (account_uid, seq);
  `,
  },
  {
    // Issues 28 and 29 (CONTRACT §8.1-8.3, ADR 26). A link off the default domain is keyed
    // \`host/code\` in short_code, so the unique index already grants a code once per domain and
    // every call keeps addressing a link by one indexed text. Domains are rows; the default
    // domain's own fallbacks sit in the row with host ''. A link's routing: forward_query
    // (0/1), rules (JSON text, NULL for none) and password_hash (scrypt, NULL when open).
    version: 9,
    name: 'domains, routing and protected links',
    sql: `
  CREATE TABLE domains (
    host          TEXT PRIMARY KEY,
    origin        TEXT NOT NULL,
    not_found_url TEXT,
    root_url      TEXT,
    expired_url   TEXT,
    date_created  TEXT
  );
  ALTER TABLE links ADD COLUMN forward_query INTEGER NOT NULL DEFAULT 0 CHECK (forward_query IN (0, 1));
  ALTER TABLE links ADD COLUMN rules TEXT;
  ALTER TABLE links ADD COLUMN password_hash TEXT;
  `,
  },
  {
    // ADR 29: the current hour's visitor classes of a link in its own row, beside the count
    // its visits update (the page the count dirties anyway): visits_hour, and hour_visits as
    // appended tallies (hour-visits.ts), NULL when nothing waits. They go to stats_tuples when a later
    // hour comes, when a row holds too many classes, and in the fold once their hour is over;
    // readers add them to the tuples. SQLite only: PostgreSQL keeps its upserts.
    version: 10,
    name: 'statistics of the hour in the link row',
    sql: `
  ALTER TABLE links ADD COLUMN visits_hour INTEGER;
  ALTER TABLE links ADD COLUMN hour_visits TEXT;
  `,
  },
  {
    // ADR 29, addendum: the tallies in a link's row name their visitor classes by number
    // (visit-classes.ts), in two new columns. Migration 10's columns are still read and swept
    // (what an instance of the previous release on the same file writes there is counted) but
    // no longer written: that release would misread numbers in them.
    version: 11,
    name: 'visitor classes by number',
    sql: `
  CREATE TABLE visit_classes (
    id      INTEGER PRIMARY KEY,
    classes TEXT    NOT NULL UNIQUE
  );
  ALTER TABLE links ADD COLUMN tallies_hour INTEGER;
  ALTER TABLE links ADD COLUMN hour_tallies TEXT;
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
