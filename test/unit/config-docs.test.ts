// The configuration is declared once (src/config-variables.ts): loadConfig reads through that
// table and the README's table is generated from it. These tests keep the two from drifting
// and pin the shared readers' vocabulary.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { withGeneratedTable } from '../../scripts/config-table.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { VARIABLES } from '../../src/config-variables.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('the configuration table', () => {
  test("the README's table is the one generated from the declarations (run npm run docs:config)", () => {
    assert.equal(readme, withGeneratedTable(readme));
  });

  test('every variable loadConfig reads is declared, and every declared one appears in the README', () => {
    const source = readFileSync(new URL('../../src/config.ts', import.meta.url), 'utf8');
    // loadConfig reads the environment only through the table: no variable name as a string.
    assert.doesNotMatch(source, /env\[['"`][A-Z_]+['"`]\]/);
    for (const name of Object.keys(VARIABLES)) assert.ok(readme.includes(`\`${name}\``), `${name} is not in the README`);
  });
});

describe('one vocabulary for every switch', () => {
  const switches = [
    ['RATE_LIMIT', (on: string) => loadConfig({ RATE_LIMIT: on }).rateLimit],
    ['STATS', (on: string) => loadConfig({ STATS: on }).stats],
    ['PG_PREPARE', (on: string) => (loadConfig({ DATABASE_URL: 'postgres://db/x', PG_PREPARE: on }).storage as { prepare: boolean }).prepare],
    ['WEBHOOK_ALLOW_PRIVATE', (on: string) => loadConfig({ WEBHOOK_ALLOW_PRIVATE: on }).webhookAllowPrivate],
  ] as const;
  for (const [name, read] of switches) {
    test(`${name} takes on/off, true/false, yes/no and 1/0 in any case`, () => {
      for (const word of ['on', 'TRUE', 'Yes', '1']) assert.equal(read(word), true, word);
      for (const word of ['off', 'False', 'NO', '0']) assert.equal(read(word), false, word);
    });
    test(`${name} refuses any other word, quoting it`, () => {
      assert.throws(() => read('perhaps'), (error: unknown) => error instanceof ConfigError && error.message.includes(`${name} must be "on" or "off"`) && error.message.includes('"perhaps"'));
    });
  }

  test('TRUST_PROXY takes the same words, but a number is a refused hop count', () => {
    assert.deepEqual(loadConfig({ TRUST_PROXY: 'yes' }).trustProxy, ['loopback', 'linklocal', 'uniquelocal']);
    assert.equal(loadConfig({ TRUST_PROXY: 'off' }).trustProxy, false);
    assert.throws(() => loadConfig({ TRUST_PROXY: '1' }), /TRUST_PROXY hop counts are not supported/);
  });
});
