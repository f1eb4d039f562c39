/**
 * Query forwarding (src/links/forward-query.ts): the visitor's query joins the target's with
 * `&` or starts one with `?`, before the target's fragment, and passes through unchanged.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { withVisitorQuery } from '../../src/links/forward-query.ts';

const href = (url: string) => new URL(url).href;

describe('withVisitorQuery', () => {
  test('starts a query with ? on a target without one', () => {
    assert.equal(withVisitorQuery(href('https://a.example'), 'utm_source=qr'), 'https://a.example/?utm_source=qr');
    assert.equal(withVisitorQuery(href('https://a.example/p'), 'x=1&y=2'), 'https://a.example/p?x=1&y=2');
  });

  test('joins the target\'s query with &', () => {
    assert.equal(withVisitorQuery(href('https://a.example/p?id=7'), 'utm_source=qr'), 'https://a.example/p?id=7&utm_source=qr');
    assert.equal(withVisitorQuery(href('https://a.example/p?a=?&b=c'), 'x=1'), 'https://a.example/p?a=?&b=c&x=1', 'a ? inside the query');
    assert.equal(withVisitorQuery(href('https://a.example/p?flag'), 'x=1'), 'https://a.example/p?flag&x=1');
  });

  test('keeps the target\'s fragment last', () => {
    assert.equal(withVisitorQuery(href('https://a.example/p#top'), 'x=1'), 'https://a.example/p?x=1#top');
    assert.equal(withVisitorQuery(href('https://a.example/p?id=7#top'), 'x=1'), 'https://a.example/p?id=7&x=1#top');
    assert.equal(withVisitorQuery(href('https://a.example/p#a?b=c'), 'x=1'), 'https://a.example/p?x=1#a?b=c', 'a ? inside the fragment');
    assert.equal(withVisitorQuery(href('https://a.example/p?#'), 'x=1'), 'https://a.example/p?x=1#');
    assert.equal(withVisitorQuery(href('https://a.example/p#'), 'x=1'), 'https://a.example/p?x=1#');
  });

  test('adds no separator to an empty query or one that ends in &', () => {
    assert.equal(href('https://a.example/p?'), 'https://a.example/p?', 'the parser keeps an empty query');
    assert.equal(withVisitorQuery(href('https://a.example/p?'), 'x=1'), 'https://a.example/p?x=1');
    assert.equal(withVisitorQuery(href('https://a.example/p?a=1&'), 'x=1'), 'https://a.example/p?a=1&x=1');
  });

  test('passes the visitor\'s query through unchanged: percent-encodings, + and repeats', () => {
    assert.equal(withVisitorQuery(href('https://a.example/p'), 'q=%E2%9C%93&x=a%26b'), 'https://a.example/p?q=%E2%9C%93&x=a%26b');
    assert.equal(withVisitorQuery(href('https://a.example/p?id=1'), 'q=a+b&q=c%2Bd&e=%3D%25'), 'https://a.example/p?id=1&q=a+b&q=c%2Bd&e=%3D%25');
    assert.equal(withVisitorQuery(href('https://a.example/p'), '%7e=~&a=%2f/'), 'https://a.example/p?%7e=~&a=%2f/', 'case of escapes kept');
    assert.equal(withVisitorQuery(href('https://a.example/p'), 'bare&&=&x='), 'https://a.example/p?bare&&=&x=');
  });

  test('leaves the target unchanged when the visitor sent no query', () => {
    for (const target of ['https://a.example/', 'https://a.example/p?id=7#top', 'https://a.example/p?']) {
      assert.equal(withVisitorQuery(target, ''), target);
    }
  });

  test('escapes only what would break the URL or the header: # and whitespace or control characters', () => {
    assert.equal(withVisitorQuery(href('https://a.example/p#top'), 'a=1#x'), 'https://a.example/p?a=1%23x#top');
    assert.equal(withVisitorQuery(href('https://a.example/p'), 'a=b c\td\r\n\u007f'), 'https://a.example/p?a=b%20c%09d%0D%0A%7F');
  });

  test('the receiver reads back the target\'s parameters, then exactly the visitor\'s, and the fragment', () => {
    const key = fc.string({ minLength: 1, maxLength: 6 });
    const pairs = fc.array(fc.tuple(key, fc.string({ maxLength: 6 })), { maxLength: 4 });
    fc.assert(fc.property(pairs, pairs, fc.option(fc.string({ maxLength: 6 }), { nil: undefined }), (own, visitor, fragment) => {
      const target = new URL('https://a.example/p');
      for (const [name, value] of own) target.searchParams.append(name, value);
      if (fragment !== undefined) target.hash = fragment;
      const visitorQuery = new URLSearchParams(visitor).toString();
      const result = new URL(withVisitorQuery(target.href, visitorQuery));
      assert.deepEqual([...result.searchParams], [...own, ...visitor]);
      assert.equal(result.hash, target.hash);
      assert.equal(result.pathname, '/p');
    }));
  });
});
