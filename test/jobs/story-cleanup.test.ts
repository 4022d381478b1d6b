/**
 * The story cleanup job on a real server: expired stories go with their views, likes, reactions
 * and selected viewers, and their media files leave the disk unless something still references
 * them; it runs at start (a story that expired while the server was down), by hand
 * (`npm run cli -- stories:cleanup`), and once per period across two instances.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { TestClock } from '../harness/clock.js'
import { rawRequest, sha256, storedFiles, upload } from '../harness/files.js'
import { mp3, png } from '../harness/media.js'
import { registerUsers, V2 } from '../harness/messaging.js'
import { runNode } from '../harness/process.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'
import { sleep, waitFor } from '../harness/wait.js'

const DAY = 86_400_000
let shade = 100

async function post(user: TestUser, fields: Record<string, unknown>) {
  const res = await user.api.post(`${V2}/stories/create`, fields)
  assert.equal(res.status, 200, res.text)
  return res.body.data.story_id as number
}

const served = async (server: TestServer, path: string) => (await rawRequest(server, `/uploads/${path}`)).status
const onDisk = (server: TestServer, bytes: Buffer) => storedFiles(server, 'objects').some((file) => file.endsWith(sha256(bytes)))
const thumbnailOnDisk = (server: TestServer, bytes: Buffer) =>
  storedFiles(server, 'thumbs').some((file) => file.endsWith(`${sha256(bytes)}.webp`))
const storyRows = async (server: TestServer, ids: number[]) =>
  (await server.ctx.db.selectFrom('stories').select('id').where('id', 'in', ids).execute()).map((r) => r.id).sort((a, b) => a - b)
const satellites = async (server: TestServer, storyId: number) => {
  const db = server.ctx.db
  const count = async (table: 'story_views' | 'story_likes' | 'story_reactions' | 'story_allowed_users') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('story_id', '=', storyId)
          .executeTakeFirstOrThrow()
      ).n,
    )
  return [await count('story_views'), await count('story_likes'), await count('story_reactions'), await count('story_allowed_users')]
}

test('the job removes expired stories with their satellites and media, and keeps every file still referenced', async () => {
  const clock = new TestClock()
  const server = await startTestServer({ clock, env: { STORY_CLEANUP_INTERVAL_SECONDS: '1' } })
  const [alice, bob] = await registerUsers(server, 2)
  const bytes = {
    a: await png(800, 600, ++shade),
    b: await png(64, 48, ++shade),
    c: await png(64, 48, ++shade),
    d: await png(64, 48, ++shade),
    music: mp3('cleanup music'),
  }
  const a = await upload(server, alice, bytes.a, 'a.png')
  const b = await upload(server, alice, bytes.b, 'b.png')
  const c = await upload(server, alice, bytes.c, 'c.png')
  const d = await upload(server, alice, bytes.d, 'd.png')
  const dBob = await upload(server, bob, bytes.d, 'same-bytes.png')
  const music = await upload(server, alice, bytes.music, 'song.mp3')

  // 1: media and music only here, with a view, a like, a reaction and a selected viewer
  const only = await post(alice, { media_path: a.path, music_path: music.path, privacy_type: 'selected', allowed_user_ids: [bob.id] })
  await bob.api.post(`${V2}/stories/${only}/view`)
  await bob.api.post(`${V2}/stories/${only}/like`)
  await bob.api.post(`${V2}/stories/${only}/reaction`, { reaction: '🔥' })
  // 2: its file is also in a message
  const inMessage = await post(alice, { media_path: b.path })
  const sent = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'look', file_path: b.path })
  assert.equal(sent.status, 200, sent.text)
  // 3: its file is also the media of a later story that is still active
  const reused = await post(alice, { media_path: c.path })
  // 4: another upload (bob's) holds the same bytes
  const sharedBytes = await post(alice, { media_path: d.path })
  clock.advance(DAY / 2)
  const later = await post(alice, { media_path: c.path })

  assert.deepEqual(await satellites(server, only), [1, 1, 1, 1])
  assert.equal(await served(server, a.path), 200, 'served before the job (control)')
  assert.ok(onDisk(server, bytes.a) && thumbnailOnDisk(server, bytes.a) && onDisk(server, bytes.music))

  clock.advance(DAY / 2)
  const expired = [only, inMessage, reused, sharedBytes]
  await waitFor(async () => ((await storyRows(server, expired)).length === 0 ? true : undefined), {
    timeoutMs: 5000,
    message: 'the job removed the expired stories',
  })
  // their files go right after the rows, in the same run
  await waitFor(
    async () => (!onDisk(server, bytes.a) && !thumbnailOnDisk(server, bytes.a) && !onDisk(server, bytes.music) ? true : undefined),
    {
      timeoutMs: 2000,
      message: 'the media files left the disk',
    },
  )
  // the run may still be on its last steps: give it time to do anything wrong to the kept files
  await sleep(300)
  assert.deepEqual(await storyRows(server, [later]), [later], 'the active story stays')
  assert.deepEqual(await satellites(server, only), [0, 0, 0, 0], 'views, likes, reactions and selected viewers go with it')

  // gone: the upload (no longer served) and its bytes and thumbnail on disk
  assert.equal(await served(server, a.path), 404)
  assert.equal(await served(server, music.path), 404)
  assert.ok(!onDisk(server, bytes.a), 'the media file left the disk')
  assert.ok(!thumbnailOnDisk(server, bytes.a), 'its thumbnail too')
  assert.ok(!onDisk(server, bytes.music), 'the music file too')
  // kept: still referenced by a message, by an active story; bytes another upload holds
  assert.equal(await served(server, b.path), 200, 'a message still carries it')
  assert.ok(onDisk(server, bytes.b))
  assert.equal(await served(server, c.path), 200, 'an active story still shows it')
  assert.equal(await served(server, d.path), 404, "alice's upload went")
  assert.equal(await served(server, dBob.path), 200, "bob's upload of the same bytes stays")
  assert.ok(onDisk(server, bytes.d), 'and so do the bytes')

  // the same content uploaded again after its object went is stored afresh
  const again = await upload(server, alice, bytes.a, 'a-again.png')
  assert.equal(await served(server, again.path), 200)
  assert.ok(onDisk(server, bytes.a))
})

test('deleting a story removes its media unless another record uses the file', async () => {
  const server = await startTestServer()
  const [alice] = await registerUsers(server, 1)
  const own = await png(64, 48, ++shade)
  const shared = await png(64, 48, ++shade)
  const ownFile = await upload(server, alice, own, 'own.png')
  const sharedFile = await upload(server, alice, shared, 'shared.png')
  const first = await post(alice, { media_path: ownFile.path })
  const second = await post(alice, { media_path: sharedFile.path })
  const avatarGroup = await alice.api.post(`${V2}/groups/create`, { title: 'With avatar', avatar: sharedFile.path })
  assert.equal(avatarGroup.status, 200, avatarGroup.text)

  assert.equal((await alice.api.delete(`${V2}/stories/${first}`)).status, 200)
  assert.equal(await served(server, ownFile.path), 404)
  assert.ok(!onDisk(server, own), 'its file left the disk')
  assert.equal((await alice.api.delete(`${V2}/stories/${second}`)).status, 200)
  assert.equal(await served(server, sharedFile.path), 200, 'a group avatar still uses it')
  assert.ok(onDisk(server, shared))
})

test('a story that expired while the server was down is removed at the next start', async () => {
  const clock = new TestClock()
  let server = await startTestServer({ clock })
  const [alice] = await registerUsers(server, 1)
  const bytes = await png(64, 48, ++shade)
  const file = await upload(server, alice, bytes, 'down.png')
  const story = await post(alice, { media_path: file.path })

  server = await server.restart()
  await sleep(300)
  assert.deepEqual(await storyRows(server, [story]), [story], 'an active story survives a restart (control)')

  clock.advance(DAY)
  server = await server.restart()
  await waitFor(async () => ((await storyRows(server, [story])).length === 0 && !onDisk(server, bytes) ? true : undefined), {
    timeoutMs: 5000,
    message: 'removed at start, with its file',
  })
})

test('npm run cli -- stories:cleanup removes expired stories and their files by hand', async () => {
  const server = await startTestServer()
  const [alice] = await registerUsers(server, 1)
  const bytes = await png(64, 48, ++shade)
  const file = await upload(server, alice, bytes, 'cli.png')
  const story = await post(alice, { media_path: file.path })
  const env = { DATA_DIR: server.dataDir, DATABASE_URL: server.database.url }

  const early = await runNode('src/cli/main.ts', ['stories:cleanup'], env)
  assert.equal(early.code, 0, early.stderr)
  assert.match(early.stdout, /removed 0 expired stories/, 'nothing has expired yet (control)')
  // the story's day is over (moved in the database: the CLI is another process, with the real clock)
  await server.ctx.db
    .updateTable('stories')
    .set({ expires_at: Date.now() - 1000 })
    .where('id', '=', story)
    .execute()
  const run = await runNode('src/cli/main.ts', ['stories:cleanup'], env)
  assert.equal(run.code, 0, run.stderr)
  assert.match(run.stdout, /removed 1 expired stories, 1 uploads no longer used, 1 stored files/)
  assert.deepEqual(await storyRows(server, [story]), [])
  assert.ok(!onDisk(server, bytes))
})

test('two instances: the cleanup job runs once per period across both, not once per process', async () => {
  const env = { STORY_CLEANUP_INTERVAL_SECONDS: '1' }
  const one = await startTestServer({ env })
  const two = await startTestServer({ env, database: one.database })
  // job records are written every 5 s by each instance
  await sleep(5600)
  const rows = await one.ctx.db.selectFrom('job_runs').select(['instance', 'runs']).where('name', '=', 'story-cleanup').execute()
  assert.equal(rows.length, 2, `both instances recorded the job: ${JSON.stringify(rows)}`)
  const total = rows.reduce((sum, row) => sum + Number(row.runs), 0)
  assert.ok(total >= 3, `the job ran (${total} runs in about 5 s)`)
  assert.ok(
    total <= 7,
    `once per 1 s period across both instances, not on each (${total} runs in about 5 s; per process would be 10 or more)`,
  )
  await two.close()
})
