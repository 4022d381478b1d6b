import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import test, { after } from 'node:test'
import { assertError } from '../harness/assert.js'
import { createTestDatabase, tempDir, type TestDatabase } from '../harness/database.js'
import { runNode } from '../harness/process.js'
import { startTestServer, type TestUser } from '../harness/server.js'

const server = await startTestServer()
const admin = await server.createAdmin()
const V2 = '/api.v2/api'
const ADMIN = '/api/admin'
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

async function login(user: { username: string; password: string }, api = server.api) {
  return api.post(`${V2}/auth/login`, { login: user.username, password: user.password })
}

async function loginToken(user: TestUser): Promise<string> {
  const res = await login(user)
  assert.equal(res.status, 200, res.text)
  return res.body.data.session_token
}

async function modlogTotal(): Promise<number> {
  const res = await admin.api.get(`${ADMIN}/modlog`, { query: { per_page: 1 } })
  assert.equal(res.status, 200, res.text)
  return res.body.total
}

async function modlogRows(filter: { action?: string; target_id?: number }) {
  const res = await admin.api.get(`${ADMIN}/modlog`, { query: { per_page: 100 } })
  assert.equal(res.status, 200, res.text)
  return res.body.items.filter(
    (r: any) =>
      (filter.action === undefined || r.action === filter.action) && (filter.target_id === undefined || r.target_id === filter.target_id),
  )
}

/** A short unique lowercase marker for search tests. */
const marker = () => `m${randomBytes(5).toString('hex')}`

// ---- GET /api/admin/users --------------------------------------------------------------------

test('admin users list: paginated envelope, newest first, no secrets', async () => {
  const m = marker()
  const users = [
    await server.registerUser({ username: `a_${m}_1` }),
    await server.registerUser({ username: `a_${m}_2`, email: `${m}_2@example.com` }),
    await server.registerUser({ username: `a_${m}_3` }),
  ]
  const page1 = await admin.api.get(`${ADMIN}/users`, { query: { q: m, per_page: 2 } })
  assert.equal(page1.status, 200)
  assert.deepEqual(Object.keys(page1.body).sort(), ['items', 'page', 'pages', 'per_page', 'success', 'total'])
  assert.equal(page1.body.success, true)
  assert.equal(page1.body.page, 1)
  assert.equal(page1.body.per_page, 2)
  assert.equal(page1.body.total, 3)
  assert.equal(page1.body.pages, 2)
  assert.deepEqual(
    page1.body.items.map((u: any) => u.user_id),
    [users[2].id, users[1].id],
  )
  const page2 = await admin.api.get(`${ADMIN}/users`, { query: { q: m, per_page: 2, page: 2 } })
  assert.equal(page2.status, 200)
  assert.equal(page2.body.page, 2)
  assert.deepEqual(
    page2.body.items.map((u: any) => u.user_id),
    [users[0].id],
  )

  for (const item of [...page1.body.items, ...page2.body.items]) {
    for (const key of ['user_id', 'username', 'email', 'is_active', 'is_admin', 'created_at', 'last_activity']) {
      assert.ok(key in item, `${key} in ${JSON.stringify(item)}`)
    }
    assert.equal(item.password_hash, undefined)
    assert.equal(item.two_factor_secret, undefined)
    assert.equal(item.is_active, true)
    assert.equal(item.is_admin, false)
    assert.match(item.created_at, ISO)
    assert.ok(item.last_activity === null || ISO.test(item.last_activity))
  }
  const second = page1.body.items[1]
  assert.equal(second.username, `a_${m}_2`)
  assert.equal(second.email, `${m}_2@example.com`)
  for (const res of [page1, page2]) {
    assert.ok(!res.text.includes('argon2'), 'no password hash anywhere')
    assert.ok(!/password|two_factor/.test(res.text), 'no password or two-factor field')
  }

  // without q: everyone, default per_page 20, the admin included
  const all = await admin.api.get(`${ADMIN}/users`)
  assert.equal(all.status, 200)
  assert.equal(all.body.per_page, 20)
  assert.equal(all.body.page, 1)
  assert.ok(all.body.total >= 4)
  assert.equal(all.body.pages, Math.ceil(all.body.total / 20))
  const everyone = await admin.api.get(`${ADMIN}/users`, { query: { per_page: 100 } })
  const me = everyone.body.items.find((u: any) => u.user_id === admin.id)
  assert.ok(me)
  assert.equal(me.is_admin, true)
  assert.equal(me.username, admin.username)
})

