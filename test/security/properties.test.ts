/**
 * Property-based tests: each validator against a small reference model written from the
 * contract's words (not from the implementation), over generated inputs that mix valid
 * values, near misses and hostile characters. A disagreement is a bug in one of the two.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { hashAccessCode, isWellFormedAccessCode } from '../../src/accounts/access-code.ts';
import { DomainError, ErrorCode } from '../../src/errors.ts';
import { extractAccessCode } from '../../src/http/credentials.ts';
import { readParameters } from '../../src/http/parameters.ts';
import { redactUrl } from '../../src/http/redact.ts';
import { RESERVED_NAMES } from '../../src/links/reserved.ts';
import { couldBeShortcode, generateShortcode, validateCustomShortcode, validateImportedShortcode } from '../../src/links/shortcode.ts';
import { isBlockedHost, validateTargetUrl } from '../../src/links/target-url.ts';
import { account, securityApp } from './support.ts';

const RUNS = { numRuns: 400 } as const;
const OWN_ORIGIN = 'http://sl.test';
const BLOCKED = ['blocked.example', 'xn--le-6kc8da.com'];

/** What a validator did: accepted (and returned what), or refused with which error code. */
type Outcome = { ok: true; value: unknown } | { ok: false; code: string };

function outcome(run: () => unknown): Outcome {
  try {
    return { ok: true, value: run() };
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    assert.doesNotMatch(error.message, /[\r\n]/, 'error reasons are one line');
    return { ok: false, code: error.code };
  }
}

// ------------------------------------------------------------------------------ target URLs

/** The contract's url rule, read literally (CONTRACT §5, docs/api.md, "Create a link"). */
function modelAcceptsUrl(url: string): boolean {
  const points = [...url];
  if (points.length < 1 || points.length > 2000) return false;
  // "no control characters or whitespace": Unicode Cc, White_Space, the bidirectional
  // controls and the BOM (an invisible format character).
  if (/[\p{Cc}\p{White_Space}\p{Bidi_Control}\uFEFF]/u.test(url)) return false;
  if (!url.isWellFormed()) return false;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
  if (parsed.host === '') return false;
  if (parsed.username !== '' || parsed.password !== '') return false;
  const host = parsed.hostname.replace(/\.$/, '');
  // A loop (issue 13, item 12): the service's own host under either scheme, on a default port
  // or its own (OWN_ORIGIN's is the default), with or without the trailing dot.
  if (host === new URL(OWN_ORIGIN).hostname && ['', '80', '443'].includes(parsed.port)) return false;
  return !BLOCKED.some((blocked) => host === blocked || host.endsWith(`.${blocked}`));
}

/** Characters that make URLs interesting: separators, escapes, controls, spaces, bidi, astral. */
const nastyChar = fc.constantFrom(
  '/', '\\', ':', '@', '?', '#', '%', '%2F', '%00', '%0d%0a', '.', '..', '[', ']', '"', "'", '<', '>', ' ',
  '\t', '\r', '\n', '\u0000', '\u007f', '\u0085', '\u00a0', '\u00ad', '\u061c', '\u1680', '\u200b', '\u200d',
  '\u200e', '\u2028', '\u202e', '\u2066', '\u3000', '\ufeff', '\ud800', '\udc00', 'é', 'ß', '\u0430', '😀', 'ｅ',
);
const urlText = (maxLength: number) =>
  fc.array(fc.oneof({ weight: 4, arbitrary: fc.string({ maxLength: 4 }) }, { weight: 2, arbitrary: nastyChar }), { maxLength })
    .map((parts) => parts.join(''));

const scheme = fc.constantFrom('http', 'https', 'HTTP', 'hTtPs', 'ftp', 'javascript', 'JaVaScRiPt', 'data', 'file', 'ws', 'java\tscript', '', ' http');
const separator = fc.constantFrom('://', ':/\\', ':\\\\', ':///', ':', ':/', '//', '');
const userInfo = fc.constantFrom('', '', '', 'user@', 'user:pass@', ':pass@', 'example.com@', 'a%40b@');
const host = fc.constantFrom(
  'example.com', 'EXAMPLE.com', 'sl.test', 'SL.TEST', 'sl.test.', 'www.sl.test', 'blocked.example', 'login.blocked.example',
  'notblocked.example', 'blocked.example.', '\u0430\u0440\u0440le.com', 'xn--80ak6aa92e.com', 'münchen.de', '127.0.0.1', '0x7f.1', '[::1]',
  '[::1', '256.256.256.256', '', 'exa mple.com', 'exa\u200bmple.com', 'ｅｘａｍｐｌｅ.com', 'xn--', 'a..b',
);
const port = fc.constantFrom('', '', ':80', ':443', ':8080', ':99999', ':', ':x');

