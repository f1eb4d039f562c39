import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.ts';

/** Asserts that loadConfig throws a ConfigError and returns it for further checks. */
function configError(env: Record<string, string>): ConfigError {
  let caught: unknown;
  try {
    loadConfig(env);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ConfigError, `expected a ConfigError for ${JSON.stringify(env)}`);
  // One clear line on stderr: no newline of any kind in the message.
  assert.doesNotMatch(caught.message, /[\r\n\u2028\u2029]/);
  return caught;
}

describe('loadConfig defaults', () => {
  test('uses the documented default for every variable when the environment is empty', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.baseUrl, 'http://localhost:8080');
    assert.deepEqual(config.storage, { kind: 'sqlite', path: './data/shortlinks.db', synchronous: 'normal' });
    assert.equal(config.redisUrl, undefined);
    assert.equal(config.defaultMaxLinks, 20);
    assert.equal(config.rateLimit, true);
    assert.equal(config.logLevel, 'info');
    assert.equal(config.redirectStatus, 302);
    assert.equal(config.metricsToken, undefined);
    assert.equal(config.storageTimeoutMs, 5000);
    assert.equal(config.registrationOpen, true);
    assert.equal(config.adminToken, undefined);
  });

  test('derives the default BASE_URL from PORT', () => {
    assert.equal(loadConfig({ PORT: '3000' }).baseUrl, 'http://localhost:3000');
  });

  test('treats an empty or blank variable as unset', () => {
    const config = loadConfig({ PORT: '', HOST: '  ', BASE_URL: '', DATABASE_URL: '', LOG_LEVEL: '' });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.baseUrl, 'http://localhost:8080');
    assert.deepEqual(config.storage, { kind: 'sqlite', path: './data/shortlinks.db', synchronous: 'normal' });
    assert.equal(config.logLevel, 'info');
  });

  test('returns a frozen object', () => {
    const config = loadConfig({});
    assert.equal(Object.isFrozen(config), true);
    assert.equal(Object.isFrozen(config.storage), true);
  });
});

describe('loadConfig values', () => {
  test('reads PORT and HOST', () => {
    const config = loadConfig({ PORT: '9000', HOST: '127.0.0.1' });
    assert.equal(config.port, 9000);
    assert.equal(config.host, '127.0.0.1');
  });

  test('accepts the ends of the port range', () => {
    assert.equal(loadConfig({ PORT: '0' }).port, 0);
    assert.equal(loadConfig({ PORT: '65535' }).port, 65535);
  });

  test('keeps BASE_URL as given', () => {
    assert.equal(loadConfig({ BASE_URL: 'https://sho.rt' }).baseUrl, 'https://sho.rt');
    assert.equal(loadConfig({ BASE_URL: 'http://localhost:3000' }).baseUrl, 'http://localhost:3000');
  });

  test('strips a trailing slash from BASE_URL', () => {
    assert.equal(loadConfig({ BASE_URL: 'https://sho.rt/' }).baseUrl, 'https://sho.rt');
    assert.equal(loadConfig({ BASE_URL: 'https://sho.rt///' }).baseUrl, 'https://sho.rt');
    assert.equal(loadConfig({ BASE_URL: 'https://example.com/s/' }).baseUrl, 'https://example.com/s');
  });

  test('reads a plain DATABASE_URL as a SQLite file path', () => {
    assert.deepEqual(loadConfig({ DATABASE_URL: '/var/lib/shortlink/links.db' }).storage, {
      kind: 'sqlite', path: '/var/lib/shortlink/links.db', synchronous: 'normal',
    });
    assert.deepEqual(loadConfig({ DATABASE_URL: 'relative/links.db' }).storage, {
      kind: 'sqlite', path: 'relative/links.db', synchronous: 'normal',
    });
  });

  test('strips the sqlite: prefix from DATABASE_URL', () => {
    assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:/tmp/links.db' }).storage, {
      kind: 'sqlite', path: '/tmp/links.db', synchronous: 'normal',
    });
    assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:data/links.db' }).storage, {
      kind: 'sqlite', path: 'data/links.db', synchronous: 'normal',
    });
  });

  test('selects PostgreSQL for postgres:// and postgresql:// URLs, keeping the URL whole', () => {
    for (const url of ['postgres://user:secret@db:5432/shortlink', 'postgresql://db/shortlink?sslmode=require']) {
      assert.deepEqual(loadConfig({ DATABASE_URL: url }).storage, { kind: 'postgres', url, poolMax: 10, prepare: true });
    }
  });

  test('reads PG_POOL_MAX and PG_PREPARE for PostgreSQL', () => {
    const storage = loadConfig({ DATABASE_URL: 'postgres://db/shortlink', PG_POOL_MAX: '3', PG_PREPARE: 'FALSE' }).storage;
    assert.deepEqual(storage, { kind: 'postgres', url: 'postgres://db/shortlink', poolMax: 3, prepare: false });
  });

  test('refuses a PG_POOL_MAX outside 1..1000 and a PG_PREPARE other than true or false', () => {
    for (const [name, value] of [['PG_POOL_MAX', '0'], ['PG_POOL_MAX', '1001'], ['PG_POOL_MAX', 'ten'], ['PG_PREPARE', 'maybe']] as const) {
      assert.match(configError({ DATABASE_URL: 'postgres://db/shortlink', [name]: value }).message, new RegExp(`${name} must be`));
    }
  });

  test('reads REDIS_URL', () => {
    assert.equal(loadConfig({ REDIS_URL: 'redis://cache:6379' }).redisUrl, 'redis://cache:6379');
  });

  test('reads DEFAULT_MAX_LINKS, including zero', () => {
    assert.equal(loadConfig({ DEFAULT_MAX_LINKS: '5' }).defaultMaxLinks, 5);
    assert.equal(loadConfig({ DEFAULT_MAX_LINKS: '0' }).defaultMaxLinks, 0);
  });

  test('turns rate limiting off with RATE_LIMIT=off and on with RATE_LIMIT=on, in any case', () => {
    assert.equal(loadConfig({ RATE_LIMIT: 'off' }).rateLimit, false);
    assert.equal(loadConfig({ RATE_LIMIT: 'OFF' }).rateLimit, false);
    assert.equal(loadConfig({ RATE_LIMIT: 'on' }).rateLimit, true);
    assert.equal(loadConfig({ RATE_LIMIT: 'On' }).rateLimit, true);
  });

  test('reads every pino LOG_LEVEL', () => {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const) {
      assert.equal(loadConfig({ LOG_LEVEL: level }).logLevel, level);
    }
    assert.equal(loadConfig({ LOG_LEVEL: 'DEBUG' }).logLevel, 'debug');
  });
});

