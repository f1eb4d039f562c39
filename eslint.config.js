// @ts-check
// ESLint for the whole tree: the recommended rules, a few type-aware ones that catch real
// bugs in async server code, and the layering rules (docs/architecture.md, "Layering").
// The layering rules are pinned by test/unit/lint-boundaries.test.ts: if a pattern here stops
// matching, that test fails.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// Import boundaries. ESLint's own no-restricted-imports matches the specifier as written, not
// the file it resolves to; that is enough here because every import in src/ is a relative
// path with its `.ts` extension, so a backend is always reached through a `…/store/sqlite…`,
// `…/store/postgres…` or `…/store/migrations/…` segment whatever the importer's depth.
/** @param {string} regex @param {string} message */
const group = (regex, message) => ({ regex, message });

const HTTP = group(String.raw`(^|/)http/`, 'The domain does not know about HTTP: return values or throw a DomainError, and let src/http/ map them.');
const STORE_BACKEND = group(
  String.raw`(^|/)store/(sqlite|postgres|migrations)([-./]|$)`,
  'Use the Store interface (src/store/store.ts); only the composition root picks a backend.',
);
// The domain owns its ports (src/<concept>/*-store.ts); the engines implement them and import
// the domain, never the reverse (STYLE.md habit 16).
const STORE = group(String.raw`(^|/)store/`, 'The domain owns its ports: import the records and the store interface from your own folder (e.g. links/link-store.ts); engines implement them.');
// The transports reach PostgreSQL through the patched driver (ADR 23), and nothing else of the store.
const STORE_BUT_DRIVER = group(String.raw`(^|/)store/(?!postgres/driver\.ts$)`, 'A transport takes only the patched driver (store/postgres/driver.ts) from the store.');
const FEATURES = group(String.raw`(^|/)(features/|app\.ts$)`, 'Only the composition root wires features.');
const EVENT_TRANSPORTS = ['src/events/*-transport.ts', 'src/events/create-live-events.ts'];
// Every folder below with a no-restricted-imports rule of its own.
const LAYERED_FOLDERS = ['src/links/**', 'src/accounts/**', 'src/admin/**', 'src/domains/**', 'src/stats/**', 'src/webhooks/**', 'src/events/**', 'src/store/**', 'src/http/**'];
const PATCHED_DRIVER = {
  name: 'postgres',
  allowTypeImports: true,
  message: 'Take the driver from src/store/postgres/driver.ts, which loads it with its fix (ADR 23).',
};
const CONFIG = group(String.raw`(^|/)config\.ts$`, 'Take the values you need as arguments; only the composition root reads Config.');
const METRICS = group(String.raw`(^|/)metrics/`, 'The domain is not instrumented directly; metrics wrap it from outside (src/metrics/instrumented-store.ts).');
// Database drivers are backends too, however they are reached.
const DRIVERS = ['postgres', 'ioredis', 'node:sqlite'].map((name) => ({
  name,
  message: 'Database drivers belong to a store backend under src/store/.',
}));

/** @param {{ regex: string, message: string }[]} patterns @param {typeof DRIVERS} paths */
const restrictImports = (patterns, paths) => ['error', { patterns, paths }];

// Reading the environment: only src/config.ts and the CLI entry do (STYLE.md, habit 2).
const ENV_MESSAGE = 'Only src/config.ts and the CLI entry (src/cli/main.ts) read the environment; take a Config instead.';

export default defineConfig(
  globalIgnores(['node_modules/', 'data/', 'artifacts/', 'bench/results/', 'coverage/', 'dist/', 'packages/*/dist/']),

  js.configs.recommended,
  tseslint.configs.recommended,

  {
    name: 'shortlink/typescript',
    files: ['**/*.ts'],
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // The type-aware rules worth their cost in a server: a promise nobody awaits or handles
      // is a lost error (or an unhandled rejection that ends the process).
      // node:test's test() and describe() return promises that the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }] },
      ],
      // Fastify's callbacks (handlers, hooks, frameworkErrors) may return the reply, which is
      // a thenable: passing them where a void callback is typed is how Fastify is used.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false, properties: false } }],
      '@typescript-eslint/await-thenable': 'error',
      // The codebase already follows these through tsc (verbatimModuleSyntax) and habit;
      // the lint makes them visible at review.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports' }],
      // `let app` declared before a cleanup closure that reads it, assigned after: not a const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },

  {
    name: 'shortlink/browser',
    files: ['src/web/**/*.js'],
    languageOptions: { globals: globals.browser, sourceType: 'module' },
  },
  {
    name: 'shortlink/bin',
    files: ['bin/**/*.js'],
    languageOptions: { globals: globals.node, sourceType: 'module' },
  },

  // Layering (issue 12, item 7). One config object per guarded folder, because a later
  // object's options for a rule replace an earlier one's.
  {
    name: 'shortlink/layering/domain',
    files: ['src/links/**', 'src/accounts/**', 'src/admin/**', 'src/domains/**', 'src/stats/**', 'src/webhooks/**', 'src/events/**'],
    ignores: [...EVENT_TRANSPORTS],
    rules: { 'no-restricted-imports': restrictImports([HTTP, STORE, CONFIG, METRICS, FEATURES], DRIVERS) },
  },
  {
    // The live events' transports are adapters over Redis and PostgreSQL (ADR 19): they may
    // use a driver and read Config, but still know nothing of HTTP, the store or the wiring.
    name: 'shortlink/layering/event-transports',
    files: [...EVENT_TRANSPORTS],
    rules: { 'no-restricted-imports': restrictImports([HTTP, STORE_BUT_DRIVER, METRICS, FEATURES], [PATCHED_DRIVER]) },
  },
  {
    name: 'shortlink/layering/store',
    files: ['src/store/**'],
    ignores: ['src/store/postgres/driver.ts'],
    rules: { 'no-restricted-imports': restrictImports([HTTP, METRICS, FEATURES], [PATCHED_DRIVER]) },
  },
  {
    name: 'shortlink/layering/http',
    files: ['src/http/**'],
    rules: { 'no-restricted-imports': restrictImports([STORE_BACKEND], DRIVERS) },
  },
  {
    name: 'shortlink/layering/environment',
    files: ['src/**'],
    ignores: ['src/config.ts', 'src/cli/main.ts'],
    rules: {
      // Also catches `process['env']` and `const { env } = process`.
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: ENV_MESSAGE }],
      'no-restricted-syntax': [
        'error',
        // globalThis.process.env
        { selector: "MemberExpression[property.name='env'][object.property.name='process']", message: ENV_MESSAGE },
        // import { env } from 'node:process'
        { selector: "ImportDeclaration[source.value=/^(node:)?process$/] > ImportSpecifier[imported.name='env']", message: ENV_MESSAGE },
      ],
    },
  },
  {
    // The PostgreSQL driver is loaded with our fix to it (ADR 23): a module that imports
    // 'postgres' itself gets the unpatched one. Type-only imports are harmless. The folders
    // with layering rules of their own carry this path in them (a later object's options for
    // a rule replace an earlier one's).
    name: 'shortlink/patched-driver',
    files: ['src/**'],
    ignores: ['src/store/postgres/driver.ts', ...LAYERED_FOLDERS],
    rules: { 'no-restricted-imports': restrictImports([], [PATCHED_DRIVER]) },
  },

  // JavaScript files are not in tsconfig's program: lint them without type information.
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
);
