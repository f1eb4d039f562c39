/**
 * The password-guess limit (src/http/rate-limit-checks.ts, CONTRACT §8.3): wrong guesses are
 * counted per link and client address; `passwordGuess` only checks, `wrongPassword` only
 * records; past the limit every attempt, right or wrong, is refused with 429 and a wait,
 * until the window ends. Exempt clients and RATE_LIMIT=off are never limited.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { DEFAULT_RATE_LIMIT_POLICIES, loadConfig, type RateLimitPolicies } from '../../src/config.ts';
import { DomainError, ErrorCode } from '../../src/errors.ts';
import { createRateLimitChecks, type RateLimitChecks } from '../../src/http/rate-limit-checks.ts';
import { createMemoryCounters, type Counters } from '../../src/rate-limit/counters.ts';

const MINUTE = 60_000;
const CLIENT = '203.0.113.7';
const LINK = 'sho.rt/abc12';

const request = (ip: string) => ({ ip }) as FastifyRequest;

interface Harness {
  readonly checks: RateLimitChecks;
  readonly counters: Counters;
  elapse(ms: number): void;
}

function harness(t: TestContext, options: { limit?: number; windowMs?: number; exempt?: string[]; enabled?: boolean } = {}): Harness {
  let time = 1_000_000;
  const counters = createMemoryCounters({ now: () => time });
  t.after(() => counters.close());
  const policies: RateLimitPolicies = { ...DEFAULT_RATE_LIMIT_POLICIES, password: { limit: options.limit ?? 3, windowMs: options.windowMs ?? 15 * MINUTE } };
  const checks = createRateLimitChecks({ enabled: options.enabled ?? true, policies, exempt: options.exempt ?? [], ipv6Prefix: 64, counters });
  return { checks, counters, elapse: (ms) => { time += ms; } };
}

/** One attempt as a route makes it: check, then (the password being wrong) record. */
async function wrongGuess(checks: RateLimitChecks, ip = CLIENT, link = LINK): Promise<void> {
  await checks.passwordGuess(request(ip), link);
  await checks.wrongPassword(request(ip), link);
}

async function assertRefused(attempt: Promise<void>, maxSeconds: number): Promise<number> {
  let seconds = 0;
  await assert.rejects(attempt, (error: unknown) => {
    assert.ok(error instanceof DomainError);
    assert.equal(error.code, ErrorCode.RateLimited);
    assert.ok(error.retryAfter !== undefined && error.retryAfter >= 1 && error.retryAfter <= maxSeconds, `retryAfter ${error.retryAfter}`);
    assert.equal(error.message, `too many requests; try again in ${error.retryAfter} s`);
    seconds = error.retryAfter;
    return true;
  });
  return seconds;
}

