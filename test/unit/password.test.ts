/**
 * Link passwords (src/links/password.ts): what a password may be, the stored form, the round
 * trip, per-hash salts and parameters, refusal of stored values it could not have written,
 * and hashing off the event loop.
 */
import assert from 'node:assert/strict';
import { scryptSync } from 'node:crypto';
import { describe, test } from 'node:test';
import { DomainError, ErrorCode } from '../../src/errors.ts';
import {
  hashPassword, HASH_QUEUE_MAX, HASHES_AT_ONCE, needsRehash, parsePassword, PASSWORD_MAX, SCRYPT_PARAMETERS, verifyPassword,
} from '../../src/links/password.ts';

// Cheap parameters for the tests that are about the form, not the cost.
const CHEAP = { N: 1024, r: 8, p: 1 };

function refused(raw: string, reason: RegExp): void {
  assert.throws(() => parsePassword(raw), (error: unknown) => {
    assert.ok(error instanceof DomainError);
    assert.equal(error.code, ErrorCode.InvalidParameter);
    assert.match(error.message, reason);
    return true;
  }, JSON.stringify(raw.slice(0, 20)));
}

describe('parsePassword', () => {
  test('accepts 8 to 200 code points and answers them unchanged', () => {
    for (const password of ['12345678', 'correct horse battery staple', 'x'.repeat(PASSWORD_MAX), '😀'.repeat(200), 'pässwörd', ' spaced ']) {
      assert.equal(parsePassword(password), password);
    }
  });

  test('refuses fewer than 8 or more than 200 code points, naming the bounds', () => {
    for (const password of ['', '1234567', 'x'.repeat(201), '😀'.repeat(7), '😀'.repeat(201)]) {
      refused(password, /^password must be 8 to 200 characters long$/);
    }
  });

  test('refuses lone surrogates and control characters, which no form could send', () => {
    refused('abcdefgh\ud800', /well-formed/);
    refused('abcd\nefgh', /control characters/);
    refused('abcd\u0000efgh', /control characters/);
    refused('abcd\u0085efgh', /control characters/);
  });
});

