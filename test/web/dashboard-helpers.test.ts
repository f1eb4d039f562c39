/**
 * The dashboard's pure helpers, run in Node (they touch no page): the table of error
 * messages, the views' addresses, the list's order, the CSV export, the sparkline's points,
 * a failed webhook delivery's next retry and the pasted lines of "Paste many URLs". The browser tests drive the same code through
 * the page, against the real API.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { describeError, MESSAGES } from '../../src/web/messages.js';
import { hashOf, parseRoute } from '../../src/web/router.js';
import { sortLinks } from '../../src/web/links-state.js';
import { csvField, linksCsv } from '../../src/web/links-csv.js';
import { sparkPoints } from '../../src/web/sparkline.js';
import { nextRetry, RETRY_DELAYS_MS as UI_DELAYS, RETRY_WINDOW_MS } from '../../src/web/integrations-view.js';
import { parsePasted } from '../../src/web/pasted-lines.js';
import { RETRY_DELAYS_MS, RETRY_FOR_MS } from '../../src/webhooks/backoff.ts';

describe('describeError', () => {
  test('words every error the forms can trigger plainly, beside its field', () => {
    const cases: Array<[number, string, string, RegExp]> = [
      [400, 'Unable to create link: max_visits must be a whole number from 1 to 2,147,483,647', 'max_visits', /^The visit limit is a whole number from 1 to 2,147,483,647\.$/],
      [409, 'Unable to create link: the shortcode "abcde" is already taken', 'short', /^The shortcode "abcde" is already taken\./],
      [400, 'Unable to create link: url must use http or https', 'url', /^Only http:\/\/ and https:\/\//],
      [400, 'Unable to update link: url must not be empty', 'url', /^Enter the address/],
      [400, 'Unable to create link: each tag must be 1 to 50 characters from A-Z a-z 0-9 - _ .', 'tags', /^Each tag has 1 to 50 characters/],
      [400, 'Unable to create link: expires must be in the future', 'expires', /^The expiry is in the past/],
      [403, 'Unable to create link: the account already holds its maximum of 20 links', 'form', /^Your account is full: it holds its maximum of 20 links\./],
      [401, 'Unable to get account information: the access code is not valid', 'code', /^This access code does not open any account/],
      [403, 'Unable to create webhook: the account already holds its maximum of 5 webhooks', 'form', /^An account has at most 5 webhooks/],
      [400, 'Unable to create webhook: url must not point at a loopback, private or link-local address (127.0.0.1)', 'url', /reachable from the internet/],
      [400, 'Unable to get statistics: the period holds more than 10000 hours; choose a shorter one or a longer interval', 'form', /^That period has more than 10000 hours/],
      [403, 'Unable to manage keys: the account already holds its maximum of 20 API keys', 'form', /^An account has at most 20 API keys\./],
      [400, 'Unable to manage keys: the parameter "name" is required', 'name', /^Give the key a name/],
      [400, 'Unable to manage keys: name must be at most 100 characters long', 'name', /^The name is too long: at most 100 characters\.$/],
      [400, 'Unable to manage keys: the parameter "scopes" is required', 'scopes', /^Pick at least one thing the key may do\.$/],
      [400, 'Unable to manage keys: unknown scope "links:admin"; scopes are links:read, links:write, stats:read, webhooks', 'scopes', /^One of the permissions is not known/],
      [404, 'Unable to manage keys: no API key of this account has this id', 'form', /^This key no longer exists/],
      [403, 'Unable to rotate access code: the key does not allow this', 'form', /^The key used does not allow this/],
    ];
    for (const [status, line, field, text] of cases) {
      const said = describeError(status, line);
      assert.equal(said.field, field, line);
      assert.match(said.text, text, line);
      assert.doesNotMatch(said.text, /^Unable to /, 'never the raw API line');
    }
  });

  test('says something useful for what the table does not know', () => {
    assert.deepEqual(describeError(0, 'Unable to reach the service: check the connection and try again.'), {
      field: 'form', text: 'The service could not be reached. Check the connection and try again.',
    });
    assert.equal(describeError(503, 'Unable to create link: the storage is unavailable').text, 'The service is busy or its storage is unavailable. Try again in a moment.');
    assert.equal(describeError(429, 'Unable to create link: too many requests').text, 'Too many attempts in a short time. Wait a moment and try again.');
    // A reason about one parameter that the table has no words for: the API's sentence, beside that field.
    assert.deepEqual(describeError(400, 'Unable to create link: url <b>odd</b>'), { field: 'url', text: 'Url <b>odd</b>.' });
    assert.deepEqual(describeError(400, 'Unable to list links: something new'), { field: 'form', text: 'Something new.' });
  });

  test('each row of the table has a pattern anchored at the reason\'s start', () => {
    for (const row of MESSAGES) assert.ok(row.reason.source.startsWith('^'), row.reason.source);
  });
});

describe('routes', () => {
  test('name each view, and a link\'s statistics, by the hash; anything else is the links view', () => {
    assert.deepEqual(parseRoute(''), { view: 'links', param: null });
    assert.deepEqual(parseRoute('#/links'), { view: 'links', param: null });
    assert.deepEqual(parseRoute('#/stats'), { view: 'stats', param: null });
    assert.deepEqual(parseRoute('#/stats/spring-sale'), { view: 'stats', param: 'spring-sale' });
    assert.deepEqual(parseRoute('#/stats/a%2Fb%20c'), { view: 'stats', param: 'a/b c' });
    assert.deepEqual(parseRoute('#/integrations'), { view: 'integrations', param: null });
    assert.deepEqual(parseRoute('#/account/extra'), { view: 'account', param: null });
    assert.deepEqual(parseRoute('#main'), { view: 'links', param: null });
    assert.deepEqual(parseRoute('#/stats/%E0%A4%A'), { view: 'stats', param: null });
    assert.equal(hashOf('stats', 'a/b c'), '#/stats/a%2Fb%20c');
    assert.deepEqual(parseRoute(hashOf('stats', '~x.y_z-')), { view: 'stats', param: '~x.y_z-' });
  });
});

const link = (code: string, created: string, accesses: number) => ({
  ShortCode: code, PointsTo: `https://example.com/${code}`, CreatedBy: 1, Accesses: accesses, DateCreated: created,
  Title: null, Tags: [], ExpiresAt: null, MaxVisits: null, Domain: null, ForwardQuery: false, Protected: false, Rules: [],
});

describe('sortLinks', () => {
  test('orders as the API does: newest, oldest, and visits with ties newest first', () => {
    const list = [link('a', '2026-01-01T00:00:00.000Z', 3), link('b', '2026-01-02T00:00:00.000Z', 5), link('c', '2026-01-03T00:00:00.000Z', 3)];
    assert.deepEqual(sortLinks(list, 'newest').map((l) => l.ShortCode), ['c', 'b', 'a']);
    assert.deepEqual(sortLinks(list, 'oldest').map((l) => l.ShortCode), ['a', 'b', 'c']);
    assert.deepEqual(sortLinks(list, 'visits').map((l) => l.ShortCode), ['b', 'c', 'a']);
  });
});

describe('CSV export', () => {
  test('quotes what needs quoting and defuses spreadsheet formulas', () => {
    assert.equal(csvField('plain'), 'plain');
    assert.equal(csvField('a,b'), '"a,b"');
    assert.equal(csvField('say "hi"'), '"say ""hi"""');
    assert.equal(csvField('=HYPERLINK("x")'), '"\'=HYPERLINK(""x"")"');
    assert.equal(csvField('+1'), "'+1");
    assert.equal(csvField(null), '');
    assert.equal(csvField(7), '7');
  });

  test('writes one row per link with its details', () => {
    const rows = linksCsv([{ ...link('a', '2026-01-01T00:00:00.000Z', 3), Title: 'Hello, world', Tags: ['x', 'y'], MaxVisits: 10 }],
      (l) => `https://s.test/${l.ShortCode}`, () => 'Active');
    assert.equal(rows, 'short_url,short_code,target,title,tags,created,expires,max_visits,visits,state\r\n' +
      'https://s.test/a,a,https://example.com/a,"Hello, world",x y,2026-01-01T00:00:00.000Z,,10,3,Active\r\n');
  });
});

describe('sparkPoints', () => {
  test('spreads the days over the width and scales to the highest', () => {
    assert.equal(sparkPoints([0, 2, 1], 10, 10), '0.0,9.0 5.0,1.0 10.0,5.0');
    assert.equal(sparkPoints([0, 0], 10, 10), '0.0,9.0 10.0,9.0');
  });
});

describe('nextRetry', () => {
  test('uses the service\'s own retry schedule', () => {
    assert.deepEqual(UI_DELAYS, RETRY_DELAYS_MS);
    assert.equal(RETRY_WINDOW_MS, RETRY_FOR_MS);
  });

  test('follows the retry schedule from the attempt, and stops after 24 hours', () => {
    const first = { EventId: 'e', Type: 'link.created', Attempt: 1, Time: '2026-01-01T00:00:00.000Z', Status: 500, Error: null };
    assert.equal(nextRetry(first, [first])?.toISOString(), '2026-01-01T00:00:05.000Z');
    const third = { ...first, Attempt: 3, Time: '2026-01-01T00:01:00.000Z' };
    assert.equal(nextRetry(third, [first, third])?.toISOString(), '2026-01-01T00:03:00.000Z');
    const late = { ...first, Attempt: 20, Time: '2026-01-01T23:30:00.000Z' };
    assert.equal(nextRetry(late, [first, late]), null);
  });
});

describe('parsePasted', () => {
  test('reads one URL per line, an optional shortcode after it, and skips blank lines', () => {
    assert.deepEqual(parsePasted('https://example.com/a\r\n\n  example.org/b  my-code \n\t\n'), [
      { line: 'https://example.com/a', body: { url: 'https://example.com/a' }, error: null },
      { line: 'example.org/b  my-code', body: { url: 'https://example.org/b', short: 'my-code' }, error: null },
    ]);
    assert.deepEqual(parsePasted(''), []);
  });

  test('refuses a line of more than two words without sending it', () => {
    const [line] = parsePasted('https://example.com/a code extra');
    assert.equal(line?.body, null);
    assert.match(line?.error ?? '', /^Write one address per line/);
  });
});
