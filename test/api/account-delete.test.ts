/**
 * Deleting an account: the owner proves it is them, personal data is erased, every session ends,
 * the profile shows as "Deleted account" everywhere, messages stay in others' chats, and the
 * username comes free after the grace period.
 */
import assert from 'node:assert/strict'
import test from 'node:test'
import * as OTPAuth from 'otpauth'
import { assertError } from '../harness/assert.js'
import { upload } from '../harness/files.js'
import { png } from '../harness/media.js'
import { TestClock } from '../harness/clock.js'
import { history, send } from '../harness/messaging.js'
import { startTestServer, uniqueName, type TestServer, type TestUser } from '../harness/server.js'
import { startSmtpServer } from '../harness/smtp.js'
import { TestSocket } from '../harness/socket.js'
import { waitFor } from '../harness/wait.js'

const V2 = '/api.v2/api'
const clock = new TestClock()
const smtp = await startSmtpServer()
const server = await startTestServer({ clock, env: { SMTP_URL: smtp.url, ACCOUNT_USERNAME_GRACE_DAYS: '30' } })

async function member(s: TestServer = server, display = 'Alice Liddell'): Promise<TestUser & { email: string }> {
  const name = uniqueName('del')
  const user = await s.registerUser({ username: name, email: `${name}@example.test`, display_name: display })
  return { ...user, email: user.email! }
}

const signedIn = async (user: TestUser) => (await user.api.get(`${V2}/auth/me`)).status

async function deleteAccount(user: TestUser, body: Record<string, string> = { password: user.password }) {
  const res = await user.api.post(`${V2}/auth/delete-account`, body)
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body.data, { deleted: true })
}

test('deleting needs the password; then every session ends, sockets close, and signing in fails as for an unknown user', async () => {
  const user = await member()
  const second = await server.api.post(`${V2}/auth/login`, { login: user.username, password: user.password })
  const secondApi = server.api.as(second.body.data.session_token)
  const socket = await TestSocket.connect(server.url, user.token)

  assertError(await user.api.post(`${V2}/auth/delete-account`, { password: 'not the password' }), 403, 'forbidden')
  assertError(await user.api.post(`${V2}/auth/delete-account`, {}), 400, 'validation_error')
  assertError(await server.api.post(`${V2}/auth/delete-account`, { password: user.password }), 401, 'unauthorized')
  assert.equal(await signedIn(user), 200, 'refused deletions change nothing')

  await deleteAccount(user)
  assert.equal((await socket.closing()).code, 4001)
  assert.equal(await signedIn(user), 401)
  assert.equal((await secondApi.get(`${V2}/auth/me`)).status, 401)

  const unknown = await server.api.post(`${V2}/auth/login`, { login: uniqueName('nobody'), password: user.password })
  for (const login of [user.username, user.email]) {
    const res = await server.api.post(`${V2}/auth/login`, { login, password: user.password })
    assertError(res, 401, 'unauthorized', login)
    assert.deepEqual(res.body, unknown.body)
  }
  const lookup = await server.api.post(`${V2}/auth/login_v3`, { step: 'email', email: user.email })
  assert.deepEqual(lookup.body.data, { exists: false, methods: [] })
  // the session's token is refused on every authenticated endpoint, the gateway too
  assert.equal((await user.api.get(`${V2}/chat_list`)).status, 401)
  await assert.rejects(TestSocket.connect(server.url, user.token), /401/)
})

