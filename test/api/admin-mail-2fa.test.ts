/**
 * The admin area's mail and two-factor management, black-box: POST /api/admin/mail/test through a
 * real SMTP server (and 503 when it is down), POST /api/admin/users/{id}/2fa/reset against a real
 * RFC 6238 code generator. Anonymous 401, non-admin 403, one ModLog row per action.
 */
import assert from 'node:assert/strict'
import net from 'node:net'
import { test } from 'node:test'
import * as OTPAuth from 'otpauth'
import { assertError } from '../harness/assert.js'
import { V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'
import { startSmtpServer } from '../harness/smtp.js'

const smtp = await startSmtpServer()
const server = await startTestServer({ env: { SMTP_URL: smtp.url, MAIL_FROM: 'Tern Test <tern@example.test>' } })
const admin = await server.createAdmin()
const A = '/api/admin'

async function modlog(query: Record<string, string | number>) {
  const res = await admin.api.get(`${A}/modlog`, { query: { per_page: 100, ...query } })
  assert.equal(res.status, 200, res.text)
  return res.body.items as any[]
}

test('mail test: sent through SMTP and logged once; refusals send nothing', async () => {
  const user = await server.registerUser()
  assert.equal((await server.api.post(`${A}/mail/test`, { to: 'ops@example.test' })).status, 401)
  assertError(await user.api.post(`${A}/mail/test`, { to: 'ops@example.test' }), 403, 'forbidden')
  assertError(await admin.api.post(`${A}/mail/test`, { to: 'not an address' }), 400, 'validation_error')
  assertError(await admin.api.post(`${A}/mail/test`, {}), 400, 'validation_error')
  assert.equal(smtp.to('ops@example.test').length, 0, 'nothing sent by a refusal')

  const res = await admin.api.post(`${A}/mail/test`, { to: 'ops@example.test' })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual([res.body.data.sent, res.body.data.transport], [true, 'smtp'])
  const mail = await smtp.next('ops@example.test')
  assert.equal(mail.subject, 'Tern test mail')
  assert.match(mail.text, new RegExp(admin.username))
  assert.ok(mail.html.includes('<p>'))
  const rows = await modlog({ action: 'mail.test' })
  assert.deepEqual(
    rows.map((r) => r.details.to),
    ['ops@example.test'],
  )
})

test('mail test with the SMTP server down: 503 mail_unavailable, no ModLog row', async () => {
  const port = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })
  const down = await startTestServer({ env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_TIMEOUT_SECONDS: '2' } })
  const downAdmin = await down.createAdmin()
  assertError(await downAdmin.api.post(`${A}/mail/test`, { to: 'ops@example.test' }), 503, 'mail_unavailable')
  const log = (await downAdmin.api.get(`${A}/modlog`, { query: { action: 'mail.test' } })).body
  assert.equal(log.total, 0)
  // positive control: the same server still answers its other admin calls
  assert.equal((await downAdmin.api.get(`${A}/users`)).status, 200)
})

test('2FA reset: the user signs in with the password alone again; once; logged', async () => {
  const user = await server.registerUser()
  const other = await server.registerUser()
  const setup = await user.api.post(`${V2}/auth/2fa/setup`)
  assert.equal(setup.status, 200, setup.text)
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(setup.body.data.secret), algorithm: 'SHA1', digits: 6, period: 30 })
  assert.equal((await user.api.post(`${V2}/auth/2fa/enable`, { code: totp.generate() })).status, 200)
  const login = () => server.api.post(`${V2}/auth/login`, { login: user.username, password: user.password })
  assert.equal((await login()).body.data.next, 'totp', 'two-factor is on')
  assert.equal((await admin.api.get(`${A}/users/${user.id}`)).body.data.two_factor_enabled, true)

  assert.equal((await server.api.post(`${A}/users/${user.id}/2fa/reset`)).status, 401)
  assertError(await other.api.post(`${A}/users/${user.id}/2fa/reset`), 403, 'forbidden')
  assertError(await admin.api.post(`${A}/users/987654/2fa/reset`), 404, 'not_found')
  assert.equal((await login()).body.data.next, 'totp', 'the refusals changed nothing')

  const reset = await admin.api.post(`${A}/users/${user.id}/2fa/reset`)
  assert.equal(reset.status, 200, reset.text)
  const after = await login()
  assert.equal(after.status, 200, after.text)
  assert.equal(typeof after.body.data.session_token, 'string', 'a session without a code')
  assert.equal((await admin.api.get(`${A}/users/${user.id}`)).body.data.two_factor_enabled, false)
  assertError(await admin.api.post(`${A}/users/${user.id}/2fa/reset`), 409, 'conflict', 'not on any more')
  assert.deepEqual(
    (await modlog({ target_id: user.id })).map((r) => r.action),
    ['user.2fa_reset'],
  )
})
