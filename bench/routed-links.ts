/**
 * Links that use the features of issues 28 and 29 (a registered domain, redirect rules, query
 * forwarding), added to a database a root's own bench/preload.ts has already filled. This
 * module runs in the benchmark's process, whatever root the database belongs to, so it looks
 * at the schema before writing: a root without the `domains` table or the `rules` and
 * `forward_query` columns (a checkout from before those issues) gets the same number of rows
 * as plain links, so every root's links table holds as many rows and the plain rows compare
 * alike, and the benchmark skips the scenarios it cannot serve.
 *
 * Each set has as many links as the preload made, each on its own row of the unique index:
 *   - `domain`: the preload's codes again, on BENCH_DOMAIN (keyed `host/code`, ADR 26);
 *   - `rules`: codes `r<code>`, three rules each (iOS, Android, German), BENCH_RULES;
 *   - `query`: codes `q<code>`, forward_query on.
 */
import { DatabaseSync } from 'node:sqlite';
import postgres from 'postgres';

export const BENCH_DOMAIN = 'go.bench.example';

export type LinkSet = 'domain' | 'rules' | 'query';

/** What a root's schema can serve. */
export interface Support {
  readonly domains: boolean;
  readonly routing: boolean;
}

/**
 * The stored text of three rules (CONTRACT §8.2), as the server writes it (rules.ts
 * `rulesJson`); one text for every link, as app-store targets shared by a campaign's links are.
 */
export const BENCH_RULES = JSON.stringify([
  { if: { os: ['ios'] }, to: 'https://apps.apple.com/app/id100000001' },
  { if: { os: ['android'] }, to: 'https://play.google.com/store/apps/details?id=example.bench' },
  { if: { language: ['de'] }, to: 'https://example.com/de/' },
]);

/** The key (short_code column) a set's link of preloaded code `code` is stored under. */
export function keyOf(set: LinkSet, code: string): string {
  return set === 'domain' ? `${BENCH_DOMAIN}/${code}` : set === 'rules' ? `r${code}` : `q${code}`;
}

/** The shortcode a visitor requests for a set's link (`GET /{code}`, with Host for the domain set). */
export function requestCodeOf(set: LinkSet, code: string): string {
  return set === 'domain' ? code : keyOf(set, code);
}

const target = (set: LinkSet, i: number) => `https://example.com/${set}/${i}?utm_source=bench`;

interface Row {
  readonly key: string;
  readonly pointsTo: string;
  readonly rules: string | null;
  readonly forwardQuery: boolean;
}

function rowsOf(sets: readonly LinkSet[], codes: readonly string[]): Row[] {
  return sets.flatMap((set) => codes.map((code, i) => ({
    key: keyOf(set, code), pointsTo: target(set, i), rules: set === 'rules' ? BENCH_RULES : null, forwardQuery: set === 'query',
  })));
}

/**
 * Adds the links of `sets` to the SQLite database at `path` (owned by the preload's first
 * account, the one with a huge cap); registers BENCH_DOMAIN when the domain set is asked for
 * and the schema has domains. Answers what the schema supports.
 */
export function addLinkSetsSqlite(path: string, codes: readonly string[], sets: readonly LinkSet[]): Support {
  const db = new DatabaseSync(path);
  try {
    const columns = new Set((db.prepare("SELECT name FROM pragma_table_info('links')").all() as { name: string }[]).map((row) => row.name));
    const domains = db.prepare("SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'domains'").get() !== undefined;
    const support = { domains, routing: columns.has('rules') && columns.has('forward_query') };
    if (sets.length === 0) return support;
    const now = new Date().toISOString();
    const rows = rowsOf(sets, codes);
    const add = support.routing
      ? db.prepare('INSERT INTO links (short_code, points_to, created_by, date_created, rules, forward_query) VALUES (?, ?, 1, ?, ?, ?)')
      : db.prepare('INSERT INTO links (short_code, points_to, created_by, date_created) VALUES (?, ?, 1, ?)');
    db.exec('BEGIN');
    for (const row of rows) {
      if (support.routing) add.run(row.key, row.pointsTo, now, row.rules, row.forwardQuery ? 1 : 0);
      else add.run(row.key, row.pointsTo, now);
    }
    db.prepare('UPDATE accounts SET link_count = link_count + ? WHERE uid = 1').run(rows.length);
    if (support.domains && sets.includes('domain')) {
      db.prepare('INSERT INTO domains (host, origin, date_created) VALUES (?, ?, ?)').run(BENCH_DOMAIN, `https://${BENCH_DOMAIN}`, now);
    }
    db.exec('COMMIT');
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    return support;
  } finally {
    db.close();
  }
}

/** The same on PostgreSQL (`url` names the preloaded database). */
export async function addLinkSetsPostgres(url: string, codes: readonly string[], sets: readonly LinkSet[]): Promise<Support> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const columns = new Set((await sql<{ column_name: string }[]>`
      SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'links'`).map((row) => row.column_name));
    const [table] = await sql<{ found: boolean }[]>`SELECT to_regclass('domains') IS NOT NULL AS found`;
    const support = { domains: table!.found, routing: columns.has('rules') && columns.has('forward_query') };
    if (sets.length === 0) return support;
    const now = new Date().toISOString();
    const rows = rowsOf(sets, codes);
    await sql.begin(async (tx) => {
      for (let from = 0; from < rows.length; from += 10_000) {
        const chunk = rows.slice(from, from + 10_000).map((row) => ({
          short_code: row.key, points_to: row.pointsTo, created_by: 1, date_created: now, rules: row.rules, forward_query: row.forwardQuery,
        }));
        if (support.routing) await tx`INSERT INTO links ${tx(chunk, 'short_code', 'points_to', 'created_by', 'date_created', 'rules', 'forward_query')}`;
        else await tx`INSERT INTO links ${tx(chunk, 'short_code', 'points_to', 'created_by', 'date_created')}`;
      }
      await tx`UPDATE accounts SET link_count = link_count + ${rows.length} WHERE uid = 1`;
      if (support.domains && sets.includes('domain')) {
        await tx`INSERT INTO domains (host, origin, date_created) VALUES (${BENCH_DOMAIN}, ${`https://${BENCH_DOMAIN}`}, ${now})`;
      }
    });
    await sql`VACUUM ANALYZE links`;
    return support;
  } finally {
    await sql.end();
  }
}
