import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError, ErrorCode } from '../../src/errors.ts';
import { codePointLength, URL_MAX, validateTargetUrl } from '../../src/links/target-url.ts';

const OWN_ORIGIN = 'http://sl.test';
const PREFIX = 'https://example.com/'; // 20 code points

function accepts(url: string, ownOrigin = OWN_ORIGIN): void {
  // Returned exactly as given: same string, no normalisation by the URL parser.
  assert.equal(validateTargetUrl(url, ownOrigin), url, `expected ${JSON.stringify(url)} to be accepted`);
}

function rejects(url: string, ownOrigin = OWN_ORIGIN): void {
  assert.throws(
    () => validateTargetUrl(url, ownOrigin),
    (error: unknown) => {
      assert.ok(error instanceof DomainError, `expected a DomainError for ${JSON.stringify(url)}`);
      assert.equal(error.code, ErrorCode.InvalidParameter);
      assert.doesNotMatch(error.message, /[\r\n]/);
      return true;
    },
    `expected ${JSON.stringify(url)} to be rejected`,
  );
}

describe('codePointLength', () => {
  test('counts ASCII characters one each', () => {
    assert.equal(codePointLength(''), 0);
    assert.equal(codePointLength('abc'), 3);
  });

  test('counts an astral character (a surrogate pair) as one', () => {
    assert.equal('😀'.length, 2);
    assert.equal(codePointLength('😀'), 1);
    assert.equal(codePointLength('a😀b𝄞c'), 5);
    assert.equal(codePointLength('😀'.repeat(1000)), 1000);
  });

  test('counts BMP non-ASCII characters one each', () => {
    assert.equal(codePointLength('müñchen€'), 8);
  });

  test('counts lone surrogates one each', () => {
    assert.equal(codePointLength('\ud800'), 1);
    assert.equal(codePointLength('\udc00\ud800'), 2);
    assert.equal(codePointLength('a\ud800'), 2);
  });

  test('agrees with iterating the string by code point', () => {
    for (const text of ['', 'plain', '😀x😀', 'é\u0301', '\ud83d', '\ude00\ud83d\ude00']) {
      assert.equal(codePointLength(text), [...text].length, JSON.stringify(text));
    }
  });
});

describe('validateTargetUrl accepts', () => {
  test('a plain http URL', () => accepts('http://example.com'));
  test('a plain https URL with a path', () => accepts('https://example.com/a/b/c.html'));
  test('a URL with a port', () => accepts('http://example.com:8080/x'));
  test('a URL with a query and a fragment', () => accepts('https://example.com/search?q=a+b&lang=en#results'));
  test('an IP address host', () => {
    accepts('http://127.0.0.1/');
    accepts('http://[::1]:3000/');
  });
  test('an internationalised domain name, returned without punycode', () => {
    accepts('https://münchen.de/straße');
    accepts('https://xn--mnchen-3ya.de/');
  });
  test('an emoji path and query', () => accepts('https://example.com/🎉/party?mood=😀'));
  test('percent-encoded text, returned without decoding', () => accepts('https://example.com/a%20b?c=%2F'));
  test('mixed-case scheme and host, returned without lower-casing', () => accepts('HTTPS://Example.COM/Path'));

  test('exactly 2000 ASCII characters', () => {
    const url = PREFIX + 'a'.repeat(URL_MAX - PREFIX.length);
    assert.equal(url.length, 2000);
    accepts(url);
  });

  test('exactly 2000 code points made of astral characters (3980 UTF-16 units)', () => {
    const url = PREFIX + '😀'.repeat(URL_MAX - PREFIX.length);
    assert.equal(url.length, 3980);
    assert.equal(codePointLength(url), 2000);
    accepts(url);
  });

  test('a URL on the service host but on another, non-default port, or on another host', () => {
    accepts('http://sl.test:81/x');
    accepts('https://sl.test:8443/x');
    accepts('http://www.sl.test/x');
  });

  test('loopback targets when the service itself is not on a loopback host', () => {
    accepts('http://localhost:8080/');
    accepts('http://0x7f.1/');
  });
});