test('admin users search matches username or email substrings, case-insensitively', async () => {
  const m = marker()
  const byName = await server.registerUser({ username: `Name_${m}_X` })
  const byEmail = await server.registerUser({ email: `Mail.${m}@Example.COM` })
  await server.registerUser() // unrelated

  const ids = async (q: string) => {
    const res = await admin.api.get(`${ADMIN}/users`, { query: { q, per_page: 100 } })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.total, res.body.items.length)
    return res.body.items.map((u: any) => u.user_id).sort((a: number, b: number) => a - b)
  }
  const both = [byName.id, byEmail.id].sort((a, b) => a - b)
  assert.deepEqual(await ids(m), both)
  assert.deepEqual(await ids(m.toUpperCase()), both)
  assert.deepEqual(await ids(`  ${m}  `), both, 'q is trimmed')
  assert.deepEqual(await ids(`name_${m}_x`), [byName.id], 'username substring, other case')
  assert.deepEqual(await ids(`NAME_${m}`), [byName.id])
  assert.deepEqual(await ids(`mail.${m}@example`), [byEmail.id], 'email substring, other case')
  assert.deepEqual(await ids(`${m}@EXAMPLE.com`), [byEmail.id])
  assert.deepEqual(await ids(`${m}_nobody`), [])
})

test('admin users search treats % and _ literally', async () => {
  const m = marker()
  const underscore = await server.registerUser({ username: `p${m}_x` })
  await server.registerUser({ username: `p${m}zx` })
  const search = (q: string) => admin.api.get(`${ADMIN}/users`, { query: { q, per_page: 100 } })
  const exact = await search(`${m}_x`)
  assert.deepEqual(
    exact.body.items.map((u: any) => u.user_id),
    [underscore.id],
    '_ is not a wildcard',
  )
  const percent = await search(`${m}%x`)
  assert.equal(percent.status, 200)
  assert.equal(percent.body.total, 0, '% is not a wildcard')
})

test('admin users list validates page, per_page and q', async () => {
  for (const query of [{ per_page: 0 }, { per_page: 101 }, { per_page: 'abc' }, { page: 0 }, { q: 'x'.repeat(255) }]) {
    assertError(await admin.api.get(`${ADMIN}/users`, { query }), 400, 'validation_error')
  }
  const max = await admin.api.get(`${ADMIN}/users`, { query: { per_page: 100 } })
  assert.equal(max.status, 200)
  assert.equal(max.body.per_page, 100)
  const one = await admin.api.get(`${ADMIN}/users`, { query: { per_page: 1 } })
  assert.equal(one.status, 200)
  assert.equal(one.body.items.length, 1)
})

// ---- access ----------------------------------------------------------------------------------

test('a non-admin gets 403 forbidden on every admin route, and nothing changes', async () => {
  const user = await server.registerUser()
  const target = await server.registerUser()
  const before = await modlogTotal()
  const calls = [
    () => user.api.get(`${ADMIN}/users`),
    () => user.api.get(`${ADMIN}/users`, { query: { q: target.username } }),
    () => user.api.post(`${ADMIN}/users/${target.id}/ban`, { reason: 'no' }),
    () => user.api.post(`${ADMIN}/users/${target.id}/unban`),
    () => user.api.post(`${ADMIN}/users/${target.id}/role`, { is_admin: true }),
    () => user.api.post(`${ADMIN}/users/${user.id}/role`, { is_admin: true }),
    () => user.api.get(`${ADMIN}/modlog`),
  ]
  for (const call of calls) assertError(await call(), 403, 'forbidden')
  assert.equal(await modlogTotal(), before)
  assert.equal((await target.api.get(`${V2}/auth/me`)).status, 200, 'the target was not banned')
  const me = await user.api.get(`${V2}/auth/me`)
  assert.equal(me.body.data.is_admin, false, 'the caller did not make themselves admin')
})

