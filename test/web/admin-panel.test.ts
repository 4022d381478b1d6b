/**
 * The admin panel (/admin) over HTTP, as a browser would use it: the separate login, the cookie's
 * flags, CSRF on every form (refused without or with a wrong token, with nothing changed, beside
 * a positive control), the CSP, and each page's actions reaching the services.
 */
import assert from 'node:assert/strict'
import test from 'node:test'
import * as OTPAuth from 'otpauth'
import { cookieAttributes, PanelClient } from '../harness/panel.js'
import { startTestServer, uniqueName } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'

const server = await startTestServer()
const V2 = '/api.v2/api'

async function signedInAdmin() {
  const admin = await server.createAdmin()
  const panel = new PanelClient(server.url)
  await panel.login(admin.username, admin.password)
  return { admin, panel }
}

/** Whether the user's bearer token still works. */
const tokenWorks = async (token: string) => (await server.api.as(token).get(`${V2}/auth/me`)).status === 200

test('anonymous: every page redirects to the login page, and a form post is refused', async () => {
  const panel = new PanelClient(server.url)
  for (const path of ['/admin', '/admin/', '/admin/users', '/admin/users/1', '/admin/reports', '/admin/modlog', '/admin/promos']) {
    const res = await panel.get(path)
    assert.equal(res.status, 303, path)
    assert.equal(res.location, '/admin/login', path)
  }
  const victim = await server.registerUser()
  await panel.get('/admin/login') // a valid CSRF token: only the missing session refuses the post
  const res = await panel.post(`/admin/users/${victim.id}/ban`, { reason: 'x' })
  assert.equal(res.status, 401)
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
  assert.ok(await tokenWorks(victim.token), 'not banned')
})

test('the login page: a form with a CSRF token, labelled inputs, and a CSP allowing scripts only from this origin', async () => {
  const panel = new PanelClient(server.url)
  const res = await panel.get('/admin/login')
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
  assert.match(res.text, /<form method="post" action="\/admin\/login"/)
  assert.match(res.text, /<input type="hidden" name="_csrf" value="[^"]{20,}">/)
  assert.match(res.text, /<label for="login">/)
  assert.match(res.text, /<label for="password">/)
  assert.match(res.text, /<script src="\/admin\/assets\/admin.js" defer><\/script>/)
  assert.doesNotMatch(res.text, /<script>|<script [^>]*>[^<]+<\/script>|<style|style="| on[a-z]+="/, 'nothing inline')
  const csp = res.headers.get('content-security-policy') ?? ''
  const directives = new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...values]) => [name, values]),
  )
  assert.deepEqual(directives.get('script-src'), ["'self'"])
  assert.deepEqual(directives.get('default-src'), ["'none'"])
  assert.deepEqual(directives.get('frame-ancestors'), ["'none'"])
  assert.deepEqual(directives.get('form-action'), ["'self'"])
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/)
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff')
  assert.equal(res.headers.get('cache-control'), 'no-store')

  const script = await panel.get('/admin/assets/admin.js')
  assert.equal(script.status, 200)
  assert.match(script.headers.get('content-type') ?? '', /^text\/javascript/)
  const css = await panel.get('/admin/assets/admin.css')
  assert.equal(css.status, 200)
  assert.match(css.headers.get('content-type') ?? '', /^text\/css/)
})

