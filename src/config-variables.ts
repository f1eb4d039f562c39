/**
 * Every environment variable Shortlink reads, declared once: its reader (src/config-readers.ts)
 * and the README's row for it. `loadConfig` (src/config.ts) reads the environment through this
 * table, and `configurationTable()` writes the README's table from it
 * (test/unit/config-docs.test.ts keeps the two equal; `npm run docs:config` rewrites it).
 */
import { parseHostEntry } from './links/host-rules.ts';
import {
  Refusal, duration, flag, flagWord, int, isProxyEntry, list, oneOf, parseInteger, quote, rate, secret, text,
  type RateLimitPolicy, type Reader,
} from './config-readers.ts';

/** One variable: how to read it, and its README row (`meaning` and `default` are Markdown). */
export interface Variable<T> {
  readonly read: Reader<T>;
  readonly meaning: string;
  readonly default: string;
  /** Shown in the same README row as the variable before it (the rate-limit overrides). */
  readonly sameRow?: true;
}

const variable = <T>(read: Reader<T>, meaning: string, defaultText: string, sameRow?: true): Variable<T> =>
  sameRow ? { read, meaning, default: defaultText, sameRow } : { read, meaning, default: defaultText };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const REDIRECT_STATUSES = ['301', '302', '307', '308'] as const;

/**
 * What `TRUST_PROXY=true` trusts: proxies on loopback and private networks, as a service
 * behind a same-host, Docker or Kubernetes proxy sees them. A client on such a network can
 * still write its own address; list the proxies exactly when clients reach it from there.
 */
export const TRUST_PROXY_PRIVATE: readonly string[] = Object.freeze(['loopback', 'linklocal', 'uniquelocal']);

/** A public address: absolute http(s), no query, fragment or credentials; trailing slashes dropped. */
const httpBase: Reader<string> = (raw, name) => {
  const parsed = URL.parse(raw);
  if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.host === '') {
    return new Refusal(`${name} must be an absolute http(s) URL, got ${quote(raw)}`);
  }
  if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
    return new Refusal(`${name} must not carry a query, fragment or credentials, got ${quote(raw)}`);
  }
  return raw.replace(/\/+$/, '');
};

/** `true`/`false` in the shared vocabulary, or the trusted proxies' addresses, CIDRs and range names. */
const proxies: Reader<false | readonly string[]> = (raw, name) => {
  const lower = raw.toLowerCase();
  // A bare number was once a hop count; Fastify ignores those, so refuse it rather than start
  // with X-Forwarded-For silently unused (so 1 and 0 are not read as a flag here).
  if (/^\d+$/.test(lower)) return new Refusal(`${name} hop counts are not supported; list the proxies' addresses/CIDRs or use true, got ${quote(raw)}`);
  const word = flagWord(lower);
  if (word !== undefined) return word ? TRUST_PROXY_PRIVATE : false;
  const entries = lower.split(',').map((entry) => entry.trim()).filter(Boolean);
  return entries.length > 0 && entries.every((entry) => isProxyEntry(entry, TRUST_PROXY_PRIVATE))
    ? entries
    : new Refusal(`${name} must be true, false or a list of the proxies' addresses/CIDRs, got ${quote(raw)}`);
};

const hostEntry = (range: boolean) => (item: string, name: string): string | Refusal => {
  const entry = parseHostEntry(item, { range });
  // An entry that can never match would leave the operator believing a host is blocked.
  return typeof entry === 'string' ? entry : new Refusal(`${name} entry ${quote(item)} ${entry.problem}`);
};

/**
 * An origin as a browser sends it in `Origin`: scheme, host and port only. http(s) origins are
 * normalised by the WHATWG parser; other schemes (a browser extension's
 * `chrome-extension://<id>`) are kept as written, in lower case. `*` stands for itself.
 */
const origin = (raw: string, name: string): string | Refusal => {
  const entry = raw.replace(/\/$/, '');
  const problem = new Refusal(`${name} must list origins such as https://app.example.com (scheme and host, no path) or *, got ${quote(raw)}`);
  if (entry === '*') return entry;
  // Letters, digits, dots, hyphens; brackets and colons for an IPv6 address and a port. No
  // wildcard: a pattern of origins is no origin.
  if (!/^[a-z][a-z0-9+.-]*:\/\/[a-z0-9.\-[\]:]+$/i.test(entry)) return problem;
  const scheme = entry.slice(0, entry.indexOf(':')).toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return entry.toLowerCase();
  const url = URL.parse(entry);
  return url === null || url.origin === 'null' ? problem : url.origin;
};

/** The database: a `postgres(ql)://` URL, or a SQLite path (optionally `sqlite:`-prefixed). */
export type DatabaseChoice = { readonly kind: 'postgres'; readonly url: string } | { readonly kind: 'sqlite'; readonly path: string };

