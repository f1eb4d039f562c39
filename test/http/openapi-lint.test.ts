/**
 * The generated OpenAPI document under Redocly's recommended rules (redocly.yaml), through the
 * same script as `npm run lint:openapi`: no error and no warning.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const script = fileURLToPath(new URL('../../scripts/lint-openapi.ts', import.meta.url));

test('the OpenAPI document passes Redocly\'s recommended rules', { timeout: 300_000 }, async () => {
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0, output);
  assert.match(output, /Your API description is valid/);
  assert.doesNotMatch(output, /warning/i);
});
