/**
 * The module contract (docs/architecture.md, "Modules"), checked on the source:
 * - the feature modules (src/modules/*) depend on each other one way: folded into modules, the
 *   import graph has no cycle (a file-level check misses a cycle that passes through different
 *   files of the same modules);
 * - every module has an index.ts, its whole public surface, which only re-exports; another module
 *   (or any other code but the start-up wiring) imports it through that file only;
 * - SQL lives in repos, migrations, db/ and policies/; request and response schemas in
 *   schemas.ts (a module's event payloads in events.ts). The files that still break these two
 *   rules are listed below: the lists may only shrink.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import test from 'node:test'
import { cycles, importGraph, loopThrough } from '../../tools/import-cycles.js'

const src = path.resolve(import.meta.dirname, '../../src')
const graph = importGraph(src)
const rel = (file: string) => path.relative(src, file)
const moduleOf = (file: string) => /^modules\/([^/]+)\//.exec(rel(file))?.[1]
const modules = fs
  .readdirSync(path.join(src, 'modules'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)

/** The start-up wiring: it mounts every module's routes, jobs and events, reaching into their files. */
const WIRING = new Set(['context.ts', 'app.ts', 'http/mounts.ts', 'jobs/index.ts', 'events/map.ts'])

/** Files outside repos that still hold SQL. */
const SQL_OUTSIDE_REPOS = new Set([
  'cli/backup.ts',
  'modules/bots/webhooks.ts',
  'modules/calls/rooms.ts',
  'modules/messages/delivered.ts',
  'modules/messages/posting-pg.ts',
  'modules/messages/posting-sqlite.ts',
  'modules/search/message-index.ts',
  'modules/sessions/auth-cache.ts',
  'realtime/chat-log.ts',
  'realtime/updates.ts',
])

/** Route files that still declare schemas of their own. */
const SCHEMAS_IN_ROUTES = new Set([
  'modules/admin/routes.ts',
  'modules/auth/routes.ts',
  'modules/bots/callback-routes.ts',
  'modules/bots/receive-routes.ts',
  'modules/bots/webhook-routes.ts',
  'modules/channels/routes.ts',
  'modules/files/routes.ts',
  'modules/groups/routes.ts',
  'modules/messages/routes.ts',
  'modules/messages/socket.ts',
  'modules/music/routes.ts',
  'modules/premium/routes.ts',
  'modules/profile/routes.ts',
  'modules/referrals/routes.ts',
  'modules/saved/routes.ts',
  'modules/search/routes.ts',
  'modules/sessions/routes.ts',
  'modules/stickers/routes.ts',
  'modules/stories/routes.ts',
  'modules/updates/routes.ts',
])

/** Module-level cycles of a file graph, folding each file into `group(file)` (files without a group are left out). */
export function moduleCycles(files: Map<string, string[]>, group: (file: string) => string | undefined): string[] {
  const folded = new Map<string, Set<string>>()
  for (const [from, targets] of files) {
    const a = group(from)
    if (a === undefined) continue
    if (!folded.has(a)) folded.set(a, new Set())
    for (const to of targets) {
      const b = group(to)
      if (b !== undefined && b !== a) folded.get(a)!.add(b)
    }
  }
  const asLists = new Map([...folded].map(([k, v]) => [k, [...v]]))
  return cycles(asLists).map((component) => loopThrough(asLists, component).join(' → '))
}

const stripComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1')
const sourceOf = (file: string) => stripComments(fs.readFileSync(path.join(src, file), 'utf8'))
const allFiles = [...graph.keys()].map(rel)

test('the module check finds a cycle between modules that no file-level cycle shows (positive control)', () => {
  // a/x → b/y, b/z → a/w: no file cycle, yet a and b need each other
  const files = new Map([
    ['a/x', ['b/y']],
    ['b/y', []],
    ['b/z', ['a/w']],
    ['a/w', []],
  ])
  assert.deepEqual(cycles(files), [])
  assert.deepEqual(
    moduleCycles(files, (file) => file.split('/')[0]),
    ['a → b → a'],
  )
})

