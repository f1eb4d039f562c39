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

/** The account's access code was rotated (the new code is never in an event) */
export interface AccountRotatedEvent {
  type: "account.rotated";
  /** When the change was committed (RFC 3339, UTC) */
  timestamp: string;
  data: {
    /** The account whose access code changed */
    Uid: number;
  };
}

/** An account as an administrator sees it (never its access code) */
export interface AdminAccount {
  /** Account number */
  Uid: number;
  /** ISO 8601 creation time */
  DateCreated: string;
  /** How many links the account may hold at once */
  MaxLinks: number;
  /** How many links it holds now */
  Links: number;
  /** True when its calls answer 403 and its links 410 */
  Disabled: boolean;
}

/** A domain as an administrator sees it, with its fallbacks */
export interface AdminDomain {
  /** The host name in lower case, without a port (e.g. go.example.com) */
  Host: string;
  /** Scheme, host and port as short URLs use them (e.g. https://go.example.com) */
  Origin: string;
  /** Where a visit to an unknown shortcode of this domain is sent (302), or null */
  NotFoundUrl: string | null;
  /** Where a visit to `/` of this domain is sent (302), or null */
  RootUrl: string | null;
  /** Where a visit to an expired, used-up or disabled link of this domain is sent (302), or null */
  ExpiredUrl: string | null;
  /** How many links the domain holds now */
  Links: number;
  /** When it was registered (UTC); null for the default domain (BASE_URL's) */
  DateCreated: string | null;
}

/** An API key, without the key itself */
export interface ApiKey {
  /** The key's id: key_ and 24 hex digits (not secret) */
  Id: string;
  /** The name given at creation */
  Name: string;
  /** What the key may do: links:read, links:write, stats:read, webhooks */
  Scopes: string[];
  /** Creation time (UTC) */
  DateCreated: string;
  /** When it last authenticated a request (at most a minute stale), or null */
  LastUsed: string | null;
}

/** A bulk create item that was created */
export interface BulkCreated {
  /** The short URL: BASE_URL/ShortCode */
  ShortUrl: string;
}

/** A bulk create item that was not created */
export interface BulkRefused {
  /** The status a single create would have answered */
  Status: number;
  /** The text a single create would have answered: Unable to create link: … */
  Error: string;
}

/** A new API key with the key itself, shown only in this answer */
export interface CreatedApiKey {
  /** The key's id: key_ and 24 hex digits (not secret) */
  Id: string;
  /** The name given at creation */
  Name: string;
  /** What the key may do: links:read, links:write, stats:read, webhooks */
  Scopes: string[];
  /** The key: slk_ and 43 base64url characters. Shown this once; only its digest is stored */
  Key: string;
  /** Creation time (UTC) */
  DateCreated: string;
  /** When it last authenticated a request (at most a minute stale), or null */
  LastUsed: string | null;
}

/** A new webhook with its signing secret, shown only in this answer */
export interface CreatedWebhook {
  /** The webhook's id: wh_ and 24 hex digits */
  Id: string;
  /** Where events are POSTed */
  Url: string;
  /** The event types it receives */
  Events: string[];
  /** The signing secret, whsec_ and base64 of 32 bytes: shown this once */
  Secret: string;
  /** Creation time (UTC) */
  DateCreated: string;
}

/** One delivery attempt */
export interface Delivery {
  /** The event's webhook-id (the same on every attempt) */
  EventId: string;
  /** The event type */
  Type: string;
  /** 1 for the first attempt */
  Attempt: number;
  /** When the attempt ended (UTC) */
  Time: string;
  /** The receiver's HTTP status, or null without an answer */
  Status: number | null;
  /** Why the attempt failed, or null */
  Error: string | null;
}

