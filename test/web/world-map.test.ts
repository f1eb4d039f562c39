/**
 * The world map's shapes: src/web/world-map.js is what scripts/generate-world-map.ts writes
 * from world-atlas today, holds the countries the statistics name, and stays small; the map's
 * shading steps.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { MAP_FILE, worldMapModule } from '../../scripts/generate-world-map.ts';
import { shadeOf } from '../../src/web/stats-map.js';
import { COUNTRIES } from '../../src/web/world-map.js';

describe('world map', () => {
  test('is the generator\'s output, under 300 KB', () => {
    const text = readFileSync(MAP_FILE, 'utf8');
    assert.equal(text, worldMapModule(), 'run node scripts/generate-world-map.ts');
    assert.ok(text.length < 300_000, `${text.length} bytes`);
  });

  test('names countries by their ISO alpha-2 codes, each once', () => {
    const codes = COUNTRIES.map(([code]) => code);
    assert.equal(new Set(codes).size, codes.length);
    for (const code of ['US', 'GB', 'DE', 'FR', 'IN', 'BR', 'JP', 'RU', 'AU', 'ZA', 'XK']) assert.ok(codes.includes(code), code);
    for (const [code, d] of COUNTRIES) {
      assert.match(code, /^[A-Z]{2}$/);
      assert.match(d, /^M[\d. MLZ-]+Z$/);
    }
  });

  test('shades a country by its share of the busiest one, in five steps', () => {
    assert.equal(shadeOf(0, 10), 0);
    assert.equal(shadeOf(1, 10), 1);
    assert.equal(shadeOf(5, 10), 3);
    assert.equal(shadeOf(10, 10), 5);
    assert.equal(shadeOf(3, 0), 0);
  });
});