test('without a token (or with a bad one) every admin route is 401', async () => {
  const target = await server.registerUser()
  for (const api of [server.api, server.api.as('y'.repeat(43))]) {
    assertError(await api.get(`${ADMIN}/users`), 401, 'unauthorized')
    assertError(await api.post(`${ADMIN}/users/${target.id}/ban`, {}), 401, 'unauthorized')
    assertError(await api.post(`${ADMIN}/users/${target.id}/unban`, {}), 401, 'unauthorized')
    assertError(await api.post(`${ADMIN}/users/${target.id}/role`, { is_admin: true }), 401, 'unauthorized')
    assertError(await api.get(`${ADMIN}/modlog`), 401, 'unauthorized')
  }
  assert.equal((await target.api.get(`${V2}/auth/me`)).status, 200)
})

test('admin lives only at /api/admin, not under the versioned API', async () => {
  for (const prefix of ['/api.v2/api', '/api.v3/api']) {
    assertError(await admin.api.get(`${prefix}/admin/users`), 404, 'not_found')
  }
})

// ---- ban / unban -----------------------------------------------------------------------------

test('ban deactivates the user, revokes every session at once, blocks login and is logged', async () => {
  const target = await server.registerUser()
  const tokens = [target.token, await loginToken(target), await loginToken(target), await loginToken(target)]
  for (const token of tokens) assert.equal((await server.api.as(token).get(`${V2}/auth/me`)).status, 200)
  const before = await modlogTotal()

  const res = await admin.api.post(`${ADMIN}/users/${target.id}/ban`, { reason: 'spam links' })
  assert.equal(res.status, 200)
  assert.equal(res.body.success, true)
  assert.equal(res.body.data.user_id, target.id)
  assert.equal(res.body.data.username, target.username)
  assert.equal(res.body.data.is_active, false)
  assert.equal(res.body.data.is_admin, false)
  assert.equal(res.body.data.password_hash, undefined)

  for (const token of tokens) {
    const api = server.api.as(token)
    assertError(await api.get(`${V2}/auth/me`), 401, 'unauthorized')
    assertError(await api.get(`${V2}/sessions`), 401, 'unauthorized')
  }
  assertError(await login(target), 401, 'unauthorized')
  assertError(await login({ username: target.username, password: 'wrong password' }), 401, 'unauthorized')

  assert.equal(await modlogTotal(), before + 1)
  const log = await admin.api.get(`${ADMIN}/modlog`, { query: { per_page: 5 } })
  const row = log.body.items[0]
  assert.deepEqual(Object.keys(row).sort(), ['action', 'admin_id', 'admin_username', 'created_at', 'details', 'id', 'target_id'])
  assert.equal(row.action, 'user.ban')
  assert.equal(row.target_id, target.id)
  assert.equal(row.admin_id, admin.id)
  assert.equal(row.admin_username, admin.username)
  assert.equal(row.details.reason, 'spam links')
  assert.match(row.created_at, ISO)

  const listed = await admin.api.get(`${ADMIN}/users`, { query: { q: target.username } })
  assert.equal(listed.body.items.length, 1)
  assert.equal(listed.body.items[0].is_active, false)
})

