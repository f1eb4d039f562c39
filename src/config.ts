/**
 * The only reader of `process.env`. Every variable is parsed and checked here, all problems
 * are reported together, and the result is frozen so nothing downstream can drift from it.
 */
import { accessSync, constants, existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';
import { dirname, resolve, sep } from 'node:path';
import { Refusal, quote, type RateLimitPolicy } from './config-readers.ts';
import { VARIABLES, type LOG_LEVELS, type Values, type Variable, type VariableName } from './config-variables.ts';

export type { RateLimitPolicy } from './config-readers.ts';
export { TRUST_PROXY_PRIVATE, configurationTable } from './config-variables.ts';

export type LogLevel = (typeof LOG_LEVELS)[number];
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
  /** Wrong passwords of a protected link, per link and client address (CONTRACT §8.3). */
  readonly password: RateLimitPolicy;
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
  /** `forward_query` of a link created without one (FORWARD_QUERY). */
  readonly forwardQuery: boolean;
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
  // CONTRACT §8.3: 10 wrong guesses per link and address in 15 minutes.
  password: { limit: 10, windowMs: 900_000 },
};

const RATE_VARIABLES = {
  newAccount: 'RATE_LIMIT_NEW_ACCOUNT',
  failedAuth: 'RATE_LIMIT_FAILED_AUTH',
  createLink: 'RATE_LIMIT_CREATE_LINK',
  resolve: 'RATE_LIMIT_RESOLVE',
  unknownCode: 'RATE_LIMIT_UNKNOWN_CODE',
  createWebhook: 'RATE_LIMIT_CREATE_WEBHOOK',
  password: 'RATE_LIMIT_PASSWORD',
} as const satisfies Record<keyof RateLimitPolicies, VariableName>;

const DEFAULT_SQLITE_PATH = './data/shortlinks.db';

type Env = Readonly<Record<string, string | undefined>>;

/** Reads every variable of the table that is set (trimmed, non-empty), collecting every problem. */
function readVariables(env: Env, problems: string[]): Values {
  const values: Partial<Record<VariableName, unknown>> = {};
  for (const [name, spec] of Object.entries(VARIABLES) as [VariableName, Variable<unknown>][]) {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') continue;
    const value = spec.read(raw, name);
    if (value instanceof Refusal) problems.push(...value.problems);
    else values[name] = value;
  }
  return values as Values;
}

/** BLOCKED_HOSTS_FILE's entries, read like BLOCKED_HOSTS after dropping `#` comments. */
function blockedHostsFile(file: string | undefined, problems: string[]): string[] {
  if (file === undefined) return [];
  let content: string;
  try {
    content = readFileSync(file, 'utf8').replace(/#.*$/gm, '');
  } catch (error) {
    problems.push(`BLOCKED_HOSTS_FILE cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): ${quote(file)}`);
    return [];
  }
  const entries = VARIABLES.BLOCKED_HOSTS.read(content, 'BLOCKED_HOSTS_FILE');
  if (!(entries instanceof Refusal)) return entries;
  problems.push(...entries.problems);
  return [];
}

/** Parses the environment into a Config, or throws a ConfigError naming every problem. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const v = readVariables(env, problems);
  const port = v.PORT ?? 8080;
  const database = v.DATABASE_URL ?? { kind: 'sqlite', path: DEFAULT_SQLITE_PATH };
  const storage: StorageConfig = database.kind === 'postgres'
    ? { kind: 'postgres', url: database.url, poolMax: v.PG_POOL_MAX ?? 10, prepare: v.PG_PREPARE ?? true }
    : { kind: 'sqlite', path: database.path, synchronous: v.SQLITE_SYNCHRONOUS ?? 'normal' };
  const rateLimitPolicies = { ...DEFAULT_RATE_LIMIT_POLICIES };
  for (const [key, name] of Object.entries(RATE_VARIABLES) as [keyof RateLimitPolicies, VariableName][]) {
    const policy = v[name];
    if (policy !== undefined) rateLimitPolicies[key] = policy as RateLimitPolicy;
  }
  const blockedHosts = [...(v.BLOCKED_HOSTS ?? []), ...blockedHostsFile(v.BLOCKED_HOSTS_FILE, problems)];
  const corsEntries = v.CORS_ORIGINS ?? [];
  const trustProxy = v.TRUST_PROXY ?? false;
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze({
    port,
    host: v.HOST ?? '0.0.0.0',
    baseUrl: v.BASE_URL ?? `http://localhost:${port}`,
    baseUrlSet: v.BASE_URL !== undefined,
    storage: Object.freeze(storage),
    redisUrl: v.REDIS_URL,
    redisPrefix: v.REDIS_PREFIX ?? 'shortlink:',
    defaultMaxLinks: v.DEFAULT_MAX_LINKS ?? 20,
    rateLimit: v.RATE_LIMIT ?? true,
    rateLimitPolicies: Object.freeze(rateLimitPolicies),
    // Nobody by default: a reverse proxy on this host connects over loopback, and exempting
    // loopback would exempt every client behind it.
    rateLimitExempt: Object.freeze(v.RATE_LIMIT_EXEMPT ?? []),
    rateLimitIpv6Prefix: v.RATE_LIMIT_IPV6_PREFIX ?? 64,
    trustProxy: trustProxy === false ? false : Object.freeze([...trustProxy]),
    blockedHosts: Object.freeze(blockedHosts),
    selfHosts: Object.freeze(v.SELF_HOSTS ?? []),
    workers: v.WORKERS ?? 1,
    logLevel: v.LOG_LEVEL ?? 'info',
    redirectStatus: Number(v.REDIRECT_STATUS ?? 302) as RedirectStatus,
    forwardQuery: v.FORWARD_QUERY ?? false,
    metricsToken: v.METRICS_TOKEN,
    shutdownTimeoutMs: 9000,
    maxConnections: v.MAX_CONNECTIONS ?? 10_000,
    shutdownDelayMs: v.SHUTDOWN_DELAY ?? 0,
    storageTimeoutMs: v.STORAGE_TIMEOUT ?? 5000,
    cors: Object.freeze({
      origins: Object.freeze([...new Set(corsEntries.filter((entry) => entry !== '*'))]),
      anyForPublic: corsEntries.includes('*'),
    }),
    stats: v.STATS ?? true,
    statsHourlyDays: v.STATS_HOURLY_DAYS ?? 90,
    registrationOpen: (v.REGISTRATION ?? 'open') === 'open',
    adminToken: v.ADMIN_TOKEN,
    webhookSecretKey: v.WEBHOOK_SECRET_KEY,
    webhookAllowPrivate: v.WEBHOOK_ALLOW_PRIVATE ?? false,
  });
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