/** A domain short links may use: its short URLs are `Origin + "/" + ShortCode` */
export interface Domain {
  /** The host name in lower case, without a port (e.g. go.example.com) */
  Host: string;
  /** Scheme, host and port as short URLs use them (e.g. https://go.example.com) */
  Origin: string;
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

/** A link was created; data is its LinkDetails */
export interface LinkCreatedEvent {
  type: "link.created";
  /** When the change was committed (RFC 3339, UTC) */
  timestamp: string;
  /** The link's LinkDetails */
  data: LinkDetails;
}

/** A link was deleted; data is its LinkDetails as it last stood */
export interface LinkDeletedEvent {
  type: "link.deleted";
  /** When the change was committed (RFC 3339, UTC) */
  timestamp: string;
  /** The link's LinkDetails */
  data: LinkDetails;
}

/** A short link with the details its owner sees */
export interface LinkDetails {
  /** The shortcode, without the base URL or the domain */
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
  /** The host of the domain the link is on, or null for the default domain (BASE_URL's) */
  Domain: string | null;
  /** Whether a visitor's query string is appended to the target on redirect */
  ForwardQuery: boolean;
  /** Whether a password protects the link (the password itself is never shown) */
  Protected: boolean;
  /** Redirect rules, first match wins; [] when none */
  Rules: {
    /** Conditions, all of which must hold */
    If: {
      device?: string[];
      os?: string[];
      country?: string[];
      language?: string[];
      query?: Record<string, unknown>;
    };
    /** Where a visit that meets the conditions is sent */
    To: string;
  }[];
}

/** A link was edited (PATCH /v1/link); data is its LinkDetails after the edit */
export interface LinkUpdatedEvent {
  type: "link.updated";
  /** When the change was committed (RFC 3339, UTC) */
  timestamp: string;
  /** The link's LinkDetails */
  data: LinkDetails;
}

/** Links of the account were visited: the visits of one count batch (at most 100 per event on the live stream) */
export interface LinkVisitedEvent {
  type: "link.visited";
  /** When the change was committed (RFC 3339, UTC) */
  timestamp: string;
  data: {
    /** The visits, in the order they were counted */
    visits: VisitEventItem[];
  };
}

/** An event: the JSON of an SSE data line, or a webhook delivery's body */
export type ShortlinkEvent = LinkCreatedEvent | LinkUpdatedEvent | LinkDeletedEvent | LinkVisitedEvent | AccountRotatedEvent;

/** Visit statistics of one link or of the whole account (CONTRACT §7.4) */
export interface Statistics {
  /** The link, or null for the whole account */
  ShortCode: string | null;
  /** Start of the period (RFC 3339, UTC) */
  From: string;
  /** End of the period (RFC 3339, UTC) */
  To: string;
  /** Length of each Series entry (UTC) */
  Interval: "hour" | "day" | "month";
  /** Counted resolutions in the period */
  Visits: number;
  /** Visits not judged bots */
  Humans: number;
  /** Visits judged bots (by User-Agent; none is a bot) */
  Bots: number;
  /** One entry per interval of the period, zeros included */
  Series: {
    /** Start of the interval (RFC 3339, UTC) */
    Time: string;
    Visits: number;
    Bots: number;
  }[];
  /** Referrer hosts, (direct) without a Referer, most visits first: at most 50, then the rest summed as (other) */
  Referrers: {
    /** The value; `(other)` sums the values beyond the first 50 */
    Name: string;
    /** Visits with this value in the period */
    Visits: number;
  }[];
  /** ISO 3166 alpha-2 countries, ZZ unknown, most visits first: at most 50, then the rest summed as (other) */
  Countries: {
    /** The value; `(other)` sums the values beyond the first 50 */
    Name: string;
    /** Visits with this value in the period */
    Visits: number;
  }[];
  /** Browsers, most visits first: at most 50, then the rest summed as (other) */
  Browsers: {
    /** The value; `(other)` sums the values beyond the first 50 */
    Name: string;
    /** Visits with this value in the period */
    Visits: number;
  }[];
  /** Operating systems, most visits first: at most 50, then the rest summed as (other) */
  OperatingSystems: {
    /** The value; `(other)` sums the values beyond the first 50 */
    Name: string;
    /** Visits with this value in the period */
    Visits: number;
  }[];
  /** Device classes: desktop, mobile, tablet, bot, other, most visits first: at most 50, then the rest summed as (other) */
  Devices: {
    /** The value; `(other)` sums the values beyond the first 50 */
    Name: string;
    /** Visits with this value in the period */
    Visits: number;
  }[];
}

/** One counted visit, reduced to its classes (never an address or a User-Agent) */
export interface VisitEventItem {
  /** The link visited */
  ShortCode: string;
  /** When the visit was counted (RFC 3339, UTC) */
  Time: string;
  /** Judged a bot by its User-Agent */
  Bot: boolean;
  /** Referrer host, (direct) without a Referer; empty with STATS=off */
  Referrer: string;
  /** ISO 3166 alpha-2, ZZ unknown; empty with STATS=off */
  Country: string;
  /** Browser class; empty with STATS=off */
  Browser: string;
  /** Operating system class; empty with STATS=off */
  OperatingSystem: string;
  /** desktop, mobile, tablet, bot or other; empty with STATS=off */
  Device: string;
}

/** A webhook registration, without its secret */
export interface Webhook {
  /** The webhook's id: wh_ and 24 hex digits */
  Id: string;
  /** Where events are POSTed */
  Url: string;
  /** The event types it receives */
  Events: string[];
  /** Creation time (UTC) */
  DateCreated: string;
}
