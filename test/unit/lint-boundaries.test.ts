// The layering rules in eslint.config.js are regular expressions over import specifiers and
// AST selectors: a typo or a moved folder would make them match nothing, silently. These
// tests lint small in-memory sources placed in the guarded folders and expect each rule to
// fire (and not to fire on what stays allowed).
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

const root = fileURLToPath(new URL('../..', import.meta.url));

// The fixtures exist only in memory, so the TypeScript program knows nothing of them: lint
// them with the project's config minus the type-aware rules (the boundaries need no types).
const eslint = new ESLint({ cwd: root, overrideConfig: [tseslint.configs.disableTypeChecked] });

/** Lints `source` as if it were the file `filePath` (relative to the repository root). */
async function ruleIds(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: `${root}/${filePath}` });
  assert.ok(result !== undefined);
  const fatal = result.messages.filter((message) => message.fatal === true);
  assert.deepEqual(fatal, [], `${filePath} did not parse`);
  return result.messages.map((message) => message.ruleId ?? '');
}

/** An import of `specifier` that is also used, so no other rule has anything to say. */
const importing = (specifier: string) => `import { x } from '${specifier}';\nexport const y = x;\n`;

const DOMAIN_FILES = [
  'src/links/link-service.ts', 'src/accounts/account-service.ts', 'src/admin/admin-service.ts', 'src/links/deeper/fixture.ts',
  'src/stats/stats-service.ts', 'src/webhooks/dispatcher.ts', 'src/events/payloads.ts',
];

describe('layering rules', () => {
  for (const file of DOMAIN_FILES) {
    const up = file.split('/').length === 4 ? '../../' : '../';
    const forbidden = [
      `${up}http/schemas.ts`,
      `${up}http/routes/links.ts`,
      `${up}store/sqlite.ts`,
      `${up}store/sqlite-admin.ts`,
      `${up}store/sqlite/store.ts`,
      `${up}store/postgres.ts`,
      `${up}store/postgres/admin.ts`,
      `${up}store/migrations/sqlite.ts`,
      `${up}config.ts`,
      `${up}metrics/metrics.ts`,
      `${up}store/store.ts`,
      `${up}store/webhooks.ts`,
      `${up}features/stats.ts`,
      `${up}app.ts`,
      'postgres',
      'ioredis',
      'node:sqlite',
    ];
    for (const specifier of forbidden) {
      test(`${file} may not import ${specifier}`, async () => {
        assert.deepEqual(await ruleIds(file, importing(specifier)), ['no-restricted-imports']);
      });
    }
    test(`${file} may not import a store backend's types either`, async () => {
      const source = `import type { X } from '${up}store/postgres.ts';\nexport type Y = X;\n`;
      assert.deepEqual(await ruleIds(file, source), ['no-restricted-imports']);
    });
    test(`${file} may import the domain's ports, errors and its own folder`, async () => {
      for (const specifier of [`${up}links/link-store.ts`, `${up}accounts/account-store.ts`, `${up}errors.ts`, './shortcode.ts', 'node:crypto']) {
        assert.deepEqual(await ruleIds(file, importing(specifier)), [], specifier);
      }
    });
  }

  for (const file of ['src/http/routes/links.ts', 'src/http/schemas.ts']) {
    const up = file.split('/').length === 4 ? '../../' : '../';
    for (const specifier of [
      `${up}store/sqlite.ts`,
      `${up}store/sqlite-write-batch.ts`,
      `${up}store/sqlite/store.ts`,
      `${up}store/postgres-admin.ts`,
      `${up}store/postgres/store.ts`,
      `${up}store/migrations/postgres.ts`,
      'postgres',
    ]) {
      test(`${file} may not import ${specifier}`, async () => {
        assert.deepEqual(await ruleIds(file, importing(specifier)), ['no-restricted-imports']);
      });
    }
    test(`${file} may import the Store interface, the domain and node:http`, async () => {
      for (const specifier of [`${up}store/store.ts`, `${up}links/link-service.ts`, `${up}config.ts`, 'node:http']) {
        assert.deepEqual(await ruleIds(file, importing(specifier)), [], specifier);
      }
    });
  }

  for (const file of ['src/store/sqlite/store.ts', 'src/store/webhooks.ts']) {
    const up = file.split('/').length === 4 ? '../../' : '../';
    for (const specifier of [`${up}http/schemas.ts`, `${up}metrics/metrics.ts`, `${up}features/stats.ts`, `${up}app.ts`]) {
      test(`${file} may not import ${specifier}`, async () => {
        assert.deepEqual(await ruleIds(file, importing(specifier)), ['no-restricted-imports']);
      });
    }
    test(`${file} may import the domain it implements`, async () => {
      for (const specifier of [`${up}links/link-store.ts`, `${up}events/payloads.ts`, `${up}stats/visit.ts`]) {
        assert.deepEqual(await ruleIds(file, importing(specifier)), [], specifier);
      }
    });
  }

  test('the live events\' transports may use a driver and Config, but not the store', async () => {
    assert.deepEqual(await ruleIds('src/events/redis-transport.ts', importing('ioredis')), []);
    assert.deepEqual(await ruleIds('src/events/create-live-events.ts', importing('../config.ts')), []);
    assert.deepEqual(await ruleIds('src/events/redis-transport.ts', importing('../store/store.ts')), ['no-restricted-imports']);
  });

  describe('reading the environment', () => {
    const readers = {
      'process.env': 'export const port = process.env.PORT;\n',
      "process['env']": "export const port = process['env'].PORT;\n",
      'globalThis.process.env': 'export const port = globalThis.process.env.PORT;\n',
      'destructuring process': 'const { env } = process;\nexport const port = env.PORT;\n',
      "node:process's env": "import { env } from 'node:process';\nexport const port = env.PORT;\n",
    };
    for (const file of ['src/server.ts', 'src/app.ts', 'src/http/routes/links.ts', 'src/links/link-service.ts', 'src/cli/run.ts', 'src/store/open-store.ts']) {
      for (const [how, source] of Object.entries(readers)) {
        test(`${file} may not read ${how}`, async () => {
          const ids = await ruleIds(file, source);
          assert.equal(ids.length, 1, ids.join());
          assert.match(ids[0] ?? '', /^no-restricted-(properties|syntax)$/);
        });
      }
    }
    for (const file of ['src/config.ts', 'src/cli/main.ts', 'test/helpers/fixture.ts', 'bench/fixture.ts']) {
      test(`${file} may read process.env`, async () => {
        assert.deepEqual(await ruleIds(file, readers['process.env']), []);
      });
    }
    test('other properties of process stay allowed', async () => {
      assert.deepEqual(await ruleIds('src/server.ts', 'process.exitCode = 1;\nexport const args = process.argv;\n'), []);
    });
  });
});
