/**
 * The web client's server side over HTTP, as a browser uses it: the sign-in
 * and registration forms (CSRF refused without or with a wrong token, nothing changed, beside a
 * positive control), the cookie's flags, two-factor, GET /api/web/session, the cookie on the JSON
 * API with and without X-CSRF-Token, the gateway's Origin check, /join?ref=, invite previews and
 * Join, /logout, an expired cookie, and the bot web-app page.
 */
import assert from 'node:assert/strict'
import test from 'node:test'
import * as OTPAuth from 'otpauth'
import WebSocket from 'ws'
import { TestClock } from '../harness/clock.js'
import { cookieAttributes, PanelClient } from '../harness/panel.js'
import { history } from '../harness/messaging.js'
import { startTestServer, uniqueName, type TestServer, type TestUser } from '../harness/server.js'

const V2 = '/api.v2/api'
const clock = new TestClock()
const server = await startTestServer({ clock })

/** A browser: cookie jar, form posts with the last page's `_csrf`. */
const browser = (s: TestServer = server) => new PanelClient(s.url)

async function signedIn(user?: TestUser, s: TestServer = server) {
  const who = user ?? (await s.registerUser())
  const web = browser(s)
  const page = await web.get('/login')
  assert.equal(page.status, 200, page.text)
  const res = await web.post('/login', { login: who.username, password: who.password })
  assert.equal(res.status, 303, res.text)
  assert.equal(res.location, '/app')
  assert.ok(web.cookies.has('tern_session'))
  return { user: who, web }
}

/** GET /api/web/session through the jar. */
async function session(web: PanelClient) {
  const res = await web.get('/api/web/session')
  return { status: res.status, body: res.text ? JSON.parse(res.text) : null }
}

/** A JSON API call with the jar's cookies, and optionally an X-CSRF-Token. */
function api(web: PanelClient, method: string, path: string, body?: unknown, csrf?: string) {
  return web.request(method, path, {
    ...(body === undefined ? {} : { body: JSON.stringify(body), contentType: 'application/json' }),
    headers: csrf === undefined ? {} : { 'x-csrf-token': csrf },
  })
}

const sessionCookieLine = (web: PanelClient) => [...web.setCookies].reverse().find((l) => l.startsWith('tern_session='))

test('GET /login: a form with a CSRF token, the QR sign-in beside it, and a CSP with nothing inline', async () => {
  const web = browser()
  const res = await web.get('/login')
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
  assert.match(res.text, /<form method="post" action="\/login"/)
  assert.match(res.text, /<input type="hidden" name="_csrf" value="[^"]{20,}">/)
  assert.match(res.text, /<label for="login">/)
  assert.match(res.text, /<label for="password">/)
  assert.match(res.text, /id="qr-login"/)
  assert.match(res.text, /<script src="\/pages\/login.js" defer><\/script>/)
  assert.doesNotMatch(res.text, /<script>|<script [^>]*>[^<]+<\/script>|<style|style="| on[a-z]+="/, 'nothing inline')
  const csp = res.headers.get('content-security-policy') ?? ''
  const directives = new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...values]) => [name, values]),
  )
  assert.deepEqual(directives.get('script-src'), ["'self'"])
  assert.deepEqual(directives.get('style-src'), ["'self'"])
  assert.deepEqual(directives.get('default-src'), ["'none'"])
  assert.deepEqual(directives.get('form-action'), ["'self'"])
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/)
  assert.equal((await web.get('/pages/login.js')).status, 200)
  assert.equal((await web.get('/pages/site.css')).status, 200)
})

