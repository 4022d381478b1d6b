import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { test } from 'node:test'
import { LineBatch, type LineSink } from './log-lines.js'

function sink() {
  const chunks: string[] = []
  let syncs = 0
  const target: LineSink = {
    write: (chunk) => {
      chunks.push(chunk)
      return true
    },
    flushSync: () => void syncs++,
  }
  return { target, chunks, syncs: () => syncs }
}

test('lines are held until the threshold, then written together in order', () => {
  const out = sink()
  const batch = new LineBatch(out.target, 30)
  batch.write('one 456789\n')
  batch.write('two 456789\n')
  assert.deepEqual(out.chunks, [])
  batch.write('three 6789\n')
  assert.deepEqual(out.chunks, ['one 456789\ntwo 456789\nthree 6789\n'])
  batch.write('four\n')
  assert.equal(out.chunks.length, 1)
})

test('drain writes whatever is pending, and nothing when nothing is', () => {
  const out = sink()
  const batch = new LineBatch(out.target, 1024)
  batch.drain()
  assert.deepEqual(out.chunks, [])
  batch.write('a\n')
  batch.drain()
  batch.drain()
  assert.deepEqual(out.chunks, ['a\n'])
})

test('flushSync writes the pending lines before syncing the sink', () => {
  const out = sink()
  const batch = new LineBatch(out.target, 1024)
  batch.write('last words\n')
  batch.flushSync()
  assert.deepEqual(out.chunks, ['last words\n'])
  assert.equal(out.syncs(), 1)
})

test('a process that crashes still writes the lines it logged', () => {
  const script = `
    import { createLogger } from './src/context.ts'
    const log = createLogger({ logLevel: 'info' })
    for (let i = 0; i < 3; i++) log.info('line ' + i + ' before the crash')
    throw new Error('boom')`
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    encoding: 'utf8',
  })
  assert.notEqual(run.status, 0)
  const lines = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line).msg)
  assert.deepEqual(lines, ['line 0 before the crash', 'line 1 before the crash', 'line 2 before the crash'])
})
