// No import cycle in src/, type-only imports included (issue 24): a cycle ties modules that
// should stand apart (the store and the events it writes, once) and hides the layering.
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { importCycles, importGraph } from '../../scripts/import-cycles.ts';

const src = fileURLToPath(new URL('../../src', import.meta.url));

describe('import cycles', () => {
  test('src/ has none, type-only imports included', () => {
    const cycles = importCycles(importGraph(src)).map((cycle) => cycle.map((file) => relative(src, file)).join(' → '));
    assert.deepEqual(cycles, []);
  });

  test('the search finds a cycle through a type-only import and a re-export', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cycles-'));
    try {
      mkdirSync(join(dir, 'store'));
      writeFileSync(join(dir, 'a.ts'), "import type { B } from './store/b.ts';\nexport type A = B;\n");
      writeFileSync(join(dir, 'store', 'b.ts'), "export { c } from '../c.ts';\nexport type B = number;\n");
      writeFileSync(join(dir, 'c.ts'), "import {\n  type A,\n} from './a.ts';\nexport const c = 1 as A;\n");
      writeFileSync(join(dir, 'd.ts'), "import { c } from './c.ts';\nexport const d = c;\n");
      const cycles = importCycles(importGraph(dir)).map((cycle) => cycle.map((file) => relative(dir, file)));
      assert.deepEqual(cycles, [['a.ts', 'c.ts', 'store/b.ts']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