test('an admin signs in: the tern_admin cookie is HttpOnly, SameSite=Strict, Path=/admin, not Secure on http', async () => {
  const admin = await server.createAdmin()
  const panel = new PanelClient(server.url)
  await panel.login(admin.username, admin.password)
  const line = panel.setCookies.find((l) => l.startsWith('tern_admin='))!
  const attributes = cookieAttributes(line)
  assert.ok(attributes.has('httponly'), line)
  assert.equal(attributes.get('samesite')?.toLowerCase(), 'strict', line)
  assert.equal(attributes.get('path'), '/admin', line)
  assert.ok(!attributes.has('secure'), line)
  const csrfLine = panel.setCookies.find((l) => l.startsWith('tern_admin_csrf=') && !/01 Jan 1970/.test(l))!
  const csrfAttributes = cookieAttributes(csrfLine)
  assert.ok(
    csrfAttributes.has('httponly') && csrfAttributes.get('path') === '/admin' && csrfAttributes.get('samesite')?.toLowerCase() === 'strict',
    csrfLine,
  )

  const overview = await panel.get('/admin')
  assert.equal(overview.status, 200)
  assert.match(overview.text, new RegExp(`Signed in as <strong>${admin.username}</strong>`))
  assert.match(overview.text, /<h1>Overview<\/h1>/)
  const again = await panel.get('/admin/login')
  assert.equal(again.status, 303, 'signed in already: the login page sends to the overview')
  assert.equal(again.location, '/admin')

  // every page: the same CSP, nothing inline, nothing cached
  const csp = overview.headers.get('content-security-policy')
  assert.match(csp ?? '', /script-src 'self'(;|$)/)
  for (const path of [
    '/admin/users',
    `/admin/users/${admin.id}`,
    '/admin/reports',
    '/admin/broadcast',
    '/admin/modlog',
    '/admin/promos',
    '/admin/stats',
    '/admin/status',
    '/admin/nothing-here',
  ]) {
    const res = await panel.get(path)
    assert.ok(res.status === 200 || (path.endsWith('nothing-here') && res.status === 404), `${path}: ${res.status}`)
    assert.equal(res.headers.get('content-security-policy'), csp, path)
    assert.equal(res.headers.get('cache-control'), 'no-store', path)
    assert.doesNotMatch(res.text, /<script>|<script [^>]*>[^<]+<\/script>|<style|style="| on[a-z]+="/, `${path}: nothing inline`)
  }
})

test("behind https (PUBLIC_BASE_URL) both panel cookies are Secure; the login rate limit covers the panel's form", async () => {
  const secure = await startTestServer({ env: { PUBLIC_BASE_URL: 'https://tern.example', LOGIN_RATE_LIMIT: '3/60' } })
  const admin = await secure.createAdmin()
  const panel = new PanelClient(secure.url)
  await panel.login(admin.username, admin.password)
  for (const name of ['tern_admin=', 'tern_admin_csrf=']) {
    const line = panel.setCookies.find((l) => l.startsWith(name))!
    assert.ok(cookieAttributes(line).has('secure'), line)
  }
  assert.match((await panel.get('/admin')).headers.get('content-security-policy') ?? '', /upgrade-insecure-requests/)

  const guesser = new PanelClient(secure.url)
  await guesser.get('/admin/login')
  const answers: number[] = []
  for (let i = 0; i < 3; i++) answers.push((await guesser.post('/admin/login', { login: admin.username, password: `guess ${i}` })).status)
  // one allowance for every login form: createAdmin's API login, the panel sign-in above and one guess
  assert.deepEqual(answers, [401, 429, 429], 'the fourth sign-in from this address within the window')
  const limited = await guesser.post('/admin/login', { login: admin.username, password: admin.password })
  assert.equal(limited.status, 429)
  assert.ok(Number(limited.headers.get('retry-after')) > 0)
  assert.match(limited.headers.get('content-type') ?? '', /^text\/html/)
  assert.ok(!guesser.cookies.has('tern_admin'))
})

test('a wrong password is refused with the form again and no cookie', async () => {
  const admin = await server.createAdmin()
  const panel = new PanelClient(server.url)
  await panel.get('/admin/login')
  const res = await panel.post('/admin/login', { login: admin.username, password: 'not the password' })
  assert.equal(res.status, 401)
  assert.match(res.text, /Wrong username, email or password/)
  assert.match(res.text, new RegExp(`value="${admin.username}"`), 'the login is kept')
  assert.ok(!panel.cookies.has('tern_admin'))
})

