/**
 * Turns rows of an import file into links: finds the columns (in Shortlink's own export
 * layout, or in the layouts other shorteners export), then checks every value with the same
 * validators the API uses.
 *
 * Column names are compared ignoring case and everything but letters and digits, so
 * `Short URL`, `short_url` and `shortUrl` are one name.
 */
import { DomainError } from '../errors.ts';
import { parseMaxVisits, parseTags, parseTitle, TITLE_MAX } from '../links/link-details.ts';
import { parseRules, rulesJson } from '../links/rules.ts';
import { validateImportedShortcode } from '../links/shortcode.ts';
import { validateTargetUrl } from '../links/target-url.ts';

/** Which header names feed which field, most specific first. */
const ALIASES = {
  /** A bare shortcode. */
  shortCode: ['shortcode', 'short', 'keyword', 'address', 'slug', 'alias', 'backhalf', 'code'],
  /** A whole short URL, whose last path segment is the shortcode (Bitly's `link`). */
  shortUrl: ['shorturl', 'link', 'bitlink', 'shortlink', 'shortenedurl'],
  url: ['pointsto', 'longurl', 'url', 'target', 'destination', 'destinationurl', 'originalurl'],
  accesses: ['accesses', 'clicks', 'visits', 'visitcount', 'visitscount', 'totalclicks', 'hits', 'visitssummarytotal'],
  dateCreated: ['datecreated', 'createdat', 'created', 'timestamp', 'creationdate', 'date'],
  /** YOURLS, Shlink and Bitly call it title; Kutt, description. */
  title: ['title', 'description'],
  /** An array (JSON), or text: tags separated by commas, `|` (Shlink's CSV) or semicolons. */
  tags: ['tags', 'tag', 'labels'],
  /** Shlink keeps it in `meta.validUntil`; Kutt calls it `expire_in`. */
  expiresAt: ['expiresat', 'expires', 'expiration', 'expirationdate', 'validuntil', 'metavaliduntil', 'expirein'],
  maxVisits: ['maxvisits', 'visitlimit', 'metamaxvisits'],
  /** The domain's host (ours `Domain`, Shlink's `domain`); without one, a short URL's host. */
  domain: ['domain', 'shortdomain', 'domainname'],
  /** Ours `ForwardQuery`, Shlink's `forwardQuery`. */
  forwardQuery: ['forwardquery'],
  /** Ours: the JSON LinkDetails shows (`[{"If", "To"}]`), or the `rules` parameter's (`[{"if", "to"}]`). */
  rules: ['rules', 'redirectrules'],
  /** Kutt marks links an admin took down: they are not brought back. */
  banned: ['banned'],
  /**
   * Password-protected links (ours `Protected`, Kutt's): no export carries a password, so
   * they would open to anyone and are refused.
   */
  passwordProtected: ['protected', 'password', 'passwordprotected'],
} as const;

export type ImportField = keyof typeof ALIASES;

/**
 * The most characters one row (a CSV record, a JSON line) may hold. A link is at most a
 * 2,000-character target and a 2,000-character code, with a few dates and counts; even written
 * with JSON's six-character escapes and another shortener's extra columns it fits many times
 * over. A longer row is refused without being kept, so that one endless line cannot fill
 * memory.
 */
export const MAX_ROW_LENGTH = 65_536;

/** The header name used for each field; `url` is the one that must be there. */
export type ColumnMap = { readonly [F in ImportField]?: string } & { readonly url: string };

export function normaliseName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** The layouts we recognise, for the report: which tool most likely wrote the file. */
export function layoutName(headers: readonly string[]): string {
  const names = new Set(headers.map(normaliseName));
  const has = (...wanted: string[]) => wanted.every((name) => names.has(name));
  if (has('shortcode', 'pointsto')) return 'Shortlink';
  if (has('shortcode', 'longurl')) return 'Shlink';
  if (has('keyword', 'url')) return 'YOURLS';
  if (has('address', 'target')) return 'Kutt';
  if (has('link', 'longurl')) return 'Bitly';
  return 'generic';
}