describe('the password-guess limit', () => {
  test('allows the limit\'s wrong guesses, then refuses every attempt with the wait until the window ends', async (t) => {
    const { checks, elapse } = harness(t, { limit: 3, windowMs: 15 * MINUTE });
    for (let i = 0; i < 3; i++) await wrongGuess(checks);
    assert.equal(await assertRefused(checks.passwordGuess(request(CLIENT), LINK), 900), 900);
    elapse(5 * MINUTE);
    // The check is made before the password is tried: a right one is refused too.
    assert.equal(await assertRefused(checks.passwordGuess(request(CLIENT), LINK), 900), 600);
  });

  test('the check counts nothing: a client that never guesses wrong is never limited', async (t) => {
    const { checks } = harness(t, { limit: 3 });
    for (let i = 0; i < 50; i++) await checks.passwordGuess(request(CLIENT), LINK);
    await wrongGuess(checks);
    await wrongGuess(checks);
    await checks.passwordGuess(request(CLIENT), LINK);
  });

  test('recording a wrong guess never refuses by itself; the next check does', async (t) => {
    const { checks } = harness(t, { limit: 2 });
    for (let i = 0; i < 5; i++) await checks.wrongPassword(request(CLIENT), LINK);
    await assertRefused(checks.passwordGuess(request(CLIENT), LINK), 900);
  });

  test('counts per link and per client: other links and other clients are untouched', async (t) => {
    const { checks } = harness(t, { limit: 2 });
    for (let i = 0; i < 2; i++) await wrongGuess(checks);
    await assertRefused(checks.passwordGuess(request(CLIENT), LINK), 900);
    await checks.passwordGuess(request(CLIENT), 'sho.rt/abc13');
    await checks.passwordGuess(request(CLIENT), 'go.example/abc12');
    await checks.passwordGuess(request(CLIENT), 'sho.rt/abc1');
    await checks.passwordGuess(request('203.0.113.8'), LINK);
    // One client's guesses at two links are two counts, not one.
    await wrongGuess(checks, '198.51.100.1', 'a');
    await wrongGuess(checks, '198.51.100.1', 'b');
    await checks.passwordGuess(request('198.51.100.1'), 'a');
    await checks.passwordGuess(request('198.51.100.1'), 'b');
  });

  test('counts an IPv6 client per network, like every limit', async (t) => {
    const { checks } = harness(t, { limit: 2 });
    await wrongGuess(checks, '2001:db8:1:2::1');
    await wrongGuess(checks, '2001:db8:1:2::ffff');
    await assertRefused(checks.passwordGuess(request('2001:db8:1:2:abcd::9'), LINK), 900);
    await checks.passwordGuess(request('2001:db8:1:3::1'), LINK);
  });

  test('lets the guesses again once the window has ended', async (t) => {
    const { checks, elapse } = harness(t, { limit: 2, windowMs: MINUTE });
    for (let i = 0; i < 2; i++) await wrongGuess(checks);
    await assertRefused(checks.passwordGuess(request(CLIENT), LINK), 60);
    elapse(MINUTE);
    await wrongGuess(checks);
    await wrongGuess(checks);
    await assertRefused(checks.passwordGuess(request(CLIENT), LINK), 60);
  });

  test('never limits an exempt client, however its address is spelled', async (t) => {
    const { checks } = harness(t, { limit: 1, exempt: ['127.0.0.1'] });
    for (let i = 0; i < 5; i++) await wrongGuess(checks, '::ffff:127.0.0.1');
    await checks.passwordGuess(request('127.0.0.1'), LINK);
    await wrongGuess(checks);
    await assertRefused(checks.passwordGuess(request(CLIENT), LINK), 900);
  });

  test('RATE_LIMIT=off turns it off', async (t) => {
    const config = loadConfig({ RATE_LIMIT: 'off', RATE_LIMIT_PASSWORD: '1/1h' });
    assert.deepEqual(config.rateLimitPolicies.password, { limit: 1, windowMs: 60 * MINUTE });
    const counters = createMemoryCounters();
    t.after(() => counters.close());
    const checks = createRateLimitChecks({
      enabled: config.rateLimit, policies: config.rateLimitPolicies, exempt: config.rateLimitExempt, ipv6Prefix: config.rateLimitIpv6Prefix, counters,
    });
    for (let i = 0; i < 5; i++) await wrongGuess(checks);
    await checks.passwordGuess(request(CLIENT), LINK);
  });

  test('RATE_LIMIT_PASSWORD sets it, 10 per 15 minutes by default, and a malformed value is refused', async (t) => {
    assert.deepEqual(loadConfig({}).rateLimitPolicies.password, { limit: 10, windowMs: 15 * MINUTE });
    assert.deepEqual(loadConfig({ RATE_LIMIT_PASSWORD: '5/30s' }).rateLimitPolicies.password, { limit: 5, windowMs: 30_000 });
    assert.throws(() => loadConfig({ RATE_LIMIT_PASSWORD: 'ten' }), /RATE_LIMIT_PASSWORD must look like 100\/1m/);
    const config = loadConfig({ RATE_LIMIT_PASSWORD: '2/1m' });
    const counters = createMemoryCounters();
    t.after(() => counters.close());
    const checks = createRateLimitChecks({
      enabled: config.rateLimit, policies: config.rateLimitPolicies, exempt: config.rateLimitExempt, ipv6Prefix: config.rateLimitIpv6Prefix, counters,
    });
    await wrongGuess(checks);
    await wrongGuess(checks);
    await assertRefused(checks.passwordGuess(request(CLIENT), LINK), 60);
  });
});
