/**
 * An API key never reaches a log line (issue 30): not from the `auth` parameter, the
 * Authorization header, the path, another parameter, nor percent-encoded.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newAccount } from '../helpers/app.ts';
import { appFor } from './support.ts';

test('a key sent anywhere in a request is redacted from every log line', async (t) => {
  const chunks: string[] = [];
  const { app } = await appFor(t, { logLevel: 'info' }, { logStream: { write: (chunk: string) => void chunks.push(chunk) } });
  const { code } = await newAccount(app);
  const response = await app.inject({ method: 'POST', url: '/v1/keys', headers: { authorization: `Bearer ${code}` }, payload: { name: 'k', scopes: 'links:read' } });
  const key = (response.json() as { Key: string }).Key;
  const encoded = [...Buffer.from(key)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
  await app.inject({ method: 'GET', url: `/v1/links?auth=${key}` });
  await app.inject({ method: 'GET', url: '/v1/links', headers: { authorization: `Bearer ${key}` } });
  await app.inject({ method: 'GET', url: `/${key}` });
  await app.inject({ method: 'GET', url: `/v1/get/${key}` });
  await app.inject({ method: 'GET', url: `/v1/links?x=${key}`, headers: { authorization: key } });
  await app.inject({ method: 'GET', url: `/v1/links?y=${encoded}`, headers: { authorization: key } });
  const lines = chunks.join('').split('\n').filter((line) => line !== '');
  assert.ok(lines.length >= 7, 'the requests were logged');
  const secret = key.slice(4);
  for (const line of lines) {
    assert.ok(!line.includes(secret), `log line carries the key: ${line}`);
    assert.ok(!decodeURIComponent(line).includes(secret), `log line carries the key once decoded: ${line}`);
  }
});
