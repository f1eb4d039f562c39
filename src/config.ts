/**
 * The only reader of `process.env`. Every variable is parsed and checked here, all problems
 * are reported together, and the result is frozen so nothing downstream can drift from it.
 */

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type SqliteSynchronous = 'normal' | 'full';

export type StorageConfig =
  | { readonly kind: 'sqlite'; readonly path: string; readonly synchronous: SqliteSynchronous }
  | { readonly kind: 'postgres'; readonly url: string };

/** Typed, validated configuration of one Shortlink process. */
export interface Config {
  readonly port: number;
  readonly host: string;
  /** Public address without a trailing slash; short URLs are `${baseUrl}/${code}`. */
  readonly baseUrl: string;
  readonly storage: StorageConfig;
  readonly redisUrl: string | undefined;
  readonly defaultMaxLinks: number;
  readonly rateLimit: boolean;
  readonly logLevel: LogLevel;
  /** Whole seconds allowed for shutdown before the process gives up waiting. */
  readonly shutdownTimeoutMs: number;
}

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`Unable to start: ${problems.join('; ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

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
  let storage: StorageConfig;
  if (/^postgres(ql)?:\/\//i.test(rawDatabase)) {
    storage = { kind: 'postgres', url: rawDatabase };
  } else {
    const path = rawDatabase.replace(/^sqlite:(\/\/)?/i, '');
    if (path === '') problems.push('DATABASE_URL names no SQLite file');
    storage = { kind: 'sqlite', path, synchronous };
  }

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

  let logLevel: LogLevel = 'info';
  const rawLevel = text('LOG_LEVEL')?.toLowerCase();
  if (rawLevel !== undefined) {
    if ((LOG_LEVELS as readonly string[]).includes(rawLevel)) logLevel = rawLevel as LogLevel;
    else problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${quote(rawLevel)}`);
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze({
    port,
    host,
    baseUrl,
    storage: Object.freeze(storage),
    redisUrl,
    defaultMaxLinks,
    rateLimit,
    logLevel,
    shutdownTimeoutMs: 9000,
  });
}
