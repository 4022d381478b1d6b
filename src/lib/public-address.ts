/**
 * Outgoing requests to addresses a client chose (Web Push endpoints, webhooks) must not reach the
 * server's own network: loopback, private, link-local, carrier-grade NAT, multicast and reserved
 * ranges are refused unless `allowPrivate` (WEBHOOK_ALLOW_PRIVATE=true, for tests). `guardedLookup`
 * does the check inside the connection's own DNS lookup, so a name that resolves to a public address
 * when it is registered and to a private one later (DNS rebinding) is still refused.
 */
import dns from 'node:dns'
import { BlockList, isIP, type LookupFunction } from 'node:net'

const blocked = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64],
] as const) blocked.addSubnet(net, prefix, 'ipv6')
const loopback = new BlockList()
loopback.addSubnet('127.0.0.0', 8, 'ipv4')
loopback.addAddress('::1', 'ipv6')

/** The IPv4 address an IPv6 address carries (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96), else null. */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase()
  const mapped = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
  if (mapped) return mapped[1]
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower)
  if (!hex) return null
  const high = parseInt(hex[1], 16)
  const low = parseInt(hex[2], 16)
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
}

/** Whether an IP address (v4 or v6) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return false
  if (family === 6) {
    const v4 = embeddedIpv4(address)
    if (v4) return isPublicAddress(v4)
    return !blocked.check(address, 'ipv6')
  }
  return !blocked.check(address, 'ipv4')
}

/** Whether an IP address is a loopback address (127.0.0.0/8, ::1, or ::ffff:127.x). */
export function isLoopbackAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return false
  if (family === 6) {
    const v4 = embeddedIpv4(address)
    return v4 ? loopback.check(v4, 'ipv4') : loopback.check(address, 'ipv6')
  }
  return loopback.check(address, 'ipv4')
}

/** `[host]` of a URL without its brackets (an IPv6 literal). */
const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, '')

/** Every address a host name resolves to (an IP literal is itself). */
export async function resolveHost(hostname: string): Promise<string[]> {
  const host = bare(hostname)
  if (isIP(host)) return [host]
  const found = await dns.promises.lookup(host, { all: true, verbatim: true })
  return found.map((entry) => entry.address)
}

/**
 * Why a URL may not be the target of an outgoing request, or null when it may: https only (http
 * only to loopback, and only with `allowPrivate`), and every address its host resolves to public
 * unless `allowPrivate`. A name that does not resolve is refused.
 */
export async function refuseUrl(raw: string, allowPrivate: boolean): Promise<string | null> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'is not a URL'
  }
  if (url.username || url.password) return 'must not carry credentials'
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL'
  let addresses: string[]
  try {
    addresses = await resolveHost(url.hostname)
  } catch {
    return 'has a host name that does not resolve'
  }
  if (addresses.length === 0) return 'has a host name that does not resolve'
  if (url.protocol === 'http:' && !(allowPrivate && addresses.every(isLoopbackAddress))) return 'must be an https URL'
  if (!allowPrivate && !addresses.every(isPublicAddress)) return 'points to a private, loopback or link-local address'
  return null
}

/**
 * A `lookup` for http(s).request that refuses private addresses (unless `allowPrivate`): the check
 * happens on the address the connection actually uses.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0)
      const list = addresses as unknown as dns.LookupAddress[]
      const usable = allowPrivate ? list : list.filter((entry) => isPublicAddress(entry.address))
      if (usable.length === 0) {
        const refused = Object.assign(new Error(`${hostname} resolves only to private addresses`), { code: 'EPRIVATEADDRESS' })
        return callback(refused, '', 0)
      }
      if ((options as dns.LookupOptions).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, usable)
      callback(null, usable[0].address, usable[0].family)
    })
  }
}
