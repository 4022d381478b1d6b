/**
 * Tern as a process on the embedded default: what it creates on disk is its user's alone (the
 * database, its WAL, the search index, the secret key, the log file), and every line it logs —
 * requests, refused WebSocket upgrades, bad input, start and stop — is one JSON object.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, test } from 'node:test'
import WebSocket from 'ws'
import { Client } from '../harness/client.js'
import { tempDir } from '../harness/database.js'
import { startTern } from '../harness/process.js'

const dataDir = tempDir()
after(() => fs.rmSync(dataDir, { recursive: true, force: true }))

const modeOf = (file: string) => fs.statSync(file).mode & 0o777

test('the database, its WAL, the secret key and the log file are created 0600; every log line is JSON', async () => {
  const logFile = path.join(dataDir, 'log', 'tern.log')
  // the embedded default: no DATABASE_URL, the SQLite file under DATA_DIR
  const tern = await startTern({ DATA_DIR: dataDir, LOG_FILE: logFile, LOG_LEVEL: 'info' })
  const api = new Client(tern.url)
  const V2 = '/api.v2/api'
  const reg = await api.post(`${V2}/auth/register`, { username: 'modes_ann', password: 'modes test password' })
  assert.equal(reg.status, 201, reg.text)
  const ann = api.as(reg.body.data.session_token)
  assert.equal(
    (await ann.post(`${V2}/messages/send`, { receiver_id: reg.body.data.user.user_id, content: 'a note to self' })).status < 500,
    true,
  )
  // bad input and an unknown path
  assert.equal(
    (await api.post(`${V2}/auth/login`, undefined, { raw: '{"login":', headers: { 'content-type': 'application/json' } })).status,
    400,
  )
  assert.equal((await api.get('/api.v2/api/no-such-path')).status, 404)
  // WebSocket upgrades refused with 401, with and without a token
  for (const url of [
    `${tern.url.replace('http', 'ws')}/api.v2/api/ws`,
    `${tern.url.replace('http', 'ws')}/api.v2/api/ws?token=not-a-token-at-all-xxxxxxxxxxxx`,
  ]) {
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url)
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))
      ws.on('error', () => resolve(-1))
      ws.on('open', () => {
        ws.close()
        resolve(101)
      })
    })
    assert.equal(refused, 401)
  }
  // positive control for the socket: a signed-in upgrade opens
  const opened = await new Promise<boolean>((resolve) => {
    const ws = new WebSocket(`${tern.url.replace('http', 'ws')}/api.v2/api/ws?token=${reg.body.data.session_token}`)
    ws.on('open', () => {
      ws.close()
      resolve(true)
    })
    ws.on('error', () => resolve(false))
  })
  assert.ok(opened)

  tern.child.kill('SIGTERM')
  assert.equal(await tern.exited, 0)

  const files = ['tern.db', 'tern.db-wal', 'secret.key'].map((name) => path.join(dataDir, name)).filter((file) => fs.existsSync(file))
  assert.ok(files.includes(path.join(dataDir, 'tern.db')), 'the database is where the default puts it')
  for (const file of [...files, logFile]) assert.equal(modeOf(file).toString(8), '600', file)
  // nothing Tern made under DATA_DIR is readable by others
  const walk = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(dir, entry.name)
      return entry.isDirectory() ? [full, ...walk(full)] : [full]
    })
  for (const entry of walk(dataDir)) assert.equal(modeOf(entry) & 0o077, 0, `${entry} is ${modeOf(entry).toString(8)}`)

  const lines = fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
  assert.ok(lines.length > 8, `the log has the run's lines (${lines.length})`)
  const parsed = lines.map((line, i) => {
    try {
      return JSON.parse(line)
    } catch {
      return assert.fail(`log line ${i + 1} is not JSON: ${line}`)
    }
  })
  // positive controls: the lines this run must have written are there, parsed
  assert.ok(parsed.some((line) => line.msg === 'Tern is ready'))
  assert.ok(
    parsed.some((line) => line.msg === 'request completed' && line.res?.statusCode === 401 && /\/ws/.test(line.req?.url ?? '')),
    'a refused upgrade',
  )
  assert.ok(parsed.some((line) => line.msg === 'request completed' && line.res?.statusCode === 201))
  // and stdout got none of it
  assert.ok(!tern.output().includes('"request completed"'), 'the log went to the file')
})
