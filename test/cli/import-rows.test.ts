/**
 * Import columns and values: each shortener's layout maps onto shortcode, url, accesses and
 * date, and every row is checked with the API's own validators.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkRow, detectColumns, layoutName, parseDate, readDate, shortCodeOfUrl, type ColumnMap } from '../../src/cli/import-rows.ts';

const NONE = { title: null, tags: [], expiresAt: null, maxVisits: null, domain: null, forwardQuery: false, rules: null };
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
      ['Shortlink', ['ShortCode', 'PointsTo', 'CreatedBy', 'Accesses', 'DateCreated', 'Title', 'Tags', 'ExpiresAt', 'MaxVisits',
        'Domain', 'ForwardQuery', 'Protected', 'Rules'],
        { shortCode: 'ShortCode', url: 'PointsTo', accesses: 'Accesses', dateCreated: 'DateCreated', title: 'Title', tags: 'Tags',
          expiresAt: 'ExpiresAt', maxVisits: 'MaxVisits', domain: 'Domain', forwardQuery: 'ForwardQuery', passwordProtected: 'Protected', rules: 'Rules' }],
      ['Shlink', ['createdAt', 'domain', 'shortCode', 'shortUrl', 'longUrl', 'title', 'tags', 'visits'],
        { shortCode: 'shortCode', shortUrl: 'shortUrl', url: 'longUrl', accesses: 'visits', dateCreated: 'createdAt', title: 'title', tags: 'tags',
          domain: 'domain' }],
      ['YOURLS', ['keyword', 'url', 'title', 'timestamp', 'ip', 'clicks'],
        { shortCode: 'keyword', url: 'url', accesses: 'clicks', dateCreated: 'timestamp', title: 'title' }],
      ['Kutt', ['id', 'address', 'target', 'visit_count', 'created_at', 'description'],
        { shortCode: 'address', url: 'target', accesses: 'visit_count', dateCreated: 'created_at', title: 'description' }],
      ['Bitly', ['id', 'link', 'long_url', 'title', 'created_at', 'clicks'],
        { shortUrl: 'link', url: 'long_url', accesses: 'clicks', dateCreated: 'created_at', title: 'title' }],
      // Shlink's API answer, its nested objects read as `outer.inner`.
      ['Shlink', ['shortCode', 'longUrl', 'dateCreated', 'tags', 'title', 'meta.validUntil', 'meta.maxVisits', 'visitsSummary.total'],
        { shortCode: 'shortCode', url: 'longUrl', dateCreated: 'dateCreated', tags: 'tags', title: 'title', expiresAt: 'meta.validUntil',
          maxVisits: 'meta.maxVisits', accesses: 'visitsSummary.total' }],
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
      row: { shortCode: 'my-code', pointsTo: 'https://example.com/x', accesses: 12, dateCreated: '2022-01-02T03:04:05.000Z', ...NONE },
    });
    assert.deepEqual(check({ url: 'https://example.com/y' }), {
      ok: true,
      row: { shortCode: undefined, pointsTo: 'https://example.com/y', accesses: 0, dateCreated: RULES.now, ...NONE },
    });
  });

  test('titles, tags, expiries and visit limits are kept, read in each layout\'s form', () => {
    const ok = (row: Record<string, unknown>) => {
      const result = checkRow((header) => row[header], columns(Object.keys(row)), RULES);
      assert.ok(result.ok, result.ok ? '' : result.reason);
      const { title, tags, expiresAt, maxVisits } = result.row;
      return { title, tags, expiresAt, maxVisits };
    };
    // Shlink's CSV: tags joined with "|"; ours: commas; Shlink's API: an array and its meta.
    assert.deepEqual(ok({ shortCode: 'c-1', longUrl: 'https://example.com', title: 'T', tags: 'Launch|2023' }),
      { title: 'T', tags: ['launch', '2023'], expiresAt: null, maxVisits: null });
    assert.deepEqual(ok({ ShortCode: 'c-2', PointsTo: 'https://example.com', Tags: 'a,b', ExpiresAt: '2001-01-01T00:00:00.000Z', MaxVisits: '3' }),
      { title: null, tags: ['a', 'b'], expiresAt: '2001-01-01T00:00:00.000Z', maxVisits: 3 });
    assert.deepEqual(ok({ shortCode: 'c-3', longUrl: 'https://example.com', tags: ['x', 'Y'], 'meta.validUntil': '2030-01-01T00:00:00+01:00', 'meta.maxVisits': 10 }),
      { title: null, tags: ['x', 'y'], expiresAt: '2029-12-31T23:00:00.000Z', maxVisits: 10 });
    // A page title from YOURLS or Bitly: line breaks become spaces, and it is cut to 200 characters.
    assert.equal(ok({ keyword: 'c-4', url: 'https://example.com', title: `Two\r\nlines ${'é'.repeat(300)}` }).title, `Two lines ${'é'.repeat(190)}`);
    const refused = checkRow((h) => ({ keyword: 'c-5', url: 'https://example.com', tags: 'has space' } as Record<string, string>)[h],
      columns(['keyword', 'url', 'tags']), RULES);
    assert.deepEqual(refused, { ok: false, reason: 'each tag must be 1 to 50 characters from A-Z a-z 0-9 - _ .' });
  });

  test('urls and shortcodes are refused for the reasons the API gives', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ keyword: 'good-code', url: 'javascript:alert(1)' }, /url must use http or https/],
      [{ keyword: 'good-code', url: 'http://sl.test/loop' }, /url must not point back at this service/],
      [{ keyword: 'good-code', url: 'https://login.evil.example/' }, /not allowed on this service/],
      [{ keyword: 'good-code', url: '' }, /the url is empty/],
      [{ keyword: 'x'.repeat(2001), url: 'https://example.com' }, /the shortcode must be at most 2000 characters long/],
      [{ keyword: 'has space', url: 'https://example.com' }, /the shortcode may contain only/],
      [{ keyword: 'Admin', url: 'https://example.com' }, /the shortcode "Admin" is a reserved path of this service/],
      [{ keyword: 'HEALTHZ', url: 'https://example.com' }, /the shortcode "HEALTHZ" is a reserved path/],
      [{ keyword: '..', url: 'https://example.com' }, /cannot be reached: clients remove "\." and "\.\." path segments/],
      [{ address: 'kutt-banned', target: 'https://example.com', banned: 'true' }, /marked banned/],
      [{ address: 'kutt-locked', target: 'https://example.com', password: 'true' }, /password-protected/],
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

  test('shortcodes keep their length: 1 to 2000 unreserved characters', () => {
    for (const keyword of ['1', 'a', '2a', 'ozh', 'ab~c', '.x', 'x'.repeat(2000)]) {
      const result = check({ keyword, url: 'https://example.com/y' });
      assert.ok(result.ok, keyword);
      assert.equal(result.row.shortCode, keyword);
    }
    // Kutt's flags set to false do not refuse the row.
    assert.ok(check({ address: 'kutt-ok', target: 'https://example.com', banned: 'false', password: 'false' }).ok);
  });

  test('dates in the layouts\' forms become ISO 8601 in UTC', () => {
    assert.equal(parseDate('2026-11-22T04:12:49.123Z'), '2026-11-22T04:12:49.123Z');
    assert.equal(parseDate('2023-05-01T10:00:00+02:00'), '2023-05-01T08:00:00.000Z');
    assert.equal(parseDate('2021-06-01T12:00:00+0000'), '2021-06-01T12:00:00.000Z');
    assert.equal(parseDate('2022-01-02 03:04:05'), '2022-01-02T03:04:05.000Z');
    assert.equal(parseDate('1700000000'), '2023-11-14T22:13:20.000Z');
    assert.equal(parseDate('1700000000123'), '2023-11-14T22:13:20.123Z');
    assert.equal(parseDate('not a date'), undefined);
    assert.equal(parseDate('2024-03-15'), '2024-03-15T00:00:00.000Z');
    assert.equal(parseDate('2024-03-15T09:30:00.123456+05:30'), '2024-03-15T04:00:00.123Z');
    assert.equal(parseDate('2024-03-15T09:30+0530'), '2024-03-15T04:00:00.000Z');
    assert.equal(parseDate('2021-06-01T12:00:00 +0000'), '2021-06-01T12:00:00.000Z');
    assert.equal(parseDate('Tue, 14 Nov 2023 22:13:20 GMT'), '2023-11-14T22:13:20.000Z');
  });

  test('ambiguous day/month dates are refused, never guessed', () => {
    for (const raw of ['03/15/2024', '15/03/2024', '03/04/2024', '15.03.2024', '3-4-24', '03/15/2024 10:00']) {
      const result = readDate(raw);
      assert.equal(result.ok, false, raw);
      assert.match((result as { reason: string }).reason, /is ambiguous \(month\/day or day\/month\?\) and is not guessed: write it as ISO 8601/, raw);
    }
  });

  test('dates that are not real, or in forms Date.parse would half-guess, are refused', () => {
    for (const raw of ['2024-02-30', '2023-02-29 10:00:00', '2024-03-15T24:00:00Z', '2024-13-01']) {
      assert.match((readDate(raw) as { reason: string }).reason, /is not a real date or time/, raw);
    }
    // Date.parse reads "1" as 2001 and "March 5" as a day of 2001.
    for (const raw of ['1', 'March 5', '2024/03/15', 'yesterday', '2024-3-5']) {
      assert.match((readDate(raw) as { reason: string }).reason, /is not a date this import reads/, raw);
    }
  });

  test('a refused date names the value in the row\'s reason', () => {
    const result = check({ keyword: 'dated', url: 'https://example.com', timestamp: '03/15/2024' });
    assert.deepEqual(result, {
      ok: false,
      reason: 'the date created "03/15/2024" is ambiguous (month/day or day/month?) and is not guessed: write it as ISO 8601, e.g. 2024-03-15T09:30:00Z',
    });
  });
});

describe('import of domains and routing', () => {
  const rules = { ...RULES, selfHosts: ['go.sl.test'], defaultHost: 'sl.test' };
  const row = (values: Record<string, unknown>) => checkRow((header) => values[header], columns(Object.keys(values)), rules);
  const ok = (values: Record<string, unknown>) => {
    const result = row(values);
    assert.ok(result.ok, JSON.stringify(result));
    return result.row;
  };

  test('the domain comes from its column, else from the short URL\'s host; empty or the default host is the default domain', () => {
    assert.equal(ok({ ShortCode: 'a1', PointsTo: 'https://example.com', Domain: 'Go.Example.com' }).domain, 'go.example.com');
    assert.equal(ok({ ShortCode: 'a1', PointsTo: 'https://example.com', Domain: '' }).domain, null);
    assert.equal(ok({ shortCode: 'a1', longUrl: 'https://example.com', domain: null }).domain, null);
    assert.equal(ok({ ShortCode: 'a1', PointsTo: 'https://example.com', Domain: 'SL.test:8080' }).domain, null);
    assert.equal(ok({ link: 'https://brand.example/x1', long_url: 'https://example.com' }).domain, 'brand.example');
    assert.equal(ok({ link: 'bit.ly/x1', long_url: 'https://example.com' }).domain, 'bit.ly');
    assert.equal(ok({ link: 'https://sl.test/x1', long_url: 'https://example.com' }).domain, null);
    // A domain column wins over the short URL's host (Shlink has both).
    assert.equal(ok({ shortCode: 'x1', shortUrl: 'https://s.test/x1', longUrl: 'https://example.com', domain: '' }).domain, null);
    assert.deepEqual(row({ ShortCode: 'a1', PointsTo: 'https://example.com', Domain: 'not a host' }), {
      ok: false, reason: 'the domain "not a host" is not a host name',
    });
    assert.equal(row({ ShortCode: 'a1', PointsTo: 'https://example.com', Domain: 'go.example.com/path' }).ok, false);
    // --domain overrides the file.
    const forced = checkRow((h) => ({ link: 'bit.ly/x1', long_url: 'https://example.com' } as Record<string, string>)[h],
      columns(['link', 'long_url']), { ...rules, domain: null });
    assert.equal(forced.ok && forced.row.domain, null);
  });

  test('forwardQuery is a flag; rules are checked like the API\'s, in either key case, and stored normalised', () => {
    assert.equal(ok({ ShortCode: 'a1', PointsTo: 'https://example.com', ForwardQuery: 'TRUE' }).forwardQuery, true);
    assert.equal(ok({ ShortCode: 'a1', PointsTo: 'https://example.com', ForwardQuery: '' }).forwardQuery, false);
    assert.equal(ok({ shortCode: 'a1', longUrl: 'https://example.com', forwardQuery: false }).forwardQuery, false);
    assert.deepEqual(row({ ShortCode: 'a1', PointsTo: 'https://example.com', ForwardQuery: 'sometimes' }), {
      ok: false, reason: 'forwardQuery must be true or false, got "sometimes"',
    });
    const stored = '[{"if":{"os":["ios"]},"to":"https://apps.example.com/"}]';
    assert.equal(ok({ ShortCode: 'a1', PointsTo: 'https://example.com', Rules: '[{"If":{"os":["ios"]},"To":"https://apps.example.com/"}]' }).rules, stored);
    assert.equal(ok({ ShortCode: 'a1', PointsTo: 'https://example.com', Rules: [{ if: { os: 'iOS' }, to: 'https://apps.example.com/' }] }).rules, stored);
    assert.equal(ok({ ShortCode: 'a1', PointsTo: 'https://example.com', Rules: '' }).rules, null);
    assert.match((row({ ShortCode: 'a1', PointsTo: 'https://example.com', Rules: '[{"if":{"os":"beos"},"to":"https://x.example/"}]' }) as { reason: string }).reason, /beos/);
    // A rule's target is checked like url: a blocked host, or a loop to a registered domain.
    assert.equal(row({ ShortCode: 'a1', PointsTo: 'https://example.com', Rules: '[{"if":{"os":"ios"},"to":"https://evil.example/"}]' }).ok, false);
    assert.equal(row({ ShortCode: 'a1', PointsTo: 'https://example.com', Rules: '[{"if":{"os":"ios"},"to":"https://go.sl.test/x"}]' }).ok, false);
    assert.match((row({ ShortCode: 'a1', PointsTo: 'https://example.com', Protected: 'true' }) as { reason: string }).reason, /password-protected/);
    assert.ok(row({ ShortCode: 'a1', PointsTo: 'https://example.com', Protected: 'false' }).ok);
  });
});
