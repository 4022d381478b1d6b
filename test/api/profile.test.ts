/**
 * Profiles and privacy, black-box: GET V2/profile/{username}, profile/update with its bounds, the
 * preloaded avatars, and the privacy settings (last seen, phone, avatar) honoured in every Peer —
 * chat list, contacts, search, profile, message senders — and in presence frames.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { upload } from '../harness/files.js'
import { png } from '../harness/media.js'
import { history, ISO, registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { assertDelivered, assertNone, TestSocket, type Frame } from '../harness/socket.js'
import { waitFor } from '../harness/wait.js'

const server = await startTestServer({ env: { PHONE_DEFAULT_REGION: 'RU' } })
const users = (n: number) => registerUsers(server, n)
const connect = (user: TestUser) => TestSocket.connect(server.url, user.token)

async function profileOf(viewer: TestUser, username: string) {
  const res = await viewer.api.get(`${V2}/profile/${encodeURIComponent(username)}`)
  assert.equal(res.status, 200, res.text)
  return res.body.data
}

async function update(user: TestUser, body: Record<string, unknown>) {
  const res = await user.api.post(`${V2}/profile/update`, body)
  assert.equal(res.status, 200, res.text)
  return res.body.data
}

async function privacy(user: TestUser, body: Record<string, unknown>) {
  const res = await user.api.post(`${V2}/privacy/update`, body)
  assert.equal(res.status, 200, res.text)
  return res.body.data
}

/** The peer of my personal chat with `other`, from my chat list. */
async function chatPeer(me: TestUser, otherId: number) {
  const res = await me.api.get(`${V2}/chat_list`)
  assert.equal(res.status, 200, res.text)
  return res.body.items.find((item: any) => item.peer?.user_id === otherId).peer
}

const grantPremium = (user: TestUser) =>
  server.ctx.db
    .updateTable('users')
    .set({ premium_expires_at: Date.now() + 86_400_000 })
    .where('id', '=', user.id)
    .execute()

test('a profile: fuller Peer with bio, link, counts and is_contact; by username in any case; never private fields', async () => {
  const [alice, bob] = await users(2)
  await update(alice, { bio: 'Sailing and tea', link: 'https://example.org/alice', display_name: 'Alice A.' })
  await bob.api.post(`${V2}/contacts/add`, { user_id: alice.id })
  const seen = await profileOf(bob, alice.username.toUpperCase())
  assert.equal(seen.user_id, alice.id)
  assert.equal(seen.display_name, 'Alice A.')
  assert.equal(seen.bio, 'Sailing and tea')
  assert.equal(seen.link, 'https://example.org/alice')
  assert.equal(seen.is_contact, true)
  assert.equal(seen.followers_count, 1, 'bob keeps alice')
  assert.equal(seen.following_count, 0)
  assert.equal(seen.has_story, false)
  assert.match(seen.created_at, ISO)
  for (const hidden of ['email', 'password_hash', 'two_factor_secret', 'is_admin', 'privacy_last_seen'])
    assert.ok(!(hidden in seen), hidden)
  assert.equal((await profileOf(alice, bob.username)).is_contact, false)
  assertError(await bob.api.get(`${V2}/profile/nobody_by_this_name`), 404, 'not_found', 'unknown username')
  assert.equal((await server.api.get(`${V2}/profile/${alice.username}`)).status, 401)
})

