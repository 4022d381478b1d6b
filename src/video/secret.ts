/**
 * The secret the main service and the video service share: room tickets and the video service's
 * reports are signed with it (HMAC-SHA256). VIDEO_SECRET, or else a random one created once in
 * `<DATA_DIR>/video.secret` (mode 0600), so `npm start` and `npm run start:video` on one DATA_DIR
 * agree without configuration. Services on different machines must both be given VIDEO_SECRET.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import type { Config } from '../config.js'
import { createFileOnce } from '../lib/create-once.js'

const cache = new WeakMap<Readonly<Config>, Buffer>()

export function videoSecret(config: Readonly<Config>): Buffer {
  const cached = cache.get(config)
  if (cached) return cached
  let key: Buffer
  if (config.videoSecret) key = Buffer.from(config.videoSecret, 'utf8')
  else {
    const file = path.join(config.dataDir, 'video.secret')
    const read = () => {
      const found = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64url')
      if (found.length < 32) throw new Error(`${file} does not hold a key (32 bytes, base64url): remove it or set VIDEO_SECRET`)
      return found
    }
    try {
      key = read()
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      // another process on the same DATA_DIR may make it first: then theirs is used
      createFileOnce(file, `${randomBytes(32).toString('base64url')}\n`)
      key = read()
    }
  }
  cache.set(config, key)
  return key
}
