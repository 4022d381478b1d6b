import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import test from 'node:test'
import { generateKeyPair } from 'jose'
import * as OTPAuth from 'otpauth'
import { captureLog } from '../harness/log-capture.js'
import { REDIRECT_URI, startOidcProvider } from '../harness/oidc.js'
import { startTestServer, uniqueName, type TestUser } from '../harness/server.js'
import { startSmtpServer } from '../harness/smtp.js'

const V2 = '/api.v2/api'
const idp = await startOidcProvider()
const smtp = await startSmtpServer()
const log = captureLog('trace')
const server = await startTestServer({
  log: log.logger,
  env: {
    SMTP_URL: smtp.url,
    OAUTH_PROVIDERS: JSON.stringify([
      { id: 'acme', issuer: idp.issuer, client_id: idp.clients.tern.id, client_secret: idp.clients.tern.secret },
      // nothing listens there: the provider cannot be reached
      { id: 'down', issuer: 'http://127.0.0.1:9', client_id: 'tern', client_secret: 'unused-secret' },
    ]),
  },
})

/** every credential this file saw in clear: none may be in the database or the log */
const seen = {
  codes: new Set<string>(),
  idTokens: new Set<string>(),
  tokens: new Set<string>(),
  secrets: new Set<string>([idp.clients.tern.secret]),
}

const oauth = (body: Record<string, unknown>, provider = 'acme', prefix = V2) => server.api.post(`${prefix}/auth/oauth/${provider}`, body)

let accounts = 0
function account(fields: { email?: string; email_verified?: boolean; preferred_username?: string; name?: string } = {}) {
  const sub = `sub-${++accounts}-${randomBytes(4).toString('hex')}`
  idp.addAccount({ sub, ...fields })
  return sub
}

async function code(sub: string, options: { nonce?: string; codeChallenge?: string; clientId?: string } = {}) {
  const value = await idp.code({ account: sub, ...options })
  seen.codes.add(value)
  return value
}

/** an id_token the provider itself issued to the client (through its code flow) */
async function providerIdToken(sub: string, options: { nonce?: string; clientId?: string } = {}) {
  const { id_token } = await idp.exchange(await code(sub, options), { clientId: options.clientId })
  seen.idTokens.add(id_token)
  return id_token
}

