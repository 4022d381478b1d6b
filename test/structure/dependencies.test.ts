/**
 * Dependencies point one way: no import cycles (type-only imports included), modules reach each
 * other through services rather than each other's SQL, lib/ stands alone. Read from the source,
 * with tools/import-cycles.ts (also `npm run check:cycles`).
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import test from 'node:test'
import { cycles, importGraph, loopThrough } from '../../tools/import-cycles.js'

const src = path.resolve(import.meta.dirname, '../../src')
const graph = importGraph(src)
const rel = (file: string) => path.relative(src, file)
const edges = [...graph].flatMap(([from, targets]) => targets.map((to) => [rel(from), rel(to)] as const))

test('the checker finds a cycle where there is one, type-only imports included (positive control)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tern-cycles-'))
  try {
    fs.writeFileSync(path.join(dir, 'a.ts'), "import { b } from './b.js'\nexport const a = b\n")
    fs.writeFileSync(path.join(dir, 'b.ts'), "import type { C } from './c.js'\nexport const b = 1 as unknown as C\n")
    fs.writeFileSync(path.join(dir, 'c.ts'), "export type C = typeof import('./a.js')\n// import { z } from './z.js'\n")
    const found = importGraph(dir)
    assert.deepEqual(
      cycles(found).map((component) => component.map((file) => path.basename(file))),
      [['a.ts', 'b.ts', 'c.ts']],
    )
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('src/ has no import cycle', () => {
  assert.ok(graph.size > 100 && edges.length > 400, `the graph was read (${graph.size} files, ${edges.length} imports)`)
  const found = cycles(graph).map((component) => loopThrough(graph, component).map(rel).join(' → '))
  assert.deepEqual(found, [])
})

test('a module reaches another module through its service, never its repo', () => {
  const repoOf = (file: string) => /^modules\/([^/]+)\/(repo|[\w-]+-repo)\.ts$/.exec(file)?.[1]
  const moduleOf = (file: string) => /^modules\/([^/]+)\//.exec(file)?.[1]
  const crossing = edges.filter(([from, to]) => repoOf(to) !== undefined && moduleOf(from) !== repoOf(to))
  assert.ok(
    edges.some(([from, to]) => repoOf(to) !== undefined && moduleOf(from) === repoOf(to)),
    'repos are imported within their module',
  )
  assert.deepEqual(
    crossing.map(([from, to]) => `${from} → ${to}`),
    [],
  )
})

test('realtime/ is transport: it imports no module and no event definitions (they are handed to it)', () => {
  const reaching = edges.filter(([from, to]) => from.startsWith('realtime/') && (to.startsWith('modules/') || to.startsWith('events/')))
  assert.ok(
    edges.some(([from, to]) => from.startsWith('modules/') && to.startsWith('realtime/')),
    'modules use realtime',
  )
  assert.deepEqual(
    reaching.map(([from, to]) => `${from} → ${to}`),
    [],
  )
})

test('lib/ depends on nothing else of Tern', () => {
  const outside = edges.filter(([from, to]) => from.startsWith('lib/') && !to.startsWith('lib/'))
  assert.ok(
    edges.some(([from]) => !from.startsWith('lib/')),
    'other files were read',
  )
  assert.deepEqual(
    outside.map(([from, to]) => `${from} → ${to}`),
    [],
  )
})
