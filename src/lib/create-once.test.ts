import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { createFileOnce } from './create-once.js'

test('a file is created whole once; an existing one is kept; nothing of ours is left beside it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'create-once-'))
  const file = path.join(dir, 'key')
  createFileOnce(file, 'first\n')
  createFileOnce(file, 'second\n')
  assert.equal(fs.readFileSync(file, 'utf8'), 'first\n')
  assert.equal(fs.statSync(file).mode & 0o777, 0o600)
  assert.deepEqual(fs.readdirSync(dir), ['key'])
  fs.rmSync(dir, { recursive: true })
})

const SIZE = 32 * 1024 * 1024

test('processes racing to create it all read the same whole contents', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'create-once-'))
  const file = path.join(dir, 'key')
  const go = path.join(dir, 'go')
  const module = path.join(import.meta.dirname, 'create-once.ts')
  // each process waits for the go file, then creates the key with its own digit and reads it back
  // large, so that writing it takes long enough for a racing reader to catch it half-written
  const script = (digit: number) => `
    import fs from 'node:fs'
    const SIZE = ${SIZE}
    const { createFileOnce } = await import(${JSON.stringify(module)})
    while (!fs.existsSync(${JSON.stringify(go)})) await new Promise((resolve) => setTimeout(resolve, 1))
    createFileOnce(${JSON.stringify(file)}, '${digit}'.repeat(SIZE) + '\\n')
    const read = fs.readFileSync(${JSON.stringify(file)}, 'utf8')
    process.stdout.write(read.length + ' ' + new Set(read.slice(0, -1)).size + ' ' + read[0])`
  const runs = Array.from(
    { length: 6 },
    (_, digit) =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script(digit)], {
          stdio: ['ignore', 'pipe', 'inherit'],
        })
        let out = ''
        child.stdout.on('data', (chunk) => (out += chunk))
        child.on('error', reject)
        child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))))
      }),
  )
  await new Promise((resolve) => setTimeout(resolve, 3000))
  fs.writeFileSync(go, '')
  const seen = await Promise.all(runs)
  assert.equal(new Set(seen).size, 1, `every process read the same: ${seen.join(', ')}`)
  assert.match(seen[0], new RegExp(`^${SIZE + 1} 1 \\d$`), 'one whole contents')
  assert.deepEqual(fs.readdirSync(dir).sort(), ['go', 'key'], 'no temporary file left')
  fs.rmSync(dir, { recursive: true })
})