const targetUrl = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(scheme, separator, userInfo, host, port, urlText(6)).map((parts) => parts.join('')) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.webUrl({ withQueryParameters: true, withFragments: true }) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1990, max: 2010 }).chain((length) =>
      fc.constantFrom('a', '😀', 'é').map((unit) => `https://example.com/${unit.repeat(length - 20)}`),
    ),
  },
);

describe('target URLs', () => {
  test('validateTargetUrl accepts exactly what the contract allows, and returns it unchanged', () => {
    fc.assert(
      fc.property(targetUrl, (url) => {
        const result = outcome(() => validateTargetUrl(url, OWN_ORIGIN, BLOCKED));
        assert.equal(result.ok, modelAcceptsUrl(url), `${JSON.stringify(url)}: implementation ${result.ok ? 'accepts' : 'refuses'}`);
        if (result.ok) assert.equal(result.value, url);
        else assert.equal(result.code, ErrorCode.InvalidParameter);
      }),
      { ...RUNS, numRuns: 3000 },
    );
  });

  test('an accepted target redirects to printable ASCII with the same host the parser sees', () => {
    fc.assert(
      fc.property(targetUrl, (url) => {
        if (!modelAcceptsUrl(url)) return;
        const location = new URL(url).href;
        // A Location header can carry no CR/LF (no response splitting) and no raw Unicode.
        assert.match(location, /^[\x21-\x7e]+$/, JSON.stringify(url));
        assert.match(location, /^https?:\/\/[^/?#@\\]+(\/|$)/, `${location}: scheme, then the host, no user info`);
        assert.equal(new URL(location).href, location, 'normalising twice changes nothing');
        assert.equal(new URL(location).hostname, new URL(url).hostname);
      }),
      { ...RUNS, numRuns: 2000 },
    );
  });

  test('isBlockedHost matches a blocked host and its subdomains, nothing else', () => {
    const label = fc.stringMatching(/^[a-z0-9-]{1,8}$/);
    fc.assert(
      fc.property(fc.array(label, { minLength: 1, maxLength: 4 }), fc.array(label, { minLength: 1, maxLength: 3 }), fc.boolean(), (hostLabels, blockedLabels, trailingDot) => {
        const blocked = blockedLabels.join('.');
        const hostname = hostLabels.join('.') + (trailingDot ? '.' : '');
        const bare = hostLabels.join('.');
        const model = bare === blocked || bare.endsWith(`.${blocked}`);
        assert.equal(isBlockedHost(hostname, [blocked]), model, `${hostname} vs ${blocked}`);
        // A host built as sub.blocked is always blocked.
        assert.equal(isBlockedHost(`${bare}.${blocked}`, [blocked]), true);
      }),
      RUNS,
    );
  });
});

// ------------------------------------------------------------------------------- shortcodes

const UNRESERVED = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~';
const reservedLower = new Set(RESERVED_NAMES.map((name) => name.toLowerCase()));

function modelShapeOk(code: string, min = 5): boolean {
  return code.length >= min && code.length <= 2000 && [...code].every((c) => UNRESERVED.includes(c));
}

const shortcode = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: fc.constantFrom(...UNRESERVED), minLength: 3, maxLength: 12 }) },
  { weight: 2, arbitrary: fc.mixedCase(fc.constantFrom(...RESERVED_NAMES)) },
  { weight: 2, arbitrary: fc.tuple(fc.string({ unit: fc.constantFrom(...UNRESERVED), maxLength: 6 }), nastyChar, fc.string({ unit: fc.constantFrom(...UNRESERVED), maxLength: 6 })).map((p) => p.join('')) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1995, max: 2005 }).map((n) => 'x'.repeat(n)) },
);

