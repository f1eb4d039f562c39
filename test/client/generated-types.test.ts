/**
 * The client's wire types are generated from the server's schemas (scripts/generate-client-types.ts);
 * the committed file must be what the generator writes today, or the client has drifted.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { generateClientTypes, TYPES_FILE } from '../../scripts/generate-client-types.ts';
import * as schemas from '../../src/http/schemas.ts';

test('packages/client/src/types.ts is up to date with src/http/schemas.ts (else: npm run generate:client)', () => {
  assert.equal(readFileSync(TYPES_FILE, 'utf8'), generateClientTypes());
});

test('every named schema of the server becomes a client type with the same keys, in order', () => {
  const text = generateClientTypes();
  for (const schema of Object.values(schemas) as { $id?: unknown; properties?: Record<string, unknown>; required?: string[] }[]) {
    if (typeof schema !== 'object' || schema === null || typeof schema.$id !== 'string') continue;
    const block = new RegExp(`export interface ${schema.$id} \\{\\n([\\s\\S]*?)\\n\\}`).exec(text);
    assert.ok(block, `no interface ${schema.$id}`);
    const keys = [...block[1]!.matchAll(/^ {2}(\w+)\??:/gm)].map((match) => match[1]);
    assert.deepEqual(keys, Object.keys(schema.properties ?? {}), schema.$id);
  }
});