test('a non-admin is refused: no panel cookie, and the session the login opened is ended', async () => {
  const user = await server.registerUser()
  const panel = new PanelClient(server.url)
  await panel.get('/admin/login')
  const res = await panel.post('/admin/login', { login: user.username, password: user.password })
  assert.equal(res.status, 403)
  assert.match(res.text, /not a platform administrator/)
  assert.ok(!panel.cookies.has('tern_admin'))
  const sessions = await user.api.get(`${V2}/sessions`)
  assert.equal(sessions.status, 200)
  assert.deepEqual(
    sessions.body.items.map((s: { device: string | null }) => s.device),
    [null],
    'only the registration session is active',
  )
})

test('a non-admin session in the tern_admin cookie gets 403; a demoted admin loses the panel at once', async () => {
  const user = await server.registerUser()
  const forged = new PanelClient(server.url)
  forged.cookies.set('tern_admin', user.token)
  const res = await forged.get('/admin/users')
  assert.equal(res.status, 403)
  assert.match(res.text, /Administrators only/)
  assert.doesNotMatch(res.text, /<table/)

  const { admin: other, panel } = await signedInAdmin()
  const { panel: mine } = await signedInAdmin()
  assert.equal((await panel.get('/admin/users')).status, 200)
  await mine.get(`/admin/users/${other.id}`)
  assert.equal((await mine.post(`/admin/users/${other.id}/role`, { is_admin: '0' })).status, 303)
  assert.equal((await panel.get('/admin/users')).status, 403)
})

test("a form post without a CSRF token, with a wrong one or with another browser's is 403 and changes nothing; with its own it works", async () => {
  const { panel } = await signedInAdmin()
  const { panel: otherBrowser } = await signedInAdmin()
  const victim = await server.registerUser()
  await otherBrowser.get('/admin/users')
  await panel.get(`/admin/users/${victim.id}`)
  const cases: [string, string][] = [
    ['none', 'no token'],
    ['x'.repeat(40), 'a made-up token'],
    [otherBrowser.csrf!, "another browser's token"],
  ]
  for (const [csrf, what] of cases) {
    const res = await panel.post(`/admin/users/${victim.id}/ban`, { reason: 'spam' }, { csrf })
    assert.equal(res.status, 403, what)
    assert.match(res.text, /form has expired or did not come from this panel/, what)
    assert.ok(await tokenWorks(victim.token), `${what}: not banned`)
  }
  const crossSite = await panel.post(`/admin/users/${victim.id}/ban`, { reason: 'spam' }, { headers: { 'sec-fetch-site': 'cross-site' } })
  assert.equal(crossSite.status, 403, 'a cross-site form, even with the right token')
  assert.ok(await tokenWorks(victim.token))
  const log = await server.createAdmin().then((a) => a.api.get('/api/admin/modlog', { query: { target_id: victim.id } }))
  assert.equal(log.body.total, 0, 'no ModLog row')

  const res = await panel.post(`/admin/users/${victim.id}/ban`, { reason: 'spam' })
  assert.equal(res.status, 303, res.text)
  assert.equal(res.location, `/admin/users/${victim.id}?notice=banned`)
  assert.equal(await tokenWorks(victim.token), false, 'the positive control: banned')
})

test('the panel cookie authenticates nothing outside /admin, and a bearer token does not open the panel', async () => {
  const { admin, panel } = await signedInAdmin()
  const token = panel.cookies.get('tern_admin')!
  const api = await server.api.get('/api/admin/users', { headers: { cookie: `tern_admin=${token}` } })
  assert.equal(api.status, 401)
  const page = await server.api.get('/admin/users', { headers: { authorization: `Bearer ${admin.token}` } })
  assert.equal(page.status, 303)
  assert.equal(page.headers.get('location'), '/admin/login')
})

test('signing out ends the session: the old cookie opens nothing', async () => {
  const { panel } = await signedInAdmin()
  const token = panel.cookies.get('tern_admin')!
  await panel.get('/admin')
  const res = await panel.post('/admin/logout')
  assert.equal(res.status, 303)
  assert.equal(res.location, '/admin/login?notice=signed_out')
  assert.ok(!panel.cookies.has('tern_admin'), 'cookie cleared')
  const replay = new PanelClient(server.url)
  replay.cookies.set('tern_admin', token)
  assert.equal((await replay.get('/admin')).status, 303)
  assert.equal((await server.api.as(token).get(`${V2}/auth/me`)).status, 401, 'the session is revoked')
})