/**
 * Finds the column of each field among the headers, or explains what is missing. A file
 * with a shortcode column and a short-URL column (Shlink's) takes the shortcode column.
 */
export function detectColumns(headers: readonly string[]): ColumnMap | string {
  const byName = new Map<string, string>();
  for (const header of headers) {
    const name = normaliseName(header);
    if (name !== '' && !byName.has(name)) byName.set(name, header);
  }
  const map: Partial<Record<ImportField, string>> = {};
  for (const [field, aliases] of Object.entries(ALIASES) as [ImportField, readonly string[]][]) {
    for (const alias of aliases) {
      const header = byName.get(alias);
      if (header !== undefined && !Object.values(map).includes(header)) {
        map[field] = header;
        break;
      }
    }
  }
  if (map.url === undefined) {
    return `no column holds the target URL (looked for ${ALIASES.url.join(', ')}; found ${headers.map((h) => JSON.stringify(h)).join(', ') || 'none'})`;
  }
  return map as ColumnMap;
}

/** Describes the mapping for the report, e.g. `shortcode ← keyword, url ← url, accesses ← clicks`. */
export function describeColumns(map: ColumnMap, domain?: string | null): string {
  const parts: string[] = [];
  if (map.shortCode !== undefined) parts.push(`shortcode ← ${map.shortCode}`);
  else if (map.shortUrl !== undefined) parts.push(`shortcode ← last segment of ${map.shortUrl}`);
  else parts.push('shortcodes generated');
  parts.push(`url ← ${map.url}`);
  parts.push(map.accesses === undefined ? 'accesses 0' : `accesses ← ${map.accesses}`);
  parts.push(map.dateCreated === undefined ? 'date created now' : `date created ← ${map.dateCreated}`);
  if (map.title !== undefined) parts.push(`title ← ${map.title}`);
  if (map.tags !== undefined) parts.push(`tags ← ${map.tags}`);
  if (map.expiresAt !== undefined) parts.push(`expires ← ${map.expiresAt}`);
  if (map.maxVisits !== undefined) parts.push(`visit limit ← ${map.maxVisits}`);
  if (domain !== undefined) parts.push(`domain ${domain ?? 'the default'} (--domain)`);
  else if (map.domain !== undefined) parts.push(`domain ← ${map.domain}`);
  else if (map.shortUrl !== undefined) parts.push(`domain ← host of ${map.shortUrl}`);
  if (map.forwardQuery !== undefined) parts.push(`forward query ← ${map.forwardQuery}`);
  if (map.rules !== undefined) parts.push(`rules ← ${map.rules}`);
  return parts.join(', ');
}

export interface RowRules {
  /** The service's own origin (from BASE_URL): links back to it are refused, as by the API. */
  readonly ownOrigin: string;
  readonly blockedHosts: readonly string[];
  /** Other names the service answers to (SELF_HOSTS); absent: none. */
  readonly selfHosts?: readonly string[];
  /** DateCreated for rows that carry none. */
  readonly now: string;
  /** The default domain's host (BASE_URL's): a row naming it is on the default domain. */
  readonly defaultHost?: string;
  /** Every row's domain instead of the file's (`import --domain`); null: the default domain. */
  readonly domain?: string | null;
}

export interface CheckedRow {
  /** Undefined when the row names none: one is generated. */
  readonly shortCode: string | undefined;
  readonly pointsTo: string;
  readonly accesses: number;
  readonly dateCreated: string;
  readonly title: string | null;
  readonly tags: readonly string[];
  /** Kept as the file has it, even when past: an exported expired link stays expired. */
  readonly expiresAt: string | null;
  readonly maxVisits: number | null;
  /** The host of the link's domain, or null for the default domain. */
  readonly domain: string | null;
  /** Undefined when the file says nothing: the link does not forward. */
  readonly forwardQuery: boolean;
  /** As stored (rules.ts rulesJson), or null for none. */
  readonly rules: string | null;
}