describe('loadConfig: REDIRECT_STATUS and METRICS_TOKEN', () => {
  test('reads each redirect status a short URL may answer with', () => {
    for (const status of [301, 302, 307, 308]) assert.equal(loadConfig({ REDIRECT_STATUS: String(status) }).redirectStatus, status);
  });

  test('reads METRICS_TOKEN', () => {
    assert.equal(loadConfig({ METRICS_TOKEN: 'abcdefghijklmnop' }).metricsToken, 'abcdefghijklmnop');
  });

  test('refuses a short or spaced METRICS_TOKEN without echoing it', () => {
    for (const token of ['short', 'sixteen chars ok', 'x'.repeat(257), 'tökenwithumlaut1']) {
      const error = configError({ METRICS_TOKEN: token });
      assert.match(error.message, /METRICS_TOKEN/);
      assert.ok(!error.message.includes(token), 'a secret is never repeated on stderr');
    }
  });
});

describe('loadConfig: REGISTRATION and ADMIN_TOKEN', () => {
  test('reads REGISTRATION open or closed, in any case', () => {
    assert.equal(loadConfig({ REGISTRATION: 'closed' }).registrationOpen, false);
    assert.equal(loadConfig({ REGISTRATION: 'CLOSED' }).registrationOpen, false);
    assert.equal(loadConfig({ REGISTRATION: 'open' }).registrationOpen, true);
  });

  test('refuses any other REGISTRATION', () => {
    assert.match(configError({ REGISTRATION: 'invite' }).message, /REGISTRATION must be "open" or "closed", got "invite"/);
  });

  test('reads an ADMIN_TOKEN of 32 or more printable characters', () => {
    const token = 'k'.repeat(32);
    assert.equal(loadConfig({ ADMIN_TOKEN: token }).adminToken, token);
  });

  test('refuses a short, spaced or non-ASCII ADMIN_TOKEN in one line, without echoing it', () => {
    for (const token of ['k'.repeat(31), `${'k'.repeat(20)} ${'k'.repeat(20)}`, `${'k'.repeat(40)}é`, 'k'.repeat(257)]) {
      const error = configError({ ADMIN_TOKEN: token });
      assert.match(error.message, /^Unable to start: ADMIN_TOKEN must be 32 to 256 printable ASCII characters/);
      assert.ok(!error.message.includes(token), 'a secret is never repeated on stderr');
      assert.ok(!error.message.includes('\n'));
    }
  });
});

describe('loadConfig: STORAGE_TIMEOUT', () => {
  test('reads a duration in ms, s or m', () => {
    assert.equal(loadConfig({ STORAGE_TIMEOUT: '2500ms' }).storageTimeoutMs, 2500);
    assert.equal(loadConfig({ STORAGE_TIMEOUT: '1s' }).storageTimeoutMs, 1000);
    assert.equal(loadConfig({ STORAGE_TIMEOUT: '2m' }).storageTimeoutMs, 120_000);
  });

  test('refuses a bare number, zero, under 100 ms and over 10 minutes', () => {
    for (const value of ['5', '0', '0s', '50ms', '11m', 'soon', '-1s']) {
      const error = configError({ STORAGE_TIMEOUT: value });
      assert.match(error.message, /STORAGE_TIMEOUT/);
      assert.ok(error.message.includes(`"${value}"`), error.message);
      assert.equal(error.problems.length, 1);
    }
  });
});