describe('shortcodes', () => {
  test('validateCustomShortcode accepts 5–2000 unreserved characters that are no reserved name', () => {
    fc.assert(
      fc.property(shortcode, (code) => {
        const model = modelShapeOk(code) && !reservedLower.has(code.toLowerCase());
        const result = outcome(() => validateCustomShortcode(code));
        assert.equal(result.ok, model, JSON.stringify(code));
        if (result.ok) assert.equal(result.value, code);
        else assert.equal(result.code, ErrorCode.InvalidParameter);
      }),
      { ...RUNS, numRuns: 2000 },
    );
  });

  test('validateImportedShortcode accepts 1–2000 unreserved characters but reserved names, "." and ".."; all of them resolve', () => {
    const imported = fc.oneof(shortcode, fc.string({ unit: fc.constantFrom(...UNRESERVED), minLength: 1, maxLength: 4 }));
    fc.assert(
      fc.property(imported, (code) => {
        const model = modelShapeOk(code, 1) && !reservedLower.has(code.toLowerCase()) && code !== '.' && code !== '..';
        const result = outcome(() => validateImportedShortcode(code));
        assert.equal(result.ok, model, JSON.stringify(code));
        if (result.ok) assert.equal(couldBeShortcode(result.value as string), true, JSON.stringify(code));
        else assert.equal(result.code, ErrorCode.InvalidParameter);
      }),
      { ...RUNS, numRuns: 2000 },
    );
  });

  test('couldBeShortcode (the read paths\u2019 shortcut to 404) agrees with the shape rule', () => {
    fc.assert(fc.property(shortcode, (code) => assert.equal(couldBeShortcode(code), modelShapeOk(code, 1), JSON.stringify(code))), { ...RUNS, numRuns: 2000 });
  });

  test('generated codes are 6 alphanumerics, never reserved, and cover the alphabet evenly', () => {
    const counts = new Map<string, number>();
    const draws = 20_000;
    for (let i = 0; i < draws; i++) {
      const code = generateShortcode();
      assert.match(code, /^[A-Za-z0-9]{6}$/);
      assert.equal(reservedLower.has(code.toLowerCase()), false);
      for (const c of code) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    assert.equal(counts.size, 62);
    // 120,000 characters over 62 symbols: about 1935 each; a modulo bias would show as a
    // systematic excess of the first 8 symbols. Chi-square with 61 degrees of freedom stays
    // under 110 except with probability about 1e-4.
    const expected = (draws * 6) / 62;
    const chiSquare = [...counts.values()].reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0);
    assert.ok(chiSquare < 110, `chi-square ${chiSquare.toFixed(1)}`);
  });
});

// ----------------------------------------------------------------------------- access codes

describe('access codes', () => {
  function modelWellFormed(text: string): boolean {
    if (text.length !== 36) return false;
    for (let i = 0; i < 36; i++) {
      const c = text[i]!;
      if ([8, 13, 18, 23].includes(i)) {
        if (c !== '-') return false;
      } else if (i === 14) {
        if (c !== '4') return false;
      } else if (i === 19) {
        if (!'89abAB'.includes(c)) return false;
      } else if (!'0123456789abcdefABCDEF'.includes(c)) {
        return false;
      }
    }
    return true;
  }
  const uuidLike = fc.oneof(
    fc.uuid().map((u) => u),
    fc.mixedCase(fc.uuid({ version: 4 })),
    fc.tuple(fc.uuid({ version: 4 }), fc.nat(35), nastyChar).map(([u, i, c]) => u.slice(0, i) + c + u.slice(i + 1)),
    fc.tuple(fc.uuid({ version: 4 }), fc.nat(36), fc.string({ maxLength: 2 })).map(([u, i, s]) => u.slice(0, i) + s + u.slice(i)),
    fc.string({ maxLength: 40 }),
  );

  test('isWellFormedAccessCode accepts v4 UUIDs in any letter case and nothing else', () => {
    fc.assert(fc.property(uuidLike, (text) => assert.equal(isWellFormedAccessCode(text), modelWellFormed(text), JSON.stringify(text))), { ...RUNS, numRuns: 2000 });
  });

  test('the stored digest ignores letter case and differs between codes', () => {
    fc.assert(
      fc.property(fc.uuid({ version: 4 }), fc.uuid({ version: 4 }), (a, b) => {
        assert.equal(hashAccessCode(a.toUpperCase()), hashAccessCode(a));
        assert.match(hashAccessCode(a), /^[0-9a-f]{64}$/);
        assert.equal(hashAccessCode(a).includes(a), false);
        if (a.toLowerCase() !== b.toLowerCase()) assert.notEqual(hashAccessCode(a), hashAccessCode(b));
      }),
      RUNS,
    );
  });

  test('an access code never survives into a logged URL, wherever it was put', () => {
    const anyName = fc.constantFrom('auth', 'AUTH', '%61uth', 'au%74h', 'x', 'url', 'short', 'auth[]', 'token');
    fc.assert(
      fc.property(
        fc.mixedCase(fc.uuid({ version: 4 })),
        fc.array(fc.tuple(anyName, fc.string({ maxLength: 6 })), { maxLength: 4 }),
        anyName,
        fc.constantFrom('/v1/links', '/v1/link', '/x', '/v1/get/'),
        fc.boolean(),
        (code, others, name, path, inPath) => {
          const pairs = [...others.map(([n, v]) => `${n}=${encodeURIComponent(v)}`), `${name}=${code}`];
          const url = `${path}${inPath ? code : ''}?${pairs.join('&')}`;
          const logged = redactUrl(url);
          assert.equal(logged.toLowerCase().includes(code.toLowerCase()), false, `${url} → ${logged}`);
        },
      ),
      RUNS,
    );
  });

  test('a non-UUID auth value is redacted too, however its name is encoded', () => {
    fc.assert(
      fc.property(fc.constantFrom('auth', '%61uth', 'a%75th', '%61%75%74%68'), fc.stringMatching(/^SECRET[A-Za-z0-9]{6,20}$/), (name, value) => {
        const logged = redactUrl(`/v1/links?x=1&${name}=${value}&y=2`);
        assert.equal(logged.includes(value), false, logged);
        assert.match(logged, /x=1&.*=\[REDACTED\]&y=2$/);
      }),
      RUNS,
    );
  });
});

