/**
 * Which IP addresses an outgoing request to an address a client chose (a Web Push endpoint, a bot
 * webhook) may reach: public unicast only. Loopback, private, link-local, carrier-grade NAT,
 * multicast, documentation and reserved ranges are refused in every spelling, including IPv6
 * addresses that carry an IPv4 address (mapped `::ffff:0:0/96`, IPv4-compatible `::/96`,
 * IPv4-translated `::ffff:0:0:0/96`, NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`,
 * Teredo `2001::/32`). Pure: the connection side is lib/outbound-http.ts.
 */
import { BlockList, isIP } from 'node:net'

const blockedV4 = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blockedV4.addSubnet(net, prefix, 'ipv4')

/**
 * Inside global unicast (2000::/3), the ranges that are not globally reachable: IETF protocol
 * assignments (2001::/23: Teredo, benchmarking, ORCHID), documentation (2001:db8::/32, 3fff::/20).
 */
const blockedGlobalV6 = new BlockList()
for (const [net, prefix] of [
  ['2001::', 23],
  ['2001:db8::', 32],
  ['3fff::', 20],
] as const)
  blockedGlobalV6.addSubnet(net, prefix, 'ipv6')

/** The 16 bytes of an IPv6 address (a zone id is not an address here), or null. */
export function ipv6Bytes(address: string): Uint8Array | null {
  if (isIP(address) !== 6) return null
  let text = address.toLowerCase()
  const bytes = new Uint8Array(16)
  // a dotted IPv4 tail becomes two groups
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number)
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null]
  const headGroups = head ? head.split(':') : []
  const tailGroups = tail ? tail.split(':') : []
  const groups = tail === null ? headGroups : [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups]
  if (groups.length !== 8) return null
  groups.forEach((group, i) => {
    const value = parseInt(group, 16)
    bytes[i * 2] = value >> 8
    bytes[i * 2 + 1] = value & 255
  })
  return bytes
}

const v4 = (bytes: Uint8Array, at: number) => `${bytes[at]}.${bytes[at + 1]}.${bytes[at + 2]}.${bytes[at + 3]}`
const zeros = (bytes: Uint8Array, from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0)

type V6Kind = { embedded: string } | { global: boolean }

/** An IPv6 address as the IPv4 address it stands for (mapped, NAT64, 6to4), or whether it is globally routable itself. */
function classifyV6(bytes: Uint8Array, text: string): V6Kind {
  // ::ffff:a.b.c.d, mapped: the socket talks IPv4 to a.b.c.d
  if (zeros(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return { embedded: v4(bytes, 12) }
  // 64:ff9b::/96, the well-known NAT64 prefix: a translator reaches a.b.c.d
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(bytes, 4, 12))
    return { embedded: v4(bytes, 12) }
  // 2002:aabb:ccdd::/48, 6to4: a relay reaches a.b.c.d
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return { embedded: v4(bytes, 2) }
  // only global unicast (2000::/3) is routable; ::/96 (IPv4-compatible, ::, ::1), ::ffff:0:0:0/96
  // (IPv4-translated), 64:ff9b:1::/48 (local NAT64), fc00::/7, fe80::/10, ff00::/8… all fall outside it
  if ((bytes[0] & 0xe0) !== 0x20) return { global: false }
  return { global: !blockedGlobalV6.check(text, 'ipv6') }
}

/** Whether an IP address (v4 or v6, in any spelling Node accepts) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return !blockedV4.check(address, 'ipv4')
  if (family !== 6) return false
  const bytes = ipv6Bytes(address)
  if (!bytes) return false
  const kind = classifyV6(bytes, address)
  return 'embedded' in kind ? isPublicAddress(kind.embedded) : kind.global
}

/** Whether an IP address is a loopback address (127.0.0.0/8, ::1, or 127/8 mapped as ::ffff:127.x). */
export function isLoopbackAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return address.split('.')[0] === '127'
  if (family !== 6) return false
  const bytes = ipv6Bytes(address)
  if (!bytes) return false
  if (zeros(bytes, 0, 15) && bytes[15] === 1) return true
  return zeros(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff && bytes[12] === 127
}
