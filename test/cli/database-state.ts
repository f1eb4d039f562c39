/**
 * Reads a database's links and accounts directly (SQLite or PostgreSQL), so tests can check
 * what the CLI wrote and that every account's link count matches the links it holds.
 */
import { DatabaseSync } from 'node:sqlite';
import postgres from 'postgres';

export interface LinkRow {
  shortCode: string;
  pointsTo: string;
  createdBy: number;
  accesses: number;
  dateCreated: string;
  title: string | null;
  /** As stored: lower case, comma-joined, '' for none. */
  tags: string;
  expiresAt: string | null;
  maxVisits: number | null;
}

export interface AccountRow {
  uid: number;
  maxLinks: number;
  /** The stored counter. */
  linkCount: number;
  /** The links the account really holds. */
  held: number;
}

export interface DatabaseState {
  links: LinkRow[];
  accounts: AccountRow[];
}

const LINKS_SQL = `SELECT short_code AS "shortCode", points_to AS "pointsTo", created_by AS "createdBy", accesses,
  date_created AS "dateCreated", title, tags, expires_at AS "expiresAt", max_visits AS "maxVisits" FROM links ORDER BY id`;
const ACCOUNTS_SQL = `SELECT a.uid, a.max_links AS "maxLinks", a.link_count AS "linkCount",
  (SELECT count(*) FROM links l WHERE l.created_by = a.uid) AS held FROM accounts a ORDER BY a.uid`;

export async function databaseState(databaseUrl: string): Promise<DatabaseState> {
  if (/^postgres(ql)?:/.test(databaseUrl)) {
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const number = (value: unknown) => Number(value);
      const links = (await sql.unsafe(LINKS_SQL)).map((row): LinkRow => ({
        shortCode: String(row.shortCode), pointsTo: String(row.pointsTo), createdBy: number(row.createdBy),
        accesses: number(row.accesses), dateCreated: String(row.dateCreated), title: row.title as string | null,
        tags: String(row.tags), expiresAt: row.expiresAt as string | null, maxVisits: row.maxVisits === null ? null : number(row.maxVisits),
      }));
      const accounts = (await sql.unsafe(ACCOUNTS_SQL)).map((row) => ({
        uid: number(row.uid), maxLinks: number(row.maxLinks), linkCount: number(row.linkCount), held: number(row.held),
      }));
      return { links, accounts };
    } finally {
      await sql.end();
    }
  }
  const db = new DatabaseSync(databaseUrl.replace(/^sqlite:/, ''), { readOnly: true });
  try {
    return {
      links: db.prepare(LINKS_SQL).all().map((row) => ({ ...row }) as unknown as LinkRow),
      accounts: db.prepare(ACCOUNTS_SQL).all().map((row) => ({ ...row }) as unknown as AccountRow),
    };
  } finally {
    db.close();
  }
}

/** The link fields an import keeps (everything but the owner). */
export function portable(links: readonly LinkRow[]): Omit<LinkRow, 'createdBy'>[] {
  return links.map(({ createdBy: _owner, ...kept }) => kept);
}

/** The details of a link that has none. */
export const NO_DETAILS = { title: null, tags: '', expiresAt: null, maxVisits: null } as const;

/** Each link's key with its routing as stored (forward_query, rules). */
export async function routingState(databaseUrl: string): Promise<{ shortCode: string; forwardQuery: boolean; rules: string | null }[]> {
  const query = 'SELECT short_code AS "shortCode", forward_query AS "forwardQuery", rules FROM links ORDER BY id';
  const rows = /^postgres(ql)?:/.test(databaseUrl)
    ? await (async () => {
      const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
      try {
        return [...await sql.unsafe(query)];
      } finally {
        await sql.end();
      }
    })()
    : (() => {
      const db = new DatabaseSync(databaseUrl.replace(/^sqlite:/, ''), { readOnly: true });
      try {
        return db.prepare(query).all();
      } finally {
        db.close();
      }
    })();
  return rows.map((row) => ({
    shortCode: String(row.shortCode), forwardQuery: row.forwardQuery === true || row.forwardQuery === 1, rules: (row.rules ?? null) as string | null,
  }));
}