test('profile/update bounds: names, bio (longer with premium), emoji, link, admin flags; a refusal writes nothing', async () => {
  const [me] = await users(1)
  const before = await profileOf(me, me.username)
  assertError(await me.api.post(`${V2}/profile/update`, { display_name: '   ' }), 400, 'validation_error', 'blank name')
  assertError(await me.api.post(`${V2}/profile/update`, { display_name: 'x'.repeat(65) }), 400, 'validation_error', 'long name')
  assertError(await me.api.post(`${V2}/profile/update`, { bio: 'b'.repeat(71) }), 403, 'premium_required', 'bio over 70 without premium')
  assertError(await me.api.post(`${V2}/profile/update`, { bio: 'b'.repeat(141) }), 400, 'validation_error', 'bio over 140')
  for (const emoji of ['ab', '🔥🔥', ':)', '1'])
    assertError(await me.api.post(`${V2}/profile/update`, { status_emoji: emoji }), 400, 'validation_error', `emoji ${emoji}`)
  for (const link of ['javascript:alert(1)', 'not a url', 'ftp://example.org'])
    assertError(await me.api.post(`${V2}/profile/update`, { link }), 400, 'validation_error', link)
  assertError(
    await me.api.post(`${V2}/profile/update`, { display_name: 'Fine', link: 'javascript:x' }),
    400,
    'validation_error',
    'one bad field refuses all',
  )
  assert.deepEqual(await profileOf(me, me.username), before, 'nothing written')
  // fields that are not the profile's are dropped (as in every request), never stored
  assert.equal((await update(me, { is_admin: true, is_premium: true, premium_expires_at: '2999-01-01T00:00:00Z' })).is_premium, false)
  const self = (await me.api.get(`${V2}/auth/me`)).body.data
  assert.deepEqual([self.is_admin, self.is_premium], [false, false], 'is_admin and is_premium can never be set')

  assert.equal((await update(me, { bio: 'b'.repeat(70) })).bio.length, 70, 'exactly 70 without premium')
  assertError(await me.api.post(`${V2}/profile/update`, { status_emoji: '🔥' }), 403, 'premium_required', 'a status emoji without premium')
  await grantPremium(me)
  assert.equal((await update(me, { bio: 'c'.repeat(140) })).bio.length, 140, '140 with premium')
  for (const emoji of ['🔥', '🇫🇷', '👍🏽', '👨‍👩‍👧']) assert.equal((await update(me, { status_emoji: emoji })).status_emoji, emoji)
  assert.equal((await update(me, { status_emoji: '' })).status_emoji, '', 'cleared')
  assert.equal((await update(me, { link: 'https://example.org/x' })).link, 'https://example.org/x')
  assert.equal((await update(me, { link: null })).link, null, 'link removed')
  assert.equal((await update(me, { display_name: '  Trimmed  ' })).display_name, 'Trimmed')
  assert.equal((await me.api.get(`${V2}/auth/me`)).body.data.display_name, 'Trimmed', 'the session sees the change')
})

test('avatar: an image I uploaded, or a preloaded one; anything else is refused', async () => {
  const [me, other] = await users(2)
  const mine = await upload(server, me, await png(40, 40, 7), 'me.png')
  const theirs = await upload(server, other, await png(40, 40, 8), 'other.png')
  const text = await upload(server, me, Buffer.from('just some text'), 'notes.txt')
  assertError(await me.api.post(`${V2}/profile/update`, { avatar: theirs.path }), 400, 'invalid_file', "someone else's upload")
  assertError(await me.api.post(`${V2}/profile/update`, { avatar: 'never-uploaded.png' }), 400, 'invalid_file', 'not an upload')
  assertError(await me.api.post(`${V2}/profile/update`, { avatar: '../../etc/passwd' }), 400, 'invalid_file', 'a path')
  assertError(await me.api.post(`${V2}/profile/update`, { avatar: text.path }), 400, 'invalid_file', 'not an image')
  assert.equal((await profileOf(me, me.username)).avatar_url, null, 'nothing written')

  assert.equal((await update(me, { avatar: mine.path })).avatar_url, `/uploads/${mine.path}`)
  const served = await fetch(`${server.url}/uploads/${mine.path}`)
  assert.equal(served.status, 200)

  assert.equal((await server.api.get(`${V2}/avatars/preloaded`)).status, 401)
  const list = await me.api.get(`${V2}/avatars/preloaded`)
  assert.equal(list.status, 200, list.text)
  const items = list.body.data.items
  assert.ok(items.length >= 12, 'a set of avatars')
  assert.equal(new Set(items.map((a: any) => a.id)).size, items.length, 'distinct ids')
  const pick = items[3]
  assert.deepEqual(Object.keys(pick).sort(), ['id', 'title', 'url'])
  const image = await fetch(`${server.url}${pick.url}`)
  assert.equal(image.status, 200)
  assert.equal(image.headers.get('content-type'), 'image/svg+xml')
  assert.match(await image.text(), /^<svg /)
  assert.equal((await fetch(`${server.url}/avatars/preloaded/nope.svg`)).status, 404)
  assert.equal((await fetch(`${server.url}/avatars/preloaded/..%2F..%2Fpackage.json`)).status, 404)

  assertError(
    await me.api.post(`${V2}/profile/update`, { preloaded_avatar: 'no-such-avatar' }),
    400,
    'validation_error',
    'unknown preloaded',
  )
  assertError(await me.api.post(`${V2}/profile/update`, { preloaded_avatar: '__proto__' }), 400, 'validation_error', 'prototype key')
  assertError(await me.api.post(`${V2}/profile/update`, { preloaded_avatar: pick.id, avatar: mine.path }), 400, 'validation_error', 'both')
  assert.equal((await update(me, { preloaded_avatar: pick.id })).avatar_url, pick.url)
  assert.equal((await profileOf(other, me.username)).avatar_url, pick.url, 'others see it')
  assert.equal((await update(me, { avatar: null })).avatar_url, null, 'removed')
})

