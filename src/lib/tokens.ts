/** Session and API tokens: 256-bit random, base64url; stored only as their SHA-256. */
import { hash, randomBytes } from 'node:crypto'

export function newToken(): string {
  return randomBytes(32).toString('base64url')
}

export function hashToken(token: string): string {
  return hash('sha256', token, 'hex')
}

/** The masked form shown in session lists: the first 6 characters and an ellipsis. */
export function maskToken(prefix: string): string {
  return `${prefix.slice(0, 6)}…`
}