test('POST /login without or with a wrong CSRF token is 403 and signs nobody in; with it, 303 to /app and the cookie', async () => {
  const user = await server.registerUser()
  const web = browser()
  await web.get('/login')
  const none = await web.post('/login', { login: user.username, password: user.password }, { csrf: 'none' })
  assert.equal(none.status, 403)
  assert.match(none.headers.get('content-type') ?? '', /^text\/html/)
  const wrong = await web.post('/login', { login: user.username, password: user.password }, { csrf: 'x'.repeat(40) })
  assert.equal(wrong.status, 403)
  const crossSite = await web.post(
    '/login',
    { login: user.username, password: user.password },
    { headers: { 'sec-fetch-site': 'cross-site' } },
  )
  assert.equal(crossSite.status, 403)
  assert.equal(web.cookies.has('tern_session'), false, 'no session from a refused form')
  assert.equal((await session(web)).status, 401)

  await web.get('/login')
  const res = await web.post('/login', { login: user.username, password: user.password })
  assert.equal(res.status, 303)
  assert.equal(res.location, '/app')
  const attrs = cookieAttributes(sessionCookieLine(web)!)
  assert.ok(attrs.has('httponly'))
  assert.equal(attrs.get('samesite')?.toLowerCase(), 'lax')
  assert.equal(attrs.get('path'), '/')
  assert.ok(!attrs.has('secure'), 'no Secure over http')
  assert.equal((await session(web)).status, 200)
})

test('POST /login with a wrong password shows the form again with a message; next= comes back after signing in, a foreign one does not', async () => {
  const user = await server.registerUser()
  const web = browser()
  await web.get('/login')
  const bad = await web.post('/login', { login: user.username, password: 'wrong password' })
  assert.equal(bad.status, 401)
  assert.match(bad.text, /role="alert">Wrong username, email or password/)
  assert.match(bad.text, new RegExp(`value="${user.username}"`), 'the login is kept')
  assert.equal(web.cookies.has('tern_session'), false)

  const page = await web.get('/login?next=%2Fjoin%2Fabc')
  assert.match(page.text, /name="next" value="\/join\/abc"/)
  const res = await web.post('/login', { login: user.username, password: user.password, next: '/join/abc' })
  assert.equal(res.location, '/join/abc')

  const other = browser()
  for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
    const form = await other.get(`/login?next=${encodeURIComponent(next)}`)
    assert.match(form.text, /name="next" value="\/app"/, next)
  }
  await other.get('/login')
  const foreign = await other.post('/login', { login: user.username, password: user.password, next: '//evil.example/x' })
  assert.equal(foreign.location, '/app')
})

test('Secure on the cookie when the request came over https (X-Forwarded-Proto from a trusted proxy)', async () => {
  const behind = await startTestServer({ env: { TRUST_PROXY: '1' } })
  const user = await behind.registerUser()
  const web = browser(behind)
  const https = { 'x-forwarded-proto': 'https' }
  await web.get('/login', https)
  const res = await web.post('/login', { login: user.username, password: user.password }, { headers: https })
  assert.equal(res.status, 303)
  assert.ok(cookieAttributes(sessionCookieLine(web)!).has('secure'))
  // the same server over plain http: not Secure (the positive control of the flag's source)
  const plain = browser(behind)
  await plain.get('/login')
  await plain.post('/login', { login: user.username, password: user.password })
  assert.ok(!cookieAttributes(sessionCookieLine(plain)!).has('secure'))
})

test('with two-factor on, /login asks for the code on a second form, then signs in', async () => {
  const user = await server.registerUser()
  const setup = await user.api.post(`${V2}/auth/2fa/setup`)
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(setup.body.data.secret), algorithm: 'SHA1', digits: 6, period: 30 })
  clock.advance(30_000)
  assert.equal((await user.api.post(`${V2}/auth/2fa/enable`, { code: totp.generate({ timestamp: clock.now() }) })).status, 200)

  const web = browser()
  await web.get('/login')
  const step = await web.post('/login', { login: user.username, password: user.password })
  assert.equal(step.status, 200)
  assert.match(step.text, /action="\/login\/totp"/)
  assert.equal(web.cookies.has('tern_session'), false, 'no session before the code')
  const ticket = /name="ticket" value="([^"]+)"/.exec(step.text)![1]
  const wrong = await web.post('/login/totp', { ticket, code: '000000' })
  assert.equal(wrong.status, 401)
  assert.match(wrong.text, /role="alert"/)
  assert.equal(web.cookies.has('tern_session'), false)
  clock.advance(30_000)
  const done = await web.post('/login/totp', { ticket, code: totp.generate({ timestamp: clock.now() }) })
  assert.equal(done.status, 303, done.text)
  assert.equal(done.location, '/app')
  const me = await session(web)
  assert.equal(me.status, 200)
  assert.equal(me.body.data.user.id, user.id)
})