test('the feature modules depend on each other one way: no cycle between modules', () => {
  assert.ok(modules.length > 25, `the modules were read (${modules.length})`)
  assert.deepEqual(moduleCycles(graph, moduleOf), [])
})

test('every module has an index.ts that only re-exports, and other code reaches a module through it', () => {
  const problems: string[] = []
  for (const name of modules) {
    const index = `modules/${name}/index.ts`
    if (!fs.existsSync(path.join(src, index))) {
      problems.push(`${index} is missing`)
      continue
    }
    // one statement a line, whatever the formatter did to long export lists
    const statements = sourceOf(index)
      .replace(/\{[^}]*\}/g, (names) => names.replace(/\s+/g, ' ').replace(/,\s*\}/, ' }'))
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
    for (const line of statements)
      if (!/^export (type )?(\{[^}]*\} from '\.\/[\w-]+\.js'|\{\})$/.test(line)) problems.push(`${index}: not a re-export: ${line}`)
  }
  let crossings = 0
  for (const [from, targets] of graph) {
    if (WIRING.has(rel(from))) continue
    for (const to of targets) {
      const target = moduleOf(to)
      if (target === undefined || target === moduleOf(from)) continue
      crossings++
      if (path.basename(to) !== 'index.ts') problems.push(`${rel(from)} imports ${rel(to)}: use modules/${target}/index.ts`)
    }
  }
  assert.ok(crossings > 100, `imports between modules were found (${crossings})`)
  assert.deepEqual(problems, [])
})

const SQL =
  /\.(selectFrom|insertInto|updateTable|deleteFrom|selectNoFrom|replaceInto)\(|\bsql(<[^>]*>)?`|\bstatement\(|\.prepare\(|['"`]\s*(select|insert into|delete from|update \w+ set|with \w+ as)\b/i
const isSqlHome = (file: string) =>
  /(^|\/)(repo|[\w-]+-repo)\.ts$/.test(file) || file.startsWith('db/') || file.startsWith('policies/') || file.endsWith('.test.ts')

test('SQL lives in repos, migrations, db/ and policies/ (the listed files aside)', () => {
  const found = allFiles.filter((file) => !isSqlHome(file) && SQL.test(sourceOf(file)))
  assert.ok(found.length > 0 || SQL_OUTSIDE_REPOS.size === 0, 'the check sees SQL')
  assert.ok(
    SQL.test("db.selectFrom('users')") && SQL.test('const Q = `select 1 from t`') && !SQL.test('a selection of users'),
    'the pattern (positive control)',
  )
  assert.deepEqual(
    found.filter((file) => !SQL_OUTSIDE_REPOS.has(file)),
    [],
    "SQL outside a repo: move it into the module's repo.ts",
  )
  assert.deepEqual(
    [...SQL_OUTSIDE_REPOS].filter((file) => !found.includes(file)),
    [],
    'a listed file holds no SQL now: take it off the list',
  )
})

const SCHEMA = /\bType\.(Object|Union|Array|Intersect|Record)\(/
const isSchemaHome = (file: string) => /(^|\/)(schemas|[\w-]+-schemas|events)\.ts$/.test(file) || !file.startsWith('modules/')

test("a module's schemas live in schemas.ts, its event payloads in events.ts (the listed files aside)", () => {
  const found = allFiles.filter((file) => !isSchemaHome(file) && SCHEMA.test(sourceOf(file)))
  assert.deepEqual(
    found.filter((file) => !SCHEMAS_IN_ROUTES.has(file)),
    [],
    "a schema outside schemas.ts: move it into the module's schemas.ts",
  )
  assert.deepEqual(
    [...SCHEMAS_IN_ROUTES].filter((file) => !found.includes(file)),
    [],
    'a listed file declares no schema now: take it off the list',
  )
})
