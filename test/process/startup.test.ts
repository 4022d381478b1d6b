import assert from 'node:assert/strict'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { after, test } from 'node:test'
import { Client } from '../harness/client.js'
import { createTestDatabase, tempDir } from '../harness/database.js'
import { runFailingStart, startTern } from '../harness/process.js'

const dataDir = tempDir()
const database = await createTestDatabase(dataDir)
after(async () => {
  await database.drop()
  fs.rmSync(dataDir, { recursive: true, force: true })
})

for (const [name, value] of [
  ['DATABASE_URL', 'mysql://x'],
  ['PORT', 'abc'],
  ['SESSION_TTL_DAYS', '-3'],
  ['TRUST_PROXY', 'maybe'],
  ['REGISTER_RATE_LIMIT', 'lots'],
  ['SEND_FAST_PATH', 'sometimes'],
  ['LOG_LEVEL', 'loud'],
] as const) {
  test(`a bad ${name} stops start-up with one line naming it`, async () => {
    const { code, output } = await runFailingStart({ DATA_DIR: dataDir, [name]: value })
    assert.equal(code, 1)
    const lines = output.trim().split('\n')
    assert.equal(lines.length, 1, output)
    assert.match(lines[0], new RegExp(`^tern: invalid configuration: ${name}: `))
    assert.ok(!/\n\s+at /.test(output), 'no stack trace')
  })
}

test('PAYMENT_PROVIDER=test is refused at start-up with NODE_ENV=production, one line naming it', async () => {
  const { code, output } = await runFailingStart({ DATA_DIR: dataDir, PAYMENT_PROVIDER: 'test', NODE_ENV: 'production' })
  assert.equal(code, 1)
  assert.match(output.trim(), /^tern: invalid configuration: PAYMENT_PROVIDER: test pays every order at once/)
})

test('the payment provider is announced at start-up: test warns that it takes no money, none warns that nothing can be bought', async () => {
  for (const [env, said] of [
    [{ PAYMENT_PROVIDER: 'test' }, /PAYMENT_PROVIDER=test: every premium order is paid at once/],
    [{}, /PAYMENT_PROVIDER is not set: premium cannot be bought/],
  ] as const) {
    const tern = await startTern({ DATA_DIR: dataDir, DATABASE_URL: database.url, ...env })
    tern.child.kill('SIGTERM')
    assert.equal(await tern.exited, 0)
    assert.match(tern.output(), said)
  }
  // positive control: a chosen real provider is not warned about
  const manual = await startTern({ DATA_DIR: dataDir, DATABASE_URL: database.url, PAYMENT_PROVIDER: 'manual' })
  manual.child.kill('SIGTERM')
  assert.equal(await manual.exited, 0)
  assert.doesNotMatch(manual.output(), /PAYMENT_PROVIDER/)
})

test('every bad variable is reported, one line each', async () => {
  const { code, output } = await runFailingStart({ DATA_DIR: dataDir, PORT: '99999', DATABASE_URL: 'mysql://x' })
  assert.equal(code, 1)
  const lines = output.trim().split('\n')
  assert.equal(lines.length, 2)
  assert.ok(lines.some((l) => l.includes('PORT')))
  assert.ok(lines.some((l) => l.includes('DATABASE_URL')))
})

test('ADMIN_USERNAME/ADMIN_PASSWORD ensure an admin at start; SIGTERM finishes the in-flight request, then exits 0', async () => {
  const tern = await startTern({
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    ADMIN_USERNAME: 'boss',
    ADMIN_PASSWORD: 'boss password 1',
  })
  const api = new Client(tern.url)
  const login = await api.post('/api.v2/api/auth/login', { login: 'boss', password: 'boss password 1' })
  assert.equal(login.status, 200)
  assert.equal(login.body.data.user.is_admin, true)
  const users = await api.as(login.body.data.session_token).get('/api/admin/users')
  assert.equal(users.status, 200)

  // An in-flight request: headers and half the body sent, the rest only after SIGTERM.
  const body = JSON.stringify({ username: 'late_user', password: 'long enough' })
  const { port } = new URL(tern.url)
  const socket = net.connect(Number(port), '127.0.0.1')
  await new Promise((resolve) => socket.once('connect', resolve))
  let response = ''
  socket.on('data', (chunk) => (response += chunk))
  const ended = new Promise((resolve) => socket.once('close', resolve))
  socket.write(
    `POST /api.v2/api/auth/register HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`,
  )
  await new Promise((resolve) => setTimeout(resolve, 200))
  tern.child.kill('SIGTERM')
  await new Promise((resolve) => setTimeout(resolve, 200))
  // Not accepting new connections any more…
  await assert.rejects(fetch(`${tern.url}/health`))
  // …but the request that had started is finished.
  socket.write(body.slice(10))
  await ended
  assert.match(response, /^HTTP\/1\.1 201 /)
  assert.equal(await tern.exited, 0)
})

test('the server starts again on the same data (migrations are idempotent) and kept the data', async () => {
  const tern = await startTern({ DATA_DIR: dataDir, DATABASE_URL: database.url })
  try {
    const api = new Client(tern.url)
    const login = await api.post('/api.v2/api/auth/login', { login: 'late_user', password: 'long enough' })
    assert.equal(login.status, 200)
  } finally {
    tern.child.kill('SIGINT')
    assert.equal(await tern.exited, 0)
  }
})

test('the embedded default puts the SQLite file under DATA_DIR', { skip: database.dialect !== 'sqlite' }, async () => {
  const own = tempDir()
  const tern = await startTern({ DATA_DIR: own })
  tern.child.kill('SIGTERM')
  assert.equal(await tern.exited, 0)
  assert.ok(fs.existsSync(path.join(own, 'tern.db')))
  fs.rmSync(own, { recursive: true, force: true })
})