test('POST /register without or with a wrong CSRF token is 403 and creates nobody; with it, the account and its session', async () => {
  const web = browser()
  const page = await web.get('/register')
  assert.equal(page.status, 200)
  assert.match(page.text, /<form method="post" action="\/register"/)
  const username = uniqueName('w')
  const fields = { username, password: 'correct horse battery', display_name: 'Web Person', email: '' }
  assert.equal((await web.post('/register', fields, { csrf: 'none' })).status, 403)
  assert.equal((await web.post('/register', fields, { csrf: 'wrong-token-wrong-token' })).status, 403)
  const taken = await server.api.post(`${V2}/auth/login`, { login: username, password: fields.password })
  assert.equal(taken.status, 401, 'no such account yet')

  await web.get('/register')
  const res = await web.post('/register', fields)
  assert.equal(res.status, 303, res.text)
  assert.equal(res.location, '/app')
  const me = await session(web)
  assert.equal(me.status, 200)
  assert.equal(me.body.data.user.username, username)
  assert.equal(me.body.data.user.display_name, 'Web Person')
  assert.equal((await server.api.post(`${V2}/auth/login`, { login: username, password: fields.password })).status, 200)
})

test('POST /register with a bad username or a taken one shows the form again with the reason', async () => {
  const existing = await server.registerUser()
  const web = browser()
  await web.get('/register')
  const bad = await web.post('/register', { username: 'a b', password: 'correct horse battery' })
  assert.equal(bad.status, 400)
  assert.match(bad.text, /role="alert">Username must be 3 to 32 characters/)
  const short = await web.post('/register', { username: uniqueName('w'), password: 'short' })
  assert.equal(short.status, 400)
  assert.match(short.text, /Password must be 8 to 256 characters/)
  const taken = await web.post('/register', { username: existing.username, password: 'correct horse battery' })
  assert.equal(taken.status, 409)
  assert.match(taken.text, /role="alert"/)
  assert.equal(web.cookies.has('tern_session'), false)
})

test('GET /api/web/session: the user and the CSRF token with the cookie; 401 without, with a bearer token only, or with a dead cookie', async () => {
  const { user, web } = await signedIn()
  const res = await session(web)
  assert.equal(res.status, 200)
  assert.equal(res.body.success, true)
  assert.equal(res.body.data.user.id, user.id)
  assert.equal(res.body.data.user.user_id, user.id)
  assert.equal(res.body.data.user.username, user.username)
  assert.ok('display_name' in res.body.data.user)
  assert.match(res.body.data.csrf_token, /^[A-Za-z0-9_-]{40,}$/)

  const anonymous = await server.api.get('/api/web/session')
  assert.equal(anonymous.status, 401)
  assert.equal(anonymous.body.error.code, 'unauthorized')
  assert.equal((await user.api.get('/api/web/session')).status, 401, 'a bearer token is not the web session')
  assert.equal((await server.api.get('/api/web/session', { headers: { cookie: `tern_session=${'z'.repeat(43)}` } })).status, 401)

  // another sign-in is another session with another token
  const again = await signedIn(user)
  assert.notEqual((await session(again.web)).body.data.csrf_token, res.body.data.csrf_token)
})