test('unban restores login but the sessions revoked by the ban stay revoked', async () => {
  const target = await server.registerUser()
  const old = await loginToken(target)
  assert.equal((await admin.api.post(`${ADMIN}/users/${target.id}/ban`, { reason: 'cool-off' })).status, 200)
  const before = await modlogTotal()

  const res = await admin.api.post(`${ADMIN}/users/${target.id}/unban`)
  assert.equal(res.status, 200)
  assert.equal(res.body.data.user_id, target.id)
  assert.equal(res.body.data.is_active, true)
  assert.equal(await modlogTotal(), before + 1)
  const [row] = await modlogRows({ action: 'user.unban', target_id: target.id })
  assert.ok(row, 'a user.unban row')
  assert.equal(row.admin_id, admin.id)

  for (const token of [target.token, old]) {
    assertError(await server.api.as(token).get(`${V2}/auth/me`), 401, 'unauthorized')
  }
  const again = await login(target)
  assert.equal(again.status, 200)
  const fresh = server.api.as(again.body.data.session_token)
  const me = await fresh.get(`${V2}/auth/me`)
  assert.equal(me.status, 200)
  assert.equal(me.body.data.user_id, target.id)
  const sessions = await fresh.get(`${V2}/sessions`)
  assert.equal(sessions.body.total, 1, 'only the new session is active')
})

for (const [how, body] of [
  ['an empty JSON object {}', {}],
  ['no body at all (no JSON, no content-type)', undefined],
] as const) {
  test(`ban with ${how} works and records a null reason`, async () => {
    const target = await server.registerUser()
    const before = await modlogTotal()
    const res = await admin.api.post(`${ADMIN}/users/${target.id}/ban`, body)
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.data.is_active, false)
    assert.equal(await modlogTotal(), before + 1)
    assertError(await target.api.get(`${V2}/auth/me`), 401, 'unauthorized')
    const [row] = await modlogRows({ action: 'user.ban', target_id: target.id })
    assert.ok(row)
    assert.deepEqual(row.details, { reason: null })
  })
}

test('ban validates its body and id', async () => {
  const target = await server.registerUser()
  const before = await modlogTotal()
  for (const body of [{ reason: 123 }, { reason: 'x'.repeat(501) }, ['reason']]) {
    assertError(await admin.api.post(`${ADMIN}/users/${target.id}/ban`, body), 400, 'validation_error')
  }
  for (const id of ['abc', '0', '1.5']) {
    assertError(await admin.api.post(`${ADMIN}/users/${id}/ban`, {}), 400, 'validation_error')
  }
  assert.equal(await modlogTotal(), before)
  assert.equal((await target.api.get(`${V2}/auth/me`)).status, 200)
})

// ---- role ------------------------------------------------------------------------------------

test('role: granting admin opens the admin area, revoking closes it; both are logged', async () => {
  const target = await server.registerUser()
  assertError(await target.api.get(`${ADMIN}/users`), 403, 'forbidden')
  const before = await modlogTotal()

  const grant = await admin.api.post(`${ADMIN}/users/${target.id}/role`, { is_admin: true })
  assert.equal(grant.status, 200)
  assert.equal(grant.body.data.user_id, target.id)
  assert.equal(grant.body.data.is_admin, true)
  assert.equal(grant.body.data.is_active, true)
  assert.equal(await modlogTotal(), before + 1)
  const [granted] = await modlogRows({ action: 'user.grant_admin', target_id: target.id })
  assert.ok(granted)
  assert.equal(granted.admin_id, admin.id)

  // the same session, no re-login needed
  const users = await target.api.get(`${ADMIN}/users`)
  assert.equal(users.status, 200)
  assert.equal((await target.api.get(`${ADMIN}/modlog`)).status, 200)
  assert.equal((await target.api.get(`${V2}/auth/me`)).body.data.is_admin, true)

  const revoke = await admin.api.post(`${ADMIN}/users/${target.id}/role`, { is_admin: false })
  assert.equal(revoke.status, 200)
  assert.equal(revoke.body.data.is_admin, false)
  assert.equal(await modlogTotal(), before + 2)
  const [revoked] = await modlogRows({ action: 'user.revoke_admin', target_id: target.id })
  assert.ok(revoked)
  assert.equal(revoked.admin_id, admin.id)

  assertError(await target.api.get(`${ADMIN}/users`), 403, 'forbidden')
  assertError(await target.api.get(`${ADMIN}/modlog`), 403, 'forbidden')
  assert.equal((await target.api.get(`${V2}/auth/me`)).status, 200, 'the role change does not end the session')
})

