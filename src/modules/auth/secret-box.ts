/**
 * The server key, and what it protects: TOTP secrets are sealed with AES-256-GCM, short codes
 * (sign-in codes, recovery codes) are stored as HMAC-SHA256 under it, so a copy of the database
 * alone reveals neither. The key is SECRET_KEY, or else a random one created once in
 * `<DATA_DIR>/secret.key` (mode 0600). Instances that share a PostgreSQL database must share the
 * key: set SECRET_KEY on each. Losing the key turns two-factor off in practice (secrets cannot be
 * opened: an admin resets 2FA for the user) and voids pending codes.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import type { Config } from '../../config.js'
import { createFileOnce } from '../../lib/create-once.js'

interface Keys {
  seal: Buffer
  hmac: Buffer
}

const keys = new WeakMap<Readonly<Config>, Keys>()

function masterKey(config: Readonly<Config>): Buffer {
  if (config.secretKey) return Buffer.from(config.secretKey, 'utf8')
  const file = path.join(config.dataDir, 'secret.key')
  const read = () => {
    const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64url')
    if (key.length < 32) throw new Error(`${file} does not hold a key (32 bytes, base64url): restore it or set SECRET_KEY`)
    return key
  }
  try {
    return read()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  // another instance on the same DATA_DIR may make it first: then theirs is used
  createFileOnce(file, `${randomBytes(32).toString('base64url')}\n`)
  return read()
}

function keysFor(config: Readonly<Config>): Keys {
  let found = keys.get(config)
  if (!found) {
    const master = masterKey(config)
    const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', master, 'tern', purpose, 32))
    found = { seal: derive('seal v1'), hmac: derive('hmac v1') }
    keys.set(config, found)
  }
  return found
}

/** `plaintext` encrypted and authenticated, bound to `context` (a sealed value cannot be moved to another context). */
export function seal(config: Readonly<Config>, plaintext: string, context: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', keysFor(config).seal, iv)
  cipher.setAAD(Buffer.from(context, 'utf8'))
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.')
}

/** The plaintext of a sealed value, or null when it was not sealed with this key and context. */
export function unseal(config: Readonly<Config>, sealed: string, context: string): string | null {
  const [version, iv, tag, body, ...rest] = sealed.split('.')
  if (version !== 'v1' || rest.length || !iv || !tag || body === undefined) return null
  try {
    const decipher = createDecipheriv('aes-256-gcm', keysFor(config).seal, Buffer.from(iv, 'base64url'))
    decipher.setAAD(Buffer.from(context, 'utf8'))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
  } catch {
    return null
  }
}

/** HMAC-SHA256 (hex) of a value under the server key, for one purpose: how short codes are stored. */
export function keyedHash(config: Readonly<Config>, purpose: string, value: string): string {
  return createHmac('sha256', keysFor(config).hmac).update(`${purpose}\0${value}`).digest('hex')
}
