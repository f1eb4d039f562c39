/**
 * The service's wire types, generated from the server's TypeBox schemas (src/http/schemas.ts)
 * by scripts/generate-client-types.ts. Do not edit: run `npm run generate:client`.
 */

/** An account */
export interface Account {
  /** Unique, increasing account number */
  Uid: number;
  /** The account's only credential (v4 UUID, lower case) */
  AccessCode: string;
  /** ISO 8601 creation time, e.g. 2026-11-22T04:12:49.123Z */
  DateCreated: string;
  /** How many links the account may hold at once */
  MaxLinks: number;
}

/** A short link */
export interface Link {
  /** The shortcode, without the base URL */
  ShortCode: string;
  /** The target URL, exactly as given */
  PointsTo: string;
  /** Uid of the account that created the link */
  CreatedBy: number;
  /** Resolutions so far, this one included */
  Accesses: number;
}

/** A short link with the details its owner sees */
export interface LinkDetails {
  /** The shortcode, without the base URL */
  ShortCode: string;
  /** The target URL, exactly as given */
  PointsTo: string;
  /** Uid of the account that created the link */
  CreatedBy: number;
  /** Resolutions counted so far */
  Accesses: number;
  /** Creation time, e.g. 2026-11-22T04:12:49.123Z */
  DateCreated: string;
  /** The title, or null */
  Title: string | null;
  /** Tags, lower case; [] when none */
  Tags: string[];
  /** When the link stops resolving (UTC, toISOString form), or null */
  ExpiresAt: string | null;
  /** How many resolutions the link allows in all, or null for no limit */
  MaxVisits: number | null;
}