async function sessionTotal() {
  const row = await server.ctx.db
    .selectFrom('user_sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

function assertRefused(res: { status: number; body: any; text: string }, status: number, errorCode: string) {
  assert.equal(res.status, status, res.text)
  assert.equal(res.body.success, false)
  assert.equal(res.body.error.code, errorCode)
  assert.ok(!res.text.includes('session_token') && !res.text.includes('ticket'), 'no session in the answer')
}

function signedIn(res: { status: number; body: any; text: string }) {
  assert.equal(res.status, 200, res.text)
  const token = res.body.data.session_token
  assert.equal(typeof token, 'string')
  seen.tokens.add(token)
  return { token, user: res.body.data.user }
}

/** a Tern account whose email is confirmed through its mailed link */
async function confirmedMember(): Promise<TestUser & { email: string }> {
  const name = uniqueName('oc')
  const user = await server.registerUser({ username: name, email: `${name}@example.test` })
  seen.tokens.add(user.token)
  const mail = await smtp.next(user.email!)
  const token = /verify-email\?token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]
  assert.equal((await server.api.post(`${V2}/auth/verify-email`, { token })).status, 200)
  return { ...user, email: user.email! }
}

const claimsFor = (sub: string, extra: Record<string, unknown> = {}) => {
  const now = Math.floor(Date.now() / 1000)
  return { iss: idp.issuer, aud: idp.clients.tern.id, sub, iat: now, exp: now + 300, ...extra }
}

test('a code from the provider signs a new identity in: a new account named from its claims, email verified, method oauth:acme', async () => {
  const sub = account({ email: 'ana.lopez@idp.test', email_verified: true, preferred_username: 'Ana.López' })
  const before = await sessionTotal()
  const res = await oauth({ code: await code(sub), redirect_uri: REDIRECT_URI, device: 'Browser' })
  const { token, user } = signedIn(res)
  assert.deepEqual(Object.keys(res.body.data).sort(), ['session_token', 'user'])
  assert.equal(user.username, 'Ana_Lopez')
  assert.equal(user.email, 'ana.lopez@idp.test')
  assert.equal(await sessionTotal(), before + 1)
  const me = await server.api.as(token).get(`${V2}/auth/me`)
  assert.equal(me.body.data.email_verified, true)
  const sessions = await server.api.as(token).get(`${V2}/sessions`)
  assert.deepEqual(
    sessions.body.items.map((s: any) => s.method),
    ['oauth:acme'],
  )
  const rows = await server.ctx.db.selectFrom('identity_provider_accounts').selectAll().where('subject', '=', sub).execute()
  assert.equal(rows.length, 1)
  assert.equal(rows[0].provider, 'acme')
  assert.equal(rows[0].user_id, user.user_id)
  assert.equal(rows[0].email, 'ana.lopez@idp.test')

  // the same identity again: the same account, no new one
  const again = signedIn(await oauth({ code: await code(sub), redirect_uri: REDIRECT_URI }))
  assert.equal(again.user.user_id, user.user_id)
})

test('a code works once: reused, it is refused with 401 and no session', async () => {
  const sub = account({ email: `${uniqueName('r')}@idp.test`, email_verified: true })
  const once = await code(sub)
  signedIn(await oauth({ code: once, redirect_uri: REDIRECT_URI }))
  const before = await sessionTotal()
  assertRefused(await oauth({ code: once, redirect_uri: REDIRECT_URI }), 401, 'unauthorized')
  assertRefused(await oauth({ code: 'not-a-code-the-provider-issued', redirect_uri: REDIRECT_URI }), 401, 'unauthorized')
  assert.equal(await sessionTotal(), before)
})

test('PKCE and nonce of a code flow are checked; the same flow with the right ones signs in', async () => {
  const sub = account({ preferred_username: 'pkce_user' })
  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  const before = await sessionTotal()
  assertRefused(await oauth({ code: await code(sub, { codeChallenge: challenge }), redirect_uri: REDIRECT_URI }), 401, 'unauthorized')
  assertRefused(
    await oauth({
      code: await code(sub, { codeChallenge: challenge }),
      redirect_uri: REDIRECT_URI,
      code_verifier: randomBytes(32).toString('base64url'),
    }),
    401,
    'unauthorized',
  )
  assertRefused(await oauth({ code: await code(sub, { nonce: 'n-1' }), redirect_uri: REDIRECT_URI, nonce: 'n-2' }), 401, 'unauthorized')
  assertRefused(await oauth({ code: await code(sub), redirect_uri: 'http://127.0.0.1:9/elsewhere' }), 401, 'unauthorized')
  assert.equal(await sessionTotal(), before)
  signedIn(
    await oauth({
      code: await code(sub, { codeChallenge: challenge, nonce: 'n-3' }),
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
      nonce: 'n-3',
    }),
  )
})

test('the id_token a code exchange answers is verified too: re-signed with another key, or issued in the future, it signs nobody in', async () => {
  const sub = account({ email: `${uniqueName('x')}@idp.test`, email_verified: true })
  const otherKey = (await generateKeyPair('RS256')).privateKey
  const before = await sessionTotal()
  // what the token endpoint answers is replaced on its way (a man in the middle, a compromised endpoint)
  idp.rewriteNextIdToken((claims) => idp.sign(claims, { key: otherKey }))
  assertRefused(await oauth({ code: await code(sub), redirect_uri: REDIRECT_URI }), 401, 'unauthorized')
  idp.rewriteNextIdToken((claims) => idp.sign({ ...claims, sub: 'someone-else' }, { key: otherKey }))
  assertRefused(await oauth({ code: await code(sub), redirect_uri: REDIRECT_URI }), 401, 'unauthorized')
  idp.rewriteNextIdToken((claims) =>
    idp.sign({ ...claims, iat: Math.floor(Date.now() / 1000) + 365 * 86400, exp: Math.floor(Date.now() / 1000) + 366 * 86400 }),
  )
  assertRefused(await oauth({ code: await code(sub), redirect_uri: REDIRECT_URI }), 401, 'unauthorized')
  assert.equal(await sessionTotal(), before)
  // positive control: the same rewrite that keeps the provider's key and claims still signs in
  idp.rewriteNextIdToken((claims) => idp.sign(claims))
  signedIn(await oauth({ code: await code(sub), redirect_uri: REDIRECT_URI }))
})

test('an id_token issued by the provider signs in, and its nonce is checked when given', async () => {
  const sub = account({ email: `${uniqueName('i')}@idp.test`, email_verified: true, preferred_username: 'idtoken_user' })
  const idToken = await providerIdToken(sub, { nonce: 'nonce-abc' })
  const before = await sessionTotal()
  assertRefused(await oauth({ id_token: idToken, nonce: 'nonce-other' }), 401, 'unauthorized')
  assert.equal(await sessionTotal(), before)
  const first = signedIn(await oauth({ id_token: idToken, nonce: 'nonce-abc' }))
  assert.equal(first.user.username, 'idtoken_user')
  // without a nonce to compare, the token is accepted (nonce is checked when given)
  const second = signedIn(await oauth({ id_token: await providerIdToken(sub) }))
  assert.equal(second.user.user_id, first.user.user_id)
  const sessions = await server.api.as(second.token).get(`${V2}/sessions`)
  assert.ok(sessions.body.items.every((s: any) => s.method === 'oauth:acme'))
})

test('id_token refusals: wrong audience, expired, wrong issuer, tampered, re-signed, unknown key — 401, no session', async () => {
  const sub = account({ email: `${uniqueName('t')}@idp.test`, email_verified: true })
  const otherKey = (await generateKeyPair('RS256')).privateKey
  const real = await idp.sign(claimsFor(sub))
  const [header, payload, signature] = real.split('.')
  const tamperedPayload = Buffer.from(
    JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'someone-else' }),
  ).toString('base64url')
  const cases: Array<[string, string]> = [
    ['wrong audience (issued by the provider to another client)', await providerIdToken(sub, { clientId: idp.clients.other.id })],
    ['wrong audience (minted)', await idp.sign(claimsFor(sub, { aud: 'not-tern' }))],
    ['two audiences, azp another client', await idp.sign(claimsFor(sub, { aud: [idp.clients.tern.id, 'x'], azp: 'x' }))],
    ['expired', await idp.sign(claimsFor(sub, { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }))],
    ['no exp', await idp.sign({ iss: idp.issuer, aud: idp.clients.tern.id, sub, iat: Math.floor(Date.now() / 1000) })],
    [
      'issued a year from now',
      await idp.sign(
        claimsFor(sub, { iat: Math.floor(Date.now() / 1000) + 365 * 86400, exp: Math.floor(Date.now() / 1000) + 366 * 86400 }),
      ),
    ],
    ['issued ten minutes from now', await idp.sign(claimsFor(sub, { iat: Math.floor(Date.now() / 1000) + 600 }))],
    [
      'issued two hours ago, still unexpired',
      await idp.sign(claimsFor(sub, { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) + 3600 })),
    ],
    ['no iat', await idp.sign({ iss: idp.issuer, aud: idp.clients.tern.id, sub, exp: Math.floor(Date.now() / 1000) + 300 })],
    ['wrong issuer', await idp.sign(claimsFor(sub, { iss: 'https://evil.example' }))],
    ['tampered payload', `${header}.${tamperedPayload}.${signature}`],
    ['tampered signature', `${header}.${payload}.${signature.slice(0, -4)}AAAA`],
    ['re-signed with another key, same kid', await idp.sign(claimsFor(sub), { key: otherKey })],
    ['signed with an unknown kid', await idp.sign(claimsFor(sub), { key: otherKey, kid: 'unknown-kid' })],
    ['alg none', `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`],
    ['not a JWT', 'abc'],
  ]
  const before = await sessionTotal()
  for (const [why, idToken] of cases) {
    // a three-letter stand-in would match any text by chance: only real tokens are looked for
    if (idToken.length >= 20) seen.idTokens.add(idToken)
    const res = await oauth({ id_token: idToken })
    assert.equal(res.status, 401, `${why}: ${res.text}`)
    assertRefused(res, 401, 'unauthorized')
  }
  assert.equal(await sessionTotal(), before)
  // positive control: the same claims, properly signed, sign in
  const good = await idp.sign(claimsFor(sub))
  seen.idTokens.add(good)
  signedIn(await oauth({ id_token: good }))
})

