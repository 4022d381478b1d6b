/**
 * The video service as processes: Tern's main process starts it on VIDEO_PORT (and proxies its
 * ICE configuration); `src/video/main.ts` (npm run start:video) runs it alone, without any
 * database, and a main process with VIDEO_URL uses that one instead of starting its own.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { after, test } from 'node:test'
import { createTestDatabase, tempDir } from '../harness/database.js'
import { freePort, startTern } from '../harness/process.js'
import { SignalClient } from '../harness/signal.js'

const root = path.resolve(import.meta.dirname, '../..')
const dataDir = tempDir()
const database = await createTestDatabase(dataDir)
after(async () => {
  await database.drop()
  fs.rmSync(dataDir, { recursive: true, force: true })
})

const getJson = async (url: string) => {
  const res = await fetch(url)
  return { status: res.status, body: await res.json() }
}

test('the main process runs the video service on VIDEO_PORT and proxies its configuration', { timeout: 90_000 }, async () => {
  const videoPort = await freePort()
  const tern = await startTern({
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    VIDEO_PORT: String(videoPort),
    STUN_URLS: 'stun:127.0.0.1:3478',
  })
  try {
    const direct = await getJson(`http://127.0.0.1:${videoPort}/video/integration/config`)
    assert.deepEqual(direct, {
      status: 200,
      body: { success: true, data: { ice_servers: [{ urls: ['stun:127.0.0.1:3478'] }], ttl_seconds: 0 } },
    })
    assert.deepEqual(await getJson(`${tern.url}/video/integration/config`), direct)
    // the secret was generated into DATA_DIR, where a separate video process would find it
    assert.ok(fs.existsSync(path.join(dataDir, 'video.secret')))
  } finally {
    tern.child.kill('SIGTERM')
    await tern.exited
  }
})

test('start:video runs alone without a database; a main process with VIDEO_URL uses it', { timeout: 90_000 }, async () => {
  const videoPort = await freePort()
  const videoDir = tempDir('tern-video-proc-')
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/video/main.ts')], {
    cwd: root,
    // no DATABASE_URL, and a DATA_DIR with no database in it
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DATA_DIR: videoDir,
      VIDEO_PORT: String(videoPort),
      VIDEO_HOST: '127.0.0.1',
      VIDEO_SECRET: 'a video secret shared by both processes, 32+ chars',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (c) => (output += c))
  child.stderr.on('data', (c) => (output += c))
  const exited = new Promise((resolve) => child.once('exit', resolve))
  try {
    const deadline = Date.now() + 30_000
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the video service exited:\n${output}`)
      if (
        await fetch(`http://127.0.0.1:${videoPort}/health`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break
      if (Date.now() > deadline) throw new Error(`the video service did not answer in 30 s:\n${output}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    assert.deepEqual(fs.readdirSync(videoDir), [], 'no database file, no secret file (VIDEO_SECRET is set)')
    const tern = await startTern({
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      VIDEO_URL: `http://127.0.0.1:${videoPort}`,
      VIDEO_SECRET: 'a video secret shared by both processes, 32+ chars',
    })
    try {
      const register = await fetch(`${tern.url}/api.v2/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: `v${Date.now().toString(36)}`, password: 'correct horse battery' }),
      })
      const token = (await register.json()).data.session_token
      const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
      const room = (await (await fetch(`${tern.url}/api.v2/api/calls/rooms`, { method: 'POST', headers: auth, body: '{}' })).json()).data
      const joined = (
        await (await fetch(`${tern.url}/api.v2/api/calls/rooms/${room.room_id}/join`, { method: 'POST', headers: auth, body: '{}' })).json()
      ).data
      assert.equal(joined.signaling_url, `ws://127.0.0.1:${videoPort}/signal`)
      // the separate video process takes the main process's ticket
      const { client, joined: frame } = await SignalClient.join(joined.signaling_url, room.room_id, joined.ticket)
      assert.deepEqual(frame.peers, [])
      await client.close()
    } finally {
      tern.child.kill('SIGTERM')
      await tern.exited
    }
  } finally {
    child.kill('SIGTERM')
    await exited
    fs.rmSync(videoDir, { recursive: true, force: true })
  }
})
