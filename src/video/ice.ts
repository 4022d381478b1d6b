/**
 * The ICE configuration a WebRTC client needs: STUN servers, and TURN servers with time-limited
 * credentials in the TURN REST API scheme (coturn's `use-auth-secret`): username
 * `<expiry epoch seconds>:<user_id>`, credential base64(HMAC-SHA1(TURN_SECRET, username)).
 */
import { createHmac } from 'node:crypto'
import type { Config } from '../config.js'

export interface IceServer {
  urls: string[]
  username?: string
  credential?: string
}

export interface IceConfig {
  ice_servers: IceServer[]
  /** seconds the TURN credentials are good for (0: none given) */
  ttl_seconds: number
}

export function turnCredentials(secret: string, userId: number, expiresAtSeconds: number): { username: string; credential: string } {
  const username = `${expiresAtSeconds}:${userId}`
  return { username, credential: createHmac('sha1', secret).update(username).digest('base64') }
}

/** The servers for `userId` (TURN credentials only for a known user); `now` in ms. */
export function iceConfig(config: Readonly<Config>, userId: number | null, now: number): IceConfig {
  const servers: IceServer[] = []
  if (config.stunUrls.length) servers.push({ urls: [...config.stunUrls] })
  let ttl = 0
  if (userId !== null && config.turnSecret && config.turnUrls.length) {
    ttl = config.turnCredentialTtlSeconds
    servers.push({ urls: [...config.turnUrls], ...turnCredentials(config.turnSecret, userId, Math.floor(now / 1000) + ttl) })
  }
  return { ice_servers: servers, ttl_seconds: ttl }
}
