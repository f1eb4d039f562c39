import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { canonicalAddress, createClientKey } from '../../src/rate-limit/client-key.ts';

describe('createClientKey', () => {
  test('keys IPv4 by address and IPv4-mapped IPv6 as IPv4', () => {
    const key = createClientKey(64);
    assert.equal(key('203.0.113.7'), '203.0.113.7');
    assert.equal(key('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(key('::FFFF:cb00:7107'), '203.0.113.7');
  });

  test('keys IPv6 by its network, whatever the spelling', () => {
    const key = createClientKey(64);
    const network = '2001:db8:1:2:0:0:0:0/64';
    for (const address of ['2001:db8:1:2::1', '2001:DB8:1:2:abcd::', '2001:0db8:0001:0002:ffff:ffff:ffff:ffff', 'fe80::1%eth0'.replace('fe80::', '2001:db8:1:2::')]) {
      assert.equal(key(address), network, address);
    }
    assert.equal(key('::1'), '0:0:0:0:0:0:0:0/64');
  });

  test('masks at any prefix length', () => {
    assert.equal(createClientKey(48)('2001:db8:abcd:1234::1'), '2001:db8:abcd:0:0:0:0:0/48');
    assert.equal(createClientKey(56)('2001:db8:1:2ff::1'), '2001:db8:1:200:0:0:0:0/56');
    assert.equal(createClientKey(128)('2001:db8::1'), '2001:db8:0:0:0:0:0:1/128');
    assert.equal(createClientKey(1)('ffff::'), '8000:0:0:0:0:0:0:0/1');
  });

  test('leaves anything that is not an address unchanged', () => {
    assert.equal(createClientKey(64)('not-an-address'), 'not-an-address');
  });
});

describe('canonicalAddress', () => {
  test('spells each address one way', () => {
    assert.equal(canonicalAddress('::ffff:127.0.0.1'), '127.0.0.1');
    assert.equal(canonicalAddress('2001:DB8::5'), '2001:db8:0:0:0:0:0:5');
    assert.equal(canonicalAddress('2001:db8:0:0::5'), '2001:db8:0:0:0:0:0:5');
    assert.equal(canonicalAddress('198.51.100.1'), '198.51.100.1');
  });
});