test('the cookie on the JSON API: a mutation without X-CSRF-Token, or with a wrong one, is 403 and changes nothing; with it, 200', async () => {
  const { user, web } = await signedIn()
  const bob = await server.registerUser()
  const { csrf_token: csrf } = (await session(web)).body.data
  const send = (content: string, token?: string) => api(web, 'POST', `${V2}/messages/send`, { receiver_id: bob.id, content }, token)

  const none = await send('no header')
  assert.equal(none.status, 403)
  const noneBody = JSON.parse(none.text)
  assert.equal(noneBody.success, false)
  assert.equal(noneBody.error.code, 'forbidden')
  assert.match(noneBody.error.message, /X-CSRF-Token|x-csrf-token/i)
  assert.equal((await send('wrong header', 'A'.repeat(43))).status, 403)
  const other = await signedIn()
  const otherToken = (await session(other.web)).body.data.csrf_token
  assert.equal((await send('another session’s token', otherToken)).status, 403)

  const okRes = await send('with the header', csrf)
  assert.equal(okRes.status, 200, okRes.text)
  const texts = JSON.stringify(await history(bob, JSON.parse(okRes.text).data.chat_id))
  assert.ok(texts.includes('with the header'), texts)
  for (const refused of ['no header', 'wrong header', 'another session’s token']) assert.ok(!texts.includes(refused), refused)

  // reading needs no token; a bearer mutation needs none either
  assert.equal((await api(web, 'GET', `${V2}/auth/me`)).status, 200)
  assert.equal((await user.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'bearer' })).status, 200)
  // a dead cookie on a mutation is 401 (sign in again), not 403
  const dead = await server.api.post(
    `${V2}/messages/send`,
    { receiver_id: bob.id, content: 'x' },
    { headers: { cookie: `tern_session=${'q'.repeat(43)}`, 'x-csrf-token': csrf } },
  )
  assert.equal(dead.status, 401)
})

test("the cookie opens the gateway from this origin or PUBLIC_BASE_URL's; a foreign Origin (or none) is refused", async () => {
  const base = 'http://tern.example'
  const s = await startTestServer({ env: { PUBLIC_BASE_URL: base } })
  const { web } = await signedIn(undefined, s)
  const cookie = `tern_session=${web.cookies.get('tern_session')}`
  const wsUrl = `${s.url.replace(/^http/, 'ws')}/api.v2/api/ws`
  const open = (headers: Record<string, string>) =>
    new Promise<{ status: number; ready?: boolean }>((resolve) => {
      const ws = new WebSocket(wsUrl, { headers })
      ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0 }))
      ws.once('message', (raw) => {
        const frame = JSON.parse(String(raw))
        ws.close()
        resolve({ status: 101, ready: frame.type === 'ready' })
      })
      ws.once('error', () => resolve({ status: -1 }))
    })
  assert.deepEqual(await open({ cookie, origin: 'http://evil.example' }), { status: 403 })
  assert.deepEqual(await open({ cookie, origin: 'null' }), { status: 403 })
  assert.deepEqual(await open({ cookie }), { status: 403 })
  assert.deepEqual(await open({ cookie, origin: s.url }), { status: 101, ready: true })
  assert.deepEqual(await open({ cookie, origin: base }), { status: 101, ready: true })
  assert.deepEqual(await open({ origin: s.url }), { status: 401 })
  assert.deepEqual(await open({ cookie: `tern_session=${'y'.repeat(43)}`, origin: s.url }), { status: 401 })
})

test('/join?ref=<username> remembers the referrer and leads to registration, which records the referral; signed in, to the app', async () => {
  const inviter = await server.registerUser()
  const web = browser()
  const res = await web.get(`/join?ref=${inviter.username}`)
  assert.equal(res.status, 303)
  assert.equal(res.location, '/register')
  assert.equal(web.cookies.get('tern_ref'), inviter.username)
  const page = await web.get('/register')
  assert.match(page.text, new RegExp(`Invited by <strong>@${inviter.username}</strong>`))
  const before = await inviter.api.get(`${V2}/referrals/me`)
  assert.equal(before.body.data.invited_count, 0)
  const done = await web.post('/register', { username: uniqueName('r'), password: 'correct horse battery' })
  assert.equal(done.status, 303)
  assert.equal(web.cookies.has('tern_ref'), false, 'forgotten once used')
  const after = await inviter.api.get(`${V2}/referrals/me`)
  assert.equal(after.body.data.invited_count, 1)

  const bad = browser()
  const odd = await bad.get('/join?ref=%3Cscript%3E')
  assert.equal(odd.location, '/register')
  assert.equal(bad.cookies.has('tern_ref'), false)

  const { web: member } = await signedIn()
  const inside = await member.get(`/join?ref=${inviter.username}`)
  assert.equal(inside.status, 303)
  assert.equal(inside.location, '/app')
})

