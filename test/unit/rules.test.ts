/**
 * Redirect rules (src/links/rules.ts): what `rules` accepts and the stored form it answers,
 * what it refuses and how the refusal reads, the stored text round trip, the OS families of
 * the names statistics produce, Accept-Language, and which rule a visit meets.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DomainError, ErrorCode } from '../../src/errors.ts';
import {
  acceptedLanguages, MAX_RULES, osFamily, parseRules, ruleTarget, rulesFromJson, rulesJson, usesVisitorClasses,
  type LinkRule, type VisitorFacts,
} from '../../src/links/rules.ts';
import { validateTargetUrl } from '../../src/links/target-url.ts';
import { classifyUserAgent } from '../../src/stats/classify.ts';

const check = (url: string) => validateTargetUrl(url, 'https://sho.rt', Object.freeze(['blocked.example']));
const parse = (raw: unknown) => parseRules(raw, check);

function refused(raw: unknown, reason: RegExp): void {
  assert.throws(() => parse(raw), (error: unknown) => {
    assert.ok(error instanceof DomainError, String(error));
    assert.equal(error.code, ErrorCode.InvalidParameter);
    assert.match(error.message, reason);
    assert.doesNotMatch(error.message, /\n/, 'one line');
    return true;
  }, `${JSON.stringify(raw)} should be refused with ${reason}`);
}

const rule = (conditions: unknown, to = 'https://example.org/') => ({ if: conditions, to });

describe('parseRules accepts', () => {
  test('JSON text and an already-parsed array alike', () => {
    const value = [rule({ device: 'mobile' }, 'https://m.example.org/')];
    const expected = [{ if: { device: ['mobile'] }, to: 'https://m.example.org/' }];
    assert.deepEqual(parse(JSON.stringify(value)), expected);
    assert.deepEqual(parse(value), expected);
  });

  test('empty text, blank text and an empty array as no rules', () => {
    assert.deepEqual(parse(''), []);
    assert.deepEqual(parse('  '), []);
    assert.deepEqual(parse('[]'), []);
    assert.deepEqual(parse([]), []);
  });

  test('one value or a list for each condition, answering lists normalised in case and without repeats', () => {
    const [parsed] = parse([rule({
      query: { utm_source: 'qr', ref: ['a', 'b', 'a'] },
      language: ['DE', 'en', 'de'],
      country: ['de', 'AT'],
      os: 'iOS',
      device: ['Mobile', 'tablet', 'mobile'],
    })]);
    assert.deepEqual(parsed!.if, {
      device: ['mobile', 'tablet'],
      os: ['ios'],
      country: ['DE', 'AT'],
      language: ['de', 'en'],
      query: Object.assign(Object.create(null) as object, { utm_source: ['qr'], ref: ['a', 'b'] }),
    });
    // One order of conditions whatever the input's, so the same rules store the same text.
    assert.deepEqual(Object.keys(parsed!.if), ['device', 'os', 'country', 'language', 'query']);
  });

  test('every os family and device class the contract names', () => {
    const [parsed] = parse([rule({ os: ['android', 'ios', 'windows', 'macos', 'linux'], device: ['desktop', 'mobile', 'tablet'] })]);
    assert.deepEqual(parsed!.if.os, ['android', 'ios', 'windows', 'macos', 'linux']);
    assert.deepEqual(parsed!.if.device, ['desktop', 'mobile', 'tablet']);
  });

  test('ten rules, kept in order', () => {
    const many = Array.from({ length: MAX_RULES }, (_, i) => rule({ query: { n: String(i) } }, `https://example.org/${i}`));
    assert.deepEqual(parse(many).map((r) => r.to), many.map((r) => r.to));
  });

  test('a query value that is empty (`?ref=`), and parameter names that are Object.prototype members', () => {
    const [parsed] = parse('[{"if": {"query": {"ref": "", "__proto__": "x", "constructor": ["y"]}}, "to": "https://example.org/"}]');
    assert.deepEqual(Object.keys(parsed!.if.query!), ['ref', '__proto__', 'constructor']);
    assert.deepEqual(parsed!.if.query!['__proto__'], ['x']);
  });

  test('stores what the target check returns for `to`', () => {
    const [parsed] = parseRules([rule({ device: 'desktop' }, 'https://Example.org')], (url) => `${url}#checked`);
    assert.equal(parsed!.to, 'https://Example.org#checked');
  });
});

describe('parseRules refuses, naming the problem', () => {
  test('text that is no JSON, and JSON that is no list', () => {
    refused('[{"if": ', /^rules must be JSON/);
    refused('device=mobile', /^rules must be JSON/);
    refused('{"if": {"device": "mobile"}, "to": "https://example.org/"}', /^rules must be a list of rules/);
    refused({ if: { device: 'mobile' }, to: 'https://example.org/' }, /^rules must be a list/);
    refused('"[]"', /^rules must be a list/);
    refused(null, /^rules must be a list/);
    refused(42, /^rules must be a list/);
  });

  test('more than ten rules', () => {
    refused(Array.from({ length: MAX_RULES + 1 }, () => rule({ device: 'mobile' })), /^rules may hold at most 10 rules$/);
  });

  test('a rule that is not an object, or has keys besides if and to', () => {
    refused([rule({ device: 'mobile' }), 'https://example.org/'], /^rule 2 must be an object/);
    refused([null], /^rule 1 must be an object/);
    refused([[]], /^rule 1 must be an object/);
    refused([{ if: { device: 'mobile' }, to: 'https://example.org/', then: 'x' }], /^rule 1: unknown key "then"/);
    refused([{ If: { device: 'mobile' }, to: 'https://example.org/' }], /^rule 1: unknown key "If"/);
  });

  test('a missing, non-object or empty `if`', () => {
    refused([{ to: 'https://example.org/' }], /^rule 1: "if" is missing$/);
    refused([rule('mobile')], /^rule 1: "if" must be an object of conditions$/);
    refused([rule(['device'])], /^rule 1: "if" must be an object/);
    refused([rule(null)], /^rule 1: "if" must be an object/);
    refused([rule({})], /^rule 1: "if" must hold at least one condition$/);
    refused([rule({ device: undefined })], /^rule 1: condition "device" has no value$/);
  });

  test('an unknown condition, by name', () => {
    refused([rule({ device: 'mobile' }), rule({ browser: 'firefox' })], /^rule 2: unknown condition "browser" \(known: device, os, country, language, query\)$/);
    refused([rule({ Device: 'mobile' })], /^rule 1: unknown condition "Device"/);
  });

  test('an unknown device or os value, by name', () => {
    refused([rule({ device: ['mobile', 'watch'] })], /^rule 1: unknown device "watch" \(known: desktop, mobile, tablet\)$/);
    refused([rule({ device: 'bot' })], /^rule 1: unknown device "bot"/);
    refused([rule({ device: 'other' })], /^rule 1: unknown device "other"/);
    refused([rule({ os: 'chromeos' })], /^rule 1: unknown os "chromeos" \(known: android, ios, windows, macos, linux\)$/);
    refused([rule({ os: 'Mac OS' })], /^rule 1: unknown os "Mac OS"/);
    refused([rule({ os: '' })], /^rule 1: unknown os ""/);
  });

  test('a value that is neither a string nor a non-empty list of strings', () => {
    for (const value of [[], 3, null, true, { a: 'b' }, ['mobile', 3]]) {
      refused([rule({ device: value })], /^rule 1: "device" must be a string or a non-empty list of strings$/);
    }
    refused([rule({ country: [] })], /^rule 1: "country" must be a string or a non-empty list/);
    refused([rule({ device: Array.from({ length: 101 }, () => 'mobile') })], /may list at most 100 values/);
  });

  test('a country that is not two letters', () => {
    for (const value of ['DEU', 'D', '', '1A', 'ü', 'D E']) {
      refused([rule({ country: value })], /^rule 1: country ".*" is not an ISO 3166 alpha-2 code like "DE"$/);
    }
  });

  test('a language that is not a primary subtag', () => {
    for (const value of ['en-US', 'e', 'english1', 'toolonglanguage', '*', '', 'en_US']) {
      refused([rule({ language: value })], /^rule 1: language ".*" is not a primary language subtag/);
    }
  });

  test('a query condition of the wrong shape', () => {
    refused([rule({ query: 'utm_source=qr' })], /^rule 1: "query" must be an object of parameter name → value/);
    refused([rule({ query: ['utm_source'] })], /^rule 1: "query" must be an object/);
    refused([rule({ query: {} })], /^rule 1: "query" must name at least one parameter$/);
    refused([rule({ query: { '': 'x' } })], /^rule 1: "query": a parameter name must not be empty$/);
    refused([rule({ query: { a: 1 } })], /^rule 1: "query" "a" must be a string or a non-empty list of strings$/);
    refused([rule({ query: { a: [] } })], /^rule 1: "query" "a" must be a string or a non-empty list/);
    refused([rule({ query: { a: 'x\u0000' } })], /^rule 1: "query": a parameter value must be well-formed text without control characters$/);
    refused([rule({ query: { 'a\n': 'x' } })], /a parameter name must be well-formed text/);
    refused([rule({ query: { a: '\ud800' } })], /a parameter value must be well-formed text/);
    refused([rule({ query: { a: 'x'.repeat(501) } })], /a parameter value must be at most 500 characters long/);
    refused([rule({ query: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`p${i}`, 'x'])) })], /may name at most 20 parameters/);
  });

  test('a missing or non-string `to`', () => {
    refused([{ if: { device: 'mobile' } }], /^rule 1: "to" must be the target URL as a string$/);
    refused([{ if: { device: 'mobile' }, to: ['https://example.org/'] }], /^rule 1: "to" must be the target URL/);
    refused([{ if: { device: 'mobile' }, to: null }], /^rule 1: "to" must be the target URL/);
  });

  test('a `to` the target check refuses, with its reason said of "to"', () => {
    refused([rule({ device: 'mobile' }), rule({ device: 'tablet' }, 'ftp://example.org/')], /^rule 2: "to" must use http or https$/);
    refused([rule({ device: 'mobile' }, '')], /^rule 1: "to" must not be empty$/);
    refused([rule({ device: 'mobile' }, 'https://sho.rt/abc')], /^rule 1: "to" must not point back at this service$/);
    refused([rule({ device: 'mobile' }, 'https://www.blocked.example/')], /^rule 1: links to www.blocked.example are not allowed/);
  });

  test('passes on any other error of the target check unchanged', () => {
    const outage = new DomainError(ErrorCode.StorageUnavailable, 'storage is unavailable');
    assert.throws(() => parseRules([rule({ device: 'mobile' })], () => { throw outage; }), (error) => error === outage);
  });
});

describe('stored text', () => {
  test('rulesJson answers null for none, and rulesFromJson reads what it wrote', () => {
    assert.equal(rulesJson([]), null);
    assert.deepEqual(rulesFromJson(null), []);
    assert.deepEqual(rulesFromJson(''), []);
    const rules = parse([
      rule({ device: 'mobile', os: ['ios'] }, 'https://apps.apple.com/app/id1'),
      rule({ query: { ['__proto__']: 'x', utm: ['a', 'b'] }, language: 'de' }, 'https://example.de/'),
    ]);
    const text = rulesJson(rules);
    assert.equal(typeof text, 'string');
    const back = rulesFromJson(text);
    assert.deepEqual(JSON.parse(JSON.stringify(back)), JSON.parse(JSON.stringify(rules)));
    assert.equal(rulesJson(back), text, 'writes the same text again');
    assert.deepEqual(back[1]!.if.query!['__proto__'], ['x']);
  });

  test('rulesFromJson answers the same frozen rules for the same text (parsed once)', () => {
    const text = rulesJson(parse([rule({ country: 'FR' }, 'https://example.fr/')]))!;
    const first = rulesFromJson(text);
    assert.equal(rulesFromJson(text), first);
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first[0]) && Object.isFrozen(first[0]!.if.country));
    assert.throws(() => (first[0]!.if.country as string[]).push('DE'), TypeError);
  });

  test('rulesFromJson refuses text rulesJson could not have written', () => {
    for (const text of ['{', '{}', '[1]', '[{"if": [], "to": "x"}]', '[{"if": {"device": "mobile"}, "to": "x"}]', '[{"if": {}, "to": 3}]']) {
      assert.throws(() => rulesFromJson(text), Error, text);
    }
  });
});

describe('osFamily', () => {
  test('maps the names statistics give real User-Agents to their family', () => {
    const agents: [string, string | undefined][] = [
      ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1', 'ios'],
      ['Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1', 'ios'],
      ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36', 'android'],
      ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', 'windows'],
      ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15', 'macos'],
      ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', 'linux'],
      ['Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0', 'linux'],
      ['Mozilla/5.0 (X11; Fedora; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0', 'linux'],
      ['Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', undefined],
      ['Mozilla/5.0 (Windows Phone 10.0; Android 6.0.1; Microsoft; Lumia 950) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/52.0.2743.116 Mobile Safari/537.36 Edge/15.14977', undefined],
      ['curl/8.5.0', undefined],
    ];
    for (const [agent, family] of agents) {
      const { os } = classifyUserAgent(agent);
      assert.equal(osFamily(os), family, `${agent} (os ${os})`);
    }
  });

  test('counts Linux distributions as linux, in any case, and Android as android', () => {
    for (const name of ['Linux', 'Debian', 'Mint', 'Arch', 'openSUSE', 'Red Hat', 'Kubuntu', 'CentOS', 'Manjaro', 'elementary OS']) {
      assert.equal(osFamily(name), 'linux', name);
    }
    for (const name of ['Android', 'Android-x86']) assert.equal(osFamily(name), 'android', name);
    for (const name of ['Mac OS', 'macOS']) assert.equal(osFamily(name), 'macos', name);
    for (const name of ['Chromium OS', 'HarmonyOS', 'Tizen', 'Ubuntu Touch', 'watchOS', 'Windows Phone', 'FreeBSD', 'Other', '']) {
      assert.equal(osFamily(name), undefined, name);
    }
  });
});

describe('acceptedLanguages', () => {
  test('answers the primary subtags, lower case, first appearance first, without repeats', () => {
    assert.deepEqual(acceptedLanguages('de-AT,de;q=0.9,en-US;q=0.8,en;q=0.7'), ['de', 'en']);
    assert.deepEqual(acceptedLanguages('FR-ca, zh-Hant-TW;q=0.5, pt_BR'), ['fr', 'zh', 'pt']);
    assert.deepEqual(acceptedLanguages('fil, haw;q=0.1'), ['fil', 'haw']);
  });

  test('leaves out q=0 however it is written, and keeps any q above 0', () => {
    assert.deepEqual(acceptedLanguages('en;q=0, de;q=0.0, fr;Q=0.000, it;q = 0, es;q=0.001, nl;q=1, sv;q=1.000'), ['es', 'nl', 'sv']);
    assert.deepEqual(acceptedLanguages('de;q=0.5;q=0'), [], 'the last q says');
  });

  test('leaves out an entry whose q is no number, and a range that is no language', () => {
    assert.deepEqual(acceptedLanguages('en;q=abc, de;q=, fr;q=-1, it;q=0x1, es;q=.5'), ['es']);
    assert.deepEqual(acceptedLanguages('*, *;q=0.5, i-klingon, x-pig-latin, 123, en-, -en, e n, ja'), ['ja']);
    assert.deepEqual(acceptedLanguages('en;level=1'), ['en'], 'other parameters are ignored');
  });

  test('answers nothing for no header, an empty one or one of separators', () => {
    assert.deepEqual(acceptedLanguages(undefined), []);
    assert.deepEqual(acceptedLanguages(''), []);
    assert.deepEqual(acceptedLanguages(',,;;, ;'), []);
  });

  test('reads a bounded start of a huge header, quickly', () => {
    const huge = `${'xx;q=0.5,'.repeat(200_000)}de`;
    const started = process.hrtime.bigint();
    assert.deepEqual(acceptedLanguages(huge), ['xx'], 'a language past the first entries is not reached');
    assert.ok(process.hrtime.bigint() - started < 50_000_000n, 'within 50 ms');
    assert.deepEqual(acceptedLanguages(`${'en,'.repeat(49)}de`), ['en', 'de']);
    assert.deepEqual(acceptedLanguages(`${'en,'.repeat(50)}de`), ['en']);
  });
});

describe('ruleTarget', () => {
  const visitor = (facts: Partial<VisitorFacts> = {}): VisitorFacts => ({
    device: 'desktop', os: 'Windows', country: 'ZZ', acceptLanguage: undefined, query: '', ...facts,
  });
  const rules = parse([
    rule({ device: 'mobile', os: 'ios' }, 'https://apps.apple.com/app/id1'),
    rule({ os: ['android'] }, 'https://play.google.com/store/apps/details?id=x'),
    rule({ language: 'de', country: ['DE', 'AT', 'CH'] }, 'https://example.de/'),
    rule({ query: { utm_source: ['qr', 'poster'], lang: 'fr' } }, 'https://example.fr/qr'),
    rule({ device: ['tablet'] }, 'https://example.org/tablet'),
  ]);

  test('answers undefined when there are no rules, or none holds', () => {
    assert.equal(ruleTarget([], visitor()), undefined);
    assert.equal(ruleTarget(rules, visitor()), undefined);
  });

  test('requires every condition of a rule', () => {
    assert.equal(ruleTarget(rules, visitor({ device: 'mobile', os: 'iOS' })), 'https://apps.apple.com/app/id1');
    assert.equal(ruleTarget(rules, visitor({ device: 'desktop', os: 'iOS' })), undefined, 'os without device');
    assert.equal(ruleTarget(rules, visitor({ device: 'mobile', os: 'Windows' })), undefined, 'device without os');
    assert.equal(ruleTarget(rules, visitor({ country: 'AT', acceptLanguage: 'de-AT' })), 'https://example.de/');
    assert.equal(ruleTarget(rules, visitor({ country: 'FR', acceptLanguage: 'de-AT' })), undefined, 'language without country');
    assert.equal(ruleTarget(rules, visitor({ country: 'DE', acceptLanguage: 'en' })), undefined, 'country without language');
  });

  test('the first rule that holds wins', () => {
    assert.equal(ruleTarget(rules, visitor({ device: 'tablet', os: 'Android' })), 'https://play.google.com/store/apps/details?id=x');
    assert.equal(ruleTarget(rules, visitor({ device: 'tablet', os: 'iOS' })), 'https://example.org/tablet');
    assert.equal(ruleTarget(rules, visitor({ device: 'tablet', os: 'Chromium OS' })), 'https://example.org/tablet');
  });

  test('matches os by family: an OS name no family covers meets no os condition', () => {
    const byOs = parse([rule({ os: ['linux', 'macos'] }, 'https://example.org/desktop')]);
    for (const os of ['Ubuntu', 'Linux', 'Mac OS', 'macOS']) assert.equal(ruleTarget(byOs, visitor({ os })), 'https://example.org/desktop', os);
    for (const os of ['Chromium OS', 'Android', 'Other']) assert.equal(ruleTarget(byOs, visitor({ os })), undefined, os);
  });

  test('matches language against every accepted language, not only the first', () => {
    assert.equal(ruleTarget(rules, visitor({ country: 'CH', acceptLanguage: 'fr-CH, en;q=0.8, de;q=0.5' })), 'https://example.de/');
    assert.equal(ruleTarget(rules, visitor({ country: 'CH', acceptLanguage: 'fr-CH, de;q=0' })), undefined, 'q=0 is no acceptance');
    assert.equal(ruleTarget(rules, visitor({ country: 'CH' })), undefined, 'no header accepts no language');
  });

  test('matches query parameters decoded, each present with one of its values', () => {
    assert.equal(ruleTarget(rules, visitor({ query: 'utm_source=qr&lang=fr' })), 'https://example.fr/qr');
    assert.equal(ruleTarget(rules, visitor({ query: 'lang=fr&x=1&utm_source=poster' })), 'https://example.fr/qr');
    assert.equal(ruleTarget(rules, visitor({ query: 'utm%5Fsource=%71r&lang=f%72' })), 'https://example.fr/qr', 'percent-decoded');
    assert.equal(ruleTarget(rules, visitor({ query: 'utm_source=qr&utm_source=x&lang=fr' })), 'https://example.fr/qr', 'any occurrence');
    assert.equal(ruleTarget(rules, visitor({ query: 'utm_source=qr' })), undefined, 'a name missing');
    assert.equal(ruleTarget(rules, visitor({ query: 'utm_source=QR&lang=fr' })), undefined, 'values are case-sensitive');
    assert.equal(ruleTarget(rules, visitor({ query: 'utm_source=tv&lang=fr' })), undefined, 'a value not listed');
    const spaced = parse([rule({ query: { q: 'a b', ref: '' } }, 'https://example.org/spaced')]);
    assert.equal(ruleTarget(spaced, visitor({ query: 'q=a+b&ref=' })), 'https://example.org/spaced', "'+' is a space, as forms send it");
    assert.equal(ruleTarget(spaced, visitor({ query: 'q=a%20b&ref' })), 'https://example.org/spaced', 'a bare name has the empty value');
    assert.equal(ruleTarget(spaced, visitor({ query: 'q=a%20b' })), undefined);
  });

  test('matches query parameters named like Object.prototype members only when present', () => {
    const proto = parse('[{"if": {"query": {"constructor": "x"}}, "to": "https://example.org/proto"}]');
    assert.equal(ruleTarget(proto, visitor({ query: '' })), undefined);
    assert.equal(ruleTarget(proto, visitor({ query: 'constructor=x' })), 'https://example.org/proto');
  });

  test('reads Accept-Language and the query only when a rule asks about them, and each once', () => {
    let languageReads = 0;
    let queryReads = 0;
    const counting = (facts: Partial<VisitorFacts>): VisitorFacts => {
      const base = visitor(facts);
      return {
        device: base.device, os: base.os, country: base.country,
        get acceptLanguage() { languageReads++; return base.acceptLanguage; },
        get query() { queryReads++; return base.query; },
      };
    };
    const byDevice = parse([rule({ device: 'mobile' }, 'https://m.example.org/'), rule({ country: 'DE' }, 'https://example.de/')]);
    assert.equal(ruleTarget(byDevice, counting({ device: 'desktop', acceptLanguage: 'de', query: 'a=1' })), undefined);
    assert.deepEqual([languageReads, queryReads], [0, 0]);
    const twice = parse([
      rule({ language: 'fr', query: { a: '2' } }, 'https://example.org/1'),
      rule({ language: 'it', query: { a: '3' } }, 'https://example.org/2'),
      rule({ language: 'de', query: { a: '1' } }, 'https://example.org/3'),
    ]);
    assert.equal(ruleTarget(twice, counting({ acceptLanguage: 'de', query: 'a=1' })), 'https://example.org/3');
    assert.deepEqual([languageReads, queryReads], [1, 1]);
  });

  test('works on rules read back from their stored text', () => {
    const stored = rulesFromJson(rulesJson(rules));
    assert.equal(ruleTarget(stored, visitor({ query: 'utm_source=poster&lang=fr' })), 'https://example.fr/qr');
    assert.equal(ruleTarget(stored, visitor({ device: 'mobile', os: 'iOS' })), 'https://apps.apple.com/app/id1');
  });
});

describe('usesVisitorClasses', () => {
  test('is true only when a rule asks about device, os or country', () => {
    const only = (conditions: object): LinkRule[] => parse([rule(conditions)]);
    assert.equal(usesVisitorClasses([]), false);
    assert.equal(usesVisitorClasses(only({ language: 'de', query: { a: 'b' } })), false);
    assert.equal(usesVisitorClasses(only({ device: 'mobile' })), true);
    assert.equal(usesVisitorClasses(only({ os: 'ios' })), true);
    assert.equal(usesVisitorClasses(only({ country: 'DE' })), true);
    assert.equal(usesVisitorClasses([...only({ language: 'de' }), ...only({ country: 'DE' })]), true);
  });
});