test('a promoted admin can moderate; the log names them', async () => {
  const second = await server.registerUser()
  const victim = await server.registerUser()
  assert.equal((await admin.api.post(`${ADMIN}/users/${second.id}/role`, { is_admin: true })).status, 200)
  const res = await second.api.post(`${ADMIN}/users/${victim.id}/ban`, { reason: 'by the second admin' })
  assert.equal(res.status, 200)
  const [row] = await modlogRows({ action: 'user.ban', target_id: victim.id })
  assert.equal(row.admin_id, second.id)
  assert.equal(row.admin_username, second.username)
  assert.equal(row.details.reason, 'by the second admin')
})

test('role validates its body and id', async () => {
  const target = await server.registerUser()
  const before = await modlogTotal()
  for (const body of [{ is_admin: 'yes' }, { is_admin: 1 }, { is_admin: null }, {}]) {
    assertError(await admin.api.post(`${ADMIN}/users/${target.id}/role`, body), 400, 'validation_error')
  }
  assertError(await admin.api.post(`${ADMIN}/users/${target.id}/role`), 400, 'validation_error')
  assertError(await admin.api.post(`${ADMIN}/users/abc/role`, { is_admin: true }), 400, 'validation_error')
  assert.equal(await modlogTotal(), before)
  assert.equal((await target.api.get(`${V2}/auth/me`)).body.data.is_admin, false)
})

test('an admin cannot ban themselves or revoke their own admin role', async () => {
  const self = await server.createAdmin()
  const before = await modlogTotal()
  assertError(await self.api.post(`${ADMIN}/users/${self.id}/ban`, { reason: 'oops' }), 409, 'conflict')
  assertError(await self.api.post(`${ADMIN}/users/${self.id}/role`, { is_admin: false }), 409, 'conflict')
  assert.equal(await modlogTotal(), before)
  const still = await self.api.get(`${ADMIN}/users`, { query: { q: self.username } })
  assert.equal(still.status, 200)
  assert.equal(still.body.items[0].is_active, true)
  assert.equal(still.body.items[0].is_admin, true)
})

test('moderating an unknown user is 404 and writes no ModLog row', async () => {
  const before = await modlogTotal()
  const missing = 987_654_321
  assertError(await admin.api.post(`${ADMIN}/users/${missing}/ban`, { reason: 'ghost' }), 404, 'not_found')
  assertError(await admin.api.post(`${ADMIN}/users/${missing}/unban`), 404, 'not_found')
  assertError(await admin.api.post(`${ADMIN}/users/${missing}/role`, { is_admin: true }), 404, 'not_found')
  assert.equal(await modlogTotal(), before)
})

// ---- ModLog ----------------------------------------------------------------------------------

test('the ModLog grows by exactly one row per action, newest first', async () => {
  const target = await server.registerUser()
  const start = await modlogTotal()
  const steps: [string, () => Promise<unknown>][] = [
    ['user.ban', () => admin.api.post(`${ADMIN}/users/${target.id}/ban`, { reason: 'one' })],
    ['user.unban', () => admin.api.post(`${ADMIN}/users/${target.id}/unban`)],
    ['user.grant_admin', () => admin.api.post(`${ADMIN}/users/${target.id}/role`, { is_admin: true })],
    ['user.revoke_admin', () => admin.api.post(`${ADMIN}/users/${target.id}/role`, { is_admin: false })],
    ['user.ban', () => admin.api.post(`${ADMIN}/users/${target.id}/ban`, {})],
  ]
  let expected = start
  for (const [action, step] of steps) {
    const res: any = await step()
    assert.equal(res.status, 200, `${action}: ${res.text}`)
    expected += 1
    assert.equal(await modlogTotal(), expected, action)
    const top = (await admin.api.get(`${ADMIN}/modlog`, { query: { per_page: 1 } })).body.items[0]
    assert.equal(top.action, action)
    assert.equal(top.target_id, target.id)
  }
  const log = await admin.api.get(`${ADMIN}/modlog`, { query: { per_page: 5 } })
  assert.deepEqual(
    log.body.items.map((r: any) => r.action),
    steps.map(([a]) => a).reverse(),
  )
  const ids = log.body.items.map((r: any) => r.id)
  assert.deepEqual(
    ids,
    [...ids].sort((a: number, b: number) => b - a),
    'newest first',
  )
  assert.deepEqual(log.body.items[2].details, { is_admin: true })
  assert.deepEqual(log.body.items[1].details, { is_admin: false })
})