test('/join/<code>: a preview with the member count; Join without a CSRF token is 403 and joins nobody; with it, into the group', async () => {
  const owner = await server.registerUser()
  const group = await owner.api.post(`${V2}/groups/create`, { title: 'Hikers', description: 'Weekend walks' })
  assert.equal(group.status, 200, group.text)
  const chatId = group.body.data.group_id ?? group.body.data.chat_id
  const invite = await owner.api.post(`${V2}/groups/invite-link/create`, { chat_id: chatId })
  assert.equal(invite.status, 200, invite.text)
  const code: string = invite.body.data.code
  assert.ok(invite.body.data.invite_link.endsWith(`/join/${code}`))

  const anonymous = await browser().get(`/join/${code}`)
  assert.equal(anonymous.status, 200)
  assert.match(anonymous.text, /<h1>Hikers<\/h1>/)
  assert.match(anonymous.text, /Weekend walks/)
  assert.match(anonymous.text, /data-testid="member-count">1</)
  assert.match(anonymous.text, new RegExp(`href="/login\\?next=%2Fjoin%2F${code}"`))

  const { user, web } = await signedIn()
  const page = await web.get(`/join/${code}`)
  assert.match(page.text, new RegExp(`<form method="post" action="/join/${code}">`))
  const none = await web.post(`/join/${code}`, {}, { csrf: 'none' })
  assert.equal(none.status, 403)
  const wrong = await web.post(`/join/${code}`, {}, { csrf: 'not-the-token-at-all' })
  assert.equal(wrong.status, 403)
  assert.match((await browser().get(`/join/${code}`)).text, /data-testid="member-count">1</, 'nobody joined')

  await web.get(`/join/${code}`)
  const joined = await web.post(`/join/${code}`)
  assert.equal(joined.status, 303, joined.text)
  assert.equal(joined.location, `/app/chat/${chatId}`)
  assert.match((await browser().get(`/join/${code}`)).text, /data-testid="member-count">2</)
  const members = await owner.api.get(`${V2}/groups/members`, { query: { chat_id: chatId } })
  assert.ok(JSON.stringify(members.body).includes(`"${user.username}"`))
  assert.match((await web.get(`/join/${code}`)).text, /already in this group/)

  // signed out, the button's post goes to the login page first
  const out = browser()
  assert.doesNotMatch((await out.get(`/join/${code}`)).text, /name="_csrf"/, 'signed out: a link, not a form')
  await out.get('/login')
  const toLogin = await out.post(`/join/${code}`)
  assert.equal(toLogin.status, 303)
  assert.equal(toLogin.location, `/login?next=%2Fjoin%2F${code}`)
  assert.equal((await browser().get('/join/no-such-code')).status, 404)
})

test('/channel/<code>: a channel preview and Subscribe', async () => {
  const owner = await server.registerUser()
  const channel = await owner.api.post(`${V2}/channels/create`, { title: 'Daily news', description: 'One post a day' })
  assert.equal(channel.status, 200, channel.text)
  const channelId = channel.body.data.channel_id ?? channel.body.data.chat_id
  const invite = await owner.api.post(`${V2}/channels/invite-link/create`, { channel_id: channelId })
  assert.equal(invite.status, 200, invite.text)
  const code: string = invite.body.data.code
  const { web } = await signedIn()
  const page = await web.get(`/channel/${code}`)
  assert.equal(page.status, 200)
  assert.match(page.text, /<h1>Daily news<\/h1>/)
  assert.match(page.text, /Subscribe/)
  assert.match(page.text, /data-testid="member-count">1</)
  const done = await web.post(`/channel/${code}`)
  assert.equal(done.status, 303, done.text)
  assert.equal(done.location, `/app/chat/${channelId}`)
  assert.match((await browser().get(`/channel/${code}`)).text, /data-testid="member-count">2</)
})