test("users: search and filters, every value escaped; ban closes the user's socket and ends their token; unban; role", async () => {
  const { panel } = await signedInAdmin()
  const name = uniqueName('esc')
  const victim = await server.registerUser({ username: name, display_name: '<img src=x onerror=alert(1)>' })
  const socket = await TestSocket.connect(server.url, victim.token)

  const list = await panel.get(`/admin/users?q=${name}&state=active`)
  assert.equal(list.status, 200)
  assert.ok(list.text.includes(`<a href="/admin/users/${victim.id}">${name}</a>`), 'listed with a link')
  assert.ok(!list.text.includes('<img src=x'), 'the display name is escaped')
  assert.ok(list.text.includes('&#60;img src=x onerror=alert(1)&#62;'))
  assert.match(list.text, /1 user found/)
  assert.match((await panel.get(`/admin/users?q=${name}&state=banned`)).text, /0 users found/)
  assert.match((await panel.get(`/admin/users?q=${name}&role=admin`)).text, /0 users found/)
  assert.match((await panel.get(`/admin/users?q=${name}&premium=no`)).text, /1 user found/)
  assert.equal((await panel.get('/admin/users?state=nonsense')).status, 400)

  const detail = await panel.get(`/admin/users/${victim.id}`)
  assert.equal(detail.status, 200)
  assert.match(detail.text, /<label for="reason">/)
  const banned = await panel.post(`/admin/users/${victim.id}/ban`, { reason: 'spam <b>links</b>' })
  assert.equal(banned.status, 303)
  const closed = await socket.closing()
  assert.equal(closed.code, 4003, `closed with ${JSON.stringify(closed)}`)
  assert.equal(await tokenWorks(victim.token), false)
  const after = await panel.get(banned.location!)
  assert.match(after.text, /The user is banned/)
  assert.match(after.text, /<span class="badge banned">banned<\/span>/)
  assert.ok(after.text.includes('user.ban'), 'the ModLog row on the page')
  assert.ok(after.text.includes('spam &#60;b&#62;links&#60;/b&#62;'), 'the reason, escaped')

  assert.equal((await panel.post(`/admin/users/${victim.id}/unban`)).status, 303)
  assert.equal((await server.api.post(`${V2}/auth/login`, { login: name, password: victim.password })).status, 200, 'can sign in again')
  await panel.get(`/admin/users/${victim.id}`)
  assert.equal((await panel.post(`/admin/users/${victim.id}/role`, { is_admin: '1' })).status, 303)
  assert.match((await panel.get(`/admin/users?q=${name}&role=admin`)).text, /1 user found/)
})

test('users: 25 to a page; the next link keeps the search', async () => {
  const { panel } = await signedInAdmin()
  const tag = `pt${Math.random().toString(16).slice(2, 8)}_`
  for (let i = 0; i < 26; i++) await server.registerUser({ username: `${tag}${i}` })
  const first = await panel.get(`/admin/users?q=${tag}`)
  assert.match(first.text, /26 users found/)
  assert.equal(first.text.match(new RegExp(`>${tag}\\d+</a>`, 'g'))?.length, 25)
  assert.match(first.text, /Page 1 of 2/)
  const next = /<a href="([^"]+)" rel="next">/.exec(first.text)![1].replaceAll('&#38;', '&')
  assert.equal(next, `/admin/users?q=${tag}&page=2`)
  const second = await panel.get(next)
  assert.equal(second.text.match(new RegExp(`>${tag}\\d+</a>`, 'g'))?.length, 1)
  assert.match(second.text, /rel="prev"/)
})

test('users: an unknown id is a 404 page, a refused action (banning yourself) an error page, nothing changed', async () => {
  const { admin, panel } = await signedInAdmin()
  const missing = await panel.get('/admin/users/99999999')
  assert.equal(missing.status, 404)
  assert.match(missing.headers.get('content-type') ?? '', /^text\/html/)
  assert.match(missing.text, /User not found/)
  await panel.get(`/admin/users/${admin.id}`)
  const self = await panel.post(`/admin/users/${admin.id}/ban`, { reason: 'oops' })
  assert.equal(self.status, 409)
  assert.match(self.text, /cannot ban yourself/)
  assert.ok(await tokenWorks(admin.token))
  assert.equal((await panel.get('/admin/no-such-page')).status, 404)
})

