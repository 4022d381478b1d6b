/**
 * Where an IP address is, as near as the server can tell: "this computer", "a local network", or
 * the country its block is registered in (the CC0 country table of @ip-location-db, read once on
 * first use and kept as sorted ranges). Shown to a person who must judge a sign-in request; never
 * used for a decision.
 */
import fs from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { isIP } from 'node:net'
import { ipv6Bytes, isLoopbackAddress, isPublicAddress } from './public-address.js'

interface Table {
  v4Start: Uint32Array
  v4End: Uint32Array
  v4Country: string[]
  v6Start: BigUint64Array
  v6End: BigUint64Array
  v6Country: string[]
}

let loading: Promise<Table | null> | null = null
const regionNames = new Intl.DisplayNames(['en'], { type: 'region' })

/** The upper 64 bits of an IPv6 address (the table's blocks are coarser than that). */
function upper64(address: string): bigint | null {
  const bytes = ipv6Bytes(address)
  if (!bytes) return null
  return Buffer.from(bytes).readBigUInt64BE(0)
}

async function load(): Promise<Table | null> {
  let dir: string
  try {
    dir = path.dirname(createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country/package.json'))
  } catch {
    return null
  }
  const [v4Text, v6Text] = await Promise.all([
    fs.readFile(path.join(dir, 'geo-whois-asn-country-ipv4-num.csv'), 'utf8'),
    fs.readFile(path.join(dir, 'geo-whois-asn-country-ipv6-num.csv'), 'utf8'),
  ])
  const v4Lines = v4Text.split('\n').filter(Boolean)
  const v4Start = new Uint32Array(v4Lines.length)
  const v4End = new Uint32Array(v4Lines.length)
  const v4Country: string[] = new Array(v4Lines.length)
  v4Lines.forEach((line, i) => {
    const [start, end, country] = line.split(',')
    v4Start[i] = Number(start)
    v4End[i] = Number(end)
    v4Country[i] = country.trim()
  })
  const v6Lines = v6Text.split('\n').filter(Boolean)
  const v6Start = new BigUint64Array(v6Lines.length)
  const v6End = new BigUint64Array(v6Lines.length)
  const v6Country: string[] = new Array(v6Lines.length)
  v6Lines.forEach((line, i) => {
    const [start, end, country] = line.split(',')
    v6Start[i] = BigInt(start) >> 64n
    v6End[i] = BigInt(end) >> 64n
    v6Country[i] = country.trim()
  })
  return { v4Start, v4End, v4Country, v6Start, v6End, v6Country }
}

/** The index of the last range starting at or before `value`, or -1. */
function lastAtOrBefore<T extends number | bigint>(starts: ArrayLike<T>, value: T): number {
  let low = 0
  let high = starts.length - 1
  let found = -1
  while (low <= high) {
    const mid = (low + high) >> 1
    if (starts[mid] <= value) {
      found = mid
      low = mid + 1
    } else {
      high = mid - 1
    }
  }
  return found
}

const countryName = (code: string) => {
  try {
    return regionNames.of(code) ?? code
  } catch {
    return code
  }
}

/** "this computer", "a local network", a country's name, or null when unknown. */
export async function placeOf(address: string | null): Promise<string | null> {
  if (!address || isIP(address) === 0) return null
  if (isLoopbackAddress(address)) return 'this computer'
  if (!isPublicAddress(address)) return 'a local network'
  loading ??= load().catch(() => null)
  const table = await loading
  if (!table) return null
  if (isIP(address) === 4 || address.toLowerCase().startsWith('::ffff:')) {
    const v4 = isIP(address) === 4 ? address : address.slice(7)
    const parts = v4.split('.').map(Number)
    if (parts.length !== 4) return null
    const value = ((parts[0] << 24) >>> 0) + (parts[1] << 16) + (parts[2] << 8) + parts[3]
    const i = lastAtOrBefore(table.v4Start, value)
    return i >= 0 && value <= table.v4End[i] ? countryName(table.v4Country[i]) : null
  }
  const value = upper64(address)
  if (value === null) return null
  const i = lastAtOrBefore(table.v6Start, value)
  return i >= 0 && value <= table.v6End[i] ? countryName(table.v6Country[i]) : null
}