describe('validateTargetUrl rejects', () => {
  test('an empty url', () => rejects(''));

  test('2001 ASCII characters', () => rejects(PREFIX + 'a'.repeat(URL_MAX - PREFIX.length + 1)));

  test('2001 code points made of astral characters', () => {
    rejects(PREFIX + '😀'.repeat(URL_MAX - PREFIX.length + 1));
  });

  for (const [name, character] of [
    ['a space', ' '],
    ['a tab', '\t'],
    ['a carriage return', '\r'],
    ['a line feed', '\n'],
    ['a NUL', '\u0000'],
    ['a DEL', '\u007f'],
    ['a C1 control', '\u0085'],
    ['a no-break space', '\u00a0'],
    ['a line separator', '\u2028'],
    ['a paragraph separator', '\u2029'],
    ['an ideographic space', '\u3000'],
    ['a byte order mark', '\ufeff'],
  ] as const) {
    test(`${name} at the start, in the middle or at the end`, () => {
      // The URL parser strips leading/trailing C0 and removes tabs and newlines anywhere,
      // so these must be refused before parsing, not left to it.
      rejects(character + 'https://example.com/x');
      rejects('https://example.com/a' + character + 'b');
      rejects('https://exam' + character + 'ple.com/');
      rejects('https://example.com/x' + character);
    });
  }

  test('a lone surrogate, which could not be stored and returned exactly as given', () => {
    rejects('https://example.com/\ud800');
    rejects('https://example.com/\udc00x');
  });

  test('relative references', () => {
    rejects('/path/only');
    rejects('example.com/path');
    rejects('?q=1');
    rejects('#top');
  });

  test('a scheme-relative reference (//host)', () => rejects('//example.com/path'));

  for (const url of [
    'javascript:alert(1)',
    'JavaScript:alert(document.cookie)',
    'data:text/html,<script>alert(1)</script>',
    'file:///etc/passwd',
    'ftp://example.com/file.txt',
    'vbscript:msgbox("x")',
    'mailto:someone@example.com',
    'ws://example.com/socket',
  ]) {
    test(`a non-http(s) scheme: ${url.slice(0, url.indexOf(':'))}`, () => rejects(url));
  }

  test('an http URL with no host', () => {
    rejects('http://');
    rejects('https://');
    rejects('http:///');
  });

  test('text that does not parse as a URL', () => {
    rejects('http://exa mple.com');
    rejects('https://[::1/');
    rejects('not a url');
  });

  test('credentials in the URL', () => {
    rejects('https://user:pass@example.com/');
    rejects('https://user@example.com/');
    rejects('https://:pass@example.com/');
    rejects('https://trusted.example@evil.example/');
  });

  test("a URL on the service's own origin", () => {
    rejects('http://sl.test/x');
    rejects('http://sl.test');
    rejects('http://sl.test/');
  });

  test('the own host under the other scheme (a loop behind an HTTP to HTTPS redirect)', () => {
    rejects('https://sl.test/x');
    rejects('http://short.example/x', 'https://short.example');
    rejects('http://short.example:443/x', 'https://short.example');
    rejects('http://short.example:8443/x', 'https://short.example:8443');
  });

  test('the own host with a trailing dot, and the own address in another spelling', () => {
    rejects('http://sl.test./x');
    rejects('http://[::ffff:203.0.113.5]/x', 'http://203.0.113.5');
    rejects('http://0xcb.0.113.5/x', 'http://203.0.113.5');
  });

  test('every spelling of loopback on the own or a default port when the service is on a loopback host', () => {
    for (const own of ['http://localhost:8080', 'http://127.0.0.1:8080', 'http://[::1]:8080']) {
      for (const host of ['localhost', 'localhost.', 'LocalHost', '127.0.0.1', '[::1]', '0', '2130706433', '0x7f.1', 'sub.localhost', '127.1.2.3', '[::ffff:127.0.0.1]', '[::]', '0.0.0.0']) {
        rejects(`http://${host}:8080/x`, own);
        rejects(`https://${host}/x`, own);
        // Another port is another service (a local destination, a development server).
        accepts(`http://${host}:3000/x`, own);
      }
      accepts('https://example.com/', own);
    }
  });

  test('the names in SELF_HOSTS, and loopback when one of them is a loopback name', () => {
    const check = (url: string, selfHosts: string[]) => validateTargetUrl(url, OWN_ORIGIN, [], selfHosts);
    assert.throws(() => check('https://alias.example/x', ['alias.example']), /point back at this service/);
    assert.throws(() => check('http://127.0.0.2/x', ['localhost']), /point back at this service/);
    assert.equal(check('https://other.example/x', ['alias.example']), 'https://other.example/x');
  });

  test('the own origin written differently (case, default port)', () => {
    rejects('HTTP://SL.TEST/x');
    rejects('http://sl.test:80/x');
    rejects('https://short.example:443/abc', 'https://short.example');
  });
});
