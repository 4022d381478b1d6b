/**
 * `npm start` as systemd or a container runtime runs it: the signal goes to npm's PID, and the
 * server must stop with it (npm's shell used to stay behind with Node orphaned, still serving).
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { tempDir } from '../harness/database.js'
import { startTern } from '../harness/process.js'

const root = path.resolve(import.meta.dirname, '../..')

/** The PIDs of a process's children. */
const childrenOf = (pid: number) =>
  execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .split('\n')
    .map(Number)
    .filter(Boolean)
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

test('SIGTERM to the PID of npm start stops the server: no Node process left, the port closed', async () => {
  assert.ok(fs.existsSync(path.join(root, 'dist/src/main.js')), 'npm start runs dist/: build first (npm install runs the build)')
  const dataDir = tempDir()
  const tern = await startTern({ DATA_DIR: dataDir }, 'npm start')
  try {
    const npm = tern.child.pid!
    const node = childrenOf(npm)
    assert.equal(node.length, 1, 'npm runs one process, the server itself (exec: no shell in between)')
    tern.child.kill('SIGTERM')
    assert.equal(await tern.exited, 0, tern.output())
    const deadline = Date.now() + 5000
    while (alive(node[0]) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal(alive(node[0]), false, 'the Node server exits with npm')
    await assert.rejects(fetch(`${tern.url}/health`), 'nothing answers on the port any more')
  } finally {
    if (tern.child.exitCode === null) tern.child.kill('SIGKILL')
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
})
