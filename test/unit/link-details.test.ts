/**
 * The rules for link details and list parameters (src/links/link-details.ts): what each
 * accepts, the stored form it answers, and what it refuses.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { DomainError, ErrorCode } from '../../src/errors.ts';
import {
  decodeCursor, encodeCursor, parseExpires, parseLimit, parseMaxVisits, parseOrder, parseQuery, parseTags, parseTimestamp, parseTitle,
} from '../../src/links/link-details.ts';

const NOW = new Date('2030-01-01T00:00:00.000Z');

function refused(work: () => unknown, reason?: RegExp): void {
  assert.throws(work, (error: unknown) => {
    assert.ok(error instanceof DomainError);
    assert.equal(error.code, ErrorCode.InvalidParameter);
    if (reason !== undefined) assert.match(error.message, reason);
    return true;
  });
}

describe('parseTimestamp and parseExpires', () => {
  test('accept RFC 3339 with Z or an offset and answer UTC in toISOString form', () => {
    assert.equal(parseExpires('2030-06-01T12:00:00Z', NOW), '2030-06-01T12:00:00.000Z');
    assert.equal(parseExpires('2030-06-01t12:00:00z', NOW), '2030-06-01T12:00:00.000Z');
    assert.equal(parseExpires('2030-06-01T12:00:00+02:00', NOW), '2030-06-01T10:00:00.000Z');
    assert.equal(parseExpires('2030-06-01T12:00:00-05:30', NOW), '2030-06-01T17:30:00.000Z');
    assert.equal(parseExpires('2030-06-01T12:00:00.1234567Z', NOW), '2030-06-01T12:00:00.123Z');
    assert.equal(parseExpires('2032-02-29T00:00:00Z', NOW), '2032-02-29T00:00:00.000Z');
  });

  test('refuse times without an offset, bare dates, impossible dates and times not in the future', () => {
    for (const value of ['2030-06-01T12:00:00', '2030-06-01', '2030-06-01 12:00:00Z', '2031-02-29T00:00:00Z', '2030-04-31T00:00:00Z',
      '2030-06-01T12:60:00Z', '2030-06-01T12:00:60Z', '2030-06-01T12:00Z', '20300601T120000Z', '2030-06-01T12:00:00+0200', '']) {
      refused(() => parseExpires(value, NOW), /expires/);
    }
    refused(() => parseExpires('2030-01-01T00:00:00Z', NOW), /future/);
    refused(() => parseExpires('2030-01-01T01:00:00+01:00', NOW), /future/);
  });

  test('any instant written with any offset reads back as the same instant', () => {
    fc.assert(fc.property(
      fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-01-01T00:00:00Z'), noInvalidDate: true }),
      fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }),
      (date, offsetMinutes) => {
        const local = new Date(date.getTime() + offsetMinutes * 60_000).toISOString().slice(0, 23);
        const sign = offsetMinutes < 0 ? '-' : '+';
        const abs = Math.abs(offsetMinutes);
        const text = `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
        assert.equal(parseTimestamp(text, 'expires').toISOString(), date.toISOString());
      },
    ));
  });
});

describe('parseTitle, parseTags, parseMaxVisits, parseLimit, parseQuery', () => {
  test('title: up to 200 code points, no control characters, empty is none', () => {
    assert.equal(parseTitle(''), null);
    assert.equal(parseTitle('😀'.repeat(200)), '😀'.repeat(200));
    refused(() => parseTitle('x'.repeat(201)));
    refused(() => parseTitle('a\tb'));
    refused(() => parseTitle('a\u007fb'));
  });

  test('tags: lower case, trimmed, repeats dropped; at most 10 of 1-50 allowed characters', () => {
    assert.deepEqual(parseTags(''), []);
    assert.deepEqual(parseTags(' Promo , q1.2026,promo,a_b-c '), ['promo', 'q1.2026', 'a_b-c']);
    assert.deepEqual(parseTags(Array.from({ length: 10 }, (_, i) => `t${i}`).join(',')).length, 10);
    for (const bad of ['a,,b', ',a', 'a b', 'ä', 't'.repeat(51), 'a;b', Array.from({ length: 11 }, (_, i) => `t${i}`).join(',')]) {
      refused(() => parseTags(bad));
    }
  });

  test('max_visits 1 to 2,147,483,647 and limit 1 to 1000, digits only', () => {
    assert.equal(parseMaxVisits('1'), 1);
    assert.equal(parseMaxVisits('2147483647'), 2_147_483_647);
    assert.equal(parseLimit('1000'), 1000);
    for (const bad of ['0', '-1', '1.0', '1e3', ' 1', '2147483648', '99999999999', '']) refused(() => parseMaxVisits(bad), /max_visits/);
    for (const bad of ['0', '1001', 'ten']) refused(() => parseLimit(bad), /limit/);
  });

  test('q is lower-cased; control characters and over 2000 code points are refused', () => {
    assert.equal(parseQuery('Spring SALE'), 'spring sale');
    refused(() => parseQuery('a\u0000'));
    refused(() => parseQuery('q'.repeat(2001)));
  });
});

describe('cursors', () => {
  test('every position round-trips with its order; anything else is refused', () => {
    const position = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
    fc.assert(fc.property(position, position, fc.constantFrom('oldest', 'newest') as fc.Arbitrary<'oldest' | 'newest'>, (id, accesses, order) => {
      assert.deepEqual(decodeCursor(encodeCursor(order, { id })), { order, after: { id } });
      assert.deepEqual(decodeCursor(encodeCursor('visits', { id, accesses })), { order: 'visits', after: { id, accesses } });
    }));
    // The form cursors had before orders existed still reads as oldest first.
    assert.deepEqual(decodeCursor(Buffer.from('c42').toString('base64url')), { order: 'oldest', after: { id: 42 } });
    for (const bad of [
      '', 'abc', Buffer.from('c-1').toString('base64url'), Buffer.from('c1 ').toString('base64url'), `${encodeCursor('oldest', { id: 5 })}=`, 'Yz!x',
      Buffer.from('v5').toString('base64url'), Buffer.from('n5.3').toString('base64url'), Buffer.from('x5').toString('base64url'),
    ]) {
      refused(() => decodeCursor(bad), /cursor/);
    }
  });

  test('order is oldest, newest or visits', () => {
    for (const order of ['oldest', 'newest', 'visits'] as const) assert.equal(parseOrder(order), order);
    for (const bad of ['', 'Newest', 'popular', 'visits ']) refused(() => parseOrder(bad), /^order must be one of oldest, newest, visits$/);
  });
});
