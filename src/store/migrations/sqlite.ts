/**
 * SQLite schema, one entry per version; `PRAGMA user_version` records how many have run.
 * Append new versions; never edit one that has shipped.
 */
export const SQLITE_MIGRATIONS: readonly string[] = [
  `
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
];