test('personal data is erased; messages stay in others\' chats, from "Deleted account"', async () => {
  const user = await member()
  const friend = await member(server, 'Friend')
  const sent = await send(user, friend, 'hello before I go')
  await friend.api.post(`${V2}/contacts/add`, { user_id: user.id })
  await server.ctx.db
    .updateTable('users')
    .set({ phone: '+79990001122', bio: 'my bio', avatar: 'preloaded/dawn-star' })
    .where('id', '=', user.id)
    .execute()
  await server.ctx.db
    .insertInto('identity_provider_accounts')
    .values({
      provider: 'test',
      subject: uniqueName('sub'),
      user_id: user.id,
      email: user.email,
      created_at: clock.now(),
      last_login_at: clock.now(),
    })
    .execute()
  // positive control: before, the friend sees the name and finds the user
  const before = await friend.api.get(`${V2}/search/global`, { query: { q: user.username } })
  assert.ok(before.body.items.some((item: any) => item.user_id === user.id))
  assert.equal((await friend.api.get(`${V2}/profile/${user.username}`)).status, 200)

  await deleteAccount(user)

  const row = await server.ctx.db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow()
  assert.ok(row.deleted_at !== null)
  for (const field of ['email', 'phone', 'avatar', 'password_hash', 'two_factor_secret', 'birthday'] as const)
    assert.equal(row[field], null, field)
  assert.equal(row.bio, '')
  assert.equal(row.display_name, 'Deleted account')
  assert.notEqual(row.username.toLowerCase(), user.username.toLowerCase())
  const identities = await server.ctx.db.selectFrom('identity_provider_accounts').select('id').where('user_id', '=', user.id).execute()
  assert.equal(identities.length, 0)

  const messages = await history(friend, sent.chat_id)
  const kept = messages.find((m) => m.message_id === sent.message_id)
  assert.ok(kept, 'the message stays')
  assert.equal(kept.content, 'hello before I go')
  assert.notEqual(kept.sender_username, user.username)
  assert.equal(kept.sender_avatar_url, null)
  const list = await friend.api.get(`${V2}/chat_list`)
  const item = list.body.items.find((i: any) => i.chat_id === sent.chat_id)
  assert.equal(item.peer.display_name, 'Deleted account')
  assert.equal(item.peer.avatar_url, null)
  assert.notEqual(item.peer.username, user.username)
  const contacts = await friend.api.get(`${V2}/contacts`)
  assert.equal(contacts.status, 200)
  const listed = contacts.body.data.contacts.filter((i: any) => i.user_id === user.id)
  assert.equal(listed.length, 1, 'the contact stays, as a deleted account')
  const contact = JSON.stringify(listed)
  assert.ok(contact.includes('Deleted account'), contact)
  assert.ok(!contact.includes(user.username) && !contact.includes('Alice') && !contact.includes('+7999'), contact)

  const found = await friend.api.get(`${V2}/search/global`, { query: { q: user.username } })
  assert.equal(found.status, 200)
  assert.ok(!found.body.items.some((i: any) => i.user_id === user.id), 'not found by the old username')
  const byName = await friend.api.get(`${V2}/search/global`, { query: { q: 'Deleted account' } })
  assert.ok(!byName.body.items.some((i: any) => i.user_id === user.id), 'nor by the placeholder name')
  assertError(await friend.api.get(`${V2}/profile/${user.username}`), 404, 'not_found')
  assertError(await friend.api.get(`${V2}/profile/${row.username}`), 404, 'not_found')
  // the email address is free again
  const again = await server.registerUser({ username: uniqueName('re'), email: user.email })
  assert.equal(again.email, user.email)
})

test('the username is held back during the grace period, then free to register', async () => {
  const c = new TestClock()
  const s = await startTestServer({ clock: c, env: { ACCOUNT_USERNAME_GRACE_DAYS: '2' } })
  try {
    const user = await member(s)
    await deleteAccount(user)
    assertError(await s.api.post(`${V2}/auth/register`, { username: user.username, password: 'password 1234' }), 409, 'conflict')
    assertError(
      await s.api.post(`${V2}/auth/register`, { username: user.username.toUpperCase(), password: 'password 1234' }),
      409,
      'conflict',
    )
    // positive control: a free name registers
    assert.equal((await s.api.post(`${V2}/auth/register`, { username: uniqueName('free'), password: 'password 1234' })).status, 201)
    c.advance(2 * 86_400_000 + 60_000)
    // the account-cleanup job gives it back (it runs at start, so a restart runs it now)
    const restarted = await s.restart()
    await waitFor(
      async () =>
        (await restarted.api.post(`${V2}/auth/register`, { username: user.username, password: 'password 1234' })).status === 201
          ? true
          : undefined,
      { timeoutMs: 5000, message: 'the username registers again' },
    )
  } finally {
    await s.close()
  }
})