describe('loadConfig refuses bad configuration', () => {
  for (const [name, value] of [
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['PORT', '8080abc'],
    ['PORT', '1e3'],
    ['BASE_URL', 'ftp://x'],
    ['BASE_URL', 'not a url'],
    ['BASE_URL', 'localhost:8080'],
    ['BASE_URL', 'https://sho.rt/?x=1'],
    ['BASE_URL', 'https://user:pw@sho.rt'],
    ['DEFAULT_MAX_LINKS', '-1'],
    ['DEFAULT_MAX_LINKS', 'many'],
    ['DEFAULT_MAX_LINKS', '2.5'],
    ['LOG_LEVEL', 'loud'],
    ['RATE_LIMIT', 'sometimes'],
    ['REDIS_URL', 'http://cache:6379'],
    ['REDIRECT_STATUS', '303'],
    ['REDIRECT_STATUS', '200'],
    ['REDIRECT_STATUS', 'permanent'],
    ['REDIRECT_STATUS', '301.0'],
  ] as const) {
    test(`rejects ${name}=${value} with a ConfigError naming the variable`, () => {
      const error = configError({ [name]: value });
      assert.match(error.message, new RegExp(`\\b${name}\\b`));
      assert.ok(error.message.includes(value), error.message);
      assert.equal(error.problems.length, 1);
    });
  }

  test('lists every problem at once, on one line', () => {
    const error = configError({
      PORT: 'abc',
      BASE_URL: 'ftp://x',
      DEFAULT_MAX_LINKS: '-1',
      LOG_LEVEL: 'loud',
      RATE_LIMIT: 'maybe',
    });
    assert.equal(error.problems.length, 5);
    for (const name of ['PORT', 'BASE_URL', 'DEFAULT_MAX_LINKS', 'LOG_LEVEL', 'RATE_LIMIT']) {
      assert.match(error.message, new RegExp(`\\b${name}\\b`), `${name} missing from: ${error.message}`);
    }
    for (const value of ['"abc"', '"ftp://x"', '"-1"', '"loud"', '"maybe"']) {
      assert.ok(error.message.includes(value), `${value} missing from: ${error.message}`);
    }
  });

  test('reports BASE_URL=not a url together with a bad PORT', () => {
    const error = configError({ PORT: '70000', BASE_URL: 'not a url' });
    assert.equal(error.problems.length, 2);
    assert.match(error.message, /PORT/);
    assert.match(error.message, /BASE_URL/);
  });

  test('keeps the message on one line even when a value contains line breaks', () => {
    const error = configError({ PORT: '80\n80', BASE_URL: 'http://a\r\nb c', LOG_LEVEL: 'info\u2028x' });
    assert.equal(error.problems.length, 3);
  });

  test('is a ConfigError named ConfigError, an Error', () => {
    const error = configError({ PORT: 'abc' });
    assert.equal(error.name, 'ConfigError');
    assert.ok(error instanceof Error);
  });
});

describe('loadConfig: MAX_CONNECTIONS and SHUTDOWN_DELAY', () => {
  test('defaults to 10000 connections and no shutdown delay', () => {
    const config = loadConfig({});
    assert.equal(config.maxConnections, 10_000);
    assert.equal(config.shutdownDelayMs, 0);
  });

  test('reads MAX_CONNECTIONS', () => {
    assert.equal(loadConfig({ MAX_CONNECTIONS: '500' }).maxConnections, 500);
  });

  test('reads SHUTDOWN_DELAY in ms, s or m, and a bare 0', () => {
    assert.equal(loadConfig({ SHUTDOWN_DELAY: '1500ms' }).shutdownDelayMs, 1500);
    assert.equal(loadConfig({ SHUTDOWN_DELAY: '5s' }).shutdownDelayMs, 5000);
    assert.equal(loadConfig({ SHUTDOWN_DELAY: '1m' }).shutdownDelayMs, 60_000);
    assert.equal(loadConfig({ SHUTDOWN_DELAY: '0' }).shutdownDelayMs, 0);
  });

  for (const [name, value] of [
    ['MAX_CONNECTIONS', '0'],
    ['MAX_CONNECTIONS', 'many'],
    // A bare number could mean seconds or milliseconds.
    ['SHUTDOWN_DELAY', '5'],
    ['SHUTDOWN_DELAY', '-1s'],
    ['SHUTDOWN_DELAY', '11m'],
  ] as const) {
    test(`rejects ${name}=${value} with a ConfigError naming the variable`, () => {
      assert.match(configError({ [name]: value }).message, new RegExp(`${name} must`));
    });
  }
});