const database: Reader<DatabaseChoice> = (raw, name) => {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw)?.[1]?.toLowerCase();
  if (scheme === 'postgres' || scheme === 'postgresql') return { kind: 'postgres', url: raw };
  // A typo (`postgress://`) or another engine (`mysql://`) would otherwise become a new, empty
  // SQLite file named like the URL. Only the scheme is echoed: the rest may hold a password.
  if (scheme !== undefined && scheme !== 'sqlite') {
    return new Refusal(`${name} must start with postgres://, postgresql:// or sqlite:, or be a SQLite file path, got a ${quote(`${scheme}://`)} URL`);
  }
  const path = raw.replace(/^sqlite:(\/\/)?/i, '');
  return path === '' ? new Refusal(`${name} names no SQLite file`) : { kind: 'sqlite', path };
};

const redisUrl: Reader<string> = (raw, name) =>
  /^rediss?:\/\//i.test(raw) ? raw : new Refusal(`${name} must start with redis:// or rediss://, got ${quote(raw)}`);

const rateOverride = (sameRow?: true): Variable<RateLimitPolicy> =>
  variable(rate(), 'override one limit, as `count/window`, e.g. `100/1m`, `5/30s`, `20/1h`', 'see [Rate limits](docs/api.md#rate-limits)', sameRow);

const GENERATE = '; generate one with: openssl rand -hex 32';

