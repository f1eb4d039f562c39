/**
 * PostgreSQL schema, one entry per version; `schema_migrations` records which have run.
 * Append new versions; never edit one that has shipped.
 */
export const POSTGRES_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE accounts (
    uid          bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    code_hash    text    NOT NULL UNIQUE,
    date_created text    NOT NULL,
    max_links    integer NOT NULL CHECK (max_links >= 0),
    -- Links held right now; the cap is enforced by a conditional update of this column.
    link_count   integer NOT NULL DEFAULT 0 CHECK (link_count >= 0)
  );
  CREATE TABLE links (
    id           bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- "C" collation: byte-wise, case-sensitive comparison whatever the database locale.
    short_code   text    COLLATE "C" NOT NULL UNIQUE,
    points_to    text    NOT NULL,
    created_by   bigint  NOT NULL REFERENCES accounts (uid),
    accesses     bigint  NOT NULL DEFAULT 0,
    date_created text    NOT NULL
  );
  CREATE INDEX links_by_account ON links (created_by, id);
  `,
];