export type RowResult = { readonly ok: true; readonly row: CheckedRow } | { readonly ok: false; readonly reason: string };

/** Checks one row (values looked up by header name) and returns the link it describes. */
export function checkRow(get: (header: string) => unknown, map: ColumnMap, rules: RowRules): RowResult {
  const text = (header: string | undefined): string => {
    if (header === undefined) return '';
    const value = get(header);
    if (value === undefined || value === null) return '';
    if (typeof value === 'string') {
      // A JSON escape can make a lone surrogate ("\ud800"), which would become U+FFFD.
      if (!value.isWellFormed()) throw new NotText(`the value of "${header}" is not well-formed Unicode text (it holds a lone surrogate)`);
      return value.trim();
    }
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    // An object or array in a JSON row (`{"toString": "x"}` would even make String() throw).
    throw new NotText(`the value of "${header}" is not text but ${Array.isArray(value) ? 'an array' : 'an object'}`);
  };
  try {
    const url = text(map.url);
    if (url === '') return { ok: false, reason: 'the url is empty' };
    const pointsTo = validateTargetUrl(url, rules.ownOrigin, rules.blockedHosts, rules.selfHosts);

    let code = text(map.shortCode);
    if (code === '' && map.shortUrl !== undefined) code = shortCodeOfUrl(text(map.shortUrl));
    const shortCode = code === '' ? undefined : validateImportedShortcode(code);

    let domain: string | null;
    if (rules.domain !== undefined) {
      domain = rules.domain;
    } else {
      const raw = map.domain !== undefined ? text(map.domain) : map.shortUrl !== undefined ? hostOfShortUrl(text(map.shortUrl)) : '';
      const host = raw === '' ? '' : hostOf(raw);
      if (host === undefined) return { ok: false, reason: `the domain ${JSON.stringify(raw)} is not a host name` };
      domain = host === '' || host === rules.defaultHost ? null : host;
    }
    const forwardQuery = readFlag(text(map.forwardQuery));
    if (forwardQuery === undefined) return { ok: false, reason: `forwardQuery must be true or false, got ${JSON.stringify(text(map.forwardQuery))}` };
    const ruleValue = map.rules === undefined ? undefined : get(map.rules);
    const storedRules = ruleValue === undefined || ruleValue === null || ruleValue === ''
      ? null
      : rulesJson(parseRules(
        ruleInput(ruleValue),
        (url) => validateTargetUrl(url, rules.ownOrigin, rules.blockedHosts, rules.selfHosts),
      ));

    if (isSet(text(map.banned))) return { ok: false, reason: 'the link is marked banned in the file (taken down by the other service)' };
    if (isSet(text(map.passwordProtected))) {
      return {
        ok: false,
        reason: 'the link is password-protected in the file, and no export carries its password, so it would open to anyone; ' +
          'create it again with a new password (shortlink shorten --password-file)',
      };
    }

    const accesses = parseAccesses(text(map.accesses));
    if (accesses === undefined) return { ok: false, reason: `accesses must be a whole number ≥ 0, got ${JSON.stringify(text(map.accesses))}` };

    const rawDate = text(map.dateCreated);
    let dateCreated = rules.now;
    if (rawDate !== '') {
      const date = readDate(rawDate);
      if (!date.ok) return { ok: false, reason: `the date created ${JSON.stringify(rawDate)} ${date.reason}` };
      dateCreated = date.iso;
    }

    // The details, by the API's rules (a title like `title`, tags like `tags`, a limit
    // like `max_visits`), except that an expiry may be past: the link comes back expired.
    const title = parseTitle(foreignTitle(text(map.title)));
    const tags = parseTags(tagText(map.tags === undefined ? undefined : get(map.tags)));
    const rawExpiry = text(map.expiresAt);
    let expiresAt: string | null = null;
    if (rawExpiry !== '') {
      const date = readDate(rawExpiry);
      if (!date.ok) return { ok: false, reason: `the expiry ${JSON.stringify(rawExpiry)} ${date.reason}` };
      expiresAt = date.iso;
    }
    const rawLimit = text(map.maxVisits);
    const maxVisits = rawLimit === '' || rawLimit === '0' ? null : parseMaxVisits(rawLimit);

    return {
      ok: true,
      row: { shortCode, pointsTo, accesses, dateCreated, title, tags, expiresAt, maxVisits, domain, forwardQuery, rules: storedRules },
    };
  } catch (error) {
    if (error instanceof DomainError || error instanceof NotText) return { ok: false, reason: error.message };
    throw error;
  }
}

