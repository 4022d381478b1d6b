import assert from 'node:assert/strict'
import test from 'node:test'
import { hashToken, maskToken, newToken } from './tokens.js'

test('tokens are 256-bit, url-safe and unique', () => {
  const token = newToken()
  assert.match(token, /^[A-Za-z0-9_-]{43}$/)
  assert.equal(Buffer.from(token, 'base64url').length, 32)
  assert.notEqual(newToken(), token)
})

test('hashToken is the hex SHA-256 and never the token itself', () => {
  assert.equal(hashToken('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
})

test('maskToken shows 6 characters and an ellipsis', () => {
  assert.equal(maskToken('abcdefghij'), 'abcdef…')
})