test('modlog pagination is validated', async () => {
  for (const query of [{ per_page: 0 }, { per_page: 101 }, { page: 0 }, { page: 'x' }]) {
    assertError(await admin.api.get(`${ADMIN}/modlog`, { query }), 400, 'validation_error')
  }
  const res = await admin.api.get(`${ADMIN}/modlog`, { query: { per_page: 2 } })
  assert.equal(res.status, 200)
  assert.deepEqual(Object.keys(res.body).sort(), ['items', 'page', 'pages', 'per_page', 'success', 'total'])
  assert.equal(res.body.per_page, 2)
  assert.equal(res.body.pages, Math.ceil(res.body.total / 2))
  assert.ok(res.body.items.length <= 2)
})

// ---- CLI and ADMIN_USERNAME/ADMIN_PASSWORD ---------------------------------------------------

const cliDir = tempDir('tern-cli-')
const cliDatabase: TestDatabase = await createTestDatabase(cliDir)
const cliEnv = { DATA_DIR: cliDir, DATABASE_URL: cliDatabase.url }
const cli = (...args: string[]) => runNode('src/cli/main.ts', args, cliEnv)
/** the CLI with this text piped to its standard input (a password) */
const cliWithInput = (stdin: string, ...args: string[]) => runNode('src/cli/main.ts', args, cliEnv, stdin)
after(async () => {
  await cliDatabase.drop()
  fs.rmSync(cliDir, { recursive: true, force: true })
})

/** Parses `user:list` output into rows keyed by its header. */
function parseUserList(stdout: string): Record<string, string>[] {
  const lines = stdout.split('\n').filter((l) => l.length > 0)
  const header = lines[0]
  const names = header.trim().split(/\s+/)
  const starts = names.map((name) => header.indexOf(name))
  const rows: Record<string, string>[] = []
  for (const line of lines.slice(1)) {
    if (/^\d+ of \d+ users$/.test(line)) continue
    const row: Record<string, string> = {}
    for (const [i, name] of names.entries()) row[name] = line.slice(starts[i], starts[i + 1]).trim()
    rows.push(row)
  }
  return rows
}

test('CLI: bad arguments and unknown commands exit with code 2 and change nothing', async () => {
  const cases: [string[], RegExp][] = [
    [['admin:create', 'cli_nopass'], /at least 8 characters/],
    [['admin:create'], /needs a username/],
    [['admin:create', 'cli_short', 'short'], /at least 8 characters/],
    [['admin:create', 'bad-name', 'long enough pass'], /Username must be 3 to 32 characters/],
    [['admin:create', 'ab', 'long enough pass'], /Username must be 3 to 32 characters/],
    [['no:such:command'], /unknown command: no:such:command/],
  ]
  const runs = await Promise.all(cases.map(([args]) => cli(...args)))
  runs.forEach((run, i) => {
    assert.equal(run.code, 2, `${cases[i][0].join(' ')}: ${run.stderr}`)
    assert.match(run.stderr, cases[i][1])
    assert.match(run.stderr, /usage: npm run cli --/)
  })
  const list = await cli('user:list')
  assert.equal(list.code, 0, list.stderr)
  assert.deepEqual(parseUserList(list.stdout), [], 'no account was created by a refused command')
  assert.match(list.stdout, /^0 of 0 users$/m)
})

