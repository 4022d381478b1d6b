/**
 * The server's VAPID key pair (Web Push's application server key): VAPID_PUBLIC_KEY and
 * VAPID_PRIVATE_KEY, or else a pair generated once with web-push into `<DATA_DIR>/vapid.json`
 * (mode 0600) and read from there on every later start. Browsers subscribe with the public key, so
 * it must not change: instances behind one domain share the variables or the data directory.
 */
import fs from 'node:fs'
import path from 'node:path'
import webPush from 'web-push'
import type { Config } from '../../config.js'
import { createFileOnce } from '../../lib/create-once.js'

export interface Vapid {
  publicKey: string
  privateKey: string
  subject: string
}

const loaded = new WeakMap<Readonly<Config>, Vapid>()

const isKey = (value: unknown, bytes: number): value is string =>
  typeof value === 'string' && /^[A-Za-z0-9_-]+$/.test(value) && Buffer.from(value, 'base64url').length === bytes

function readFile(file: string): { publicKey: string; privateKey: string } {
  const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'))
  const { public_key: publicKey, private_key: privateKey } = (parsed ?? {}) as Record<string, unknown>
  if (!isKey(publicKey, 65) || !isKey(privateKey, 32)) {
    throw new Error(
      `${file} does not hold a VAPID key pair {public_key, private_key}: restore it, remove it (subscribers must then subscribe again) or set VAPID_PUBLIC_KEY/VAPID_PRIVATE_KEY`,
    )
  }
  return { publicKey, privateKey }
}

/** The key pair and subject, loaded (or generated) once per configuration. */
export function vapidOf(config: Readonly<Config>): Vapid {
  let found = loaded.get(config)
  if (found) return found
  if (config.vapidPublicKey && config.vapidPrivateKey) {
    found = { publicKey: config.vapidPublicKey, privateKey: config.vapidPrivateKey, subject: config.vapidSubject }
  } else {
    const file = path.join(config.dataDir, 'vapid.json')
    let keys: { publicKey: string; privateKey: string }
    try {
      keys = readFile(file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      const fresh = webPush.generateVAPIDKeys()
      // another instance on the same DATA_DIR may write it first: then theirs is used
      createFileOnce(file, `${JSON.stringify({ public_key: fresh.publicKey, private_key: fresh.privateKey })}\n`)
      keys = readFile(file)
    }
    found = { ...keys, subject: config.vapidSubject }
  }
  loaded.set(config, found)
  return found
}
