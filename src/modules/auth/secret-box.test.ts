import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import test from 'node:test'
import { ConfigError, loadConfig } from '../../config.js'
import { keyedHash, seal, unseal } from './secret-box.js'

function tempConfig(env: Record<string, string> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tern-secret-box-'))
  test.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return { dir, config: loadConfig({ DATA_DIR: dir, ...env }) }
}

test('a sealed value opens with the same key and context only, and never shows its plaintext', () => {
  const { config } = tempConfig()
  const sealed = seal(config, 'JBSWY3DPEHPK3PXP', 'totp:1')
  assert.match(sealed, /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/)
  assert.ok(!sealed.includes('JBSWY3DPEHPK3PXP'))
  assert.notEqual(seal(config, 'JBSWY3DPEHPK3PXP', 'totp:1'), sealed, 'a fresh IV each time')
  assert.equal(unseal(config, sealed, 'totp:1'), 'JBSWY3DPEHPK3PXP')
  assert.equal(unseal(config, sealed, 'totp:2'), null, 'moved to another user: refused')
  const [v, iv, tag, body] = sealed.split('.')
  const flipped = body.slice(0, -2) + (body.at(-2) === 'A' ? 'B' : 'A') + body.at(-1)
  for (const bad of [`${v}.${iv}.${tag}.${flipped}`, `v2.${iv}.${tag}.${body}`, `${v}.${iv}.${tag}`, '', 'v1....', `${sealed}.x`]) {
    assert.equal(unseal(config, bad, 'totp:1'), null, bad)
  }
  const other = tempConfig().config
  assert.equal(unseal(other, sealed, 'totp:1'), null, 'another key: refused')
})

test('without SECRET_KEY the key is made once in DATA_DIR (0600) and used again after a restart', () => {
  const { dir, config } = tempConfig()
  const sealed = seal(config, 'secret', 'ctx')
  const file = path.join(dir, 'secret.key')
  assert.equal(fs.statSync(file).mode & 0o777, 0o600)
  const restarted = loadConfig({ DATA_DIR: dir })
  assert.equal(unseal(restarted, sealed, 'ctx'), 'secret')
  assert.equal(keyedHash(restarted, 'p', 'v'), keyedHash(config, 'p', 'v'))
})

test('SECRET_KEY is the key when set: two instances with it agree, whatever their DATA_DIR', () => {
  const key = 'k'.repeat(40)
  const a = tempConfig({ SECRET_KEY: key })
  const b = tempConfig({ SECRET_KEY: key })
  assert.equal(unseal(b.config, seal(a.config, 'x', 'c'), 'c'), 'x')
  assert.equal(fs.existsSync(path.join(a.dir, 'secret.key')), false)
  assert.notEqual(keyedHash(a.config, 'login-code', 'a@b:123456'), keyedHash(tempConfig().config, 'login-code', 'a@b:123456'))
  assert.notEqual(keyedHash(a.config, 'login-code', 'v'), keyedHash(a.config, 'recovery-code', 'v'), 'purposes are kept apart')
})

test('a short SECRET_KEY stops start-up without echoing it; a damaged key file stops its first use', () => {
  assert.throws(
    () => loadConfig({ SECRET_KEY: 'too short' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError)
      assert.match(error.message, /SECRET_KEY: must be at least 32 characters/)
      assert.ok(!error.message.includes('too short'))
      return true
    },
  )
  const { dir, config } = tempConfig()
  fs.writeFileSync(path.join(dir, 'secret.key'), 'abc\n')
  assert.throws(() => seal(config, 'x', 'c'), /does not hold a key/)
})
