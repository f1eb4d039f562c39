// Finds import cycles among the TypeScript files under a folder (type-only imports included):
// `node scripts/import-cycles.ts [src]` prints each cycle and exits 1 if there is any.
// test/unit/import-cycles.test.ts runs the same search over src/ (ADR 13, issue 24 item 9).
import { readdirSync, readFileSync, type Dirent } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Every relative `.ts` import (and re-export) of each `.ts` file under `root`, as absolute paths. */
export function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const files = (readdirSync(root, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
  const specifier = /^\s*(?:import|export)\s[^'"]*?from\s+['"](\.{1,2}\/[^'"]+\.ts)['"]/gm;
  for (const file of files) {
    const source = readFileSync(file, 'utf8');
    graph.set(file, [...source.matchAll(specifier)].map((match) => resolve(dirname(file), match[1]!)));
  }
  return graph;
}

/** The strongly connected components of more than one file (or a file importing itself). */
export function importCycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's algorithm, iteratively deep enough for a source tree.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? 'src');
  const cycles = importCycles(importGraph(root));
  for (const cycle of cycles) console.log(`cycle of ${cycle.length}: ${cycle.map((file) => relative(root, file)).join(', ')}`);
  if (cycles.length === 0) console.log('no import cycle');
  process.exitCode = cycles.length === 0 ? 0 : 1;
}
