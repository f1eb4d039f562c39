import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DomainError, ErrorCode } from '../../src/errors.ts';
import { RESERVED_NAMES, isReservedName } from '../../src/links/reserved.ts';
import {
  ALPHABET, GENERATED_LENGTH, SHORTCODE_MAX, SHORTCODE_MIN, couldBeShortcode, generateShortcode,
  validateCustomShortcode,
} from '../../src/links/shortcode.ts';

function accepts(code: string): void {
  assert.equal(validateCustomShortcode(code), code, `expected ${JSON.stringify(code.slice(0, 40))} to be accepted`);
}

function rejects(code: string, reason?: RegExp): void {
  assert.throws(
    () => validateCustomShortcode(code),
    (error: unknown) => {
      assert.ok(error instanceof DomainError);
      assert.equal(error.code, ErrorCode.InvalidParameter);
      if (reason !== undefined) assert.match(error.message, reason);
      return true;
    },
    `expected ${JSON.stringify(code.slice(0, 40))} to be rejected`,
  );
}

/** Pearson's chi-square statistic of observed counts against a uniform expectation. */
function chiSquare(counts: readonly number[]): number {
  const total = counts.reduce((sum, count) => sum + count, 0);
  const expected = total / counts.length;
  return counts.reduce((sum, count) => sum + (count - expected) ** 2 / expected, 0);
}

// Critical value of chi-square with 61 degrees of freedom at p = 1e-9 (Wilson–Hilferty:
// 61 · (1 − 2/549 + 5.998·√(2/549))³ ≈ 152.9). Seven checks run per test, so a fair
// generator fails about once in 10^8 runs, while modulo bias (byte % 62 without rejection
// gives A–H a 5/256 share instead of 4/256) scores well above 1000 on 200k characters.
const CHI_SQUARE_LIMIT = 153;

function countCharacters(codes: readonly string[], position?: number): number[] {
  const counts = new Array<number>(ALPHABET.length).fill(0);
  for (const code of codes) {
    const characters = position === undefined ? code : code[position]!;
    for (const character of characters) {
      const index = ALPHABET.indexOf(character);
      assert.notEqual(index, -1, `unexpected character ${JSON.stringify(character)}`);
      counts[index]!++;
    }
  }
  return counts;
}

describe('validateCustomShortcode', () => {
  test('accepts 5 characters, the minimum', () => {
    assert.equal(SHORTCODE_MIN, 5);
    accepts('abcde');
  });

  test('accepts 2000 characters, the maximum', () => {
    assert.equal(SHORTCODE_MAX, 2000);
    accepts('a'.repeat(2000));
    accepts('Ab0-._~'.repeat(285) + 'xyzAB');
  });

  test('accepts every RFC 3986 unreserved character', () => {
    accepts('ABCDEFGHIJKLMNOPQRSTUVWXYZ');
    accepts('abcdefghijklmnopqrstuvwxyz');
    accepts('0123456789');
    accepts('a-b.c_d~e');
    accepts('-----');
    accepts('~~~~~');
    accepts('.....');
  });

  test('keeps letter case (codes are case-sensitive)', () => {
    accepts('AbCdE');
    accepts('ABCDE');
  });

  test('rejects a shortcode shorter than 5 characters', () => {
    rejects('abcd', /5 to 2000/);
    rejects('a', /5 to 2000/);
  });

  test('rejects an empty shortcode', () => rejects(''));

  test('rejects a shortcode longer than 2000 characters', () => rejects('a'.repeat(2001), /5 to 2000/));

  for (const [name, code] of [
    ['a space', 'abc de'],
    ['a slash', 'abc/de'],
    ['a question mark', 'abc?de'],
    ['a hash', 'abc#de'],
    ['a percent sign', 'abc%20de'],
    ['a plus sign', 'abc+de'],
    ['a colon', 'abc:de'],
    ['an at sign', 'abc@de'],
    ['a non-ASCII letter', 'ábcde'],
    ['an emoji', 'abcde😀'],
    ['a trailing newline', 'abcde\n'],
    ['a NUL', 'abc\u0000de'],
    ['a full-width letter', 'ａbcde'],
  ] as const) {
    test(`rejects a shortcode containing ${name}`, () => rejects(code, /characters/));
  }

  test('rejects the reserved names as given', () => {
    for (const name of RESERVED_NAMES) rejects(name);
  });

  test('rejects reserved names in any letter case', () => {
    rejects('HEALTHZ', /reserved/);
    rejects('Favicon.ico', /reserved/);
    rejects('ROBOTS.TXT', /reserved/);
    rejects('Metrics', /reserved/);
    rejects('.Well-Known', /reserved/);
    for (const name of RESERVED_NAMES) {
      rejects(name.toUpperCase());
      if (name.length >= SHORTCODE_MIN) rejects(name, /reserved/);
    }
  });

  test('accepts names that merely contain or extend a reserved name', () => {
    accepts('healthz2');
    accepts('favicon.icon');
    accepts('my-metrics');
    accepts('docs-');
    accepts('v1abc');
  });
});

