/**
 * The documentation speaks of the software: the README stays a short front door, and no file
 * under src/, docs/ or the README refers to issue numbers or documents outside the repository.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import test from 'node:test'

const root = path.resolve(import.meta.dirname, '../..')

function filesUnder(dir: string): string[] {
  const out: string[] = []
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...filesUnder(rel))
    else if (/\.(ts|tsx|md|css|html|json)$/.test(entry.name)) out.push(rel)
  }
  return out
}

/** What only a work diary says: issue numbers, an outside design document or interface text. */
const DIARY = /\bissue #?\d+|\bDESIGN §|\bservice-interface\.md|\bperformance-issue-\d+|\bthe interface's\b/i

test('the README is a front door of at most 160 lines', () => {
  const lines = fs.readFileSync(path.join(root, 'README.md'), 'utf8').trimEnd().split('\n').length
  assert.ok(lines > 20, `the README was read (${lines} lines)`)
  assert.ok(lines <= 160, `README.md has ${lines} lines: move detail into docs/`)
})

test('no file under src/ or docs/, nor the README, speaks of issue numbers or outside documents', () => {
  assert.ok(
    DIARY.test('see issue 32') &&
      DIARY.test('as DESIGN § 5 says') &&
      !DIARY.test('the session token') &&
      !DIARY.test('an issue with 2 parts'),
    'the pattern (positive control)',
  )
  const files = [...filesUnder('src'), ...filesUnder('docs'), 'README.md']
  assert.ok(files.length > 300, `the files were read (${files.length})`)
  const found = files.flatMap((file) =>
    fs
      .readFileSync(path.join(root, file), 'utf8')
      .split('\n')
      .flatMap((line, i) => (DIARY.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
  )
  assert.deepEqual(found, [])
})
