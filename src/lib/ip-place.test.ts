import assert from 'node:assert/strict'
import { test } from 'node:test'
import { placeOf } from './ip-place.js'

test('an address is placed: this computer, a local network, or the country its block is registered in', async () => {
  assert.equal(await placeOf('127.0.0.1'), 'this computer')
  assert.equal(await placeOf('::1'), 'this computer')
  assert.equal(await placeOf('192.168.1.20'), 'a local network')
  assert.equal(await placeOf('fd00::5'), 'a local network')
  // 1.0.0.0/24 is registered in Australia, 2001:67c:4::/48 in Germany
  assert.equal(await placeOf('1.0.0.1'), 'Australia')
  assert.equal(await placeOf('2001:67c:4::1'), 'Germany')
  assert.equal(await placeOf('::ffff:1.0.0.1'), 'Australia')
  assert.equal(await placeOf(null), null)
  assert.equal(await placeOf('not an address'), null)
})