test('phone: normalised to E.164 (default region for local numbers), one account per number, hidden from non-contacts by default', async () => {
  const [me, friend, stranger, rival] = await users(4)
  for (const phone of ['12345', '+1 000', 'phone', '+7 999 000'])
    assertError(await me.api.post(`${V2}/profile/update`, { phone }), 400, 'validation_error', phone)
  await update(me, { phone: '8 (916) 123-45-67' })
  assert.equal((await me.api.get(`${V2}/auth/me`)).body.data.phone, '+79161234567', 'RU local format read in the default region')
  assertError(
    await rival.api.post(`${V2}/profile/update`, { phone: '+7 916 123 45 67' }),
    409,
    'conflict',
    'the same number, written another way',
  )

  // default privacy for the phone: my contacts (people I added) see it
  await me.api.post(`${V2}/contacts/add`, { user_id: friend.id })
  assert.equal((await profileOf(friend, me.username)).phone, '+79161234567')
  assert.equal((await profileOf(stranger, me.username)).phone, null)
  await privacy(me, { phone: 'nobody' })
  assert.equal((await profileOf(friend, me.username)).phone, null, 'nobody: not even contacts')
  await privacy(me, { phone: 'everyone' })
  assert.equal((await profileOf(stranger, me.username)).phone, '+79161234567', 'everyone')

  assert.equal((await update(me, { phone: '' })).phone, null, 'removed')
  assert.equal((await update(rival, { phone: '+79161234567' })).phone, '+79161234567', 'free again')
})

test('privacy settings: defaults, partial updates, bad values refused', async () => {
  const [me] = await users(1)
  const get = async () => (await me.api.get(`${V2}/privacy`)).body.data
  assert.deepEqual(await get(), { last_seen: 'everyone', phone: 'contacts', avatar: 'everyone' })
  assert.deepEqual(await privacy(me, { avatar: 'contacts' }), { last_seen: 'everyone', phone: 'contacts', avatar: 'contacts' })
  assertError(await me.api.post(`${V2}/privacy/update`, { avatar: 'friends' }), 400, 'validation_error', 'unknown audience')
  assert.deepEqual(
    await privacy(me, { mood: 'nobody' }),
    { last_seen: 'everyone', phone: 'contacts', avatar: 'contacts' },
    'unknown keys are dropped',
  )
  assert.deepEqual(await get(), { last_seen: 'everyone', phone: 'contacts', avatar: 'contacts' }, 'nothing written')
})

test('avatar privacy holds in every Peer: chat list, contacts, search, profile, message senders; I always see mine', async () => {
  const [alice, friend, stranger] = await users(3)
  const photo = await upload(server, alice, await png(30, 30, 11), 'a.png')
  await update(alice, { avatar: photo.path })
  const url = `/uploads/${photo.path}`
  await send(alice, friend, 'hi friend')
  await send(alice, stranger, 'hi stranger')
  await alice.api.post(`${V2}/contacts/add`, { user_id: friend.id })
  await friend.api.post(`${V2}/contacts/add`, { user_id: alice.id })
  await stranger.api.post(`${V2}/contacts/add`, { user_id: alice.id })

  const views = async (viewer: TestUser) => {
    const search = await viewer.api.get(`${V2}/search/global`, { query: { q: alice.username } })
    const contacts = await viewer.api.get(`${V2}/contacts`)
    const chatId = (await viewer.api.get(`${V2}/chat_list`)).body.items.find((i: any) => i.peer?.user_id === alice.id).chat_id
    const messages = await history(viewer, chatId)
    return {
      chat: (await chatPeer(viewer, alice.id)).avatar_url,
      contact: contacts.body.data.contacts.find((c: any) => c.user_id === alice.id).avatar_url,
      search: search.body.items.find((u: any) => u.user_id === alice.id).avatar_url,
      profile: (await profileOf(viewer, alice.username)).avatar_url,
      sender: messages.find((m: any) => m.sender_id === alice.id).sender_avatar_url,
    }
  }
  const all = (value: string | null) => ({ chat: value, contact: value, search: value, profile: value, sender: value })
  assert.deepEqual(await views(stranger), all(url), 'control: everyone sees it by default')

  await privacy(alice, { avatar: 'contacts' })
  assert.deepEqual(await views(stranger), all(null), 'not her contact: hidden everywhere')
  // a message goes out once to all: it carries the avatar only when everyone may see it
  assert.deepEqual(await views(friend), { ...all(url), sender: null }, 'her contact sees it in every Peer')

  await privacy(alice, { avatar: 'nobody' })
  assert.deepEqual(await views(friend), all(null), 'nobody')
  assert.equal((await alice.api.get(`${V2}/auth/me`)).body.data.avatar_url, url, 'I see mine')
  assert.equal((await profileOf(alice, alice.username)).avatar_url, url)
})