// -------------------------------------------------------------------------------- parameters

describe('parameters', () => {
  const value = fc.oneof(
    { weight: 4, arbitrary: fc.string({ maxLength: 5 }) },
    { weight: 1, arbitrary: fc.constant('') },
    { weight: 1, arbitrary: fc.array(fc.string({ maxLength: 3 }), { minLength: 1, maxLength: 3 }) },
    { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.object({ maxDepth: 1 })) },
  );
  const bag = fc.dictionary(fc.constantFrom('url', 'short', 'auth', 'other'), value, { maxKeys: 4 });

  /** Contract §5: one string per parameter, from the query or the body, never both; '' is absent. */
  function model(names: readonly string[], query: Record<string, unknown>, body: Record<string, unknown>) {
    const result: Record<string, string | undefined> = {};
    for (const name of names) {
      const q = query[name];
      const b = body[name];
      if (q !== undefined && b !== undefined) return 'refused';
      const v = q ?? b;
      if (v !== undefined && typeof v !== 'string') return 'refused';
      result[name] = v === '' ? undefined : v;
    }
    return result;
  }

  test('readParameters takes one string per name from query or body, and refuses anything else', () => {
    fc.assert(
      fc.property(bag, bag, (query, body) => {
        const names = ['url', 'short'] as const;
        const expected = model(names, query, body);
        const result = outcome(() => readParameters(names, query, body));
        if (expected === 'refused') {
          assert.equal(result.ok, false, `${JSON.stringify({ query, body })} should be refused`);
          if (!result.ok) assert.ok([ErrorCode.InvalidParameter, ErrorCode.DuplicateParameter].includes(result.code as never));
        } else {
          assert.deepEqual(result, { ok: true, value: expected }, JSON.stringify({ query, body }));
        }
      }),
      { ...RUNS, numRuns: 2000 },
    );
  });

  test('a body that is not an object is refused', () => {
    fc.assert(
      fc.property(fc.oneof(fc.array(fc.anything(), { maxLength: 2 }), fc.string(), fc.integer(), fc.boolean()), (body) => {
        assert.equal(outcome(() => readParameters(['url'], {}, body)).ok, false);
      }),
      RUNS,
    );
  });
});

// -------------------------------------------------------------------------- credentials (HTTP)

