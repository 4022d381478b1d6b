import assert from 'node:assert/strict'
import test from 'node:test'
import { cookieValue } from './auth.js'

test('cookieValue finds one cookie among several, decoded, and nothing for a prefix or a missing name', () => {
  assert.equal(cookieValue('a=1; tern_session=abc%2Fdef; b=2', 'tern_session'), 'abc/def')
  assert.equal(cookieValue('tern_session="quoted"', 'tern_session'), 'quoted')
  assert.equal(cookieValue('xtern_session=1; tern_sessionx=2', 'tern_session'), null)
  assert.equal(cookieValue('tern_session=%E0%A4%A', 'tern_session'), '%E0%A4%A')
  assert.equal(cookieValue('garbage; =; ;', 'tern_session'), null)
})