test('last seen privacy: hidden peers show offline and never seen, and get no presence frames', async () => {
  const [alice, friend, stranger] = await users(3)
  await send(alice, friend, 'hello')
  await send(alice, stranger, 'hello')
  await alice.api.post(`${V2}/contacts/add`, { user_id: friend.id })
  const friendSocket = await connect(friend)
  const strangerSocket = await connect(stranger)

  // control: with the default (everyone) both peers see alice come online
  const online = await assertDelivered([friendSocket, strangerSocket], 'presence', () => connect(alice).then((s) => s.close()))
  assert.deepEqual(
    online.map((f) => [f.data.user_id, f.data.is_online]),
    [
      [alice.id, true],
      [alice.id, true],
    ],
  )
  await friendSocket.drain('presence', 300)
  await strangerSocket.drain('presence', 300)

  // contacts only: the stranger is told she is hidden now; the friend (her contact) still sees her
  const [hidden] = await assertDelivered(strangerSocket, 'presence', () => privacy(alice, { last_seen: 'contacts' }))
  assert.deepEqual(hidden.data, { user_id: alice.id, is_online: false, last_seen: null })
  await friendSocket.drain('presence', 200)
  let laptop!: TestSocket
  const [seen] = await assertDelivered(friendSocket, 'presence', async () => {
    laptop = await connect(alice)
  })
  assert.deepEqual([seen.data.user_id, seen.data.is_online], [alice.id, true])
  await assertNone(strangerSocket, 'presence', 300, 'alice online, to a non-contact')
  assert.deepEqual([(await chatPeer(stranger, alice.id)).is_online, (await chatPeer(stranger, alice.id)).last_seen], [false, null])
  assert.equal((await chatPeer(friend, alice.id)).is_online, true)

  // adding the stranger as a contact shows her to them at once
  const [shown] = await assertDelivered(strangerSocket, 'presence', () => alice.api.post(`${V2}/contacts/add`, { user_id: stranger.id }))
  assert.deepEqual([shown.data.user_id, shown.data.is_online], [alice.id, true])

  // nobody: every peer is told she is hidden, and her going offline reaches no one
  await assertDelivered([friendSocket, strangerSocket], 'presence', () => privacy(alice, { last_seen: 'nobody' }))
  await laptop.close()
  await assertNone(friendSocket, 'presence', 300, 'offline, last seen hidden from everyone')
  assert.deepEqual([(await chatPeer(friend, alice.id)).is_online, (await chatPeer(friend, alice.id)).last_seen], [false, null])
  const profile = await profileOf(friend, alice.username)
  assert.deepEqual([profile.is_online, profile.last_seen], [false, null])
  // control: back to everyone, the friend is shown where she stands (offline, last seen now)
  const [back] = await assertDelivered(friendSocket, 'presence', () => privacy(alice, { last_seen: 'everyone' }))
  assert.deepEqual([back.data.user_id, back.data.is_online], [alice.id, false])
  assert.match(back.data.last_seen, ISO)
})

test("a socket's presence repair (after pub/sub lost frames) honours each peer's privacy", {
  skip: !server.ctx.redis && 'needs TEST_REDIS_URL (a repair follows a fan-out resync)',
}, async () => {
  const [alice, bob, carol] = await users(3)
  await send(alice, bob, 'hello')
  await send(carol, bob, 'hi')
  const [aliceSocket, carolSocket] = [await connect(alice), await connect(carol)]
  await privacy(alice, { last_seen: 'nobody' })
  const bobSocket = await connect(bob)
  await bobSocket.drain('presence', 200)
  const mark = bobSocket.received.length
  // what an instance that lost fan-out messages asks for: every socket repairs its peers' presence
  await server.ctx.redis!.publish(`${server.ctx.config.redisPrefix}fanout`, JSON.stringify({ origin: 'a-test', resync: true }))
  const about = (frames: Frame[], userId: number) => frames.find((f) => f.type === 'presence' && f.data.user_id === userId)
  const repaired = await waitFor(
    async () => {
      const frames = bobSocket.received.slice(mark)
      return about(frames, alice.id) && about(frames, carol.id) ? frames : undefined
    },
    { timeoutMs: 3000, message: "the repair's presence frames" },
  )
  assert.deepEqual(about(repaired, carol.id)!.data.is_online, true, 'control: carol shows everyone she is online')
  assert.deepEqual(about(repaired, alice.id)!.data, { user_id: alice.id, is_online: false, last_seen: null }, 'alice is hidden')
  assert.equal((await chatPeer(bob, alice.id)).is_online, false)
  await privacy(alice, { last_seen: 'everyone' })
  assert.equal((await chatPeer(bob, alice.id)).is_online, true, 'control: shown again')
  await Promise.all([aliceSocket.close(), carolSocket.close()])
})
