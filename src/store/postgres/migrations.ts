/**
 * PostgreSQL schema: the numbered migrations and `applyMigrations`, the same names and the
 * same scheme as ../sqlite/migrations.ts (src/store/migration.ts).
 */
import type postgres from 'postgres';
import { MIGRATIONS_TABLE, pendingMigrations, type Migration } from '../migration.ts';

type Sql = postgres.Sql<Record<string, never>>;

// Any advisory-lock key works as long as every instance uses the same one.
const MIGRATION_LOCK = 0x5_1a_71_4c;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'accounts and links',
    sql: `
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
  },
  {
    version: 2,
    // One call applies many creates in order, each with the cap checked before uniqueness
    // exactly as before, in one statement (one round trip, one commit). A create whose
    // shortcode is taken gives its slot back at once, inside the same transaction, so no
    // other transaction ever sees the extra count. (Redefined by migration 3.)
    name: 'creates in batches',
    sql: `
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
  },
  {
    version: 3,
    // The link cap written once: shortlink_take_slot is the one conditional update that
    // grants an account a link, used by the server's creates and the admin import alike
    // (the same rule as TAKE_SLOT in ../sqlite/store.ts). Functions only: no table changes.
    name: 'one cap rule for creates and imports',
    sql: `
  CREATE FUNCTION shortlink_take_slot(owner bigint, raise_cap boolean) RETURNS boolean LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE accounts
       SET link_count = link_count + 1,
           max_links = CASE WHEN raise_cap THEN greatest(max_links, link_count + 1) ELSE max_links END
     WHERE uid = owner AND (raise_cap OR link_count < max_links);
    RETURN FOUND;
  END
  $$;

  CREATE OR REPLACE FUNCTION shortlink_create_links(codes text[], targets text[], owners bigint[], created text[])
  RETURNS text[] LANGUAGE plpgsql AS $$
  DECLARE
    results text[] := '{}';
  BEGIN
    FOR i IN 1 .. coalesce(array_length(codes, 1), 0) LOOP
      IF NOT shortlink_take_slot(owners[i], false) THEN
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

  -- Imports rows in order for one account: a taken shortcode is reported (never replaced)
  -- before the cap is asked, Accesses and DateCreated are kept. The caller holds the
  -- account's row lock. A row lost to a concurrent create of the same shortcode gives its
  -- slot back; with raise_cap, MaxLinks then ends where the links actually added put it.
  CREATE FUNCTION shortlink_import_links(owner bigint, codes text[], targets text[], counts bigint[], created text[], raise_cap boolean)
  RETURNS text[] LANGUAGE plpgsql AS $$
  DECLARE
    results text[] := '{}';
    original_max integer;
  BEGIN
    SELECT max_links INTO original_max FROM accounts WHERE uid = owner;
    FOR i IN 1 .. coalesce(array_length(codes, 1), 0) LOOP
      IF EXISTS (SELECT 1 FROM links WHERE short_code = codes[i]) THEN
        results := results || 'taken'::text;
        CONTINUE;
      END IF;
      IF NOT shortlink_take_slot(owner, raise_cap) THEN
        results := results || 'cap_reached'::text;
        CONTINUE;
      END IF;
      INSERT INTO links (short_code, points_to, created_by, accesses, date_created)
      VALUES (codes[i], targets[i], owner, counts[i], created[i])
      ON CONFLICT (short_code) DO NOTHING;
      IF FOUND THEN
        results := results || 'imported'::text;
      ELSE
        UPDATE accounts SET link_count = link_count - 1,
               max_links = CASE WHEN raise_cap THEN greatest(original_max, link_count - 1) ELSE max_links END
         WHERE uid = owner;
        results := results || 'taken'::text;
      END IF;
    END LOOP;
    RETURN results;
  END
  $$;
  `,
  },
  {
    version: 4,
    // CONTRACT §7.1-7.3, the same columns as SQLite's migration 2.
    name: 'link details and account control',
    sql: `
  ALTER TABLE links ADD COLUMN title text;
  ALTER TABLE links ADD COLUMN tags text NOT NULL DEFAULT '';
  ALTER TABLE links ADD COLUMN expires_at text;
  ALTER TABLE links ADD COLUMN max_visits integer CHECK (max_visits IS NULL OR max_visits >= 1);
  ALTER TABLE accounts ADD COLUMN disabled boolean NOT NULL DEFAULT false;
  `,
  },
  {
    version: 5,
    // A link's details are inserted with it, in the batch's one statement, so a link with a
    // visit limit or an expiry can never be resolved without them. The four-array form stays
    // for a rolling upgrade (instances of the previous release still call it).
    name: 'creates with link details',
    sql: `
  CREATE FUNCTION shortlink_create_links(codes text[], targets text[], owners bigint[], created text[],
                                         titles text[], tag_lists text[], expiries text[], limits integer[])
  RETURNS text[] LANGUAGE plpgsql AS $$
  DECLARE
    results text[] := '{}';
  BEGIN
    FOR i IN 1 .. coalesce(array_length(codes, 1), 0) LOOP
      IF NOT shortlink_take_slot(owners[i], false) THEN
        results := results || 'cap_reached'::text;
        CONTINUE;
      END IF;
      INSERT INTO links (short_code, points_to, created_by, date_created, title, tags, expires_at, max_visits)
      VALUES (codes[i], targets[i], owners[i], created[i], titles[i], tag_lists[i], expiries[i], limits[i])
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
  },
  {
    version: 6,
    // CONTRACT §7.4, ADR 20: the same tables as SQLite's migration 3. `bot` is a smallint
    // (0 or 1) so both engines read it with the same SQL.
    name: 'visit statistics',
    sql: `
  CREATE TABLE stats_journal (
    id       bigint   GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    link_id  bigint   NOT NULL,
    hour     integer  NOT NULL,
    bot      smallint NOT NULL CHECK (bot IN (0, 1)),
    referrer text     NOT NULL,
    country  text     NOT NULL,
    browser  text     NOT NULL,
    os       text     NOT NULL,
    device   text     NOT NULL,
    visits   integer  NOT NULL
  );
  CREATE TABLE stats_rollups (
    link_id bigint   NOT NULL,
    hour    integer  NOT NULL,
    dim     smallint NOT NULL,
    value   text     COLLATE "C" NOT NULL,
    visits  bigint   NOT NULL,
    PRIMARY KEY (link_id, hour, dim, value)
  );
  CREATE INDEX stats_rollups_by_hour ON stats_rollups (hour);
  `,
  },
  {
    version: 7,
    // CONTRACT §7.5, ADR 21: the same tables as SQLite's migration 4. `visited` and `bot` are
    // smallints (0 or 1) so both engines run the same SQL.
    name: 'webhooks',
    sql: `
  ALTER TABLE accounts ADD COLUMN webhook_count integer NOT NULL DEFAULT 0 CHECK (webhook_count >= 0);
  ALTER TABLE stats_journal ADD COLUMN time text;
  CREATE TABLE webhooks (
    seq          bigint   GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id           text     NOT NULL UNIQUE,
    account_uid  bigint   NOT NULL,
    url          text     NOT NULL,
    events       text     NOT NULL,
    visited      smallint NOT NULL CHECK (visited IN (0, 1)),
    secret       text     NOT NULL,
    date_created text     NOT NULL
  );
  CREATE INDEX webhooks_by_account ON webhooks (account_uid, visited);
  CREATE TABLE webhook_events (
    seq          bigint   GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id     text     NOT NULL,
    webhook_id   text     NOT NULL,
    type         text     NOT NULL,
    occurred_at  text     NOT NULL,
    data         text     NOT NULL,
    attempts     integer  NOT NULL DEFAULT 0,
    next_at      bigint   NOT NULL DEFAULT 0,
    lease_until  bigint   NOT NULL DEFAULT 0,
    lease_owner  text
  );
  CREATE INDEX webhook_events_due ON webhook_events (next_at);
  CREATE INDEX webhook_events_by_webhook ON webhook_events (webhook_id, type);
  CREATE TABLE webhook_visits (
    id         bigint   GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id text     NOT NULL,
    short_code text     NOT NULL,
    time       text     NOT NULL,
    bot        smallint NOT NULL,
    referrer   text     NOT NULL,
    country    text     NOT NULL,
    browser    text     NOT NULL,
    os         text     NOT NULL,
    device     text     NOT NULL,
    visits     bigint   NOT NULL
  );
  CREATE INDEX webhook_visits_by_webhook ON webhook_visits (webhook_id, id);
  CREATE TABLE webhook_deliveries (
    id         bigint   GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id text     NOT NULL,
    event_id   text     NOT NULL,
    type       text     NOT NULL,
    attempt    integer  NOT NULL,
    time       text     NOT NULL,
    status     integer,
    error      text
  );
  CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, id);
  `,
  },
  {
    version: 8,
    // The same table as SQLite's migration 5 (ADR 20, "The fold in two stages").
    name: 'statistics tuples',
    sql: `
  CREATE TABLE stats_tuples (
    hour     integer  NOT NULL,
    link_id  bigint   NOT NULL,
    bot      smallint NOT NULL CHECK (bot IN (0, 1)),
    referrer text     COLLATE "C" NOT NULL,
    country  text     COLLATE "C" NOT NULL,
    browser  text     COLLATE "C" NOT NULL,
    os       text     COLLATE "C" NOT NULL,
    device   text     COLLATE "C" NOT NULL,
    visits   bigint   NOT NULL,
    PRIMARY KEY (hour, link_id, bot, referrer, country, browser, os, device)
  );
  `,
  },
  {
    version: 9,
    // Issue 24: a new link column no longer redefines the create function (migrations 2, 3
    // and 5 each copied it to add arguments). Each new link arrives as a JSON object keyed by
    // column name (newLinkRow in ../link-rows.ts) and is read as a record of the links table
    // itself, so a column added to the table and to that object is inserted with no change
    // here. The cap stays in shortlink_take_slot; the old functions stay for instances of the
    // previous release during a rolling upgrade.
    name: 'creates read each new link as a links record',
    sql: `
  CREATE FUNCTION shortlink_insert_links(new_links jsonb) RETURNS text[] LANGUAGE plpgsql AS $$
  DECLARE
    results text[] := '{}';
    ids text := pg_get_serial_sequence('links', 'id');
    item jsonb;
    link links;
  BEGIN
    FOR item IN SELECT e.value FROM jsonb_array_elements(new_links) WITH ORDINALITY AS e(value, n) ORDER BY e.n LOOP
      link := jsonb_populate_record(NULL::links, item);
      IF NOT shortlink_take_slot(link.created_by, false) THEN
        results := results || 'cap_reached'::text;
        CONTINUE;
      END IF;
      link.id := nextval(ids);
      INSERT INTO links OVERRIDING SYSTEM VALUE VALUES (link.*) ON CONFLICT (short_code) DO NOTHING;
      IF FOUND THEN
        results := results || 'created'::text;
      ELSE
        UPDATE accounts SET link_count = link_count - 1 WHERE uid = link.created_by;
        results := results || 'taken'::text;
      END IF;
    END LOOP;
    RETURN results;
  END
  $$;
  `,
  },
  {
    version: 10,
    // The same change as SQLite's migration 6 (ADR 24; numbered 10 here because issue 24's
    // create function took 9): the journal's rows moved on, the journal emptied but kept for
    // the previous release's instances during a rolling upgrade (every fold moves what they
    // write), and the partial index the count statement's webhook copy probes.
    name: 'visits without a journal',
    sql: `
  INSERT INTO webhook_visits (webhook_id, short_code, time, bot, referrer, country, browser, os, device, visits)
    SELECT w.id, l.short_code,
           substr(coalesce(j.time, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), 1, 19) || '.000Z',
           j.bot, j.referrer, j.country, j.browser, j.os, j.device, j.visits
      FROM stats_journal j
      JOIN links l ON l.id = j.link_id
      JOIN webhooks w ON w.account_uid = l.created_by AND w.visited = 1
     ORDER BY j.id;
  INSERT INTO stats_tuples (hour, link_id, bot, referrer, country, browser, os, device, visits)
    SELECT hour, link_id, bot, referrer, country, browser, os, device, sum(visits) FROM stats_journal
     GROUP BY hour, link_id, bot, referrer, country, browser, os, device
  ON CONFLICT (hour, link_id, bot, referrer, country, browser, os, device) DO UPDATE SET visits = stats_tuples.visits + excluded.visits;
  DELETE FROM stats_journal;
  CREATE INDEX webhooks_visited ON webhooks (account_uid) WHERE visited = 1;
  `,
  },
  {
    version: 11,
    // The same table as SQLite's migration 7 (ADR 19, "Streams across processes").
    name: 'event stream slots',
    sql: `
  CREATE TABLE stream_slots (
    id          text    PRIMARY KEY,
    account_uid bigint  NOT NULL,
    code_hash   text    NOT NULL,
    holder      text    NOT NULL,
    expires_at  bigint  NOT NULL
  );
  CREATE INDEX stream_slots_by_account ON stream_slots (account_uid);
  CREATE INDEX stream_slots_by_holder ON stream_slots (holder);
  CREATE INDEX stream_slots_by_expiry ON stream_slots (expires_at);
  `,
  },
  {
    // Issue 30 (CONTRACT §8.5): API keys, stored as the SHA-256 of the key, looked up by it;
    // an account's keys go with it.
    version: 12,
    name: 'api keys',
    sql: `
  CREATE TABLE api_keys (
    seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id           text   NOT NULL UNIQUE,
    account_uid  bigint NOT NULL REFERENCES accounts (uid) ON DELETE CASCADE,
    name         text   NOT NULL,
    scopes       text   NOT NULL,
    key_hash     text   NOT NULL UNIQUE,
    date_created text   NOT NULL,
    last_used    text
  );
  CREATE INDEX api_keys_by_account ON api_keys (account_uid, seq);
  `,
  },
  {
    // The same change as SQLite's migration 9 (ADR 26): domains, and the links' routing
    // columns. shortlink_insert_links reads each new link as a links record, so it inserts
    // the new columns with no change.
    version: 13,
    name: 'domains, routing and protected links',
    sql: `
  CREATE TABLE domains (
    host          text COLLATE "C" PRIMARY KEY,
    origin        text NOT NULL,
    not_found_url text,
    root_url      text,
    expired_url   text,
    date_created  text
  );
  ALTER TABLE links ADD COLUMN forward_query boolean NOT NULL DEFAULT false;
  ALTER TABLE links ADD COLUMN rules text;
  ALTER TABLE links ADD COLUMN password_hash text;
  `,
  },
];

/**
 * Brings the schema up to date and returns how many migrations it applied. An advisory lock
 * makes concurrent starts apply each migration once.
 */
export async function applyMigrations(sql: Sql): Promise<number> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const [row] = await tx.unsafe<{ current: number }[]>(`SELECT coalesce(max(version), 0)::int AS current FROM ${MIGRATIONS_TABLE}`);
    const pending = pendingMigrations(MIGRATIONS, row?.current ?? 0);
    for (const migration of pending) {
      await tx.unsafe(migration.sql);
      await tx.unsafe(`INSERT INTO ${MIGRATIONS_TABLE} (version) VALUES ($1)`, [migration.version]);
    }
    return pending.length;
  });
}
