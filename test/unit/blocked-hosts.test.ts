import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { ErrorCode } from '../../src/errors.ts';
import { isBlockedHost, validateTargetUrl } from '../../src/links/target-url.ts';
import { createTestApp, newAccount, tempDir } from '../helpers/app.ts';

test('a blocked host and its subdomains are refused, look-alike names are not', () => {
  const blocked = ['evil.example'];
  assert.equal(isBlockedHost('evil.example', blocked), true);
  assert.equal(isBlockedHost('login.evil.example', blocked), true);
  assert.equal(isBlockedHost('evil.example.', blocked), true);
  assert.equal(isBlockedHost('notevil.example', blocked), false);
  assert.equal(isBlockedHost('evil.example.com', blocked), false);
});

test('validateTargetUrl refuses blocked hosts with an invalid-parameter error', () => {
  assert.throws(
    () => validateTargetUrl('https://WWW.Evil.Example/login', 'http://sl.test', ['evil.example']),
    (error: { code?: string; message: string }) => error.code === ErrorCode.InvalidParameter && /evil\.example/.test(error.message),
  );
  assert.equal(validateTargetUrl('https://good.example/', 'http://sl.test', ['evil.example']), 'https://good.example/');
});

test('BLOCKED_HOSTS and BLOCKED_HOSTS_FILE are merged, lower-cased and turned into punycode', () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'blocked.txt');
    writeFileSync(file, '# phishing\nBad.Example\n*.bücher.example  # comment\n');
    const config = loadConfig({ BLOCKED_HOSTS: 'one.example, .two.example', BLOCKED_HOSTS_FILE: file });
    assert.deepEqual(config.blockedHosts, ['one.example', 'two.example', 'bad.example', 'xn--bcher-kva.example']);
    assert.throws(() => loadConfig({ BLOCKED_HOSTS_FILE: join(dir.path, 'missing.txt') }), /BLOCKED_HOSTS_FILE cannot be read/);
  } finally {
    dir.remove();
  }
});

test('creating a link to a blocked host answers 400 and writes nothing', async (t) => {
  const { app, close } = await createTestApp({ blockedHosts: ['evil.example', 'xn--bcher-kva.example'] });
  t.after(close);
  const { code } = await newAccount(app);
  for (const url of ['https://evil.example/', 'http://a.b.evil.example/x', 'https://bücher.example/']) {
    const response = await app.inject({ url: `/v1/link?url=${encodeURIComponent(url)}&auth=${code}` });
    assert.equal(response.statusCode, 400, url);
    assert.match(response.body, /^Unable to create link: links to .+ are not allowed on this service$/);
  }
  const list = await app.inject({ url: `/v1/links?auth=${code}` });
  assert.deepEqual(list.json(), []);
  const ok = await app.inject({ url: `/v1/link?url=${encodeURIComponent('https://fine.example/')}&auth=${code}` });
  assert.equal(ok.statusCode, 200);
});