test('reports: the queue shows the reported message escaped; resolve with a note; act (warn_user)', async () => {
  const { panel } = await signedInAdmin()
  const [reporter, offender] = [await server.registerUser(), await server.registerUser()]
  const sent = await offender.api.post(`${V2}/messages/send`, { receiver_id: reporter.id, content: '<script>alert("x")</script> buy now' })
  assert.equal(sent.status, 200, sent.text)
  const first = await reporter.api.post(`${V2}/report`, { reported_message_id: sent.body.data.message_id, reason: 'spam' })
  assert.equal(first.status, 200, first.text)
  const second = await reporter.api.post(`${V2}/report`, { reported_user_id: offender.id, reason: 'rude' })
  assert.equal(second.status, 200, second.text)

  const queue = await panel.get('/admin/reports')
  assert.equal(queue.status, 200)
  assert.match(queue.text, new RegExp(`Report #${first.body.data.report_id}`))
  assert.ok(queue.text.includes('&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; buy now'), 'content escaped')
  assert.ok(!queue.text.includes('<script>alert'))

  const resolved = await panel.post(`/admin/reports/${first.body.data.report_id}/resolve`, { status: 'resolved', note: 'handled' })
  assert.equal(resolved.status, 303, resolved.text)
  const closed = await panel.get('/admin/reports?status=resolved')
  assert.match(closed.text, new RegExp(`Report #${first.body.data.report_id} · resolved`))
  assert.match(closed.text, /handled/)
  const again = await panel.post(`/admin/reports/${first.body.data.report_id}/resolve`, { status: 'dismissed' })
  assert.equal(again.status, 409, 'closed once')

  await panel.get('/admin/reports')
  const warned = await panel.post(`/admin/reports/${second.body.data.report_id}/action`, { action: 'warn_user', note: 'be nice' })
  assert.equal(warned.status, 303, warned.text)
  assert.match((await panel.get(warned.location!)).text, /The user was warned/)
  const bad = await panel.post(`/admin/reports/${second.body.data.report_id}/action`, { action: 'explode' })
  assert.equal(bad.status, 400)

  const another = await offender.api.post(`${V2}/messages/send`, { receiver_id: reporter.id, content: 'more spam' })
  const third = await reporter.api.post(`${V2}/report`, { reported_message_id: another.body.data.message_id, reason: 'spam again' })
  const pending = await panel.get('/admin/reports')
  assert.match(pending.text, /<option value="delete_message">Delete the message for everyone<\/option>/)
  const deleted = await panel.post(`/admin/reports/${third.body.data.report_id}/action`, { action: 'delete_message' })
  assert.equal(deleted.status, 303, deleted.text)
  const history = await reporter.api.get(`${V2}/chat/history`, { query: { chat_id: another.body.data.chat_id } })
  assert.equal(history.status, 200, history.text)
  assert.ok(history.text.includes('buy now'), 'the history is read (the earlier message is there)')
  assert.ok(!history.text.includes('more spam'), 'deleted for everyone')
})

test('ModLog: filters by admin, action and target; an empty filter box is no filter', async () => {
  const { admin, panel } = await signedInAdmin()
  const target = await server.registerUser()
  await panel.get(`/admin/users/${target.id}`)
  await panel.post(`/admin/users/${target.id}/ban`, { reason: 'r' })
  await panel.post(`/admin/users/${target.id}/unban`)
  const all = await panel.get(`/admin/modlog?admin_id=${admin.id}&action=&target_id=`)
  assert.equal(all.status, 200)
  assert.match(all.text, /2 entries/)
  const bans = await panel.get(`/admin/modlog?admin_id=${admin.id}&action=user.ban&target_id=${target.id}`)
  assert.match(bans.text, /1 entry/)
  assert.equal((await panel.get('/admin/modlog?admin_id=abc')).status, 400)
})

