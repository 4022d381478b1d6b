import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import test, { after } from 'node:test'
import { LocalStorage } from './local.js'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tern-storage-'))
after(() => fs.rmSync(dir, { recursive: true, force: true }))
const root = path.join(dir, 'uploads')
const storage = new LocalStorage(root)

const text = async (stream: Readable) => {
  let out = ''
  for await (const chunk of stream) out += chunk
  return out
}

test('put, move into place, stat, read whole and ranges, append, delete', async () => {
  const temp = await storage.putTemp(Readable.from([Buffer.from('hello '), Buffer.from('world')]))
  assert.match(temp, /^tmp\/[0-9a-f]{32}$/)
  await storage.move(temp, 'objects/ab/thing')
  assert.equal(await storage.stat(temp), null)
  assert.deepEqual(await storage.stat('objects/ab/thing'), { size: 11 })
  assert.equal(await text((await storage.open('objects/ab/thing'))!.stream), 'hello world')
  const range = await storage.open('objects/ab/thing', { start: 6, end: 9 })
  assert.equal(range!.size, 11)
  assert.equal(await text(range!.stream), 'worl')

  await storage.append('parts/s1', Readable.from([Buffer.from('abc')]))
  await storage.append('parts/s1', Readable.from([Buffer.from('def')]))
  assert.equal(await text((await storage.open('parts/s1'))!.stream), 'abcdef')

  await storage.delete('objects/ab/thing')
  await storage.delete('objects/ab/thing')
  assert.equal(await storage.open('objects/ab/thing'), null)
  assert.equal(await storage.stat('objects/zz/missing'), null)
})

test('a failing source leaves no temporary object', async () => {
  async function* failing() {
    yield Buffer.from('partial')
    throw new Error('client went away')
  }
  await assert.rejects(storage.putTemp(failing()), /client went away/)
  assert.deepEqual(fs.readdirSync(path.join(root, 'tmp')), [])
})

test('keys that could leave the root are refused', async () => {
  for (const key of [
    '../x',
    'objects/../../x',
    '/etc/passwd',
    'objects/.hidden',
    'objects/a\\..\\b',
    'objects/a\0b',
    'Objects/x',
    'x',
    'a/b/c/d/e',
  ]) {
    await assert.rejects(storage.open(key), /invalid storage key/, key)
    await assert.rejects(
      storage.putTemp(Readable.from([])).then((t) => storage.move(t, key)),
      /invalid storage key/,
      key,
    )
  }
})

test('symlinks inside the root are not followed, neither as the file nor as its directory', async () => {
  const secret = path.join(dir, 'secret.txt')
  fs.writeFileSync(secret, 'secret')
  fs.mkdirSync(path.join(root, 'objects', 'cd'), { recursive: true })
  fs.symlinkSync(secret, path.join(root, 'objects', 'cd', 'link'))
  assert.equal(await storage.open('objects/cd/link'), null)
  assert.equal(await storage.stat('objects/cd/link'), null)
  await assert.rejects(storage.append('objects/cd/link', Readable.from([Buffer.from('x')])))
  assert.equal(fs.readFileSync(secret, 'utf8'), 'secret', 'nothing written through the link')

  const outside = fs.mkdtempSync(path.join(dir, 'outside-'))
  fs.writeFileSync(path.join(outside, 'file'), 'secret')
  fs.symlinkSync(outside, path.join(root, 'objects', 'ef'))
  assert.equal(await storage.open('objects/ef/file'), null)
  assert.equal(await storage.stat('objects/ef/file'), null)
})