test('without a grace period the username is free at once', async () => {
  const s = await startTestServer({ env: { ACCOUNT_USERNAME_GRACE_DAYS: '0' } })
  try {
    const user = await member(s)
    await deleteAccount(user)
    assert.equal((await s.api.post(`${V2}/auth/register`, { username: user.username, password: 'password 1234' })).status, 201)
  } finally {
    await s.close()
  }
})

test('an account without a password deletes itself with a mailed code, or a TOTP code when two-factor is on', async () => {
  const user = await member()
  await smtp.next(user.email)
  await server.ctx.db.updateTable('users').set({ password_hash: null }).where('id', '=', user.id).execute()
  assertError(await user.api.post(`${V2}/auth/delete-account`, { password: 'anything' }), 400, 'validation_error')
  // a code mailed to set a password does not delete the account
  assert.equal((await user.api.post(`${V2}/auth/password/code`)).status, 200)
  const passwordCode = /\b(\d{6})\b/.exec((await smtp.next(user.email)).subject)![1]
  assertError(await user.api.post(`${V2}/auth/delete-account`, { code: passwordCode }), 403, 'forbidden')
  const sent = await user.api.post(`${V2}/auth/delete-account/code`)
  assert.equal(sent.status, 200, sent.text)
  const mail = await smtp.next(user.email)
  assert.match(mail.text, /delete your Tern account/)
  const code = /\b(\d{6})\b/.exec(mail.subject)![1]
  await deleteAccount(user, { code })

  const totpUser = await member()
  await server.ctx.db.updateTable('users').set({ password_hash: null }).where('id', '=', totpUser.id).execute()
  const setup = await totpUser.api.post(`${V2}/auth/2fa/setup`)
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(setup.body.data.secret), algorithm: 'SHA1', digits: 6, period: 30 })
  assert.equal((await totpUser.api.post(`${V2}/auth/2fa/enable`, { code: totp.generate({ timestamp: clock.now() }) })).status, 200)
  clock.advance(30_000)
  assertError(await totpUser.api.post(`${V2}/auth/delete-account/code`), 409, 'conflict')
  assertError(
    await totpUser.api.post(`${V2}/auth/delete-account`, {
      code: '000000' === totp.generate({ timestamp: clock.now() }) ? '111111' : '000000',
    }),
    403,
    'forbidden',
  )
  await deleteAccount(totpUser, { code: totp.generate({ timestamp: clock.now() }) })
  const recovery = await server.ctx.db.selectFrom('two_factor_recovery_codes').select('id').where('user_id', '=', totpUser.id).execute()
  assert.equal(recovery.length, 0)
})

test('the last administrator cannot delete the account', async () => {
  const s = await startTestServer()
  try {
    const admin = await s.createAdmin()
    assertError(await admin.api.post(`${V2}/auth/delete-account`, { password: admin.password }), 409, 'conflict')
    assert.equal((await admin.api.get(`${V2}/auth/me`)).status, 200)
    // positive control: with a second administrator it can
    await s.createAdmin()
    assert.equal((await admin.api.post(`${V2}/auth/delete-account`, { password: admin.password })).status, 200)
  } finally {
    await s.close()
  }
})

test('the legacy mount deletes too', async () => {
  const user = await member()
  const res = await user.api.post('/api/auth/delete-account', { password: user.password })
  assert.equal(res.status, 200, res.text)
  assert.equal(await signedIn(user), 401)
})

test("the account's live stories go with it (a friend's feed no longer has them)", async () => {
  const user = await member()
  const friend = await member(server, 'Story Friend')
  await user.api.post(`${V2}/contacts/add`, { user_id: friend.id })
  const media = await upload(server, user, await png(32, 32, 7), 'story.png')
  const posted = await user.api.post(`${V2}/stories/create`, { media_path: media.path, caption: 'before I go' })
  assert.equal(posted.status, 200, posted.text)
  const storyId = posted.body.data.story_id
  // positive control: the friend sees it before
  assert.equal((await friend.api.get(`${V2}/stories/${storyId}`)).status, 200)
  await deleteAccount(user)
  assertError(await friend.api.get(`${V2}/stories/${storyId}`), 404, 'not_found')
  const feed = await friend.api.get(`${V2}/stories/feed`)
  assert.ok(!JSON.stringify(feed.body).includes('before I go'))
})