test('promo codes: create (bad input shows the form again), list, deactivate', async () => {
  const { panel } = await signedInAdmin()
  const code = uniqueName('P').slice(0, 20)
  await panel.get('/admin/promos')
  const bad = await panel.post('/admin/promos', { code, discount_percent: '150', max_uses: '10', expires_on: '' })
  assert.equal(bad.status, 400)
  assert.match(bad.text, /from 1 to 100/)
  assert.ok(bad.text.includes(`value="${code}"`), 'the form keeps its values')
  const created = await panel.post('/admin/promos', { code, discount_percent: '20', max_uses: '10', expires_on: '2099-12-31' })
  assert.equal(created.status, 303, created.text)
  const list = await panel.get('/admin/promos')
  assert.ok(list.text.includes(`<code>${code}</code>`))
  assert.match(list.text, /2099-12-31 23:59/)
  const taken = await panel.post('/admin/promos', { code, discount_percent: '20', max_uses: '10' })
  assert.equal(taken.status, 409)
  const id = new RegExp(`<code>${code}</code>[\\s\\S]*?action="/admin/promos/(\\d+)/deactivate"`).exec(list.text)![1]
  await panel.get('/admin/promos')
  assert.equal((await panel.post(`/admin/promos/${id}/deactivate`)).status, 303)
  assert.match(
    (await panel.get('/admin/promos')).text,
    new RegExp(`<code>${code}</code></td><td>20%</td><td>0 / 10</td>\\s*<td>[^<]+</td><td>inactive</td>`),
  )
})

/** An admin with two-factor on; `code(offsetSteps)` makes a TOTP code of a later time step (each step is accepted once). */
async function adminWithTwoFactor(srv: typeof server) {
  const admin = await srv.createAdmin()
  const setup = await admin.api.post(`${V2}/auth/2fa/setup`)
  assert.equal(setup.status, 200, setup.text)
  const totp = new OTPAuth.TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: OTPAuth.Secret.fromBase32(setup.body.data.secret) })
  const code = (steps: number) => totp.generate({ timestamp: Date.now() + steps * 30_000 })
  const enabled = await admin.api.post(`${V2}/auth/2fa/enable`, { code: code(0) })
  assert.equal(enabled.status, 200, enabled.text)
  return { admin, code }
}

test('an admin with two-factor on gets a second form for the code; a wrong code is refused, the right one signs in', async () => {
  const { admin, code } = await adminWithTwoFactor(server)
  const panel = new PanelClient(server.url)
  await panel.get('/admin/login')
  const first = await panel.post('/admin/login', { login: admin.username, password: admin.password })
  assert.equal(first.status, 200, first.text)
  assert.match(first.text, /<form method="post" action="\/admin\/login\/totp"/)
  assert.match(first.text, /<label for="code">/)
  assert.ok(!panel.cookies.has('tern_admin'), 'no session before the code')
  const ticket = /name="ticket" value="([^"]+)"/.exec(first.text)![1]

  const wrong = await panel.post('/admin/login/totp', { ticket, code: '000000' })
  assert.equal(wrong.status, 401)
  assert.match(wrong.text, /not valid/)
  assert.ok(!panel.cookies.has('tern_admin'))
  const noToken = await panel.post('/admin/login/totp', { ticket, code: code(1) }, { csrf: 'none' })
  assert.equal(noToken.status, 403, 'the code form carries CSRF too')

  const right = await panel.post('/admin/login/totp', { ticket, code: code(1) })
  assert.equal(right.status, 303, right.text)
  assert.equal(right.location, '/admin')
  assert.equal((await panel.get('/admin')).status, 200)
})