test('CLI: help with no command, help, --help and -h (exit 0), per command too', async () => {
  for (const args of [[], ['help'], ['--help'], ['-h']]) {
    const run = await cli(...args)
    assert.equal(run.code, 0, `${args.join(' ')}: ${run.stderr}`)
    assert.match(run.stdout, /usage: npm run cli -- <command>/)
    for (const command of ['migrate', 'admin:create <username>', 'user:list [search]']) assert.ok(run.stdout.includes(command), command)
  }
  const one = await cli('admin:create', '--help')
  assert.equal(one.code, 0)
  assert.match(one.stdout, /usage: npm run cli -- admin:create <username>/)
})

test('CLI: admin:create reads the password from standard input, not the command line', async () => {
  const created = await cliWithInput('piped password 1\n', 'admin:create', 'piped_admin')
  assert.equal(created.code, 0, created.stderr)
  assert.match(created.stdout, /admin piped_admin \(id \d+\) is ready/)
  assert.doesNotMatch(created.stderr, /warning/)
  const rows = parseUserList((await cli('user:list', 'piped_admin')).stdout)
  assert.equal(rows[0]?.admin, 'yes')
  // the piped password is the one stored: setting it again with it changes nothing, and works
  const again = await cliWithInput('piped password 1\n', 'admin:create', 'piped_admin')
  assert.equal(again.code, 0, again.stderr)
})

test('CLI: admin:create makes an admin that user:list shows and that can use the admin API', async () => {
  const created = await cli('admin:create', 'root_admin', 'root password 1')
  assert.equal(created.code, 0, created.stderr)
  assert.match(created.stderr, /warning: a password on the command line/)
  assert.match(created.stdout, /admin root_admin \(id \d+\) is ready/)

  const list = await cli('user:list')
  assert.equal(list.code, 0, list.stderr)
  const rows = parseUserList(list.stdout)
  const row = rows.find((r) => r.username === 'root_admin')
  assert.ok(row, list.stdout)
  assert.equal(row.admin, 'yes')
  assert.equal(row.active, 'yes')
  assert.match(row.created_at, ISO)
  const searched = await cli('user:list', 'ROOT_ad')
  assert.deepEqual(
    parseUserList(searched.stdout).map((r) => r.username),
    ['root_admin'],
  )

  // running it again is idempotent: still one account
  const again = await cli('admin:create', 'root_admin', 'root password 1')
  assert.equal(again.code, 0, again.stderr)
  assert.equal(parseUserList((await cli('user:list')).stdout).filter((r) => r.username === 'root_admin').length, 1)

  const web = await startTestServer({ database: cliDatabase })
  try {
    const login = await web.api.post(`${V2}/auth/login`, { login: 'root_admin', password: 'root password 1' })
    assert.equal(login.status, 200, login.text)
    assert.equal(login.body.data.user.is_admin, true)
    assert.equal(String(login.body.data.user.user_id), row.id)
    const users = await web.api.as(login.body.data.session_token).get(`${ADMIN}/users`)
    assert.equal(users.status, 200)
    assert.ok(users.body.items.some((u: any) => u.username === 'root_admin' && u.is_admin === true))
  } finally {
    await web.close()
  }
})

test('CLI: admin:create promotes an existing user and sets the new password', async () => {
  const web = await startTestServer({ database: cliDatabase })
  try {
    const user = await web.registerUser({ password: 'old password 1' })
    assertError(await user.api.get(`${ADMIN}/users`), 403, 'forbidden')
    const run = await cli('admin:create', user.username, 'new password 2')
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, new RegExp(`admin ${user.username} \\(id ${user.id}\\) is ready`))

    const row = parseUserList((await cli('user:list', user.username)).stdout)[0]
    assert.equal(row.id, String(user.id))
    assert.equal(row.admin, 'yes')
    assert.equal((await user.api.get(`${ADMIN}/users`)).status, 200, 'the existing session is now an admin one')
    assertError(await web.api.post(`${V2}/auth/login`, { login: user.username, password: 'old password 1' }), 401, 'unauthorized')
    const fresh = await web.api.post(`${V2}/auth/login`, { login: user.username, password: 'new password 2' })
    assert.equal(fresh.status, 200)
    assert.equal(fresh.body.data.user.is_admin, true)
  } finally {
    await web.close()
  }
})
