/**
 * The rules editor's pure half (src/web/rules.js), run in Node: drafts to the API's rules and
 * back, the preview's first-match choice of target, and the words for routing, password and
 * domain errors. The browser tests drive the editor itself (test/browser/routing.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { describeError } from '../../src/web/messages.js';
import type { RuleInput } from '../../src/web/api.js';
import { draftOf, emptyDraft, listOf, previewText, queryOf, ruleOf, rulesText, targetFor } from '../../src/web/rules.js';

const anyone = { device: '', os: '', country: '', language: '', query: '' };

describe('rule drafts', () => {
  test('send only the conditions filled in, lists split on commas and query lines on "="', () => {
    const rule = ruleOf({
      ...emptyDraft(), device: ['mobile'], country: ' de, AT ,', language: '', query: 'utm=qr\nutm = mail\nflag\n\n', to: ' https://example.com/m ',
    });
    assert.deepEqual(JSON.parse(JSON.stringify(rule)), {
      if: { device: ['mobile'], country: ['de', 'AT'], query: { utm: ['qr', 'mail'], flag: [''] } },
      to: 'https://example.com/m',
    });
    assert.deepEqual(ruleOf(emptyDraft()), { if: {}, to: '' }, 'an empty rule is left for the service to refuse in its words');
    assert.deepEqual(listOf(' , '), []);
    assert.equal(Object.getPrototypeOf(queryOf('__proto__=x')), null, 'a parameter may be called __proto__');
  });

  test('read a link\'s rules back into the same rules', () => {
    const linkRule = { If: { os: ['ios', 'macos'], language: ['de'], query: { ref: ['a', 'b'] } }, To: 'https://example.com/de' };
    const draft = draftOf(linkRule);
    assert.deepEqual(draft, { device: [], os: ['ios', 'macos'], country: '', language: 'de', query: 'ref=a\nref=b', to: 'https://example.com/de' });
    assert.equal(rulesText([ruleOf(draft)]), rulesText([{ if: { os: ['ios', 'macos'], language: ['DE'], query: { ref: ['a', 'b'] } }, to: 'https://example.com/de' }]),
      'equal rules compare equal, whatever the case of a language');
    assert.notEqual(rulesText([ruleOf(draft), ruleOf(emptyDraft())]), rulesText([ruleOf(emptyDraft()), ruleOf(draft)]), 'order counts');
  });
});

describe('the preview', () => {
  const rules: RuleInput[] = [
    { if: { device: ['mobile'], os: ['ios'] }, to: 'https://example.com/app-store' },
    { if: { os: ['android', 'ios'] }, to: 'https://example.com/phone' },
    { if: { country: ['DE', 'AT'], language: ['de'] }, to: 'https://example.com/de' },
    { if: { query: { ref: ['qr'] } }, to: 'https://example.com/qr' },
  ];

  test('picks the first rule whose conditions all hold, else the target URL', () => {
    assert.deepEqual(targetFor(rules, { ...anyone, device: 'mobile', os: 'ios' }, 'https://t'), { rule: 1, to: 'https://example.com/app-store' });
    assert.deepEqual(targetFor(rules, { ...anyone, device: 'tablet', os: 'ios' }, 'https://t'), { rule: 2, to: 'https://example.com/phone' });
    assert.deepEqual(targetFor(rules, { ...anyone, country: 'de', language: 'DE' }, 'https://t'), { rule: 3, to: 'https://example.com/de' });
    assert.deepEqual(targetFor(rules, { ...anyone, country: 'DE' }, 'https://t'), { rule: 0, to: 'https://t' }, 'every condition must hold');
    assert.deepEqual(targetFor(rules, { ...anyone, query: '?x=1&ref=qr' }, 'https://t'), { rule: 4, to: 'https://example.com/qr' });
    assert.deepEqual(targetFor(rules, anyone, 'https://t'), { rule: 0, to: 'https://t' }, 'an unknown device matches no device condition');
    assert.deepEqual(targetFor([{ if: {}, to: 'https://x' }], anyone, 'https://t'), { rule: 0, to: 'https://t' }, 'a rule without conditions matches nothing');
  });

  test('says who goes where in one sentence', () => {
    assert.equal(previewText({ ...anyone, device: 'mobile', os: 'ios', country: 'de' }, { rule: 1, to: 'https://example.com/a' }),
      'A visitor on a mobile device with iOS in DE goes to https://example.com/a: rule 1.');
    assert.equal(previewText(anyone, { rule: 0, to: 'https://t' }), 'A visitor goes to https://t: no rule matches, so the target URL.');
  });
});

describe('routing errors', () => {
  test('are worded plainly beside the rules, the password or the domain', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['Unable to create link: rule 2: "if" must hold at least one condition', 'rules', /^Rule 2 has no condition/],
      ['Unable to create link: rule 1: unknown device "watch" (known: desktop, mobile, tablet)', 'rules', /^Rule 1: unknown device "watch"/],
      ['Unable to update link: rule 3: "to" must use http or https', 'rules', /^Rule 3: "to" must use http or https\.$/],
      ['Unable to create link: rules may hold at most 10 rules', 'rules', /^A link has at most 10 rules\.$/],
      ['Unable to create link: password must be 8 to 200 characters long', 'password', /^A password has 8 to 200 characters\.$/],
      ['Unable to create link: the domain "nope.example" is not registered', 'domain', /^The domain nope\.example is not registered/],
      ['Unable to create link: forward_query must be true or false', 'forward_query', /^Forward_query must be true or false\.$/],
    ];
    for (const [line, field, text] of cases) {
      const said = describeError(400, line);
      assert.equal(said.field, field, line);
      assert.match(said.text, text, line);
    }
  });
});
