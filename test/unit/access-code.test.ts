import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { hashAccessCode, isWellFormedAccessCode, newAccessCode } from '../../src/accounts/access-code.ts';

const V4_LOWER = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SAMPLE = 'c0ffee00-1234-4abc-8def-0123456789ab';
// printf %s 'c0ffee00-1234-4abc-8def-0123456789ab' | sha256sum
const SAMPLE_DIGEST = '041f1cb8113c30d336605e538493cfc3ed960ce97686eac25d97e95591045848';

describe('newAccessCode', () => {
  test('is a lower-case v4 UUID', () => {
    for (let i = 0; i < 1000; i++) assert.match(newAccessCode(), V4_LOWER);
  });

  test('never repeats', () => {
    const codes = new Set<string>();
    for (let i = 0; i < 10_000; i++) codes.add(newAccessCode());
    assert.equal(codes.size, 10_000);
  });

  test('is accepted by isWellFormedAccessCode', () => {
    for (let i = 0; i < 100; i++) assert.equal(isWellFormedAccessCode(newAccessCode()), true);
  });
});

describe('isWellFormedAccessCode', () => {
  test('accepts a v4 UUID in lower, upper and mixed case', () => {
    assert.equal(isWellFormedAccessCode(SAMPLE), true);
    assert.equal(isWellFormedAccessCode(SAMPLE.toUpperCase()), true);
    assert.equal(isWellFormedAccessCode('C0FFee00-1234-4ABC-8def-0123456789Ab'), true);
  });

  test('accepts every RFC 4122 variant digit (8, 9, a, b)', () => {
    for (const variant of ['8', '9', 'a', 'b', 'A', 'B']) {
      assert.equal(isWellFormedAccessCode(`c0ffee00-1234-4abc-${variant}def-0123456789ab`), true, variant);
    }
  });

  test('rejects UUIDs of other versions', () => {
    assert.equal(isWellFormedAccessCode('c232ab00-9414-11ec-b3c8-9f6bdeced846'), false); // v1
    assert.equal(isWellFormedAccessCode('c0ffee00-1234-3abc-8def-0123456789ab'), false); // v3
    assert.equal(isWellFormedAccessCode('c0ffee00-1234-5abc-8def-0123456789ab'), false); // v5
    assert.equal(isWellFormedAccessCode('0190a6e4-3c1a-7abc-8def-0123456789ab'), false); // v7
    assert.equal(isWellFormedAccessCode('00000000-0000-0000-0000-000000000000'), false); // nil
  });

  test('rejects a wrong variant', () => {
    for (const variant of ['0', '7', 'c', 'f']) {
      assert.equal(isWellFormedAccessCode(`c0ffee00-1234-4abc-${variant}def-0123456789ab`), false, variant);
    }
  });

  test('rejects a wrong length', () => {
    assert.equal(isWellFormedAccessCode(''), false);
    assert.equal(isWellFormedAccessCode(SAMPLE.slice(0, -1)), false);
    assert.equal(isWellFormedAccessCode(SAMPLE + '0'), false);
    assert.equal(isWellFormedAccessCode(SAMPLE.replaceAll('-', '')), false);
  });

  test('rejects padding, braces, a URN prefix and a trailing newline', () => {
    assert.equal(isWellFormedAccessCode(` ${SAMPLE}`), false);
    assert.equal(isWellFormedAccessCode(`${SAMPLE} `), false);
    assert.equal(isWellFormedAccessCode(`${SAMPLE}\n`), false);
    assert.equal(isWellFormedAccessCode(`{${SAMPLE}}`), false);
    assert.equal(isWellFormedAccessCode(`urn:uuid:${SAMPLE}`), false);
  });

  test('rejects non-hex characters and misplaced hyphens', () => {
    assert.equal(isWellFormedAccessCode('g0ffee00-1234-4abc-8def-0123456789ab'), false);
    assert.equal(isWellFormedAccessCode('c0ffee0-01234-4abc-8def-0123456789ab'), false);
    assert.equal(isWellFormedAccessCode('c0ffee00_1234_4abc_8def_0123456789ab'), false);
    // Non-ASCII digits that some regex engines would count as \d.
    assert.equal(isWellFormedAccessCode('c0ffee00-1234-4abc-8def-012345678٩ab'), false);
  });
});

describe('hashAccessCode', () => {
  test('is the SHA-256 hex digest of the lower-case code', () => {
    assert.equal(hashAccessCode(SAMPLE), SAMPLE_DIGEST);
    assert.equal(hashAccessCode(SAMPLE.toUpperCase()), SAMPLE_DIGEST);
  });

  test('is the same for upper, lower and mixed case', () => {
    const code = newAccessCode();
    const digest = hashAccessCode(code);
    assert.equal(hashAccessCode(code.toUpperCase()), digest);
    assert.equal(hashAccessCode(code.replace(/[a-f]/, (letter) => letter.toUpperCase())), digest);
    assert.equal(digest, createHash('sha256').update(code).digest('hex'));
  });

  test('is 64 lower-case hex characters and does not contain the code', () => {
    const code = newAccessCode();
    const digest = hashAccessCode(code);
    assert.match(digest, /^[0-9a-f]{64}$/);
    assert.equal(digest.includes(code), false);
    assert.equal(digest.includes(code.replaceAll('-', '')), false);
  });

  test('differs for different codes', () => {
    const digests = new Set<string>();
    for (let i = 0; i < 1000; i++) digests.add(hashAccessCode(newAccessCode()));
    assert.equal(digests.size, 1000);
  });
});