describe('credentials', () => {
  /** Headers as Node gives them: the first Authorization in `headers`, all of them in `rawHeaders`. */
  function fakeRequest(authorization: readonly string[]): IncomingMessage {
    return {
      headers: authorization.length === 0 ? {} : { authorization: authorization[0] },
      rawHeaders: authorization.flatMap((value) => ['Authorization', value]),
    } as unknown as IncomingMessage;
  }

  type Expected = { code: string | undefined } | { status: 400 | 401 };

  /** Contract §3, read literally. */
  function model(query: string | string[] | undefined, headers: readonly string[]): Expected {
    if (Array.isArray(query)) return { status: 400 };
    const fromQuery = query === undefined || query === '' ? undefined : query;
    if (headers.length > 1) return { status: 400 };
    let fromHeader: string | undefined;
    const header = headers[0]?.trim();
    if (header !== undefined && header !== '') {
      const match = /^([^ ]+) (.*)$/s.exec(header);
      if (match === null) fromHeader = header;
      else if (match[1]!.toLowerCase() !== 'bearer') return { status: 401 };
      else if (match[2]!.trim() === '') return { status: 401 };
      else fromHeader = match[2]!.trim();
    }
    if (fromQuery !== undefined && fromHeader !== undefined && fromQuery.toLowerCase() !== fromHeader.toLowerCase()) return { status: 400 };
    return { code: fromHeader ?? fromQuery };
  }

  const code = fc.constantFrom('6f1c1f9e-3d2b-4c4f-9a8e-2b7d5e1a0c3f', '6F1C1F9E-3D2B-4C4F-9A8E-2B7D5E1A0C3F', 'c0ffee00-0000-4000-8000-000000000000');
  const headerValue = fc.oneof(
    code,
    code.map((c) => `Bearer ${c}`),
    code.map((c) => `bEaReR   ${c}  `),
    code.map((c) => `Basic ${c}`),
    code.map((c) => `Token ${c}`),
    fc.constantFrom('Bearer', 'Bearer ', '   ', '', 'Bearer  \t', 'x y z'),
    fc.string({ maxLength: 12 }),
  );
  const queryValue = fc.oneof(fc.constant(undefined), fc.constant(''), code, fc.array(code, { minLength: 2, maxLength: 2 }), fc.string({ maxLength: 5 }));

  test('extractAccessCode follows the contract\u2019s rules on sources, schemes and conflicts', () => {
    fc.assert(
      fc.property(queryValue, fc.array(headerValue, { maxLength: 2 }), (query, headers) => {
        const expected = model(query, headers);
        const result = outcome(() => extractAccessCode(query === undefined ? {} : { auth: query }, fakeRequest(headers)));
        const context = JSON.stringify({ query, headers });
        if ('status' in expected) {
          assert.equal(result.ok, false, `${context} should be refused`);
          if (!result.ok) {
            const status = result.code === ErrorCode.Unauthenticated ? 401 : 400;
            assert.equal(status, expected.status, context);
          }
        } else {
          assert.deepEqual(result, { ok: true, value: expected.code }, context);
        }
      }),
      { ...RUNS, numRuns: 2000 },
    );
  });

  test('over HTTP, every mix of query and header answers 200, 400 or 401 as the model says', async (t) => {
    const { app } = await securityApp(t);
    const { code: real } = await account(app);
    const realCode = fc.constantFrom(real, real.toUpperCase());
    const header = fc.oneof(realCode, realCode.map((c) => `Bearer ${c}`), realCode.map((c) => `Basic ${c}`), headerValue);
    const query = fc.oneof(fc.constant(undefined), fc.constant(''), realCode, code, fc.string({ unit: 'grapheme-ascii', maxLength: 5 }));
    await fc.assert(
      fc.asyncProperty(query, fc.array(header, { maxLength: 2 }), async (auth, headers) => {
        const expected = model(auth, headers);
        const response = await app.inject({
          method: 'GET',
          url: '/v1/get_account',
          query: auth === undefined ? {} : { auth },
          headers: headers.length === 0 ? {} : { authorization: headers.length === 1 ? headers[0]! : [...headers] as unknown as string },
        });
        const context = `${JSON.stringify({ auth, headers })}: ${response.statusCode} ${response.body}`;
        let status: number;
        if ('status' in expected) status = expected.status;
        else status = expected.code !== undefined && expected.code.toLowerCase() === real.toLowerCase() ? 200 : 401;
        assert.equal(response.statusCode, status, context);
        if (status !== 200) assert.match(response.body, /^Unable to get account information: [^\r\n]+$/, context);
        if (status === 401) assert.equal(response.headers['www-authenticate'], 'Bearer realm="shortlink"');
      }),
      { numRuns: 300 },
    );
  });
});
