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
  // 2: creates in batches. One call applies many creates in order, each with the cap
  // checked before uniqueness exactly as before, in one statement (one round trip, one
  // commit). A create whose shortcode is taken gives its slot back at once, inside the
  // same transaction, so no other transaction ever sees the extra count.
  `
  CREATE FUNCTION shortlink_create_links(codes text[], targets text[], owners bigint[], created text[])
  RETURNS text[] LANGUAGE plpgsql AS $$
  DECLARE
    results text[] := '{}';
  BEGIN
    FOR i IN 1 .. coalesce(array_length(codes, 1), 0) LOOP
      UPDATE accounts SET link_count = link_count + 1 WHERE uid = owners[i] AND link_count < max_links;
      IF NOT FOUND THEN
        results := results || 'cap_reached'::text;
        CONTINUE;
      END IF;
      INSERT INTO links (short_code, points_to, created_by, date_created)
      VALUES (codes[i], targets[i], owners[i], created[i])
      ON CONFLICT (short_code) DO NOTHING;
      IF FOUND THEN
        results := results || 'created'::text;
      ELSE
        UPDATE accounts SET link_count = link_count - 1 WHERE uid = owners[i];
        results := results || 'taken'::text;
      END IF;
    END LOOP;
    RETURN results;
  END
  $$;
  `,
];
