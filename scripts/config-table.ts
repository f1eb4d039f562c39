// Rewrites the README's configuration table from src/config-variables.ts, the one place each
// variable is declared. `npm run docs:config`; test/unit/config-docs.test.ts fails while the
// README and the table differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configurationTable } from '../src/config-variables.ts';

export const TABLE_START = '<!-- configuration table: generated from src/config-variables.ts by `npm run docs:config` -->';
export const TABLE_END = '<!-- end of the configuration table -->';

/** The README with its configuration table replaced by the generated one. */
export function withGeneratedTable(readme: string): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error('README.md has no configuration table markers');
  return `${readme.slice(0, start + TABLE_START.length)}\n${configurationTable()}\n${readme.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = fileURLToPath(new URL('../README.md', import.meta.url));
  writeFileSync(file, withGeneratedTable(readFileSync(file, 'utf8')));
}
