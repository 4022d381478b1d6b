/**
 * The key a client address is rate-limited by: an IPv4 address (also written as ::ffff:a.b.c.d)
 * is itself; an IPv6 address is its /64, the smallest block a provider hands one customer, so a
 * client cannot step around a limit by rotating through the 2^64 addresses it owns.
 */
import { isIP } from 'node:net'
import { ipv6Bytes } from './public-address.js'

export function clientKey(address: string | undefined): string {
  if (!address) return 'unknown'
  const family = isIP(address)
  if (family === 4) return address
  if (family !== 6) return address
  const bytes = ipv6Bytes(address)
  if (!bytes) return address
  if (bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff)
    return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`
  const groups: string[] = []
  for (let i = 0; i < 8; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16))
  return `${groups.join(':')}::/64`
}