test('an unknown provider is 404 — names that are properties of plain objects too', async () => {
  const sub = account()
  const idToken = await idp.sign(claimsFor(sub))
  seen.idTokens.add(idToken)
  for (const name of ['nope', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'ACME']) {
    assertRefused(await oauth({ id_token: idToken }, name), 404, 'not_found')
  }
  signedIn(await oauth({ id_token: idToken }, 'acme', '/api'))
})

test('a provider that cannot be reached is 504 upstream_timeout, and no session', async () => {
  const before = await sessionTotal()
  const started = Date.now()
  const token = await idp.sign(claimsFor('sub-down'))
  seen.idTokens.add(token)
  assertRefused(await oauth({ id_token: token }, 'down'), 504, 'upstream_timeout')
  assertRefused(await oauth({ code: 'some-code', redirect_uri: REDIRECT_URI }, 'down'), 504, 'upstream_timeout')
  assert.ok(Date.now() - started < 12_000)
  assert.equal(await sessionTotal(), before)
  // positive control: the configured provider that runs still signs in
  signedIn(await oauth({ id_token: token }))
})

test('an existing account is linked only when both sides have the email verified', async () => {
  // both verified: the identity signs in to the existing account
  const alice = await confirmedMember()
  const linked = signedIn(
    await oauth({ code: await code(account({ email: alice.email.toUpperCase(), email_verified: true })), redirect_uri: REDIRECT_URI }),
  )
  assert.equal(linked.user.user_id, alice.id)

  // the Tern account's email unconfirmed: a separate account, without the email
  const name = uniqueName('uc')
  const bob = await server.registerUser({ username: name, email: `${name}@example.test` })
  seen.tokens.add(bob.token)
  await smtp.next(bob.email!)
  const separate = signedIn(
    await oauth({ code: await code(account({ email: bob.email!, email_verified: true })), redirect_uri: REDIRECT_URI }),
  )
  assert.notEqual(separate.user.user_id, bob.id)
  assert.equal(separate.user.email, null)

  // the provider does not vouch for the email: a separate account, without the email
  const carol = await confirmedMember()
  for (const emailVerified of [false, undefined]) {
    const other = signedIn(
      await oauth({
        code: await code(account({ email: carol.email, ...(emailVerified === undefined ? {} : { email_verified: emailVerified }) })),
        redirect_uri: REDIRECT_URI,
      }),
    )
    assert.notEqual(other.user.user_id, carol.id)
    assert.equal(other.user.email, null)
  }
  // the same for a minted id_token that says email_verified "false"
  const minted = await idp.sign(claimsFor(`sub-m-${randomBytes(4).toString('hex')}`, { email: carol.email, email_verified: 'false' }))
  seen.idTokens.add(minted)
  assert.notEqual(signedIn(await oauth({ id_token: minted })).user.user_id, carol.id)
})