/** A JSON row's value that is an object or an array where text or a number belongs. */
class NotText extends Error {}

/**
 * A title from another shortener, made to fit ours: YOURLS and Bitly keep the whole page
 * title, which may be longer than 200 characters or hold line breaks. Control characters
 * become spaces and the title is cut to 200 code points, rather than the link left out.
 */
function foreignTitle(raw: string): string {
  // eslint-disable-next-line no-control-regex -- replacing control characters is the point
  const clean = raw.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/gu, ' ').trim();
  return [...clean].slice(0, TITLE_MAX).join('').trimEnd();
}

/** Tags as the API takes them (comma-separated), from a JSON array or `a|b`, `a;b`, `a, b` text. */
function tagText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map((tag) => (typeof tag === 'string' ? tag : JSON.stringify(tag))).join(',');
  return (typeof value === 'string' ? value : String(value)).split(/[,|;]/).map((tag) => tag.trim()).filter((tag) => tag !== '').join(',');
}

/**
 * A domain's host as a file names it (`go.example.com`, `GO.example.com:443`,
 * `https://go.example.com/`): lower case, punycode, without a port; undefined for text that
 * names no host ('' for none).
 */
export function hostOf(raw: string): string | undefined {
  const parsed = URL.parse(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw}`);
  if (parsed === null || parsed.hostname === '' || parsed.username !== '' || parsed.password !== '') return undefined;
  if (parsed.pathname !== '/' || parsed.search !== '' || parsed.hash !== '') return undefined;
  const host = parsed.hostname.replace(/\.$/, '');
  return /^[a-z0-9.-]+$/.test(host) ? host : undefined;
}

/** The host of a short URL (`https://go.example.com/abc`, `bit.ly/abc`), or '' when it has none. */
function hostOfShortUrl(shortUrl: string): string {
  if (shortUrl === '') return '';
  const parsed = URL.parse(/^[a-z][a-z0-9+.-]*:\/\//i.test(shortUrl) ? shortUrl : `https://${shortUrl}`);
  return parsed === null ? '' : parsed.host;
}

/** A boolean column: empty is false (the default); true/false, 1/0, yes/no in any case. */
function readFlag(raw: string): boolean | undefined {
  if (/^(|false|0|no)$/i.test(raw)) return false;
  if (/^(true|1|yes)$/i.test(raw)) return true;
  return undefined;
}

/**
 * Rules as `parseRules` takes them: the JSON text or array of a file, with LinkDetails'
 * `If`/`To` keys (our export) read as the parameter's `if`/`to`.
 */
function ruleInput(value: unknown): unknown {
  let rules = value;
  if (typeof value === 'string') {
    try {
      rules = JSON.parse(value);
    } catch {
      return value;
    }
  }
  if (!Array.isArray(rules)) return rules;
  return rules.map((rule: unknown) => {
    if (rule === null || typeof rule !== 'object' || Array.isArray(rule)) return rule;
    const { If, To, ...rest } = rule as Record<string, unknown>;
    return { ...rest, ...(If === undefined ? {} : { if: If }), ...(To === undefined ? {} : { to: To }) };
  });
}

/** `https://bit.ly/3xYzAbc` or `bit.ly/3xYzAbc` → `3xYzAbc`. */
export function shortCodeOfUrl(shortUrl: string): string {
  if (shortUrl === '') return '';
  const parsed = URL.parse(/^[a-z][a-z0-9+.-]*:\/\//i.test(shortUrl) ? shortUrl : `https://${shortUrl}`);
  if (parsed === null) return shortUrl;
  const segments = parsed.pathname.split('/').filter((segment) => segment !== '');
  const last = segments.at(-1) ?? '';
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

function parseAccesses(raw: string): number | undefined {
  if (raw === '') return 0;
  if (!/^\d+$/.test(raw)) return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** A flag column: empty, `false`, `0`, `no` or null are unset; anything else is set. */
function isSet(value: string): boolean {
  return !/^(|false|0|no|null)$/i.test(value);
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(?: ?(Z|[+-]\d{2}(?::?\d{2})?))?)?$/i;
const HTTP_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}(?::\d{2})? (?:GMT|UTC|[+-]\d{4})$/;
/** Day and month in either order before the year: 03/15/2024, 15.03.2024, 3-4-24. */
const NUMERIC_DATE = /^\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}(?:[ T,]|$)/;
const ISO_EXAMPLE = 'e.g. 2024-03-15T09:30:00Z';

export type DateResult = { readonly ok: true; readonly iso: string } | { readonly ok: false; readonly reason: string };

/**
 * Reads a creation date in the forms the layouts use, never guessing:
 * - ISO 8601 / RFC 3339 with `Z` or an offset (ours, Shlink, Kutt, Bitly's `+0000`);
 * - `YYYY-MM-DD HH:MM[:SS]` or `YYYY-MM-DD` without an offset (YOURLS, Kutt on SQLite), taken
 *   as UTC;
 * - Unix time in seconds (9-11 digits) or milliseconds (12-13 digits);
 * - an HTTP date (`Tue, 14 Nov 2023 22:13:20 GMT`).
 * Day-month-year forms like `03/15/2024` or `15/03/2024` are refused as ambiguous (which is
 * the month?) even where one reading is impossible, so that a file is read one way throughout.
 */
export function readDate(raw: string): DateResult {
  const value = raw.trim();
  if (/^\d{9,13}$/.test(value)) {
    const number = Number(value);
    return dateOf(value.length <= 11 ? number * 1000 : number);
  }
  const iso = ISO_DATE.exec(value);
  if (iso !== null) {
    const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', offset = 'Z'] = iso;
    // Date.parse would roll 2024-02-30 over into March: the fields are checked first.
    const fields = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second));
    const check = new Date(fields);
    if (
      check.getUTCFullYear() !== Number(year) || check.getUTCMonth() !== Number(month) - 1 || check.getUTCDate() !== Number(day) ||
      check.getUTCHours() !== Number(hour) || check.getUTCMinutes() !== Number(minute) || check.getUTCSeconds() !== Number(second)
    ) {
      return { ok: false, reason: `is not a real date or time (${ISO_EXAMPLE})` };
    }
    const zone = /^z$/i.test(offset) ? 'Z' : `${offset.slice(0, 3)}:${offset.slice(3).replace(':', '') || '00'}`;
    return dateOf(Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${second}${fraction.slice(0, 4)}${zone}`));
  }
  if (HTTP_DATE.test(value)) return dateOf(Date.parse(value));
  if (NUMERIC_DATE.test(value)) {
    return { ok: false, reason: `is ambiguous (month/day or day/month?) and is not guessed: write it as ISO 8601, ${ISO_EXAMPLE}` };
  }
  return { ok: false, reason: `is not a date this import reads: use ISO 8601 (${ISO_EXAMPLE}), YYYY-MM-DD HH:MM:SS in UTC, or Unix time` };
}

function dateOf(time: number): DateResult {
  const date = new Date(time);
  return Number.isNaN(date.getTime()) ? { ok: false, reason: 'is out of range' } : { ok: true, iso: date.toISOString() };
}

/** {@link readDate}'s ISO 8601 form in UTC, or undefined when it refuses the text. */
export function parseDate(raw: string): string | undefined {
  const date = readDate(raw);
  return date.ok ? date.iso : undefined;
}
