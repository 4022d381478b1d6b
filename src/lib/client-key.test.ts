import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clientKey } from './client-key.js'

test('IPv6 clients are keyed by their /64 in every spelling; IPv4 (also mapped) by the address', () => {
  const a = clientKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')
  assert.equal(a, '2001:db8:1:2::/64')
  for (const same of ['2001:db8:1:2::1', '2001:0DB8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2:0:0:0:0'])
    assert.equal(clientKey(same), a, same)
  // the neighbouring /64 is another client
  assert.notEqual(clientKey('2001:db8:1:3::1'), a)
  assert.equal(clientKey('::1'), '0:0:0:0::/64')
  assert.equal(clientKey('203.0.113.7'), '203.0.113.7')
  assert.equal(clientKey('::ffff:203.0.113.7'), '203.0.113.7')
  assert.notEqual(clientKey('203.0.113.8'), clientKey('203.0.113.7'))
  assert.equal(clientKey(undefined), 'unknown')
})
