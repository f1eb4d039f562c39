import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyUserAgent, createVisitClassifier, referrerHost } from '../../src/stats/classify.ts';
import { loadCountryDatabase } from '../../src/stats/country-database.ts';
import { createLru } from '../../src/stats/lru.ts';

/** Real-world User-Agents and what statistics should make of them. */
const CORPUS: readonly [string, { bot: boolean; browser: string; os: string; device: string }][] = [
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
    { bot: false, browser: 'Chrome', os: 'Windows', device: 'desktop' }],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
    { bot: false, browser: 'Safari', os: 'Mac OS', device: 'desktop' }],
  ['Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0', { bot: false, browser: 'Firefox', os: 'Linux', device: 'desktop' }],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.51',
    { bot: false, browser: 'Edge', os: 'Windows', device: 'desktop' }],
  ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
    { bot: false, browser: 'Mobile Safari', os: 'iOS', device: 'mobile' }],
  ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36',
    { bot: false, browser: 'Chrome', os: 'Android', device: 'mobile' }],
  ['Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
    { bot: false, browser: 'Mobile Safari', os: 'iOS', device: 'tablet' }],
  ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/21E236 Instagram 327.0.0.33.119',
    { bot: false, browser: 'Instagram', os: 'iOS', device: 'mobile' }],
  ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', { bot: true, browser: 'Other', os: 'Other', device: 'bot' }],
  ['Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', { bot: true, browser: 'Other', os: 'Other', device: 'bot' }],
  ['Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', { bot: true, browser: 'Other', os: 'Other', device: 'bot' }],
  ['facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)', { bot: true, browser: 'Facebook', os: 'Other', device: 'bot' }],
  ['curl/8.5.0', { bot: true, browser: 'Other', os: 'Other', device: 'bot' }],
  ['python-requests/2.31.0', { bot: true, browser: 'Other', os: 'Other', device: 'bot' }],
  ['', { bot: true, browser: 'Other', os: 'Other', device: 'bot' }],
];

describe('visit classification', () => {
  for (const [userAgent, expected] of CORPUS) {
    test(`classifies ${JSON.stringify(userAgent.slice(0, 60))}`, () => {
      const classes = classifyUserAgent(userAgent);
      assert.equal(classes.bot, expected.bot, 'bot');
      assert.equal(classes.device, expected.device, 'device');
      if (!expected.bot) {
        assert.equal(classes.browser, expected.browser, 'browser');
        assert.equal(classes.os, expected.os, 'os');
      }
    });
  }

  test('keeps control characters and overlong names out of what it stores', () => {
    const classes = classifyUserAgent(`Mozilla/5.0 (Windows NT 10.0) Firefox/1.0 \u0000\u001b[31m`);
    // eslint-disable-next-line no-control-regex
    for (const value of [classes.browser, classes.os]) assert.doesNotMatch(value, /[\u0000-\u001f\u007f]/);
    const huge = createVisitClassifier().classify({ userAgent: `${'x'.repeat(10_000)} Googlebot`, referer: undefined, address: '203.0.113.9' }, 1);
    assert.ok(huge.browser.length <= 64 && huge.os.length <= 64);
  });

  test('takes the referrer host: (direct) for none, (invalid) for what is no URL with a host', () => {
    assert.equal(referrerHost(undefined), '(direct)');
    assert.equal(referrerHost('  '), '(direct)');
    assert.equal(referrerHost('https://News.Example.com./a/b?c#d'), 'news.example.com');
    assert.equal(referrerHost('https://bücher.example/'), 'xn--bcher-kva.example');
    assert.equal(referrerHost('android-app://com.google.android.gm/'), 'com.google.android.gm');
    assert.equal(referrerHost('http://[2001:db8::1]:8080/'), '[2001:db8::1]');
    assert.equal(referrerHost('not a url'), '(invalid)');
    assert.equal(referrerHost('about:blank'), '(invalid)');
    assert.equal(referrerHost('http://a\u0001b.example/'), '(invalid)');
  });

  test('places addresses with the shipped database, ZZ when it cannot', () => {
    const classifier = createVisitClassifier({ countryDatabase: loadCountryDatabase() });
    const country = (address: string) => classifier.classify({ userAgent: 'x', referer: undefined, address }, 0).country;
    assert.equal(country('8.8.8.8'), 'US');
    assert.equal(country('::ffff:81.2.69.160'), 'GB');
    assert.equal(country('2a00:1450:4001::1'), 'IE');
    assert.equal(country('10.1.2.3'), 'ZZ');
    assert.equal(country('127.0.0.1'), 'ZZ');
    assert.equal(country('not-an-address'), 'ZZ');
    assert.equal(createVisitClassifier().classify({ userAgent: 'x', referer: undefined, address: '8.8.8.8' }, 0).country, 'ZZ');
  });

  test('gives visits of the same hour and classes the same key, and others another', () => {
    const classifier = createVisitClassifier();
    const source = { userAgent: CORPUS[0]![0], referer: 'https://a.example/', address: '192.0.2.1' };
    assert.equal(classifier.classify(source, 7).key, classifier.classify({ ...source }, 7).key);
    assert.notEqual(classifier.classify(source, 7).key, classifier.classify(source, 8).key);
    assert.notEqual(classifier.classify(source, 7).key, classifier.classify({ ...source, referer: undefined }, 7).key);
  });
});

describe('LRU', () => {
  test('keeps what was used since the last capacity insertions, forgets the rest, holds at most twice its capacity', () => {
    const lru = createLru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2); // the newer generation is full: a and b become the older
    assert.equal(lru.get('a'), 1); // used: copied into the newer generation
    lru.set('c', 3); // full again: a and c are the older, b is dropped
    assert.equal(lru.get('b'), undefined);
    assert.equal(lru.get('a'), 1);
    assert.equal(lru.get('c'), 3);
    lru.set('a', 10); // a new value wins over the older generation's
    assert.equal(lru.get('a'), 10);
    for (let i = 0; i < 100; i++) lru.set(`k${i}`, i);
    assert.ok(lru.size <= 4, `holds ${lru.size}`);
    assert.equal(lru.get('k99'), 99);
    assert.equal(lru.get('k98'), 98);
    assert.equal(lru.get('a'), undefined);
  });
});