/** Every variable, in the README's order. */
export const VARIABLES = {
  PORT: variable(int(0, 65535), 'TCP port to listen on', '`8080`'),
  HOST: variable(text(), 'address to bind', '`0.0.0.0`'),
  BASE_URL: variable(httpBase, "public address; short URLs are `BASE_URL/ShortCode` (a trailing slash is dropped); the start log warns when it is unset while `HOST` is not a loopback address", '`http://localhost:$PORT`'),
  DATABASE_URL: variable(database, '`postgres://…` / `postgresql://…` selects PostgreSQL; a SQLite file path, optionally prefixed `sqlite:`, selects SQLite; any other `scheme://` is refused, and so is a SQLite path whose directory does not exist (only the default `./data/` is created) or that is not a writable regular file', '`./data/shortlinks.db`'),
  REDIS_URL: variable(redisUrl, 'Redis for rate-limit counters shared by every instance (see [docs/deployment.md](docs/deployment.md))', 'unset: counters in memory'),
  REDIS_PREFIX: variable(text(), 'prefix of every Redis key written', '`shortlink:`'),
  DEFAULT_MAX_LINKS: variable(int(0, 1_000_000_000, 'a non-negative integer'), 'MaxLinks given to new accounts; existing accounts keep theirs', '`20`'),
  RATE_LIMIT: variable(flag(), '`off` disables rate limiting (tests, benchmarks)', '`on`'),
  RATE_LIMIT_NEW_ACCOUNT: rateOverride(),
  RATE_LIMIT_FAILED_AUTH: rateOverride(true),
  RATE_LIMIT_CREATE_LINK: rateOverride(true),
  RATE_LIMIT_RESOLVE: rateOverride(true),
  RATE_LIMIT_UNKNOWN_CODE: rateOverride(true),
  RATE_LIMIT_CREATE_WEBHOOK: rateOverride(true),
  RATE_LIMIT_PASSWORD: rateOverride(true),
  RATE_LIMIT_EXEMPT: variable(list(text()), 'comma-separated client addresses never limited, e.g. `127.0.0.1,::1` for local tools that connect directly', 'empty: nobody'),
  RATE_LIMIT_IPV6_PREFIX: variable<number>((raw, name) => parseInteger(raw.replace(/^\//, ''), 1, 128) ?? new Refusal(`${name} must be a prefix length from 1 to 128, got ${quote(raw)}`), 'IPv6 clients are counted per network of this many bits (IPv4 clients per address)', '`64`'),
  TRUST_PROXY: variable(proxies, 'addresses/CIDRs of the proxies whose `X-Forwarded-For` is believed (the client is the right-most address none of them added), or `true` for proxies on loopback and private networks; a hop count is refused (see [docs/deployment.md](docs/deployment.md))', '`false`'),
  BLOCKED_HOSTS: variable(list(hostEntry(true), /[\s,]+/), 'comma-separated targets refused at creation: host names (subdomains included), IPv4/IPv6 addresses (`::2` or `[::2]`), CIDR ranges (`10.0.0.0/8`, `fd00::/8`); an entry with a scheme, port or path is refused at start (see [Blocked hosts](docs/api.md#blocked-hosts))', 'none'),
  BLOCKED_HOSTS_FILE: variable(text(), 'a file of such entries, one per line, `#` comments', 'none'),
  SELF_HOSTS: variable(list(hostEntry(false), /[\s,]+/), "comma-separated other host names or addresses this service answers to (aliases, its IP); links to them are refused as loops, like links to `BASE_URL`'s host", 'none'),
  WORKERS: variable(int(1, 256), 'server processes on this machine (node:cluster), sharing the port and the database', '`1`'),
  MAX_CONNECTIONS: variable(int(1, 1_000_000), 'TCP connections held at once per process; more are closed as they arrive (see [Limits and timeouts](docs/api.md#limits-and-timeouts))', '`10000`'),
  SHUTDOWN_DELAY: variable(duration(0, 600_000, 'a duration up to 10 minutes, such as 5s or 5000ms'), 'on `SIGTERM`/`SIGINT`, keep serving this long with `/readyz` at 503 before closing the listener, so load balancers stop routing here first; `5s`, `1500ms`, `1m` (a unit is required; up to 10 minutes)', '`0`'),
  CORS_ORIGINS: variable(list(origin), 'comma-separated origins (`https://app.example.com`) whose pages may call every `/v1/` endpoint from a browser, and/or `*` for any origin on the public read-only ones (see [CORS](docs/api.md#browsers-on-other-origins-cors))', 'unset: no cross-origin access'),
  LOG_LEVEL: variable(oneOf(LOG_LEVELS), '`fatal` `error` `warn` `info` `debug` `trace` `silent`', '`info`'),
  PG_POOL_MAX: variable(int(1, 1000), "most PostgreSQL connections one process opens (1–1000); more queries wait for one. Budget `instances × WORKERS × PG_POOL_MAX` within the role's and the server's limits (see [Deployment](docs/deployment.md#postgresql))", '`10`'),
  PG_PREPARE: variable(flag(), '`false` sends every query as an unnamed statement: needed behind PgBouncer in transaction mode (before 1.21)', '`true`'),
  SQLITE_SYNCHRONOUS: variable(oneOf(['normal', 'full']), '`normal` or `full` (see [Where the data lives](docs/operations.md#where-the-data-lives))', '`normal`'),
  REDIRECT_STATUS: variable(oneOf(REDIRECT_STATUSES), "status of the short URL's redirect: `301`, `302`, `307` or `308` (see [Redirect status](docs/operations.md#redirect-status))", '`302`'),
  FORWARD_QUERY: variable(flag(), "`forward_query` of a link created without one: `true` appends a visitor's query string to the target on redirect (see [Routing a visit](docs/api.md#routing-a-visit))", '`false`'),
  REGISTRATION: variable(oneOf(['open', 'closed']), '`open`: anyone may create an account; `closed`: `new_account` answers 403 and operators use `shortlink account create --database` (see [Operations](docs/operations.md#closed-registration))', '`open`'),
  ADMIN_TOKEN: variable(secret(32, 256, GENERATE), 'enables the admin API `/v1/admin/…` (accounts, caps, disabling, link search and takedown, domains) with this Bearer token, 32–256 printable ASCII characters (see [API](docs/api.md#administration))', 'unset: no admin API'),
  METRICS_TOKEN: variable(secret(16, 256), 'Bearer token `/metrics` requires, 16–256 printable ASCII characters (see [Metrics](docs/operations.md#metrics--metrics))', 'unset: `/metrics` is open'),
  STATS: variable(flag(), '`off` records no visit statistics (see [Visit statistics](docs/api.md#visit-statistics--get-v1stats)); counts are kept either way', '`on`'),
  STATS_HOURLY_DAYS: variable(int(1, 3650, 'a whole number of days from 1 to 3650'), 'days hourly statistics are kept before they are folded into days (1–3650)', '`90`'),
  WEBHOOK_SECRET_KEY: variable(secret(32, 256, GENERATE), 'webhook signing secrets are stored encrypted under this key, 32–256 printable ASCII characters, the same on every instance (see [Webhooks](docs/webhooks.md)); set it in production', 'unset: secrets stored readable'),
  WEBHOOK_ALLOW_PRIVATE: variable(flag(), '`true` allows webhook targets on loopback, private and link-local addresses (tests, closed networks)', '`false`'),
  // 0 would fail every call, and under 100 ms a busy moment would: neither can be meant.
  STORAGE_TIMEOUT: variable(duration(100, 600_000, 'a duration from 100ms to 10 minutes, such as 5s or 2500ms'), 'longest a database call may take, with its unit (`2500ms`, `5s`, `1m`; 100 ms to 10 min): past it the request answers `503` with `Retry-After: 1`, and any request is answered `503` at the latest one second later (see [Limits and timeouts](docs/api.md#limits-and-timeouts))', '`5s`'),
} as const;

export type VariableName = keyof typeof VARIABLES;
/** The value each variable was read as, undefined where it was unset (or refused). */
export type Values = { -readonly [K in VariableName]: (typeof VARIABLES)[K] extends Variable<infer T> ? T | undefined : never };

/** The README's configuration table, generated from VARIABLES. */
export function configurationTable(): string {
  const rows: { names: string[]; meaning: string; default: string }[] = [];
  for (const [name, spec] of Object.entries(VARIABLES) as [VariableName, Variable<unknown>][]) {
    const last = rows.at(-1);
    if (spec.sameRow && last !== undefined) last.names.push(name);
    else rows.push({ names: [name], meaning: spec.meaning, default: spec.default });
  }
  const lines = rows.map((row) => `| ${row.names.map((name) => `\`${name}\``).join(', ')} | ${row.meaning} | ${row.default} |`);
  return ['| Variable | Meaning | Default |', '|---|---|---|', ...lines].join('\n');
}
