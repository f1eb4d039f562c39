/**
 * The only reader of `process.env`. Every variable is parsed and checked here, all problems
 * are reported together, and the result is frozen so nothing downstream can drift from it.
 */
import { accessSync, constants, existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { dirname, resolve, sep } from 'node:path';
import { parseHostEntry } from './links/host-rules.ts';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type SqliteSynchronous = 'normal' | 'full';
/** The statuses a short URL may answer with; 302 unless REDIRECT_STATUS says otherwise. */
export type RedirectStatus = 301 | 302 | 307 | 308;

export type StorageConfig =
  | { readonly kind: 'sqlite'; readonly path: string; readonly synchronous: SqliteSynchronous }
  | {
      readonly kind: 'postgres';
      readonly url: string;
      /** Most connections one process opens (PG_POOL_MAX); further queries wait for one. */
      readonly poolMax: number;
      /**
       * Named prepared statements (PG_PREPARE). False behind a pooler in transaction mode
       * (PgBouncer before 1.21), where the next transaction may run on another server connection.
       */
      readonly prepare: boolean;
    };

/** At most `limit` events per `windowMs` for one key (client address or account). */
export interface RateLimitPolicy {
  readonly limit: number;
  readonly windowMs: number;
}

export interface RateLimitPolicies {
  /** Account creation, per client address. */
  readonly newAccount: RateLimitPolicy;
  /** Failed authentications, per client address. */
  readonly failedAuth: RateLimitPolicy;
  /** Link creation, per account. */
  readonly createLink: RateLimitPolicy;
  /** Resolutions and redirects, per client address. */
  readonly resolve: RateLimitPolicy;
  /** Webhook registrations, per account (each may resolve a name for the SSRF check). */
  readonly createWebhook: RateLimitPolicy;
  /** Lookups of shortcodes that do not exist, per client address (anti-enumeration). */
  readonly unknownCode: RateLimitPolicy;
}

/** Typed, validated configuration of one Shortlink process. */
export interface Config {
  readonly port: number;
  readonly host: string;
  /** Public address without a trailing slash; short URLs are `${baseUrl}/${code}`. */
  readonly baseUrl: string;
  /** False when BASE_URL was unset and `baseUrl` is the `http://localhost:$PORT` default. */
  readonly baseUrlSet: boolean;
  readonly storage: StorageConfig;
  readonly redisUrl: string | undefined;
  /** Prefix of every Redis key this deployment writes, so deployments can share a server. */
  readonly redisPrefix: string;
  readonly defaultMaxLinks: number;
  readonly rateLimit: boolean;
  readonly rateLimitPolicies: RateLimitPolicies;
  /** Client addresses never rate limited (none by default). */
  readonly rateLimitExempt: readonly string[];
  /**
   * IPv6 clients are counted per network of this many leading bits (64: one budget per /64,
   * what every home or cloud customer holds); IPv4 clients per address.
   */
  readonly rateLimitIpv6Prefix: number;
  /**
   * Fastify's trustProxy: false (X-Forwarded-For ignored), or the proxies (addresses, CIDRs or
   * proxy-addr's names `loopback`, `linklocal`, `uniquelocal`) whose X-Forwarded-For entries
   * are believed; the client is the right-most address no trusted proxy could have written.
   * `TRUST_PROXY=true` is the private ranges (TRUST_PROXY_PRIVATE). Never Fastify's `true`,
   * which takes the left-most entry, written by the client. No hop count either: Fastify 5
   * ignores one (it cannot tell a proxy from a client that forged the header).
   */
  readonly trustProxy: false | readonly string[];
  /**
   * Targets refused at link creation, in canonical form (see parseHostEntry): host names
   * (subdomains included, punycode), IPv4/IPv6 addresses and CIDR ranges.
   */
  readonly blockedHosts: readonly string[];
  /** Other host names or addresses the service answers to (SELF_HOSTS): targets there would loop. */
  readonly selfHosts: readonly string[];
  /** Server processes to run on this machine (node:cluster) sharing one database. */
  readonly workers: number;
  readonly logLevel: LogLevel;
  /** Status of the redirect a short URL answers (`GET /{shortcode}`). */
  readonly redirectStatus: RedirectStatus;
  /** Bearer token `/metrics` requires; open to anyone who can reach it when undefined. */
  readonly metricsToken: string | undefined;
  /** Whole seconds allowed for shutdown before the process gives up waiting. */
  readonly shutdownTimeoutMs: number;
  /** TCP connections held at once (`MAX_CONNECTIONS`); more are refused. */
  readonly maxConnections: number;
  /**
   * Milliseconds between SIGTERM and closing the listener (`SHUTDOWN_DELAY`): `/readyz`
   * answers 503 at once while every request is still served, so load balancers stop routing
   * here before connections are refused. The shutdown deadline counts after it.
   */
  readonly shutdownDelayMs: number;
  /**
   * Milliseconds a storage call may take (`STORAGE_TIMEOUT`, default 5 s): past it the call
   * fails as storage unavailable (503 with Retry-After), and a whole request is cut a second
   * later whatever it waits for.
   */
  readonly storageTimeoutMs: number;
  /** REGISTRATION: false (closed) refuses `new_account`; operators create accounts with the CLI. */
  readonly registrationOpen: boolean;
  /** ADMIN_TOKEN: the Bearer token of `/v1/admin/…`; those routes do not exist when undefined. */
  readonly adminToken: string | undefined;
  /** Which other origins' pages may call the API from a browser (`CORS_ORIGINS`); none by default. */
  readonly cors: CorsConfig;
  /** Record visit statistics (`STATS`, default on; CONTRACT §7.4). */
  readonly stats: boolean;
  /** Days hourly statistics are kept before they are folded into days (`STATS_HOURLY_DAYS`, default 90). */
  readonly statsHourlyDays: number;
  /**
   * WEBHOOK_SECRET_KEY: the key webhook signing secrets are encrypted with at rest (ADR 21);
   * when undefined, webhooks still work and their secrets are stored readable.
   */
  readonly webhookSecretKey: string | undefined;
  /** WEBHOOK_ALLOW_PRIVATE=true: webhook targets on loopback, private and link-local addresses are allowed (tests, closed networks). */
  readonly webhookAllowPrivate: boolean;
}

/**
 * `CORS_ORIGINS`: comma-separated origins whose pages may call every `/v1/…` endpoint (with an
 * access code, which travels in a header, never in a cookie), and/or `*`: any origin, for the
 * public read-only endpoints only (resolve, the OpenAPI document).
 */
export interface CorsConfig {
  /** Exact origins (`https://app.example.com`, `chrome-extension://<id>`), lower case, no trailing slash. */
  readonly origins: readonly string[];
  /** `*` was listed: any origin may read the public endpoints. */
  readonly anyForPublic: boolean;
}

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`Unable to start: ${problems.join('; ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Documented in docs/api.md ("Rate limits"); each can be overridden as `N/<seconds>s|m|h`. */
export const DEFAULT_RATE_LIMIT_POLICIES: RateLimitPolicies = {
  newAccount: { limit: 20, windowMs: 3_600_000 },
  failedAuth: { limit: 30, windowMs: 600_000 },
  createLink: { limit: 60, windowMs: 60_000 },
  resolve: { limit: 1200, windowMs: 60_000 },
  unknownCode: { limit: 60, windowMs: 60_000 },
  // An account holds at most 5 webhooks, so 20 an hour leaves room to fix a mistyped URL
  // several times over, while bounding the DNS lookups one account can make us do.
  createWebhook: { limit: 20, windowMs: 3_600_000 },
};

const RATE_VARIABLES: Readonly<Record<keyof RateLimitPolicies, string>> = {
  newAccount: 'RATE_LIMIT_NEW_ACCOUNT',
  failedAuth: 'RATE_LIMIT_FAILED_AUTH',
  createLink: 'RATE_LIMIT_CREATE_LINK',
  resolve: 'RATE_LIMIT_RESOLVE',
  unknownCode: 'RATE_LIMIT_UNKNOWN_CODE',
  createWebhook: 'RATE_LIMIT_CREATE_WEBHOOK',
};

/**
 * What `TRUST_PROXY=true` trusts: proxies on loopback and private networks, as a service
 * behind a same-host, Docker or Kubernetes proxy sees them. A client on such a network can
 * still write its own address; list the proxies exactly when clients reach it from there.
 */
export const TRUST_PROXY_PRIVATE: readonly string[] = Object.freeze(['loopback', 'linklocal', 'uniquelocal']);
const PROXY_RANGE_NAMES: readonly string[] = TRUST_PROXY_PRIVATE;

/** True for an address or CIDR proxy-addr accepts (it would throw at start otherwise). */
function isProxyEntry(entry: string): boolean {
  if (PROXY_RANGE_NAMES.includes(entry)) return true;
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return parseInteger(bits, 0, family === 4 ? 32 : 128) !== undefined;
}

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000 };

function parseRate(raw: string): RateLimitPolicy | undefined {
  const match = /^(\d+)\s*\/\s*(\d*)\s*([smh])$/i.exec(raw);
  if (!match) return undefined;
  const limit = Number(match[1]);
  const windowMs = Number(match[2] || '1') * UNIT_MS[match[3]!.toLowerCase()]!;
  return limit >= 1 && windowMs >= 1000 && Number.isSafeInteger(limit) ? { limit, windowMs } : undefined;
}

const REDIRECT_STATUSES: readonly RedirectStatus[] = [301, 302, 307, 308];
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const DEFAULT_SQLITE_PATH = './data/shortlinks.db';

type Env = Readonly<Record<string, string | undefined>>;

/** Quotes a raw value for a problem message, escaping line breaks so the message stays one line. */
function quote(value: string): string {
  return JSON.stringify(value).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

function parseInteger(raw: string, min: number, max: number): number | undefined {
  if (!/^\d+$/.test(raw)) return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) && value >= min && value <= max ? value : undefined;
}

/**
 * Milliseconds from `1500ms`, `5s`, `1m` or `0`; undefined if malformed or above `maxMs`. A
 * bare number other than 0 is refused: `5` could mean either unit.
 */
function parseDuration(raw: string, maxMs: number): number | undefined {
  const match = /^(\d+)\s*(ms|s|m)?$/i.exec(raw);
  if (!match || (match[2] === undefined && Number(match[1]) !== 0)) return undefined;
  const unit = (match[2] ?? 'ms').toLowerCase();
  const value = Number(match[1]) * (unit === 'ms' ? 1 : UNIT_MS[unit]!);
  return Number.isSafeInteger(value) && value <= maxMs ? value : undefined;
}

/** Parses the environment into a Config, or throws a ConfigError naming every problem. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const text = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === '' ? undefined : value;
  };

  let port = 8080;
  const rawPort = text('PORT');
  if (rawPort !== undefined) {
    const parsed = parseInteger(rawPort, 0, 65535);
    if (parsed === undefined) problems.push(`PORT must be an integer from 0 to 65535, got ${quote(rawPort)}`);
    else port = parsed;
  }

  const host = text('HOST') ?? '0.0.0.0';

  let baseUrl = `http://localhost:${port}`;
  const rawBase = text('BASE_URL');
  if (rawBase !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(rawBase);
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.host === '') {
      problems.push(`BASE_URL must be an absolute http(s) URL, got ${quote(rawBase)}`);
    } else if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
      problems.push(`BASE_URL must not carry a query, fragment or credentials, got ${quote(rawBase)}`);
    } else {
      baseUrl = rawBase.replace(/\/+$/, '');
    }
  }

  const rawDatabase = text('DATABASE_URL') ?? DEFAULT_SQLITE_PATH;
  let synchronous: SqliteSynchronous = 'normal';
  const rawSync = text('SQLITE_SYNCHRONOUS');
  if (rawSync !== undefined) {
    const lower = rawSync.toLowerCase();
    if (lower === 'normal' || lower === 'full') synchronous = lower;
    else problems.push(`SQLITE_SYNCHRONOUS must be "normal" or "full", got ${quote(rawSync)}`);
  }
  let poolMax = 10;
  const rawPoolMax = text('PG_POOL_MAX');
  if (rawPoolMax !== undefined) {
    const parsed = parseInteger(rawPoolMax, 1, 1000);
    if (parsed === undefined) problems.push(`PG_POOL_MAX must be an integer from 1 to 1000, got ${quote(rawPoolMax)}`);
    else poolMax = parsed;
  }
  let prepare = true;
  const rawPrepare = text('PG_PREPARE');
  if (rawPrepare !== undefined) {
    const lower = rawPrepare.toLowerCase();
    if (lower === 'true' || lower === 'false') prepare = lower === 'true';
    else problems.push(`PG_PREPARE must be "true" or "false", got ${quote(rawPrepare)}`);
  }
  let storage: StorageConfig;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(rawDatabase)?.[1]?.toLowerCase();
  if (scheme === 'postgres' || scheme === 'postgresql') {
    storage = { kind: 'postgres', url: rawDatabase, poolMax, prepare };
  } else if (scheme !== undefined && scheme !== 'sqlite') {
    // A typo (`postgress://`) or another engine (`mysql://`) would otherwise become a new,
    // empty SQLite file named like the URL. Only the scheme is echoed: the rest may hold a password.
    problems.push(`DATABASE_URL must start with postgres://, postgresql:// or sqlite:, or be a SQLite file path, got a ${quote(`${scheme}://`)} URL`);
    storage = { kind: 'sqlite', path: DEFAULT_SQLITE_PATH, synchronous };
  } else {
    const path = rawDatabase.replace(/^sqlite:(\/\/)?/i, '');
    if (path === '') problems.push('DATABASE_URL names no SQLite file');
    storage = { kind: 'sqlite', path, synchronous };
  }

  const redisPrefix = text('REDIS_PREFIX') ?? 'shortlink:';
  const redisUrl = text('REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:\/\//i.test(redisUrl)) {
    problems.push(`REDIS_URL must start with redis:// or rediss://, got ${quote(redisUrl)}`);
  }

  let defaultMaxLinks = 20;
  const rawMax = text('DEFAULT_MAX_LINKS');
  if (rawMax !== undefined) {
    const parsed = parseInteger(rawMax, 0, 1_000_000_000);
    if (parsed === undefined) problems.push(`DEFAULT_MAX_LINKS must be a non-negative integer, got ${quote(rawMax)}`);
    else defaultMaxLinks = parsed;
  }

  let rateLimit = true;
  const rawRate = text('RATE_LIMIT')?.toLowerCase();
  if (rawRate !== undefined) {
    if (rawRate === 'off' || rawRate === 'false' || rawRate === '0') rateLimit = false;
    else if (rawRate === 'on' || rawRate === 'true' || rawRate === '1') rateLimit = true;
    else problems.push(`RATE_LIMIT must be "on" or "off", got ${quote(rawRate)}`);
  }

  const rateLimitPolicies = { ...DEFAULT_RATE_LIMIT_POLICIES };
  for (const [key, variable] of Object.entries(RATE_VARIABLES) as [keyof RateLimitPolicies, string][]) {
    const raw = text(variable);
    if (raw === undefined) continue;
    const parsed = parseRate(raw);
    if (parsed === undefined) problems.push(`${variable} must look like 100/1m (a count per s, m or h), got ${quote(raw)}`);
    else rateLimitPolicies[key] = parsed;
  }
  // Nobody by default: a reverse proxy on this host connects over loopback, and exempting
  // loopback would exempt every client behind it.
  const rateLimitExempt = (text('RATE_LIMIT_EXEMPT') ?? '').split(',').map((a) => a.trim()).filter(Boolean);

  let rateLimitIpv6Prefix = 64;
  const rawPrefix = text('RATE_LIMIT_IPV6_PREFIX');
  if (rawPrefix !== undefined) {
    const parsed = parseInteger(rawPrefix.replace(/^\//, ''), 1, 128);
    if (parsed === undefined) problems.push(`RATE_LIMIT_IPV6_PREFIX must be a prefix length from 1 to 128, got ${quote(rawPrefix)}`);
    else rateLimitIpv6Prefix = parsed;
  }

  let trustProxy: false | readonly string[] = false;
  const rawTrust = text('TRUST_PROXY');
  if (rawTrust !== undefined) {
    const lower = rawTrust.toLowerCase();
    if (lower === 'true' || lower === 'on') trustProxy = TRUST_PROXY_PRIVATE;
    else if (lower === 'false' || lower === 'off') trustProxy = false;
    // A bare number was once a hop count; Fastify now ignores those, so refuse it rather than
    // start with X-Forwarded-For silently unused.
    else if (/^\d+$/.test(lower)) problems.push(`TRUST_PROXY hop counts are not supported; list the proxies' addresses/CIDRs or use true, got ${quote(rawTrust)}`);
    else {
      const entries = lower.split(',').map((a) => a.trim()).filter(Boolean);
      const bad = entries.filter((entry) => !isProxyEntry(entry));
      if (bad.length === 0 && entries.length > 0) trustProxy = entries;
      else problems.push(`TRUST_PROXY must be true, false or a list of the proxies' addresses/CIDRs, got ${quote(rawTrust)}`);
    }
  }

  const blockedHosts: string[] = [];
  const addBlocked = (list: string, source: string) => {
    for (const item of list.split(/[\s,]+/)) {
      if (item === '') continue;
      const entry = parseHostEntry(item, { range: true });
      // An entry that can never match would leave the operator believing a host is blocked.
      if (typeof entry === 'string') blockedHosts.push(entry);
      else problems.push(`${source} entry ${quote(item)} ${entry.problem}`);
    }
  };
  const rawBlocked = text('BLOCKED_HOSTS');
  if (rawBlocked !== undefined) addBlocked(rawBlocked, 'BLOCKED_HOSTS');
  const blockedFile = text('BLOCKED_HOSTS_FILE');
  if (blockedFile !== undefined) {
    try {
      addBlocked(readFileSync(blockedFile, 'utf8').replace(/#.*$/gm, ''), 'BLOCKED_HOSTS_FILE');
    } catch (error) {
      problems.push(`BLOCKED_HOSTS_FILE cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): ${quote(blockedFile)}`);
    }
  }

  const selfHosts: string[] = [];
  for (const item of (text('SELF_HOSTS') ?? '').split(/[\s,]+/)) {
    if (item === '') continue;
    const entry = parseHostEntry(item, { range: false });
    if (typeof entry === 'string') selfHosts.push(entry);
    else problems.push(`SELF_HOSTS entry ${quote(item)} ${entry.problem}`);
  }

  let workers = 1;
  const rawWorkers = text('WORKERS');
  if (rawWorkers !== undefined) {
    const parsed = parseInteger(rawWorkers, 1, 256);
    if (parsed === undefined) problems.push(`WORKERS must be an integer from 1 to 256, got ${quote(rawWorkers)}`);
    else workers = parsed;
  }

  let logLevel: LogLevel = 'info';
  const rawLevel = text('LOG_LEVEL')?.toLowerCase();
  if (rawLevel !== undefined) {
    if ((LOG_LEVELS as readonly string[]).includes(rawLevel)) logLevel = rawLevel as LogLevel;
    else problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${quote(rawLevel)}`);
  }

  let redirectStatus: RedirectStatus = 302;
  const rawRedirect = text('REDIRECT_STATUS');
  if (rawRedirect !== undefined) {
    const parsed = REDIRECT_STATUSES.find((status) => String(status) === rawRedirect);
    if (parsed === undefined) problems.push(`REDIRECT_STATUS must be one of ${REDIRECT_STATUSES.join(', ')}, got ${quote(rawRedirect)}`);
    else redirectStatus = parsed;
  }

  // A scraper's token travels in a header on every scrape: printable ASCII, and long enough
  // that guessing it is hopeless.
  const metricsToken = text('METRICS_TOKEN');
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,256}$/.test(metricsToken)) {
    problems.push('METRICS_TOKEN must be 16 to 256 printable ASCII characters without spaces');
  }

  let maxConnections = 10_000;
  const rawConnections = text('MAX_CONNECTIONS');
  if (rawConnections !== undefined) {
    const parsed = parseInteger(rawConnections, 1, 1_000_000);
    if (parsed === undefined) problems.push(`MAX_CONNECTIONS must be an integer from 1 to 1000000, got ${quote(rawConnections)}`);
    else maxConnections = parsed;
  }

  let shutdownDelayMs = 0;
  const rawDelay = text('SHUTDOWN_DELAY');
  if (rawDelay !== undefined) {
    const parsed = parseDuration(rawDelay, 600_000);
    if (parsed === undefined) problems.push(`SHUTDOWN_DELAY must be a duration up to 10 minutes, such as 5s or 5000ms, got ${quote(rawDelay)}`);
    else shutdownDelayMs = parsed;
  }

  let storageTimeoutMs = 5000;
  const rawStorageTimeout = text('STORAGE_TIMEOUT');
  if (rawStorageTimeout !== undefined) {
    const parsed = parseDuration(rawStorageTimeout, 600_000);
    // 0 would fail every call, and under 100 ms a busy moment would: neither can be meant.
    if (parsed === undefined || parsed < 100) {
      problems.push(`STORAGE_TIMEOUT must be a duration from 100ms to 10 minutes, such as 5s or 2500ms, got ${quote(rawStorageTimeout)}`);
    } else storageTimeoutMs = parsed;
  }

  let registrationOpen = true;
  const rawRegistration = text('REGISTRATION');
  if (rawRegistration !== undefined) {
    const lower = rawRegistration.toLowerCase();
    if (lower === 'open' || lower === 'closed') registrationOpen = lower === 'open';
    else problems.push(`REGISTRATION must be "open" or "closed", got ${quote(rawRegistration)}`);
  }

  // Whoever holds it can disable any account and take any link down: long enough that
  // guessing is hopeless, and printable so that it survives a header. Never echoed.
  const adminToken = text('ADMIN_TOKEN');
  if (adminToken !== undefined && !/^[\x21-\x7e]{32,256}$/.test(adminToken)) {
    problems.push(`ADMIN_TOKEN must be 32 to 256 printable ASCII characters without spaces (got ${adminToken.length} characters); generate one with: openssl rand -hex 32`);
  }

  const origins: string[] = [];
  let anyForPublic = false;
  for (const entry of (text('CORS_ORIGINS') ?? '').split(',').map((item) => item.trim()).filter((item) => item !== '')) {
    if (entry === '*') {
      anyForPublic = true;
      continue;
    }
    const origin = parseOrigin(entry);
    if (origin === undefined) {
      problems.push(`CORS_ORIGINS must list origins such as https://app.example.com (scheme and host, no path) or *, got ${quote(entry)}`);
    } else if (!origins.includes(origin)) origins.push(origin);
  }

  let stats = true;
  const rawStats = text('STATS')?.toLowerCase();
  if (rawStats !== undefined) {
    if (rawStats === 'off' || rawStats === 'false' || rawStats === '0') stats = false;
    else if (rawStats === 'on' || rawStats === 'true' || rawStats === '1') stats = true;
    else problems.push(`STATS must be "on" or "off", got ${quote(rawStats)}`);
  }

  let statsHourlyDays = 90;
  const rawHourlyDays = text('STATS_HOURLY_DAYS');
  if (rawHourlyDays !== undefined) {
    const parsed = parseInteger(rawHourlyDays, 1, 3650);
    if (parsed === undefined) problems.push(`STATS_HOURLY_DAYS must be a whole number of days from 1 to 3650, got ${quote(rawHourlyDays)}`);
    else statsHourlyDays = parsed;
  }

  // Encrypts the webhook signing secrets at rest; whoever holds it and the database can sign
  // as this service. Never echoed.
  const webhookSecretKey = text('WEBHOOK_SECRET_KEY');
  if (webhookSecretKey !== undefined && !/^[\x21-\x7e]{32,256}$/.test(webhookSecretKey)) {
    problems.push(`WEBHOOK_SECRET_KEY must be 32 to 256 printable ASCII characters without spaces (got ${webhookSecretKey.length} characters); generate one with: openssl rand -hex 32`);
  }
  let webhookAllowPrivate = false;
  const rawAllowPrivate = text('WEBHOOK_ALLOW_PRIVATE')?.toLowerCase();
  if (rawAllowPrivate !== undefined) {
    if (rawAllowPrivate === 'true' || rawAllowPrivate === '1') webhookAllowPrivate = true;
    else if (rawAllowPrivate === 'false' || rawAllowPrivate === '0') webhookAllowPrivate = false;
    else problems.push(`WEBHOOK_ALLOW_PRIVATE must be "true" or "false", got ${quote(rawAllowPrivate)}`);
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze({
    port,
    host,
    baseUrl,
    baseUrlSet: rawBase !== undefined,
    storage: Object.freeze(storage),
    redisUrl,
    redisPrefix,
    defaultMaxLinks,
    rateLimit,
    rateLimitPolicies: Object.freeze(rateLimitPolicies),
    rateLimitExempt: Object.freeze(rateLimitExempt),
    rateLimitIpv6Prefix,
    trustProxy: trustProxy === false ? false : Object.freeze([...trustProxy]),
    blockedHosts: Object.freeze(blockedHosts),
    selfHosts: Object.freeze(selfHosts),
    workers,
    logLevel,
    redirectStatus,
    metricsToken,
    shutdownTimeoutMs: 9000,
    maxConnections,
    shutdownDelayMs,
    storageTimeoutMs,
    cors: Object.freeze({ origins: Object.freeze(origins), anyForPublic }),
    stats,
    statsHourlyDays,
    registrationOpen,
    adminToken,
    webhookSecretKey,
    webhookAllowPrivate,
  });
}

/**
 * An origin as a browser sends it in `Origin`: scheme, host and port only. http(s) origins are
 * normalised by the WHATWG parser (default port dropped, host lower-cased); other schemes (a
 * browser extension's `chrome-extension://<id>`, `moz-extension://<uuid>`) are kept as written,
 * in lower case.
 */
function parseOrigin(raw: string): string | undefined {
  const entry = raw.replace(/\/$/, '');
  // Letters, digits, dots, hyphens; brackets and colons for an IPv6 address and a port. No
  // wildcard: a pattern of origins is no origin, and a `*` alone means something else.
  if (!/^[a-z][a-z0-9+.-]*:\/\/[a-z0-9.\-[\]:]+$/i.test(entry)) return undefined;
  const scheme = entry.slice(0, entry.indexOf(':')).toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return entry.toLowerCase();
  const url = URL.parse(entry);
  return url === null || url.origin === 'null' ? undefined : url.origin;
}

// Kernel views, not storage: SQLite there fails in odd ways (or, under /proc, retries forever).
const VIRTUAL_ROOTS = ['/proc', '/sys', '/dev'];

/**
 * Why the SQLite file the configuration names cannot be used, in one line, or undefined when
 * it can (or the store is PostgreSQL). A missing directory is refused, so a typo never starts
 * an empty database somewhere unexpected, except the default `./data/`, which the store creates.
 * Reads the file system: call it just before opening the store, not from loadConfig.
 */
export function checkStoragePlace(storage: StorageConfig): string | undefined {
  if (storage.kind !== 'sqlite' || storage.path === ':memory:') return undefined;
  const file = resolve(storage.path);
  const dir = dirname(file);
  if (!existsSync(dir)) {
    if (dir === dirname(resolve(DEFAULT_SQLITE_PATH))) return undefined;
    return `DATABASE_URL names a SQLite database in ${quote(dir)}, a directory that does not exist`;
  }
  const realDir = realpathSync(dir);
  if (!statSync(realDir).isDirectory()) return `DATABASE_URL names a SQLite database in ${quote(dir)}, which is not a directory`;
  if (VIRTUAL_ROOTS.some((root) => realDir === root || realDir.startsWith(root + sep))) {
    return `DATABASE_URL names a SQLite database under ${quote(realDir)}, a kernel file system where no database can live`;
  }
  try {
    if (existsSync(file)) {
      if (!statSync(file).isFile()) return `DATABASE_URL names ${quote(file)}, which is not a regular file (a database must be one)`;
      accessSync(file, constants.R_OK | constants.W_OK);
    }
    // The -wal and -shm files beside it are created even when the database file exists.
    accessSync(dir, constants.W_OK);
  } catch (error) {
    return `DATABASE_URL names ${quote(file)}, which this process cannot write as a database (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  return undefined;
}

/** The database for the start log: engine and place, never a password or query parameters. */
export function storagePlace(storage: StorageConfig): { readonly engine: 'sqlite' | 'postgres'; readonly place: string } {
  if (storage.kind === 'sqlite') return { engine: 'sqlite', place: storage.path === ':memory:' ? ':memory:' : resolve(storage.path) };
  const url = URL.parse(storage.url);
  if (url === null) return { engine: 'postgres', place: 'postgres://' };
  const user = url.username === '' ? '' : `${url.username}@`;
  return { engine: 'postgres', place: `${url.protocol}//${user}${url.host}${url.pathname}` };
}

/** True when HOST lets only this machine connect (so the default BASE_URL is right for every client). */
function listensOnLoopbackOnly(host: string): boolean {
  const address = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (address === 'localhost') return true;
  if (isIPv4(address)) return address.startsWith('127.');
  return isIPv6(address) && (address === '::1' || /^::ffff:127\./.test(address));
}

/** One-line warnings worth logging at start: configuration that works but is likely wrong. */
export function startWarnings(config: Config): string[] {
  const warnings: string[] = [];
  if (!config.baseUrlSet && !listensOnLoopbackOnly(config.host)) {
    warnings.push(
      `BASE_URL is unset while listening on ${config.host}: short URLs will read ${config.baseUrl}/…, which only this machine can open; set BASE_URL to the public address`,
    );
  }
  return warnings;
}
