/**
 * Stories, black-box: create (and every refusal, storing nothing), the feed (who follows whom,
 * privacy, blocks, order), get/delete/view/like/reaction, the premium viewer list, the V1 variant,
 * real-time events (live and in the update log) and expiry the moment a story turns 24 hours old.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError, assertNoLeak } from '../harness/assert.js'
import { TestClock } from '../harness/clock.js'
import { upload } from '../harness/files.js'
import { mp3, mp4, png } from '../harness/media.js'
import { ISO, registerUsers, send, updates, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { assertDelivered, assertNone, TestSocket } from '../harness/socket.js'

const clock = new TestClock()
const server = await startTestServer({ clock })
const users = (n: number) => registerUsers(server, n)
let shade = 0

async function image(user: TestUser) {
  return (await upload(server, user, await png(64, 48, ++shade), 'story.png')).path as string
}

async function post(user: TestUser, fields: Record<string, unknown> = {}) {
  const res = await user.api.post(`${V2}/stories/create`, { media_path: fields.media_path ?? (await image(user)), ...fields })
  assert.equal(res.status, 200, res.text)
  return res.body.data
}

async function feed(user: TestUser) {
  const res = await user.api.get(`${V2}/stories/feed`)
  assert.equal(res.status, 200, res.text)
  return res.body.items as any[]
}

const ids = (items: any[]) => items.map((s) => s.story_id)
const addContact = async (owner: TestUser, contact: TestUser) => {
  const res = await owner.api.post(`${V2}/contacts/add`, { user_id: contact.id })
  assert.equal(res.status, 200, res.text)
}
const makePremium = (user: TestUser) =>
  // a user's premium is the premium_expires_at column: set it directly rather than buy a plan
  server.ctx.db
    .updateTable('users')
    .set({ premium_expires_at: clock.now() + 30 * 86_400_000 })
    .where('id', '=', user.id)
    .execute()

// ---------------------------------------------------------------- create

test('create: the Story shape with user_id, expires_at 24 h after created_at, media_type from the file', async () => {
  const [alice] = await users(1)
  const path = await image(alice)
  const story = await post(alice, { media_path: path, caption: 'sunrise' })
  assert.equal(typeof story.story_id, 'number')
  assert.equal(story.user_id, alice.id)
  assert.equal(story.user.user_id, alice.id)
  assert.equal(story.media_path, path)
  assert.equal(story.media_url, `/uploads/${path}`)
  assert.equal(story.media_type, 'image')
  assert.equal(story.caption, 'sunrise')
  assert.equal(story.privacy_type, 'everyone')
  assert.equal(story.music_path, null)
  assert.match(story.created_at, ISO)
  assert.equal(Date.parse(story.expires_at) - Date.parse(story.created_at), 86_400_000)
  assert.deepEqual([story.is_viewed, story.view_count, story.like_count, story.is_liked, story.my_reaction], [true, 0, 0, false, null])

  const video = await upload(server, alice, mp4('create video'), 'clip.mp4')
  const music = await upload(server, alice, mp3('create music'), 'song.mp3')
  const clip = await post(alice, { media_path: video.path, media_type: 'video', music_path: music.path })
  assert.deepEqual([clip.media_type, clip.music_path], ['video', music.path])
  const inferred = await post(alice, { media_path: (await upload(server, alice, mp4('inferred'), 'c.mp4')).path })
  assert.equal(inferred.media_type, 'video', 'media_type defaults to what the file is')
})

test('create refusals: 400 with the envelope, and nothing stored', async () => {
  const [alice, bob] = await users(2)
  const mine = await image(alice)
  const bobs = await image(bob)
  const doc = (await upload(server, alice, Buffer.from('just some plain text for a story'), 'notes.txt')).path
  const video = (await upload(server, alice, mp4('refusal video'), 'v.mp4')).path
  const create = (body: unknown) => alice.api.post(`${V2}/stories/create`, body)

  assertError(await create({}), 400, 'validation_error', 'no media_path')
  assertError(await create({ media_path: 'never/uploaded.png' }), 400, 'invalid_file', 'never uploaded')
  assertError(await create({ media_path: '../../etc/passwd' }), 400, 'invalid_file', 'a path from the client')
  assertError(await create({ media_path: bobs }), 400, 'invalid_file', "another user's file")
  assertError(await create({ media_path: mine, music_path: bobs }), 400, 'invalid_file', "another user's music")
  assertError(await create({ media_path: mine, music_path: mine }), 400, 'validation_error', 'music that is not audio')
  assertError(await create({ media_path: doc }), 400, 'validation_error', 'a document')
  assertError(await create({ media_path: mine, media_type: 'video' }), 400, 'validation_error', 'media_type against the file')
  assertError(await create({ media_path: video, media_type: 'image' }), 400, 'validation_error', 'media_type against the video')
  assertError(await create({ media_path: mine, media_type: 'gif' }), 400, 'validation_error', 'unknown media_type')
  assertError(await create({ media_path: mine, privacy_type: 'friends' }), 400, 'validation_error', 'unknown privacy')
  assertError(await create({ media_path: mine, privacy_type: 'selected' }), 400, 'validation_error', 'selected without users')
  assertError(
    await create({ media_path: mine, privacy_type: 'selected', allowed_user_ids: [] }),
    400,
    'validation_error',
    'selected, empty',
  )
  assertError(
    await create({ media_path: mine, privacy_type: 'selected', allowed_user_ids: [bob.id, 987_654_321] }),
    400,
    'validation_error',
    'unknown user',
  )
  assertError(await create({ media_path: mine, privacy_type: 'selected', allowed_user_ids: ['bob'] }), 400, 'validation_error', 'not an id')
  assertError(await create({ media_path: mine, allowed_user_ids: [bob.id] }), 400, 'validation_error', 'users without selected')
  assertError(await create({ media_path: mine, caption: 'x'.repeat(2049) }), 400, 'validation_error', 'caption over the limit')
  assertError(await create({ media_path: 42 }), 400, 'validation_error', 'not a string')
  assert.equal((await server.api.post(`${V2}/stories/create`, { media_path: mine })).status, 401)
  assert.deepEqual(await feed(alice), [], 'nothing was stored')

  // positive control: the same file with the limits respected is accepted
  const ok = await post(alice, { media_path: mine, caption: 'x'.repeat(2048), privacy_type: 'selected', allowed_user_ids: [bob.id] })
  assert.deepEqual(ids(await feed(alice)), [ok.story_id])
})

// ---------------------------------------------------------------- feed

test('feed: mine first, then the people I follow (contacts and chat peers), not strangers', async () => {
  const [me, contact, peer, stranger] = await users(4)
  await addContact(me, contact)
  await send(peer, me, 'hi')
  const own = await post(me)
  const fromContact = await post(contact)
  const fromPeer = await post(peer)
  const fromStranger = await post(stranger)

  const items = await feed(me)
  assert.equal(items[0].story_id, own.story_id, 'own first')
  assert.deepEqual(new Set(ids(items)), new Set([own.story_id, fromContact.story_id, fromPeer.story_id]))
  const item = items.find((s) => s.story_id === fromContact.story_id)
  assert.equal(item.user.user_id, contact.id)
  assert.equal(item.user.username, contact.username)
  assert.equal(item.view_count, null, "view_count is the owner's only")
  assert.equal(item.is_viewed, false)
  assert.equal(items[0].view_count, 0, 'the owner sees the count')

  // the stranger's story appears once I follow them (positive control for its absence)
  await addContact(me, stranger)
  assert.ok(ids(await feed(me)).includes(fromStranger.story_id))
  // and is gone from a feed where nobody follows anybody
  const [loner] = await users(1)
  assert.deepEqual(await feed(loner), [])
})

test('feed order: grouped by author, authors with unseen stories first, each author oldest first', async () => {
  const [me, a, b] = await users(3)
  await addContact(me, a)
  await addContact(me, b)
  const a1 = await post(a)
  const a2 = await post(a)
  const b1 = await post(b)
  // b posted last: b first
  assert.deepEqual(ids(await feed(me)), [b1.story_id, a1.story_id, a2.story_id])
  // once I saw all of b's, a (unseen) comes first
  assert.equal((await me.api.post(`${V2}/stories/${b1.story_id}/view`)).status, 200)
  const after = await feed(me)
  assert.deepEqual(ids(after), [a1.story_id, a2.story_id, b1.story_id])
  assert.deepEqual(
    after.map((s) => s.is_viewed),
    [false, false, true],
  )
})

test('privacy: contacts means the author has me as a contact; selected means I am listed', async () => {
  const [author, friend, follower, chosen] = await users(4)
  for (const user of [friend, follower, chosen]) await addContact(user, author)
  await addContact(author, friend)
  const forContacts = await post(author, { privacy_type: 'contacts' })
  const forChosen = await post(author, { privacy_type: 'selected', allowed_user_ids: [chosen.id] })
  const forAll = await post(author)

  assert.deepEqual(new Set(ids(await feed(friend))), new Set([forContacts.story_id, forAll.story_id]))
  assert.deepEqual(ids(await feed(follower)), [forAll.story_id], 'a follower the author has not added sees only the public one')
  assert.deepEqual(new Set(ids(await feed(chosen))), new Set([forChosen.story_id, forAll.story_id]))

  // get, like and react answer 404 to whom privacy leaves out, the same answer as a missing story
  const hidden = await follower.api.get(`${V2}/stories/${forContacts.story_id}`)
  const missing = await follower.api.get(`${V2}/stories/987654321`)
  assertError(hidden, 404, 'not_found')
  assertError(missing, 404, 'not_found')
  assert.deepEqual(hidden.body, missing.body, 'no difference between hidden and missing')
  assertError(await follower.api.post(`${V2}/stories/${forChosen.story_id}/like`), 404, 'not_found')
  assertError(await follower.api.post(`${V2}/stories/${forChosen.story_id}/reaction`, { reaction: '🔥' }), 404, 'not_found')
  // view is refused as GET refuses: exactly the answer for an id that does not exist
  const hiddenView = await follower.api.post(`${V2}/stories/${forChosen.story_id}/view`)
  assertError(hiddenView, 404, 'not_found')
  assert.deepEqual(
    hiddenView.body,
    (await follower.api.post(`${V2}/stories/987654321/view`)).body,
    'no difference between hidden and missing',
  )
  // positive controls: the allowed ones get it
  assert.equal((await friend.api.get(`${V2}/stories/${forContacts.story_id}`)).status, 200)
  assert.equal((await chosen.api.post(`${V2}/stories/${forChosen.story_id}/view`)).status, 200)
  // an everyone story is visible to anyone who has its id
  const [stranger] = await users(1)
  assert.equal((await stranger.api.get(`${V2}/stories/${forAll.story_id}`)).status, 200)
})

test('blocks hide stories both ways: feed, get and view', async () => {
  const [author, blocker, blocked] = await users(3)
  await addContact(blocker, author)
  await addContact(blocked, author)
  const story = await post(author)
  assert.deepEqual(ids(await feed(blocker)), [story.story_id], 'visible before the block')
  assert.deepEqual(ids(await feed(blocked)), [story.story_id], 'visible before the block')

  assert.equal((await blocker.api.post(`${V2}/block`, { user_id: author.id })).status, 200)
  assert.equal((await author.api.post(`${V2}/block`, { user_id: blocked.id })).status, 200)
  for (const user of [blocker, blocked]) {
    assert.deepEqual(await feed(user), [])
    assertError(await user.api.get(`${V2}/stories/${story.story_id}`), 404, 'not_found')
    assertError(await user.api.post(`${V2}/stories/${story.story_id}/view`), 404, 'not_found')
  }
  assert.equal((await blocker.api.post(`${V2}/unblock`, { user_id: author.id })).status, 200)
  assert.deepEqual(ids(await feed(blocker)), [story.story_id], 'back after unblocking')
})

// ---------------------------------------------------------------- actions

test('view counts once per viewer, never the author; like/unlike toggle idempotently; reactions are my own', async () => {
  const [author, bob, carol] = await users(3)
  const story = await post(author)
  const at = `${V2}/stories/${story.story_id}`

  const first = await bob.api.post(`${at}/view`)
  assert.equal(first.status, 200, first.text)
  assert.equal(first.body.data.is_viewed, true)
  assert.equal((await bob.api.post(`${at}/view`)).status, 200)
  assert.equal((await author.api.post(`${at}/view`)).status, 200)
  assert.equal((await carol.api.post(`${at}/view`)).status, 200)
  assert.equal((await author.api.get(at)).body.data.view_count, 2, 'bob twice and carol: two; the author is not counted')

  const liked = await bob.api.post(`${at}/like`)
  assert.deepEqual([liked.body.data.like_count, liked.body.data.is_liked], [1, true])
  assert.equal((await bob.api.post(`${at}/like`)).body.data.like_count, 1, 'liking twice counts once')
  assert.equal((await carol.api.get(at)).body.data.is_liked, false, 'is_liked is mine')
  const unliked = await bob.api.post(`${at}/unlike`)
  assert.deepEqual([unliked.body.data.like_count, unliked.body.data.is_liked], [0, false])
  assert.equal((await bob.api.post(`${at}/unlike`)).body.data.like_count, 0, 'unliking twice is harmless')

  assert.equal((await bob.api.post(`${at}/reaction`, { reaction: '🔥' })).body.data.my_reaction, '🔥')
  assert.equal((await carol.api.post(`${at}/reaction`, { reaction: '😂' })).body.data.my_reaction, '😂')
  assert.equal((await bob.api.get(at)).body.data.my_reaction, '🔥', "my_reaction is the caller's, never another's")
  assert.equal((await author.api.get(at)).body.data.my_reaction, null)
  assert.equal((await bob.api.post(`${at}/reaction`, { reaction: '👍' })).body.data.my_reaction, '👍', 'set again: replaced')
  assert.equal((await bob.api.post(`${at}/reaction`, { reaction: null })).body.data.my_reaction, null, 'null clears')
  assert.equal((await carol.api.post(`${at}/reaction`, { reaction: '' })).body.data.my_reaction, null, '"" clears')
  assertError(await bob.api.post(`${at}/reaction`, { reaction: 'nice' }), 400, 'validation_error', 'not an emoji')
  assertError(await bob.api.post(`${at}/reaction`, { reaction: '🔥🔥' }), 400, 'validation_error', 'two emoji')
  assertError(await bob.api.post(`${at}/reaction`, {}), 400, 'validation_error', 'no reaction')
})

test('ids that are not integers are 400; missing stories 404 on every action', async () => {
  const [alice] = await users(1)
  for (const bad of ['abc', '1.5', '-1', '0', '99999999999999999999']) {
    assertError(await alice.api.get(`${V2}/stories/${bad}`), 400, 'validation_error', bad)
    assertError(await alice.api.post(`${V2}/stories/${bad}/like`), 400, 'validation_error', bad)
    assertError(await alice.api.delete(`${V2}/stories/${bad}`), 400, 'validation_error', bad)
  }
  for (const action of ['view', 'like', 'unlike', 'views']) {
    assertError(await alice.api.post(`${V2}/stories/987654321/${action}`), 404, 'not_found', action)
  }
  assertError(await alice.api.delete(`${V2}/stories/987654321`), 404, 'not_found')
})

test('delete: the author only; the story is gone for everyone', async () => {
  const [author, bob] = await users(2)
  await addContact(bob, author)
  const story = await post(author)
  assertError(await bob.api.delete(`${V2}/stories/${story.story_id}`), 403, 'forbidden', 'not the author')
  assert.deepEqual(ids(await feed(bob)), [story.story_id], 'still there after the refusal')
  const res = await author.api.delete(`${V2}/stories/${story.story_id}`)
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body.data, { story_id: story.story_id, deleted: true })
  assert.deepEqual(await feed(bob), [])
  assert.deepEqual(await feed(author), [])
  assertError(await author.api.get(`${V2}/stories/${story.story_id}`), 404, 'not_found')
  assertError(await author.api.delete(`${V2}/stories/${story.story_id}`), 404, 'not_found', 'twice')
})

test('viewer list: the owner only, a premium feature, newest first with reactions, paginated', async () => {
  const [author, v1, v2, v3] = await users(4)
  const story = await post(author)
  const at = `${V2}/stories/${story.story_id}`
  for (const viewer of [v1, v2, v3]) {
    assert.equal((await viewer.api.post(`${at}/view`)).status, 200)
    clock.advance(1000)
  }
  await v2.api.post(`${at}/reaction`, { reaction: '❤️' })

  assertError(await v1.api.post(`${at}/views`), 403, 'forbidden', 'not the owner')
  assertError(await author.api.post(`${at}/views`), 403, 'premium_required', 'without premium')
  await makePremium(author)
  const res = await author.api.post(`${at}/views`)
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(
    res.body.items.map((item: any) => item.user.user_id),
    [v3.id, v2.id, v1.id],
  )
  assert.deepEqual(
    res.body.items.map((item: any) => item.reaction),
    [null, '❤️', null],
  )
  assert.match(res.body.items[0].viewed_at, ISO)
  assert.equal(res.body.total, 3)
  const page2 = await author.api.post(`${at}/views`, undefined, { query: { page: 2, per_page: 2 } })
  assert.deepEqual(
    page2.body.items.map((item: any) => item.user.user_id),
    [v1.id],
  )
  assert.deepEqual([page2.body.page, page2.body.per_page, page2.body.pages], [2, 2, 2])
})

// ---------------------------------------------------------------- V1

test('the V1 variant: views as user objects (the premium owner), likes count, liked, raw my_reaction', async () => {
  const [author, bob] = await users(2)
  await addContact(bob, author)
  const story = await post(author)
  await bob.api.post(`${V2}/stories/${story.story_id}/view`)
  await bob.api.post(`${V2}/stories/${story.story_id}/like`)
  await bob.api.post(`${V2}/stories/${story.story_id}/reaction`, { reaction: '🎉' })

  const seenByBob = await bob.api.get(`/api/stories/${story.story_id}`)
  assert.equal(seenByBob.status, 200, seenByBob.text)
  assert.deepEqual(
    [seenByBob.body.data.likes, seenByBob.body.data.liked, seenByBob.body.data.my_reaction, seenByBob.body.data.views],
    [1, true, '🎉', []],
  )
  const list = await bob.api.get('/api/stories')
  assert.deepEqual(
    list.body.items.map((s: any) => s.story_id),
    [story.story_id],
  )

  assert.deepEqual((await author.api.get(`/api/stories/${story.story_id}`)).body.data.views, [], 'no viewer history without premium')
  await makePremium(author)
  const owner = await author.api.get(`/api/stories/${story.story_id}`)
  assert.deepEqual(
    owner.body.data.views.map((u: any) => u.user_id),
    [bob.id],
  )
  assert.equal(owner.body.data.views[0].username, bob.username)
  assert.equal(owner.body.data.my_reaction, '', 'raw: empty when none')
  assert.equal((await server.api.get('/api/stories')).status, 401)
})

// ---------------------------------------------------------------- real time

test('story.new reaches followers who may see it (live and in the update log), not others; story.deleted likewise', async () => {
  const [author, follower, outsider, excluded] = await users(4)
  await addContact(follower, author)
  await addContact(excluded, author)
  const followerSocket = await TestSocket.connect(server.url, follower.token)
  const outsiderSocket = await TestSocket.connect(server.url, outsider.token)

  const [frame] = await assertDelivered(followerSocket, 'story.new', () => post(author, { caption: 'news' }))
  assert.equal(frame.data.story.caption, 'news')
  assert.equal(frame.data.story.user.user_id, author.id)
  assert.equal(frame.data.story.view_count, null)
  assert.equal(typeof frame.seq, 'number')
  await assertNone(outsiderSocket, 'story.new', 200, 'story.new to someone who does not follow the author')
  const logged = (await updates(follower)).items.filter((u) => u.type === 'story.new')
  assert.deepEqual(
    logged.map((u) => u.data.story.story_id),
    [frame.data.story.story_id],
    'in the update log, so a resume gets it',
  )

  // a selected story goes only to the listed follower
  const excludedSocket = await TestSocket.connect(server.url, excluded.token)
  const [chosen] = await assertDelivered(followerSocket, 'story.new', () =>
    post(author, { privacy_type: 'selected', allowed_user_ids: [follower.id] }),
  )
  await assertNone(excludedSocket, 'story.new', 200, 'story.new to a follower left out')
  const [deleted] = await assertDelivered(followerSocket, 'story.deleted', () =>
    author.api.delete(`${V2}/stories/${chosen.data.story.story_id}`),
  )
  assert.deepEqual(deleted.data, { story_id: chosen.data.story.story_id, user_id: author.id })
  await assertNone(excludedSocket, 'story.deleted', 200)

  // positive controls for the outsider and the excluded follower
  await addContact(outsider, author)
  await assertDelivered([outsiderSocket, excludedSocket], 'story.new', () => post(author))
})

test('story.viewed tells the owner the counts after a view, like and reaction (not who)', async () => {
  const [author, bob] = await users(2)
  const story = await post(author)
  const ownerSocket = await TestSocket.connect(server.url, author.token)
  const at = `${V2}/stories/${story.story_id}`
  const [viewed] = await assertDelivered(ownerSocket, 'story.viewed', () => bob.api.post(`${at}/view`))
  assert.deepEqual(viewed.data, { story_id: story.story_id, view_count: 1, like_count: 0, reaction_count: 0 })
  const [liked] = await assertDelivered(ownerSocket, 'story.viewed', () => bob.api.post(`${at}/like`))
  assert.deepEqual(liked.data, { story_id: story.story_id, view_count: 1, like_count: 1, reaction_count: 0 })
  const [reacted] = await assertDelivered(ownerSocket, 'story.viewed', () => bob.api.post(`${at}/reaction`, { reaction: '😮' }))
  assert.equal(reacted.data.reaction_count, 1)
  // a second view by the same viewer changes nothing and says nothing
  await bob.api.post(`${at}/view`)
  await assertNone(ownerSocket, 'story.viewed', 200, 'story.viewed for a repeated view')
  await assertDelivered(ownerSocket, 'story.viewed', () => bob.api.post(`${at}/unlike`))
})

// ---------------------------------------------------------------- expiry

test('an expired story is gone at once from feed, get and view, before any job runs', async () => {
  const [author, bob] = await users(2)
  await addContact(bob, author)
  const story = await post(author)
  clock.advance(86_400_000 - 5_000)
  assert.deepEqual(ids(await feed(bob)), [story.story_id], 'still there just before its end')
  assert.equal((await bob.api.post(`${V2}/stories/${story.story_id}/view`)).status, 200)
  clock.advance(5_000)
  assert.deepEqual(await feed(bob), [])
  assert.deepEqual(await feed(author), [])
  assertError(await bob.api.get(`${V2}/stories/${story.story_id}`), 404, 'not_found')
  assertError(await bob.api.post(`${V2}/stories/${story.story_id}/view`), 404, 'not_found')
  assertError(await author.api.post(`${V2}/stories/${story.story_id}/views`), 404, 'not_found')
  // the row is still there: only the job removes it
  const row = await server.ctx.db.selectFrom('stories').select('id').where('id', '=', story.story_id).executeTakeFirst()
  assert.ok(row, 'not yet removed')
})

test('has_story in my profile follows my active stories', async () => {
  const [alice, bob] = await users(2)
  const me = async () => (await alice.api.get(`${V2}/auth/me`)).body.data
  assert.equal((await me()).has_story, false)
  await addContact(bob, alice)
  await post(alice)
  const profile = await me()
  assert.deepEqual([profile.has_story, profile.followers_count, profile.following_count], [true, 1, 0])
  clock.advance(86_400_000)
  assert.equal((await me()).has_story, false)
})

test('no error leaks internals', async () => {
  const [alice] = await users(1)
  const res = await alice.api.post(`${V2}/stories/create`, { media_path: 'x'.repeat(300) })
  assertError(res, 400, 'validation_error')
  assertNoLeak(res.text)
})
