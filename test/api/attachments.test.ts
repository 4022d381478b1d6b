/** Uploaded files in messages and as group/channel avatars. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import sharp from 'sharp'
import { bytesOf, upload } from '../harness/files.js'
import { history, registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'

const server = await startTestServer()
const users = (n: number) => registerUsers(server, n)
const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 20, g: 120, b: 200 } } })
    .png()
    .toBuffer()

test('a message with an uploaded image carries its attachment fields in both shapes and on the socket', async () => {
  const [alice, bob] = await users(2)
  const file = await upload(server, alice, await png(1200, 800), 'sunset.png')
  const socket = await TestSocket.connect(server.url, bob.token)
  const sent = await send(alice, bob, 'look', { file_path: file.path })
  assert.equal(sent.file_path, file.path)
  assert.equal(sent.file_url, `/uploads/${file.path}`)
  assert.equal(sent.file_type, 'image')
  assert.equal((await socket.next('message.new')).data.message.file_url, `/uploads/${file.path}`)

  const [rich] = await history(bob, sent.chat_id, { format: 'rich' })
  assert.equal(rich.has_attachment, true)
  assert.equal(rich.file_name, 'sunset.png')
  assert.equal(rich.file_size, file.size)
  assert.match(rich.formatted_size, /^\d+(\.\d)? (B|KB|MB)$/)
  assert.equal(rich.thumbnail_path, file.thumbnail_path)
  assert.ok(['big', 'medium'].includes(rich.preview_size), rich.preview_size)
  const served = await fetch(`${server.url}${rich.file_url}`)
  assert.equal(served.status, 200)
  assert.equal(served.headers.get('content-type'), 'image/png')

  // an attachment alone is a message; a document's preview is none
  const doc = await upload(server, alice, bytesOf(3000, 'doc'), 'notes.bin')
  const bare = await send(alice, bob, '', { file_path: doc.path })
  assert.equal(bare.content, '')
  assert.equal(bare.file_type, 'document')
  const [docRich] = await history(bob, sent.chat_id, { format: 'rich' })
  assert.equal(docRich.preview_size, 'none')
  assert.equal(docRich.formatted_size, '2.9 KB')
  // a chat member may now fetch it by id
  const byId = await fetch(`${server.url}/files/${doc.id}`, { headers: { authorization: `Bearer ${bob.token}` } })
  assert.equal(byId.status, 200)
})

test("a path that was never uploaded, or someone else's upload, is 400 invalid_file and sends nothing", async () => {
  const [alice, bob, carol] = await users(3)
  const carolsFile = await upload(server, carol, bytesOf(100, 'carol'), 'c.bin')
  for (const path of ['never/uploaded.png', carolsFile.path, '../../etc/passwd']) {
    const res = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'x', file_path: path })
    assert.equal(res.status, 400, path)
    assert.equal(res.body.error.code, 'invalid_file', path)
  }
  const chat = await alice.api.post(`${V2}/chat/create`, { user_id: bob.id })
  assert.deepEqual(await history(alice, chat.body.data.chat_id), [])
})

test('forwarding a message keeps its attachment; a scheduled one delivers it', async () => {
  const [alice, bob, carol] = await users(3)
  const file = await upload(server, alice, bytesOf(2048, 'fwd'), 'data.bin')
  const sent = await send(alice, bob, 'file for you', { file_path: file.path })
  const target = await bob.api.post(`${V2}/chat/create`, { user_id: carol.id })
  const forwarded = await bob.api.post(`${V2}/messages/forward`, { message_id: sent.message_id, target_chat_id: target.body.data.chat_id })
  assert.equal(forwarded.status, 200, forwarded.text)
  assert.equal(forwarded.body.data.file_path, file.path)
  const [rich] = await history(carol, target.body.data.chat_id, { format: 'rich' })
  assert.equal(rich.file_name, 'data.bin')

  const at = new Date(Date.now() + 600).toISOString()
  const pending = await alice.api.post(`${V2}/messages/send`, {
    receiver_id: bob.id,
    content: 'later',
    file_path: file.path,
    scheduled_at: at,
  })
  assert.equal(pending.status, 200, pending.text)
  assert.equal(pending.body.data.file_path, file.path)
  for (let i = 0; i < 40; i++) {
    const [latest] = await history(bob, sent.chat_id)
    if (latest?.content === 'later') return assert.equal(latest.file_path, file.path)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  assert.fail('the scheduled message with its file was not delivered')
})

test('group and channel avatars take an uploaded image; avatar_url follows, null removes it', async () => {
  const [owner] = await users(1)
  const image = await upload(server, owner, await png(256, 256), 'logo.png')
  const group = await owner.api.post(`${V2}/groups/create`, { title: 'With logo', avatar: image.path })
  assert.equal(group.status, 200, group.text)
  assert.equal(group.body.data.avatar_url, `/uploads/${image.path}`)
  const list = await owner.api.get(`${V2}/chat_list`)
  assert.equal(list.body.items.find((i: any) => i.chat_id === group.body.data.group_id).group.avatar_url, `/uploads/${image.path}`)
  const cleared = await owner.api.post(`${V2}/groups/set-avatar`, { chat_id: group.body.data.group_id, avatar: null })
  assert.equal(cleared.body.data.avatar_url, null)

  const channel = await owner.api.post(`${V2}/channels/create`, { title: 'Logo news' })
  const set = await owner.api.post(`${V2}/channels/set-avatar`, { channel_id: channel.body.data.channel_id, avatar: image.path })
  assert.equal(set.status, 200, set.text)
  assert.equal(set.body.data.avatar_url, `/uploads/${image.path}`)
})
