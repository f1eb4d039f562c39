/**
 * The web UI's pure helpers, run in Node (they touch no page): the scheme the link form puts
 * before a bare host, the expiry field's conversion to RFC 3339, and the next-page cursor of
 * an RFC 8288 Link header. The browser tests drive the same code through the page.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nextCursor } from '../../src/web/api.js';
import { localToRfc3339, rfc3339ToLocal, withScheme } from '../../src/web/dom.js';

describe('withScheme', () => {
  test('adds https:// to a bare host and path, with or without a port', () => {
    assert.equal(withScheme('example.com/x'), 'https://example.com/x');
    assert.equal(withScheme('example.com'), 'https://example.com');
    assert.equal(withScheme('sub.example.co.uk/a?b=c#d'), 'https://sub.example.co.uk/a?b=c#d');
    assert.equal(withScheme('example.com:8443/x'), 'https://example.com:8443/x');
    assert.equal(withScheme('localhost:8080/x'), 'https://localhost:8080/x');
    assert.equal(withScheme('//example.com/x'), 'https://example.com/x');
    assert.equal(withScheme('192.0.2.7/x'), 'https://192.0.2.7/x');
  });

  test('leaves a URL with a scheme, and anything that is no host, exactly as typed', () => {
    for (const value of [
      'https://example.com/x',
      'http://example.com/x',
      'HTTPS://EXAMPLE.COM',
      'ftp://example.com/file',
      'javascript:alert(1)',
      'data:text/html,hi',
      'mailto:someone@example.com',
      'not a url',
      'example',
      'example.',
      '',
      ' example.com',
    ]) {
      assert.equal(withScheme(value), value, value);
    }
  });
});

describe('the expiry field', () => {
  test('an empty field is empty both ways', () => {
    assert.equal(localToRfc3339(''), '');
    assert.equal(rfc3339ToLocal(null), '');
    assert.equal(rfc3339ToLocal('not a date'), '');
  });

  test('a local time becomes RFC 3339 with the zone\'s offset at that moment, and back', () => {
    const sent = localToRfc3339('2030-06-01T09:30');
    assert.match(sent, /^2030-06-01T09:30:00(Z|[+-]\d\d:\d\d)$/);
    // Whatever this machine's zone, the instant is the local time the field showed.
    assert.equal(Date.parse(sent), new Date(2030, 5, 1, 9, 30).getTime());
    assert.equal(rfc3339ToLocal(sent), '2030-06-01T09:30');
    assert.equal(rfc3339ToLocal(new Date(2031, 0, 2, 3, 4).toISOString()), '2031-01-02T03:04');
  });

  test('a value the browser could not have produced goes to the API as it is', () => {
    assert.equal(localToRfc3339('tomorrow'), 'tomorrow');
  });
});

describe('nextCursor', () => {
  // The page resolves the header's target against its own origin.
  (globalThis as { location?: { origin: string } }).location ??= { origin: 'http://page.test' };

  test('takes the cursor of the rel="next" target, whatever else the header holds', () => {
    assert.equal(nextCursor('<http://sl.test/v1/links?limit=50&cursor=abc123>; rel="next"'), 'abc123');
    assert.equal(nextCursor('</v1/links?q=x&cursor=a%2Bb>; rel=next'), 'a+b');
    assert.equal(
      nextCursor('<https://sl.test/v1/links?cursor=first>; rel="prev", <https://sl.test/v1/links?cursor=second>; title="x"; rel="next last"'),
      'second',
    );
  });

  test('answers null on the last page or a header it cannot use', () => {
    assert.equal(nextCursor(null), null);
    assert.equal(nextCursor(''), null);
    assert.equal(nextCursor('<http://sl.test/v1/links?cursor=x>; rel="prev"'), null);
    assert.equal(nextCursor('<http://sl.test/v1/links>; rel="next"'), null);
    assert.equal(nextCursor('garbage'), null);
  });
});
