/** The music library, black-box: own uploads and audio from messages I can read; nobody else's; refusals; kept by the file collector. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { upload } from '../harness/files.js'
import { mp3, png } from '../harness/media.js'
import { registerUsers, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'

const server = await startTestServer()
const users = (n: number) => registerUsers(server, n)
const library = async (user: TestUser, query: Record<string, number> = {}) => {
  const res = await user.api.get(`${V2}/music`, { query })
  assert.equal(res.status, 200, res.text)
  return res.body
}

test('add my own upload, or the audio of a message I can read; list newest first; remove', async () => {
  const [alice, bob] = await users(2)
  const song = await upload(server, alice, mp3('library song'), 'song.mp3')
  const added = await alice.api.post(`${V2}/music/add`, { file_url: song.url, artist: '  Nina ', title: 'Feeling Good', duration: 173 })
  assert.equal(added.status, 200, added.text)
  const track = added.body.data
  assert.deepEqual(
    [track.user_id, track.file_url, track.file_name, track.artist, track.title, track.duration, track.source_message_id],
    [alice.id, song.url, 'song.mp3', 'Nina', 'Feeling Good', 173, null],
  )
  assert.equal(typeof track.added_at, 'string')

  // bob saves the audio alice sent him, by the message's file_url (or its bare path)
  const sent = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'listen', file_path: song.path })
  assert.equal(sent.status, 200, sent.text)
  const saved = await bob.api.post(`${V2}/music/add`, {
    file_url: sent.body.data.file_url,
    artist: 'Nina',
    title: 'Feeling Good',
    source_message_id: sent.body.data.message_id,
  })
  assert.equal(saved.status, 200, saved.text)
  assert.equal(saved.body.data.source_message_id, sent.body.data.message_id)

  const other = await upload(server, alice, mp3('library other'), 'other.mp3')
  await alice.api.post(`${V2}/music/add`, { file_url: other.path, artist: 'A', title: 'B', file_name: 'Renamed.mp3' })
  const list = await library(alice)
  assert.deepEqual(
    list.items.map((t: any) => t.title),
    ['B', 'Feeling Good'],
  )
  assert.equal(list.items[0].file_name, 'Renamed.mp3')
  assert.deepEqual([list.total, list.page], [2, 1])
  assert.deepEqual(
    (await library(bob)).items.map((t: any) => t.user_id),
    [bob.id],
    "bob's library is his",
  )

  assertError(await bob.api.delete(`${V2}/music/remove`, { query: { id: track.id } }), 404, 'not_found', "someone else's track")
  const removed = await alice.api.delete(`${V2}/music/remove`, { query: { id: track.id } })
  assert.deepEqual(removed.body.data, { id: track.id, removed: true })
  assert.deepEqual(
    (await library(alice)).items.map((t: any) => t.title),
    ['B'],
  )
})

test('music refusals: not audio, not mine, a message I cannot read, a file not in the message, twice; nothing stored', async () => {
  const [alice, bob, carol] = await users(3)
  const picture = await upload(server, alice, await png(32, 32, 77), 'pic.png')
  const bobsSong = await upload(server, bob, mp3('bobs song'), 'bob.mp3')
  const mine = await upload(server, alice, mp3('alices song'), 'alice.mp3')
  const hidden = await bob.api.post(`${V2}/messages/send`, { receiver_id: carol.id, content: 'for carol', file_path: bobsSong.path })
  const add = (body: Record<string, unknown>) => alice.api.post(`${V2}/music/add`, { artist: 'A', title: 'T', ...body })

  assertError(await add({ file_url: picture.url }), 400, 'validation_error', 'an image')
  assertError(await add({ file_url: bobsSong.url }), 400, 'invalid_file', "bob's upload, no message")
  assertError(await add({ file_url: '/uploads/never.mp3' }), 400, 'invalid_file', 'never uploaded')
  assertError(
    await add({ file_url: bobsSong.url, source_message_id: hidden.body.data.message_id }),
    404,
    'not_found',
    'a message between others',
  )
  const toAlice = await bob.api.post(`${V2}/messages/send`, { receiver_id: alice.id, content: 'hi' })
  assertError(
    await add({ file_url: bobsSong.url, source_message_id: toAlice.body.data.message_id }),
    400,
    'invalid_file',
    'the message has no such file',
  )
  assertError(await add({ file_url: mine.url, artist: ' ' }), 400, 'validation_error', 'blank artist')
  assertError(await add({ file_url: mine.url, title: '' }), 400, 'validation_error', 'empty title')
  assertError(await add({ file_url: mine.url, duration: -1 }), 400, 'validation_error', 'negative duration')
  assertError(await alice.api.post(`${V2}/music/add`, { file_url: mine.url }), 400, 'validation_error', 'no artist or title')
  assert.deepEqual((await library(alice)).items, [], 'nothing stored')
  assert.equal((await add({ file_url: mine.url })).status, 200, 'a valid add (control)')
  assertError(await add({ file_url: mine.url }), 409, 'conflict', 'twice')
  assertError(await alice.api.delete(`${V2}/music/remove`), 400, 'validation_error', 'no id')
  assert.equal((await server.api.get(`${V2}/music`)).status, 401)
})

test('a track keeps its file when the story that used it is deleted', async () => {
  const [alice] = await users(1)
  const song = await upload(server, alice, mp3('story and library'), 'both.mp3')
  const media = await upload(server, alice, await png(40, 30, 88), 'cover.png')
  const story = await alice.api.post(`${V2}/stories/create`, { media_path: media.path, music_path: song.path })
  assert.equal(story.status, 200, story.text)
  await alice.api.post(`${V2}/music/add`, { file_url: song.url, artist: 'A', title: 'T' })
  assert.equal((await alice.api.delete(`${V2}/stories/${story.body.data.story_id}`)).status, 200)
  assert.equal((await fetch(`${server.url}${song.url}`)).status, 200, 'the library still holds it')
  assert.equal((await fetch(`${server.url}${media.url}`)).status, 404, 'the story’s picture went (control)')
})