describe('hashPassword and verifyPassword', () => {
  test('a hash verifies its password and no other', async () => {
    const stored = await hashPassword('correct horse battery staple');
    assert.equal(await verifyPassword('correct horse battery staple', stored), true);
    for (const wrong of ['correct horse battery stapl', 'Correct horse battery staple', 'correct horse battery staple ', '']) {
      assert.equal(await verifyPassword(wrong, stored), false, JSON.stringify(wrong));
    }
  });

  test('records today\'s parameters, a 16-byte salt and a 32-byte hash, never the password', async () => {
    const stored = await hashPassword('hunter2hunter2');
    const match = /^scrypt\$N=(\d+),r=(\d+),p=(\d+)\$([^$]+)\$([^$]+)$/.exec(stored);
    assert.ok(match, stored);
    assert.deepEqual(match.slice(1, 4).map(Number), [SCRYPT_PARAMETERS.N, SCRYPT_PARAMETERS.r, SCRYPT_PARAMETERS.p]);
    assert.ok(SCRYPT_PARAMETERS.N >= 2 ** 14, 'at least Node\'s default cost');
    assert.equal(Buffer.from(match[4]!, 'base64').length, 16);
    assert.equal(Buffer.from(match[5]!, 'base64').length, 32);
    assert.ok(!stored.includes('hunter2'));
    assert.equal(needsRehash(stored), false);
  });

  test('salts each hash afresh: the same password twice gives two hashes, both verifying', async () => {
    const [first, second] = await Promise.all([hashPassword('same password', CHEAP), hashPassword('same password', CHEAP)]);
    assert.notEqual(first, second);
    assert.notEqual(first.split('$')[2], second.split('$')[2], 'different salts');
    assert.equal(await verifyPassword('same password', first), true);
    assert.equal(await verifyPassword('same password', second), true);
  });

  test('verifies with the parameters recorded in the stored value, whatever today\'s are', async () => {
    const salt = Buffer.from('0123456789abcdef');
    for (const parameters of [{ N: 1024, r: 4, p: 2 }, { N: 2048, r: 8, p: 1 }, { N: 16, r: 1, p: 1 }]) {
      const hash = scryptSync('an older password', salt, 24, parameters);
      const stored = `scrypt$N=${parameters.N},r=${parameters.r},p=${parameters.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
      assert.equal(await verifyPassword('an older password', stored), true, stored);
      assert.equal(await verifyPassword('another password', stored), false);
      assert.equal(needsRehash(stored), true, 'other parameters than today\'s');
      // The same hash read with other parameters is another function: it must not verify.
      const altered = stored.replace(`N=${parameters.N}`, `N=${parameters.N * 2}`);
      assert.equal(await verifyPassword('an older password', altered), false, altered);
    }
    const made = await hashPassword('made cheaply', CHEAP);
    assert.match(made, /^scrypt\$N=1024,r=8,p=1\$/);
    assert.equal(await verifyPassword('made cheaply', made), true);
  });

  test('normalises to NFC, so composed and decomposed accents are one password', async () => {
    const stored = await hashPassword('caf\u00e9 au lait', CHEAP);
    assert.equal(await verifyPassword('cafe\u0301 au lait', stored), true);
    assert.equal(await verifyPassword('cafe au lait', stored), false);
  });

  test('answers false, without throwing, for stored values it could not have written', async () => {
    const good = await hashPassword('a good password', CHEAP);
    const [, , salt, hash] = good.split('$') as [string, string, string, string];
    const bad = [
      '', 'a good password', 'scrypt', `scrypt$N=1024,r=8,p=1$${salt}`, `bcrypt$N=1024,r=8,p=1$${salt}$${hash}`,
      `scrypt$N=1000,r=8,p=1$${salt}$${hash}`, // N not a power of two
      `scrypt$N=1,r=8,p=1$${salt}$${hash}`,
      `scrypt$N=1024,r=0,p=1$${salt}$${hash}`,
      `scrypt$N=1024,r=8,p=0$${salt}$${hash}`,
      `scrypt$N=1024,r=8,p=99$${salt}$${hash}`,
      `scrypt$N=16777216,r=8,p=1$${salt}$${hash}`, // 16 GiB: never attempted
      `scrypt$N=1024,r=8,p=1$$${hash}`,
      `scrypt$N=1024,r=8,p=1$${salt}$`,
      `scrypt$N=1024,r=8,p=1$AAAA$${hash}`, // a 3-byte salt
      `scrypt$N=1024,r=8,p=1$${salt}$AAAA`, // a 3-byte hash
      `scrypt$N=1024,r=8,p=1$${salt}$${hash}$extra`,
      `scrypt$N=1024, r=8, p=1$${salt}$${hash}`,
      `scrypt$N=1024,r=8,p=1$${salt}!$${hash}`,
      ` ${good}`,
    ];
    for (const stored of bad) {
      assert.equal(await verifyPassword('a good password', stored), false, stored);
      assert.equal(needsRehash(stored), true, stored);
    }
    assert.equal(await verifyPassword('a good password', null as unknown as string), false);
    assert.equal(await verifyPassword(undefined as unknown as string, good), false);
    assert.equal(await verifyPassword('a good password', good), true, 'the untouched value still verifies');
  });

  test('does not block the event loop while hashing', async () => {
    // Twenty hashes at today's cost take the pool a while; meanwhile the loop must keep
    // turning. Synchronous hashing would stall it for the whole batch.
    let turns = 0;
    let longestGap = 0;
    let last = performance.now();
    let running = true;
    const turn = () => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
      turns++;
      if (running) setImmediate(turn);
    };
    const started = performance.now();
    setImmediate(turn);
    const hashes = await Promise.all(Array.from({ length: 20 }, (_, i) => hashPassword(`password number ${i}`)));
    running = false;
    const elapsed = performance.now() - started;
    assert.equal(new Set(hashes).size, 20);
    assert.ok(turns >= 20, `the loop turned ${turns} times in ${elapsed.toFixed(0)} ms`);
    assert.ok(longestGap < elapsed / 4, `longest stall ${longestGap.toFixed(1)} ms of ${elapsed.toFixed(0)} ms`);
  });

  test('at most HASHES_AT_ONCE hashes run and HASH_QUEUE_MAX wait; a check beyond them is a 429 at once, not a wrong password', async () => {
    const stored = await hashPassword('the right one', CHEAP);
    const extra = 5;
    const outcomes = await Promise.all(Array.from({ length: HASHES_AT_ONCE + HASH_QUEUE_MAX + extra }, () =>
      verifyPassword('not the right one', stored).then(
        (right) => (right ? 'right' : 'wrong'),
        (error: unknown) => (error instanceof DomainError ? error.code : 'other'),
      )));
    assert.equal(outcomes.filter((o) => o === 'wrong').length, HASHES_AT_ONCE + HASH_QUEUE_MAX);
    assert.equal(outcomes.filter((o) => o === ErrorCode.RateLimited).length, extra);
    // The gate is free again once they are done.
    assert.equal(await verifyPassword('the right one', stored), true);
  });
});