test('a taken username gets a suffix; claims without a usable name give user…', async () => {
  const taken = await server.registerUser({ username: 'dora_explorer' })
  seen.tokens.add(taken.token)
  const first = signedIn(await oauth({ code: await code(account({ preferred_username: 'dora_explorer' })), redirect_uri: REDIRECT_URI }))
  assert.equal(first.user.username, 'dora_explorer_2')
  const second = signedIn(await oauth({ code: await code(account({ preferred_username: 'Dora-Explorer' })), redirect_uri: REDIRECT_URI }))
  assert.equal(second.user.username, 'dora_explorer_3'.replace('dora_explorer', 'Dora_Explorer'))
  const nameless = signedIn(await oauth({ code: await code(account({ preferred_username: '!!' })), redirect_uri: REDIRECT_URI }))
  assert.match(nameless.user.username, /^user(_\w+)?$/)
})

test('with two-factor on, the identity passes the first step only: a ticket, and the totp step finishes', async () => {
  const erin = await confirmedMember()
  const secret = (await erin.api.post(`${V2}/auth/2fa/setup`)).body.data.secret
  seen.secrets.add(secret)
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) })
  assert.equal((await erin.api.post(`${V2}/auth/2fa/enable`, { code: totp.generate() })).status, 200)
  const res = await oauth({ code: await code(account({ email: erin.email, email_verified: true })), redirect_uri: REDIRECT_URI })
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body.data.next, 'totp')
  assert.equal(res.body.data.session_token, undefined)
  seen.tokens.add(res.body.data.ticket)
  // the next time step's code (the enable above used this step's)
  const finished = await server.api.post(`${V2}/auth/login/totp`, {
    ticket: res.body.data.ticket,
    code: totp.generate({ timestamp: Date.now() + 30_000 }),
  })
  const { token } = signedIn(finished)
  const sessions = await server.api.as(token).get(`${V2}/sessions`)
  assert.ok(sessions.body.items.some((s: any) => s.is_current && s.method === 'oauth:acme'))
})