test('POST /logout (from the sign-out page, with its CSRF token) ends the web session, marks the user offline and clears the cookie', async () => {
  const { user, web } = await signedIn()
  const cookie = `tern_session=${web.cookies.get('tern_session')}`
  const ws = await new Promise<WebSocket>((resolve, reject) => {
    const socket = new WebSocket(`${server.url.replace(/^http/, 'ws')}/api.v2/api/ws`, { headers: { cookie, origin: server.url } })
    socket.once('message', () => resolve(socket))
    socket.once('error', reject)
  })
  const online = async () =>
    (await user.api.get(`${V2}/users/${user.id}`)).body?.data?.is_online ?? (await user.api.get(`${V2}/auth/me`)).body.data.is_online
  for (let i = 0; i < 50 && !(await online()); i++) await new Promise((r) => setTimeout(r, 50))
  assert.equal(await online(), true, 'online while the socket is open')
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)))
  // a GET (a link, a cross-site navigation) only shows the page with the button
  const signOutPage = await web.get('/logout')
  assert.equal(signOutPage.status, 200)
  assert.match(signOutPage.text, /<form method="post" action="\/logout">/)
  assert.equal(web.cookies.has('tern_session'), true, 'a GET signs nobody out')
  assert.equal((await session(web)).status, 200, 'still signed in after the GET')
  // a cross-site post, and a post without the token or with a wrong one, are refused
  assert.equal((await web.post('/logout', {}, { headers: { 'sec-fetch-site': 'cross-site' } })).status, 403)
  assert.equal((await web.post('/logout', {}, { csrf: 'none' })).status, 403)
  assert.equal((await web.post('/logout', {}, { csrf: 'x'.repeat(43) })).status, 403)
  assert.equal((await session(web)).status, 200, 'still signed in after the refused posts')
  const res = await web.post('/logout')
  assert.equal(res.status, 303)
  assert.equal(res.location, '/')
  assert.equal(web.cookies.has('tern_session'), false)
  await closed
  assert.equal((await session(web)).status, 401)
  const me = await user.api.get(`${V2}/auth/me`)
  assert.equal(me.body.data.is_online, false)
  assert.ok(me.body.data.last_seen)
})

test('an expired or unknown cookie: pages go to /login, the API answers 401; signed in, / goes to the app', async () => {
  const { web } = await signedIn()
  const landing = await web.get('/')
  assert.equal(landing.status, 303)
  assert.equal(landing.location, '/app')
  assert.equal((await web.get('/login')).location, '/app', 'signed in: the login page leads on')

  const anonymous = await browser().get('/')
  assert.equal(anonymous.status, 200)
  assert.match(anonymous.text, /href="\/login"/)
  assert.match(anonymous.text, /href="\/register"/)

  clock.advance(31 * 86_400_000)
  const expired = await web.get('/')
  assert.equal(expired.status, 303)
  assert.equal(expired.location, '/login')
  assert.equal(web.cookies.has('tern_session'), false, 'the dead cookie is cleared')
  const unknown = browser()
  unknown.cookies.set('tern_session', 'k'.repeat(43))
  assert.equal((await unknown.get('/')).location, '/login')
  const join = await unknown.post('/join/whatever', {}, { csrf: 'none' })
  assert.equal(join.status, 403, 'the CSRF check still comes first')
  const apiRes = await server.api.get(`${V2}/auth/me`, { headers: { cookie: `tern_session=${'k'.repeat(43)}` } })
  assert.equal(apiRes.status, 401)
  assert.equal(apiRes.body.error.code, 'unauthorized')
})

test('/webapp/static: the bot web-app placeholder, naming the bot', async () => {
  const owner = await server.registerUser()
  const botName = `${uniqueName('w').replace(/_/g, '').slice(0, 20)}_bot`
  const bot = await owner.api.post('/api/bots/register', { name: 'Pizza Shop', username: botName })
  assert.equal(bot.status, 200, bot.text)
  const plain = await browser().get('/webapp/static')
  assert.equal(plain.status, 200)
  assert.match(plain.text, /A bot web app is a small web page/)
  const named = await browser().get(`/webapp/static?bot=${botName}`)
  assert.match(named.text, /<strong>Pizza Shop<\/strong>/)
  const unknown = await browser().get('/webapp/static?bot=nobody_here_bot')
  assert.match(unknown.text, /There is no bot named @nobody_here_bot/)
  const notBot = await browser().get(`/webapp/static?bot=${owner.username}`)
  assert.match(notBot.text, /There is no bot named/)
})