describe('couldBeShortcode', () => {
  test('is true for anything a valid link could have as shortcode, imported short codes included', () => {
    assert.equal(couldBeShortcode('abcde'), true);
    for (const imported of ['1', 'a', '2a', 'ozh', 'abcd', '~']) assert.equal(couldBeShortcode(imported), true, imported);
    assert.equal(couldBeShortcode('AbC12'), true);
    assert.equal(couldBeShortcode('a-b.c_d~e'), true);
    assert.equal(couldBeShortcode('x'.repeat(2000)), true);
    assert.equal(couldBeShortcode(generateShortcode()), true);
  });

  test('is false for an empty code or one that is too long', () => {
    assert.equal(couldBeShortcode(''), false);
    assert.equal(couldBeShortcode('x'.repeat(2001)), false);
  });

  test('is false for a code with characters outside A-Z a-z 0-9 - . _ ~', () => {
    assert.equal(couldBeShortcode('abc de'), false);
    assert.equal(couldBeShortcode('abc/de'), false);
    assert.equal(couldBeShortcode('abc%41de'), false);
    assert.equal(couldBeShortcode('ábcde'), false);
    assert.equal(couldBeShortcode('😀😀😀😀😀'), false);
    assert.equal(couldBeShortcode('abcde\n'), false);
  });
});

describe('generateShortcode', () => {
  test('draws 6 characters from A-Z a-z 0-9', () => {
    assert.equal(GENERATED_LENGTH, 6);
    assert.equal(ALPHABET.length, 62);
    assert.equal(new Set(ALPHABET).size, 62);
    for (let i = 0; i < 10_000; i++) {
      const code = generateShortcode();
      assert.match(code, /^[A-Za-z0-9]{6}$/);
    }
  });

  test('never draws a reserved name and always passes custom-code validation', () => {
    for (let i = 0; i < 10_000; i++) {
      const code = generateShortcode();
      assert.equal(isReservedName(code), false, code);
      assert.equal(validateCustomShortcode(code), code);
    }
  });

  test('draws distinct codes (no repeats in 10,000 draws)', () => {
    // Birthday bound: 10^8 / (2 · 62^6) ≈ 0.0009 repeats expected among 10^4 draws. A few are
    // tolerated so that the test never flakes; a weak generator would repeat far more often.
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) seen.add(generateShortcode());
    assert.ok(seen.size >= 9_990, `only ${seen.size} distinct codes in 10,000 draws`);
  });

  test('spreads characters uniformly over the alphabet, overall and at every position', () => {
    // 33,334 codes × 6 = 200,004 characters: about 3,226 per letter overall, 538 per position.
    const codes: string[] = [];
    for (let i = 0; i < 33_334; i++) codes.push(generateShortcode());

    const overall = chiSquare(countCharacters(codes));
    assert.ok(overall < CHI_SQUARE_LIMIT, `chi-square over all characters is ${overall.toFixed(1)}`);

    for (let position = 0; position < GENERATED_LENGTH; position++) {
      const statistic = chiSquare(countCharacters(codes, position));
      assert.ok(statistic < CHI_SQUARE_LIMIT, `chi-square at position ${position} is ${statistic.toFixed(1)}`);
    }
  });

  test('the uniformity check would catch modulo bias', () => {
    // The same statistic on a naive `byte % 62` generator: shows the check has teeth.
    const bytes = randomBytes(200_004);
    const counts = new Array<number>(62).fill(0);
    for (const byte of bytes) counts[byte % 62]!++;
    assert.ok(chiSquare(counts) > 5 * CHI_SQUARE_LIMIT);
  });
});