test('bad bodies are 400 in the envelope, never a 5xx', async () => {
  const sub = account()
  const cases: Array<Record<string, unknown>> = [
    {},
    { code: 'x' },
    { redirect_uri: REDIRECT_URI },
    { code: 'x', redirect_uri: REDIRECT_URI, id_token: 'y' },
    { code: 'x', redirect_uri: 'not a url' },
    { code: 'x', redirect_uri: 'ftp://127.0.0.1/cb' },
    { code: 'x', redirect_uri: `${REDIRECT_URI}?a=1` },
    { code: 'x', redirect_uri: REDIRECT_URI, code_verifier: 'short' },
    { id_token: 5 },
    { id_token: 'x'.repeat(16385) },
    { id_token: '' },
  ]
  for (const body of cases) assertRefused(await oauth(body), 400, 'validation_error')
  // positive control
  signedIn(await oauth({ code: await code(sub), redirect_uri: REDIRECT_URI }))
})

test('a rotated key (new kid) is fetched from the JWKS when first seen', async () => {
  const sub = account({ preferred_username: 'rotation' })
  signedIn(await oauth({ id_token: await providerIdToken(sub) }))
  const fetches = idp.jwksFetches()
  // a known kid: the cached keys
  signedIn(await oauth({ id_token: await providerIdToken(sub) }))
  assert.equal(idp.jwksFetches(), fetches)
  await idp.rotateKeys()
  // past the JWKS refetch cooldown (5 s)
  await new Promise((resolve) => setTimeout(resolve, 5200))
  signedIn(await oauth({ id_token: await providerIdToken(sub) }))
  assert.ok(idp.jwksFetches() > fetches, 'the JWKS was fetched again for the new kid')
})

test('OAUTH_PROVIDERS is checked at start, without echoing secrets', async () => {
  const { loadConfig, ConfigError } = await import('../../src/config.js')
  const bad = [
    '{not json',
    '[{"id":"Bad Id","issuer":"https://a.example","client_id":"c","client_secret":"s3cr3t-value"}]',
    '[{"id":"a","issuer":"http://a.example","client_id":"c","client_secret":"s3cr3t-value"}]',
    '[{"id":"a","issuer":"https://a.example","client_secret":"s3cr3t-value"}]',
    '[{"id":"a","issuer":"https://a.example","client_id":"c","client_secret":"s3cr3t-value"},{"id":"a","issuer":"https://b.example","client_id":"c","client_secret":"s3cr3t-value"}]',
  ]
  for (const raw of bad) {
    assert.throws(
      () => loadConfig({ OAUTH_PROVIDERS: raw }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError)
        assert.match(error.message, /OAUTH_PROVIDERS/)
        assert.ok(!error.message.includes('s3cr3t-value'), 'the secret is not echoed')
        return true
      },
    )
  }
  // both spellings of a good value
  const list = loadConfig({ OAUTH_PROVIDERS: '[{"id":"g","issuer":"https://accounts.example","client_id":"c","client_secret":"s"}]' })
  const map = loadConfig({ OAUTH_PROVIDERS: '{"g":{"issuer":"https://accounts.example","client_id":"c","client_secret":"s"}}' })
  assert.deepEqual(list.oauthProviders, map.oauthProviders)
  assert.equal(list.oauthProviders[0].id, 'g')
})

test('no code, id_token, client secret or session token is in the database or the log in clear', async () => {
  assert.ok(seen.codes.size > 10 && seen.idTokens.size > 10 && seen.tokens.size > 10)
  const tables = await server.ctx.db.introspection.getTables()
  let dump = ''
  for (const table of tables)
    dump += JSON.stringify(
      await server.ctx.db
        .selectFrom(table.name as any)
        .selectAll()
        .execute(),
    )
  const logText = log.text()
  assert.ok(dump.includes('ana.lopez@idp.test'), 'the identities are in the dump')
  assert.ok(logText.includes('/auth/oauth/acme'), 'the requests are in the log')
  for (const [kind, values] of Object.entries(seen)) {
    for (const value of values) {
      assert.ok(!dump.includes(value), `${kind} ${value.slice(0, 20)}… is in the database`)
      assert.ok(!logText.includes(value), `${kind} ${value.slice(0, 20)}… is in the log`)
    }
  }
})
