import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactUrl } from '../../src/http/redact.ts';

const CODE = '9e0c2a4b-1d3f-4a5b-8c6d-7e8f9a0b1c2d';
const encoded = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');

test('replaces only the raw characters a percent-encoded UUID came from', () => {
  assert.equal(redactUrl(`/v1/links?x=1;auth=${encoded(CODE)}`), '/v1/links?x=1;auth=[REDACTED]');
  assert.equal(redactUrl(`/a/${encoded(CODE)}/b?q=${encoded('ok')}`), `/a/[REDACTED]/b?q=${encoded('ok')}`);
  assert.equal(redactUrl(`/?k=${CODE.slice(0, 10)}${encoded(CODE.slice(10))}&keep=1`), '/?k=[REDACTED]&keep=1');
});

test('decodes repeatedly, as a reader pasting the line into a decoder would', () => {
  assert.equal(redactUrl(`/?v=${encoded(encoded(CODE))}`), '/?v=[REDACTED]');
});

test('redacts the value of auth however its name is disguised', () => {
  for (const name of ['+auth', 'auth%00', '%20AUTH', 'a%2575th']) {
    assert.equal(redactUrl(`/v1/links?${name}=secret-value&y=2`), `/v1/links?${name}=[REDACTED]&y=2`, name);
  }
  assert.equal(redactUrl('/v1/links?author=kept'), '/v1/links?author=kept');
});

test('redacts the value under any credential-like name, and keeps ordinary names', () => {
  for (const name of ['token', 'access_token', 'admin_token', 'ADMIN-TOKEN', 'id_token', 'api_key', 'apiKey', 'x-api-key', 'key', 'password', 'passwd', 'client_secret', 'authorization', 'session_id', 'sig']) {
    assert.equal(redactUrl(`/v1/admin/links?${name}=free-text&q=x`), `/v1/admin/links?${name}=[REDACTED]&q=x`, name);
  }
  for (const name of ['author', 'keyword', 'short', 'url', 'q', 'host', 'tokens_used', 'passage']) {
    assert.equal(redactUrl(`/x?${name}=kept`), `/x?${name}=kept`, name);
  }
});

test('redacts an API key\'s shape wherever it is, encoded or not', () => {
  const key = `slk_${'Z9_-x'.repeat(8)}abc`;
  assert.equal(redactUrl(`/v1/links?q=${key}`), '/v1/links?q=[REDACTED]');
  assert.equal(redactUrl(`/v1/get/${encoded(key)}`), '/v1/get/[REDACTED]');
  // Even cut short: a truncated key in a log is still most of a secret.
  assert.equal(redactUrl('/v1/get/slk_short'), '/v1/get/[REDACTED]');
  assert.equal(redactUrl('/v1/get/not-slk'), '/v1/get/not-slk');
});

test('leaves text without a UUID alone, including broken escapes and non-ASCII bytes', () => {
  for (const url of ['/v1/get/%E0%A4%A', '/x?q=%zz%4', '/caf%C3%A9?a=b&c', '/plain']) assert.equal(redactUrl(url), url);
});
