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

test('a blocked IPv4 address is refused in every spelling, IPv4-mapped IPv6 included', () => {
  const blocked = loadConfig({ BLOCKED_HOSTS: '127.0.0.1' }).blockedHosts;
  for (const url of ['http://127.0.0.1/', 'http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/', 'http://2130706433/', 'http://0x7f.1/', 'http://127.0.0.1./']) {
    assert.throws(() => validateTargetUrl(url, 'http://sl.test', blocked), /not allowed on this service/, url);
  }
  assert.equal(validateTargetUrl('http://127.0.0.2/', 'http://sl.test', blocked), 'http://127.0.0.2/');
});

test('a blocked IPv4 address or range also blocks the IPv6 forms that lead to it (NAT64, SIIT, 6to4, Teredo)', () => {
  const blocked = loadConfig({ BLOCKED_HOSTS: '127.0.0.0/8, 203.0.113.7' }).blockedHosts;
  for (const url of [
    'http://[64:ff9b::7f00:1]/', 'http://[64:ff9b:1::7f00:1]/', 'http://[::ffff:0:7f00:1]/', 'http://[2002:7f00:1::]/',
    'http://[2001:0:7f00:1::]/', 'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'http://[64:ff9b::203.0.113.7]/', 'http://[2002:cb00:7107::1]/',
  ]) assert.throws(() => validateTargetUrl(url, 'http://sl.test', blocked), /not allowed on this service/, url);
  // The same forms of other addresses are not blocked.
  for (const url of ['http://[64:ff9b::808:808]/', 'http://[2002:808:808::]/', 'http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/', 'http://[2606:4700::1111]/']) {
    assert.equal(validateTargetUrl(url, 'http://sl.test', blocked), url, url);
  }
});

test('BLOCKED_HOSTS accepts bare and bracketed IPv6 addresses and CIDR ranges of both families', () => {
  const config = loadConfig({ BLOCKED_HOSTS: '::2, [2001:DB8::1], 10.0.0.0/8, 192.168.1.1/24, fd00::/8, [fe80::]/10, 0x7f.1' });
  assert.deepEqual(config.blockedHosts, ['::2', '2001:db8::1', '10.0.0.0/8', '192.168.1.1/24', 'fd00::/8', 'fe80::/10', '127.0.0.1']);
  const blocked = (host: string) => isBlockedHost(host, config.blockedHosts);
  assert.equal(blocked('[::2]'), true);
  assert.equal(blocked('[2001:db8::1]'), true);
  assert.equal(blocked('10.200.3.4'), true);
  assert.equal(blocked('[::ffff:a01:203]'), true, '10.1.2.3 as IPv4-mapped IPv6');
  assert.equal(blocked('192.168.1.77'), true, 'a range written with host bits covers the whole /24');
  assert.equal(blocked('192.168.2.1'), false);
  assert.equal(blocked('[fd12:3456::1]'), true);
  assert.equal(blocked('[fe80::1]'), true);
  assert.equal(blocked('[2001:db8::2]'), false);
  assert.equal(blocked('11.0.0.1'), false);
});

test('BLOCKED_HOSTS entries that could never match a host stop the start with one line naming them', () => {
  for (const entry of ['host:8080', 'https://host/', 'host/path', '10.0.0.0/33', 'fd00::/129', 'not-an-address/8', 'user@host', '[::2']) {
    assert.throws(
      () => loadConfig({ BLOCKED_HOSTS: `fine.example,${entry}` }),
      (error: Error) => error.message.startsWith('Unable to start: BLOCKED_HOSTS entry ') && error.message.includes(JSON.stringify(entry)) && !/[\r\n]/.test(error.message),
      entry,
    );
  }
  const dir = tempDir();
  try {
    const file = join(dir.path, 'blocked.txt');
    writeFileSync(file, 'ok.example\nbad.example:443\n');
    assert.throws(() => loadConfig({ BLOCKED_HOSTS_FILE: file }), /BLOCKED_HOSTS_FILE entry "bad\.example:443"/);
  } finally {
    dir.remove();
  }
});

test('SELF_HOSTS is read like host names and refuses what cannot be a host', () => {
  assert.deepEqual(loadConfig({ SELF_HOSTS: 'Alias.Example, 203.0.113.5,[::1]' }).selfHosts, ['alias.example', '203.0.113.5', '::1']);
  assert.deepEqual(loadConfig({}).selfHosts, []);
  assert.throws(() => loadConfig({ SELF_HOSTS: 'https://alias.example' }), /SELF_HOSTS entry "https:\/\/alias\.example"/);
  assert.throws(() => loadConfig({ SELF_HOSTS: '10.0.0.0/8' }), /SELF_HOSTS entry/);
});

test('creating a link back to the service answers 400 for its host under either scheme and for SELF_HOSTS', async (t) => {
  const { app, close } = await createTestApp({ selfHosts: ['alias.example'] });
  t.after(close);
  const { code } = await newAccount(app);
  for (const url of ['https://sl.test/x', 'http://SL.TEST./x', 'https://alias.example/x']) {
    const response = await app.inject({ url: `/v1/link?url=${encodeURIComponent(url)}&auth=${code}` });
    assert.equal(response.statusCode, 400, url);
    assert.equal(response.body, 'Unable to create link: url must not point back at this service');
  }
});