test('with ADMIN_REQUIRE_2FA an admin without two-factor is refused; with it, signs in', async () => {
  const strict = await startTestServer({ env: { ADMIN_REQUIRE_2FA: 'true' } })
  const plain = await strict.createAdmin()
  const panel = new PanelClient(strict.url)
  await panel.get('/admin/login')
  const refused = await panel.post('/admin/login', { login: plain.username, password: plain.password })
  assert.equal(refused.status, 403)
  assert.match(refused.text, /two-factor/)
  assert.ok(!panel.cookies.has('tern_admin'))
  const forged = new PanelClient(strict.url)
  forged.cookies.set('tern_admin', plain.token)
  assert.equal((await forged.get('/admin')).status, 403, 'a session without the second factor opens nothing')

  const { admin, code } = await adminWithTwoFactor(strict)
  const ok = new PanelClient(strict.url)
  await ok.get('/admin/login')
  const step = await ok.post('/admin/login', { login: admin.username, password: admin.password })
  const ticket = /name="ticket" value="([^"]+)"/.exec(step.text)![1]
  assert.equal((await ok.post('/admin/login/totp', { ticket, code: code(1) })).status, 303)
  assert.equal((await ok.get('/admin/users')).status, 200)
})

test('broadcast: an empty message is refused with the form again; a message is queued and its progress reaches the total', async () => {
  const { panel } = await signedInAdmin()
  const recipient = await server.registerUser()
  await panel.get('/admin/broadcast')
  const empty = await panel.post('/admin/broadcast', { content: '   ' })
  assert.equal(empty.status, 400)
  assert.match(empty.text, /empty/)
  const sent = await panel.post('/admin/broadcast', { content: 'Maintenance <tonight>' })
  assert.equal(sent.status, 303, sent.text)
  const id = /^\/admin\/broadcasts\/(\d+)$/.exec(sent.location!)![1]
  const page = await panel.get(sent.location!)
  assert.equal(page.status, 200)
  assert.match(page.text, new RegExp(`data-progress-url="/admin/broadcasts/${id}/progress"`))
  assert.match(page.text, /<progress /)
  assert.ok(page.text.includes('Maintenance &#60;tonight&#62;'))
  let progress: { status: string; sent: number; total: number } | null = null
  for (let i = 0; i < 100 && progress?.status !== 'done'; i++) {
    const res = await panel.get(`/admin/broadcasts/${id}/progress`, { accept: 'application/json' })
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
    progress = JSON.parse(res.text)
    if (progress?.status !== 'done') await new Promise((resolve) => setTimeout(resolve, 100))
  }
  assert.equal(progress?.status, 'done')
  assert.ok(progress!.total >= 1)
  assert.equal(progress!.sent, progress!.total)
  const updates = await recipient.api.get(`${V2}/updates`, { query: { since: 0, limit: 100 } })
  assert.ok(JSON.stringify(updates.body).includes('Maintenance <tonight>'), 'the recipient got the message')
})

test('stats: two accessible SVG charts (role=img, a title, a summary); status: version, database, jobs, read-only', async () => {
  const { panel } = await signedInAdmin()
  const stats = await panel.get('/admin/stats')
  assert.equal(stats.status, 200)
  const charts = stats.text.match(/<svg [^>]*role="img"[^>]*>/g) ?? []
  assert.equal(charts.length, 2)
  assert.match(stats.text, /<title id="messages-chart-title">Messages per day, last 30 days<\/title>/)
  assert.match(stats.text, /<title id="active-chart-title">Active users per day, last 30 days<\/title>/)
  assert.match(stats.text, /<desc id="active-chart-desc">30 days from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}: \d+ active users in all/)
  assert.doesNotMatch(stats.text, /<script>/)

  // the job runner writes what its jobs did every 5 s
  let status = await panel.get('/admin/status')
  for (let i = 0; i < 70 && !status.text.includes('broadcast-delivery'); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    status = await panel.get('/admin/status')
  }
  assert.equal(status.status, 200)
  assert.match(status.text, /<dt>version<\/dt><dd>\d+\.\d+\.\d+<\/dd>/)
  assert.match(status.text, /<dt>database<\/dt><dd>(sqlite|postgres): <strong class="good">ok<\/strong>/)
  assert.match(status.text, /<td>broadcast-delivery<\/td><td>cluster<\/td>/)
  assert.doesNotMatch(status.text, /<form method="post"(?! action="\/admin\/logout")/, 'no action on the status page but signing out')
})
