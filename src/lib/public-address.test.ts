import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isLoopbackAddress, isPublicAddress, refuseUrl } from './public-address.js'

test('private, loopback, link-local and reserved addresses are not public, in both families and in mapped form', () => {
  for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1',
    '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '64:ff9b::a9fe:a9fe']) {
    assert.equal(isPublicAddress(address), false, address)
  }
  for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) assert.equal(isPublicAddress(address), true, address)
  assert.equal(isPublicAddress('not an address'), false)
})

test('loopback is 127/8 and ::1 (also mapped)', () => {
  for (const address of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1']) assert.equal(isLoopbackAddress(address), true, address)
  for (const address of ['10.0.0.1', '8.8.8.8', 'fe80::1']) assert.equal(isLoopbackAddress(address), false, address)
})

test('refuseUrl: https to public only; http only to loopback and only when private addresses are allowed', async () => {
  assert.equal(await refuseUrl('https://8.8.8.8/push', false), null)
  assert.match((await refuseUrl('http://8.8.8.8/push', false))!, /https/)
  assert.match((await refuseUrl('http://8.8.8.8/push', true))!, /https/)
  assert.match((await refuseUrl('https://127.0.0.1/push', false))!, /private/)
  assert.match((await refuseUrl('https://[::1]/push', false))!, /private/)
  assert.match((await refuseUrl('https://10.0.0.8/push', false))!, /private/)
  assert.equal(await refuseUrl('http://127.0.0.1:8090/notify/x', true), null)
  assert.match((await refuseUrl('http://10.0.0.8/push', true))!, /https/)
  assert.match((await refuseUrl('ftp://8.8.8.8/x', false))!, /https/)
  assert.match((await refuseUrl('https://user:pw@8.8.8.8/x', false))!, /credentials/)
  assert.match((await refuseUrl('nonsense', false))!, /not a URL/)
  assert.match((await refuseUrl('https://name.invalid/x', false))!, /resolve/)
})
