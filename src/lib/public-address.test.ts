import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ipv6Bytes, isLoopbackAddress, isPublicAddress } from './public-address.js'

/** Every address an outgoing request must not reach, with what it is. */
const refused: [string, string][] = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.1.2.3', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['0.0.0.0', 'this network'],
  ['0.1.2.3', 'this network'],
  ['192.0.0.8', 'IETF protocol'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['198.18.0.1', 'benchmarking'],
  ['192.88.99.1', '6to4 relay'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['::1', 'loopback'],
  ['::', 'unspecified'],
  ['fe80::1', 'link-local'],
  ['febf::1', 'link-local'],
  ['fec0::1', 'site-local'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456::1', 'unique-local'],
  ['ff02::1', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['100::1', 'discard-only'],
  ['5f00::1', 'SRv6'],
  // IPv4 inside IPv6, every spelling
  ['::ffff:127.0.0.1', 'mapped loopback'],
  ['::ffff:7f00:1', 'mapped loopback (hex)'],
  ['::ffff:10.0.0.1', 'mapped private'],
  ['0:0:0:0:0:ffff:7f00:1', 'mapped loopback (long)'],
  ['::FFFF:169.254.169.254', 'mapped metadata (upper case)'],
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::7f00:1', 'IPv4-compatible loopback (hex)'],
  ['::8.8.8.8', 'IPv4-compatible (deprecated)'],
  ['::ffff:0:127.0.0.1', 'IPv4-translated loopback'],
  ['::ffff:0:7f00:1', 'IPv4-translated (hex)'],
  ['::ffff:0:8.8.8.8', 'IPv4-translated'],
  ['64:ff9b::127.0.0.1', 'NAT64 loopback'],
  ['64:ff9b::a9fe:a9fe', 'NAT64 metadata'],
  ['64:ff9b::10.0.0.1', 'NAT64 private'],
  ['64:ff9b:1::8.8.8.8', 'local-use NAT64'],
  ['64:ff9b:1:ffff::1', 'local-use NAT64'],
  ['2002:7f00:1::', '6to4 of loopback'],
  ['2002:a00:1::1', '6to4 of private'],
  ['2002:a9fe:a9fe::1', '6to4 of metadata'],
  ['2001::1', 'Teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ['2001:2::1', 'benchmarking'],
  ['2001:10::1', 'ORCHID'],
  ['2001:20::1', 'ORCHIDv2'],
  ['fe80::1%eth0', 'link-local with a zone'],
]

const allowed = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '2606:4700:4700::1111',
  '2a00:1450:4001:82b::200e',
  '::ffff:8.8.8.8',
  '64:ff9b::8.8.8.8',
  '2002:808:808::1',
  '2001:4860:4860::8888',
]

test('every loopback, private, link-local, unique-local, multicast and reserved address is refused, in every spelling', () => {
  for (const [address, what] of refused) assert.equal(isPublicAddress(address), false, `${address} (${what})`)
})

test('public unicast addresses are allowed, also when they ride in a mapped, NAT64 or 6to4 address', () => {
  for (const address of allowed) assert.equal(isPublicAddress(address), true, address)
  for (const text of ['not an address', '', '127.1', '0x7f000001', '[::1]', '1.2.3.4.5']) assert.equal(isPublicAddress(text), false, text)
})

test('loopback is 127/8 and ::1 (also mapped)', () => {
  for (const address of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1', '::ffff:7f00:2'])
    assert.equal(isLoopbackAddress(address), true, address)
  for (const address of ['10.0.0.1', '8.8.8.8', 'fe80::1', '::', '::2', '::ffff:8.8.8.8'])
    assert.equal(isLoopbackAddress(address), false, address)
})

test('an IPv6 address is read into its 16 bytes in every notation', () => {
  const hex = (address: string) => Buffer.from(ipv6Bytes(address)!).toString('hex')
  assert.equal(hex('::1'), '00000000000000000000000000000001')
  assert.equal(hex('::ffff:1.2.3.4'), '00000000000000000000ffff01020304')
  assert.equal(hex('2001:db8::8:800:200c:417a'), '20010db8000000000008080020 0c417a'.replace(' ', ''))
  assert.equal(hex('1:2:3:4:5:6:7:8'), '00010002000300040005000600070008')
  assert.equal(hex('64:ff9b::'), '0064ff9b000000000000000000000000')
  assert.equal(ipv6Bytes('1.2.3.4'), null)
})