test('a session of an account marked deleted is refused everywhere, even one that was never revoked', async () => {
  const user = await member()
  const control = await member()
  assert.equal(await signedIn(user), 200)
  // deleted_at alone (as an older deletion, or a row edited by hand, would leave it): the session row stays active
  await server.ctx.db.updateTable('users').set({ deleted_at: clock.now() }).where('id', '=', user.id).execute()
  const session = await server.ctx.db
    .selectFrom('user_sessions')
    .select('is_active')
    .where('user_id', '=', user.id)
    .executeTakeFirstOrThrow()
  assert.equal(session.is_active, 1)
  // the auth cache (SQLite) may hold the row for a moment: poll until the refusal shows
  await waitFor(async () => ((await signedIn(user)) === 401 ? true : undefined), { timeoutMs: 3000, message: 'the session is refused' })
  assertError(await user.api.get(`${V2}/chat_list`), 401, 'unauthorized')
  assertError(
    await user.api.post(`${V2}/messages/send`, { receiver_id: control.id, content: 'from a deleted account' }),
    401,
    'unauthorized',
  )
  await assert.rejects(TestSocket.connect(server.url, user.token), /401/)
  assertError(await server.api.post(`${V2}/auth/login`, { login: user.username, password: user.password }), 401, 'unauthorized')
  // positive control: another account's session works
  assert.equal(await signedIn(control), 200)
  assert.equal((await control.api.get(`${V2}/chat_list`)).status, 200)
})

test("a deleted account's bots stop: their tokens no longer work; another owner's bot goes on", async () => {
  const owner = await member()
  const other = await member()
  const mine = await owner.api.post('/api/bots/register', { name: 'Helper', username: `${uniqueName('h').slice(0, 24)}_bot` })
  const theirs = await other.api.post('/api/bots/register', { name: 'Other', username: `${uniqueName('o').slice(0, 24)}_bot` })
  assert.equal(mine.status, 200, mine.text)
  assert.equal(theirs.status, 200, theirs.text)
  const getMe = (token: string) => fetch(`${server.url}/bot${token}/getMe`).then((res) => res.status)
  assert.equal(await getMe(mine.body.data.token), 200, 'works before')
  await deleteAccount(owner)
  assert.equal(await getMe(mine.body.data.token), 401, "the deleted owner's bot is stopped")
  assert.equal(await getMe(theirs.body.data.token), 200, "positive control: another owner's bot")
})

test("a deleted account's groups pass to their longest-standing admin (else member), a group it was alone in ends; a group it only belongs to keeps it", async () => {
  const owner = await member()
  const [admin, plain] = [await member(), await member()]
  const group = async (by: TestUser, title: string, others: TestUser[]) => {
    const created = await by.api.post(`${V2}/groups/create`, { title })
    assert.equal(created.status, 200, created.text)
    const chatId: number = created.body.data.group_id ?? created.body.data.chat_id
    for (const user of others)
      assert.equal((await by.api.post(`${V2}/groups/add-member`, { chat_id: chatId, user_id: user.id })).status, 200)
    return chatId
  }
  const withAdmin = await group(owner, 'Has an admin', [plain, admin])
  assert.equal((await owner.api.post(`${V2}/groups/promote`, { chat_id: withAdmin, user_id: admin.id })).status, 200)
  const membersOnly = await group(owner, 'Members only', [plain])
  const alone = await group(owner, 'Just me', [])
  const notMine = await group(plain, "Someone else's", [owner])
  await deleteAccount(owner)
  const info = async (user: TestUser, chatId: number) =>
    (await user.api.get(`${V2}/groups/info`, { query: { chat_id: String(chatId) } })).body.data
  assert.equal((await info(admin, withAdmin)).owner_id, admin.id, 'the admin inherits')
  assert.equal((await info(plain, membersOnly)).owner_id, plain.id, 'else the longest-standing member')
  const rows = await server.ctx.db.selectFrom('chats').select('id').where('id', '=', alone).execute()
  assert.equal(rows.length, 0, 'a group of one ends with it')
  // positive control: a group it did not own is unchanged (its owner stays)
  assert.equal((await info(plain, notMine)).owner_id, plain.id)
})
