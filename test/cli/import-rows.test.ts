/**
 * Import columns and values: each shortener's layout maps onto shortcode, url, accesses and
 * date, and every row is checked with the API's own validators.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkRow, detectColumns, layoutName, parseDate, shortCodeOfUrl, type ColumnMap } from '../../src/cli/import-rows.ts';

const RULES = { ownOrigin: 'http://sl.test', blockedHosts: ['evil.example'], now: '2026-01-01T00:00:00.000Z' };

function columns(headers: string[]): ColumnMap {
  const found = detectColumns(headers);
  assert.ok(typeof found !== 'string', String(found));
  return found;
}

function check(row: Record<string, string>) {
  return checkRow((header) => row[header], columns(Object.keys(row)), RULES);
}

describe('import columns', () => {
  test('recognise each layout and map it onto the link fields', () => {
    const layouts: [string, string[], Partial<ColumnMap>][] = [
      ['Shortlink', ['ShortCode', 'PointsTo', 'CreatedBy', 'Accesses', 'DateCreated'],
        { shortCode: 'ShortCode', url: 'PointsTo', accesses: 'Accesses', dateCreated: 'DateCreated' }],
      ['Shlink', ['createdAt', 'domain', 'shortCode', 'shortUrl', 'longUrl', 'title', 'tags', 'visits'],
        { shortCode: 'shortCode', shortUrl: 'shortUrl', url: 'longUrl', accesses: 'visits', dateCreated: 'createdAt' }],
      ['YOURLS', ['keyword', 'url', 'title', 'timestamp', 'ip', 'clicks'],
        { shortCode: 'keyword', url: 'url', accesses: 'clicks', dateCreated: 'timestamp' }],
      ['Kutt', ['id', 'address', 'target', 'visit_count', 'created_at', 'description'],
        { shortCode: 'address', url: 'target', accesses: 'visit_count', dateCreated: 'created_at' }],
      ['Bitly', ['id', 'link', 'long_url', 'title', 'created_at', 'clicks'],
        { shortUrl: 'link', url: 'long_url', accesses: 'clicks', dateCreated: 'created_at' }],
      ['generic', ['Short Code', 'Destination URL'], { shortCode: 'Short Code', url: 'Destination URL' }],
    ];
    for (const [layout, headers, expected] of layouts) {
      assert.equal(layoutName(headers), layout);
      assert.deepEqual(columns(headers), expected, layout);
    }
  });

  test('a file without a url column is refused, listing what it has', () => {
    assert.match(String(detectColumns(['code', 'clicks'])), /no column holds the target URL.*found "code", "clicks"/);
  });

  test('the shortcode of a short URL is its last path segment', () => {
    assert.equal(shortCodeOfUrl('https://bit.ly/3xYzAbc'), '3xYzAbc');
    assert.equal(shortCodeOfUrl('bit.ly/3xYzAbc'), '3xYzAbc');
    assert.equal(shortCodeOfUrl('https://s.test/path/my-code/?utm=1#x'), 'my-code');
    assert.equal(shortCodeOfUrl(''), '');
  });
});

describe('import values', () => {
  test('a valid row becomes a link, values trimmed, missing ones defaulted', () => {
    assert.deepEqual(check({ keyword: ' my-code ', url: ' https://example.com/x ', clicks: '12', timestamp: '2022-01-02 03:04:05' }), {
      ok: true,
      row: { shortCode: 'my-code', pointsTo: 'https://example.com/x', accesses: 12, dateCreated: '2022-01-02T03:04:05.000Z' },
    });
    assert.deepEqual(check({ url: 'https://example.com/y' }), {
      ok: true,
      row: { shortCode: undefined, pointsTo: 'https://example.com/y', accesses: 0, dateCreated: RULES.now },
    });
  });

  test('urls and shortcodes are refused for the reasons the API gives', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ keyword: 'good-code', url: 'javascript:alert(1)' }, /url must use http or https/],
      [{ keyword: 'good-code', url: 'http://sl.test/loop' }, /url must not point back at this service/],
      [{ keyword: 'good-code', url: 'https://login.evil.example/' }, /not allowed on this service/],
      [{ keyword: 'good-code', url: '' }, /the url is empty/],
      [{ keyword: 'abc', url: 'https://example.com' }, /short must be 5 to 2000 characters long/],
      [{ keyword: 'has space', url: 'https://example.com' }, /short may contain only/],
      [{ keyword: 'Admin', url: 'https://example.com' }, /is reserved/],
      [{ keyword: 'good-code', url: 'https://example.com', clicks: '-1' }, /accesses must be a whole number/],
      [{ keyword: 'good-code', url: 'https://example.com', clicks: '1.5' }, /accesses must be a whole number/],
      [{ keyword: 'good-code', url: 'https://example.com', timestamp: 'yesterday' }, /not a date/],
    ];
    for (const [row, reason] of cases) {
      const result = check(row);
      assert.equal(result.ok, false, JSON.stringify(row));
      assert.match((result as { reason: string }).reason, reason);
    }
  });

  test('dates in the layouts\' forms become ISO 8601 in UTC', () => {
    assert.equal(parseDate('2026-11-22T04:12:49.123Z'), '2026-11-22T04:12:49.123Z');
    assert.equal(parseDate('2023-05-01T10:00:00+02:00'), '2023-05-01T08:00:00.000Z');
    assert.equal(parseDate('2021-06-01T12:00:00+0000'), '2021-06-01T12:00:00.000Z');
    assert.equal(parseDate('2022-01-02 03:04:05'), '2022-01-02T03:04:05.000Z');
    assert.equal(parseDate('1700000000'), '2023-11-14T22:13:20.000Z');
    assert.equal(parseDate('1700000000123'), '2023-11-14T22:13:20.123Z');
    assert.equal(parseDate('not a date'), undefined);
  });
});
