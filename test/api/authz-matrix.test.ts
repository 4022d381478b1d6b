/**
 * The authorization matrix, generated from the OpenAPI document. Every operation is
 * walked, with the ids of the victim's resources in the path, the query and the body, in the six
 * roles:
 * - anonymous (no session);
 * - a stranger: registered, in no chat at all when the walk begins (it walks the reads first and
 *   the writes that give it chats of its own last; the test counts its cells while it still
 *   belonged to nothing);
 * - an admin elsewhere: owns a group and a channel of its own, none of the victim's;
 * - a plain member of the victim's group;
 * - the resource owner, the victim itself (the positive control: it sees its own secrets);
 * - a platform admin (the admin area, where everyone else gets 403).
 * It proves that
 * - every operation has an entry in ACCESS below (a new route without one fails the test);
 * - anonymous callers get 401 wherever a session is needed, non-admins 403 in the admin area;
 * - no answer to the stranger, the admin elsewhere or the member carries any of the victim's
 *   secrets the role may not see (marker strings in private
 *   messages, titles, files, polls, scheduled messages, the email address, session and bot tokens);
 * - no write lands on what is not the caller's: the victim's messages, chats, memberships,
 *   profile, sessions and bot are as they were;
 * - nothing answers 5xx.
 * The victim itself, walking the same requests, does see the markers (the positive control).
 * The number of cells (requests) walked per role is printed at the end ("# authz matrix cells").
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import test, { after } from 'node:test'
import { createChannel, createGroup } from '../harness/fixtures.js'
import { png } from '../harness/media.js'
import { startTestServer } from '../harness/server.js'
import type { Client, Response } from '../harness/client.js'

const server = await startTestServer({ env: { CALL_RING_TIMEOUT_SECONDS: '600' } })
after(() => server.close())
const V2 = '/api.v2/api'

/**
 * Who may call each operation: `public` (anyone), `user` (a session; acts on the caller's own
 * things or what they may see), `admin` (platform admins), `bot` (a bot token, not a session),
 * `signed` (a signature or secret of its own: payment webhooks, video-service reports).
 * Keys are `METHOD path` with the V2/V3 mounts folded into `V2` and `/api/auth|push` into `V2`.
 */
const ACCESS = new Map<string, 'public' | 'user' | 'admin' | 'bot' | 'signed'>()
const allow = (access: 'public' | 'user' | 'admin' | 'bot' | 'signed', ...keys: string[]) => {
  for (const key of keys) ACCESS.set(key, access)
}
allow(
  'public',
  'POST V2/auth/register',
  'POST V2/auth/login',
  'POST V2/auth/qr',
  'POST V2/auth/login/totp',
  'POST V2/auth/login_v3',
  'POST V2/auth/qr/generate',
  'POST V2/auth/qr/request',
  'POST V2/auth/qr/status',
  'POST V2/auth/qr/login',
  'POST V2/auth/qr/decline',
  'POST V2/auth/oauth/{provider}',
  'POST V2/auth/verify-email',
  'GET V2/push/vapid-public-key',
  'GET /premium/plans',
  'GET /health',
  'GET /ready',
  'GET /stats',
  'GET /metrics',
  'GET /video/integration/config',
  'GET /uploads/{path}',
  'GET /logout',
  'POST /logout',
  'GET /verify-email',
  'GET /qr/{token}',
  'GET /api/get_user_id',
  'GET /api/web/session',
  'GET V2/profile/{username}',
  'GET V2/avatars/preloaded',
  'GET V2/stickers',
  'GET /uploads/tus/{id}/file',
  'POST V2/auth/password/forgot',
  'POST V2/auth/password/reset',
)
allow('signed', 'POST /premium/webhook/{provider}')
allow('bot', 'POST /api/bots/webhook')

/** `METHOD path` as ACCESS spells it. */
function keyOf(method: string, path: string): string {
  const folded = path
    .replace(/^\/api\.v[23]\/api/, 'V2')
    .replace(/^\/api\/(auth|push)\//, 'V2/$1/')
    .replace(/^\/api\/stories/, 'V2/stories')
  return `${method} ${folded}`
}

function accessOf(key: string): 'public' | 'user' | 'admin' | 'bot' | 'signed' | undefined {
  const given = ACCESS.get(key)
  if (given) return given
  const path = key.split(' ')[1]
  if (path.startsWith('/api/admin/')) return 'admin'
  // everything else on the API mounts, /premium, /files, /uploads and /api/bots needs a session
  if (/^(V2\/|\/premium\/|\/files\/|\/uploads\/|\/api\/bots\/)/.test(path)) return 'user'
  return undefined
}

// ------------------------------------------------------------------------------------------
// The victim and their secrets

const tag = randomBytes(4).toString('hex')
const marker = (what: string) => `SECRET${what}${tag}`
const markers = new Map<string, string>()
const secret = (what: string) => {
  const value = marker(what)
  markers.set(value, what)
  return value
}

const emailMarker = `secretemail${tag}`
markers.set(emailMarker, 'EMAIL')
const victim = await server.registerUser({ email: `${emailMarker}@example.com` })
markers.set(victim.token, 'session token')
const confidant = await server.registerUser()
const member = await server.registerUser()
const adminElsewhere = await server.registerUser()
const stranger = await server.registerUser()
const admin = await server.createAdmin()

/** cells (requests) walked per role, printed at the end */
const cells = new Map<string, number>()
const walked = (role: string) => cells.set(role, (cells.get(role) ?? 0) + 1)
after(() => {
  const total = [...cells.values()].reduce((sum, n) => sum + n, 0)
  console.log(`# authz matrix cells: ${[...cells].map(([role, n]) => `${role} ${n}`).join(', ')}; total ${total} (${server.ctx.dialect})`)
})

async function data(res: Response, what: string) {
  assert.equal(res.status, 200, `${what}: ${res.text}`)
  return res.body.data
}
const personal = await data(
  await victim.api.post(`${V2}/messages/send`, { receiver_id: confidant.id, content: secret('PERSONAL') }),
  'personal',
)
await data(await confidant.api.post(`${V2}/messages/send`, { receiver_id: victim.id, content: secret('REPLY') }), 'reply')
const group = await createGroup(victim, {
  title: secret('GROUPTITLE'),
  description: secret('GROUPDESC'),
  is_public: false,
  member_ids: [confidant.id, member.id],
})
const groupMessage = await data(
  await victim.api.post(`${V2}/messages/send`, { chat_id: group.group_id, content: secret('GROUPMSG') }),
  'group message',
)
const channel = await createChannel(victim, { title: secret('CHANTITLE'), description: secret('CHANDESC'), is_public: false })
const post = await data(await victim.api.post(`${V2}/messages/send`, { chat_id: channel.channel_id, content: secret('POST') }), 'post')
const poll = await data(
  await victim.api.post(`${V2}/poll/create`, {
    chat_type: 'group',
    chat_id: group.group_id,
    question: secret('POLLQ'),
    options: [secret('OPTA'), secret('OPTB')],
  }),
  'poll',
)
const scheduled = await data(
  await victim.api.post(`${V2}/messages/send`, {
    receiver_id: confidant.id,
    content: secret('SCHEDULED'),
    scheduled_at: new Date(Date.now() + 3600_000).toISOString(),
  }),
  'scheduled',
)
const fileForm = new FormData()
fileForm.append('file', new Blob([new Uint8Array(await png(8, 8, 3))], { type: 'image/png' }), `${secret('FILENAME')}.png`)
const uploaded = await fetch(`${server.url}/files/upload`, {
  method: 'POST',
  body: fileForm,
  headers: { authorization: `Bearer ${victim.token}` },
})
assert.equal(uploaded.status, 200)
const file = ((await uploaded.json()) as { data: { id: number; path: string } }).data
const story = await data(
  await victim.api.post(`${V2}/stories/create`, {
    media_path: file.path,
    caption: secret('STORY'),
    privacy_type: 'selected',
    allowed_user_ids: [confidant.id],
  }),
  'story',
)
const bot = (await victim.api.post('/api/bots/register', { name: 'Victim bot', username: `v${tag}_bot` })).body.data
markers.set(bot.token, 'bot token')
const call = await data(await victim.api.post(`${V2}/calls/start`, { receiver_id: confidant.id }), 'call')
const sessionId: number = (await victim.api.get(`${V2}/sessions`)).body.items[0].id
// the admin elsewhere administers chats of their own
await createGroup(adminElsewhere, { title: 'elsewhere group' })
await createChannel(adminElsewhere, { title: 'elsewhere channel' })

/** The chats a user is in, leaving out their own Saved Messages (a personal chat with themselves). */
async function chatsOf(userId: number) {
  return server.ctx.db
    .selectFrom('chat_members')
    .innerJoin('chats', 'chats.id', 'chat_members.chat_id')
    .select(['chats.id', 'chats.chat_type', 'chat_members.role'])
    .where('chat_members.user_id', '=', userId)
    .where((eb) => eb.not(eb.and([eb('chats.chat_type', '=', 'personal'), eb('chats.peer1_id', '=', eb.ref('chats.peer2_id'))])))
    .execute()
}

/** The victim's id for a parameter, by its name and the path segment before it. */
function victimId(name: string, path: string): number | string | undefined {
  const before = /\/([a-z_-]+)\/\{[a-z_]+\}[^{]*$/.exec(path.slice(0, path.indexOf(`{${name}}`) + name.length + 2))?.[1]
  const byKind: Record<string, number> = {
    messages: groupMessage.message_id,
    stories: story.story_id,
    poll: poll.poll_id ?? poll.id,
    calls: call.call_id,
    files: file.id,
    bots: bot.bot_id,
    users: victim.id,
    channels: channel.channel_id,
    sessions: sessionId,
    rooms: 1,
  }
  switch (name) {
    case 'id':
    case 'room_id':
      return before && Object.hasOwn(byKind, before) ? byKind[before] : groupMessage.message_id
    case 'username':
      return victim.username
    case 'provider':
      return 'test'
    case 'path':
      return file.path
    case 'session_id':
      return sessionId
    case 'delivery_id':
      return 1
    case 'token':
      return 'x'
  }
  return undefined
}

/** A value for a query or body field: the victim's id where the name says which, else a plain one. */
function fieldValue(name: string, schema: any, variant: number): unknown {
  const chats = [personal.chat_id, group.group_id, channel.channel_id]
  const messages = [personal.message_id, groupMessage.message_id, post.message_id]
  switch (name) {
    case 'chat_id':
    case 'group_id':
      return chats[variant]
    case 'channel_id':
      return channel.channel_id
    case 'message_id':
    case 'reply_to_id':
    case 'pinned_message_id':
      return messages[variant]
    case 'user_id':
    case 'receiver_id':
    case 'member_id':
    case 'target_user_id':
    case 'new_owner_id':
      return variant === 0 ? victim.id : confidant.id
    case 'story_id':
      return story.story_id
    case 'poll_id':
      return poll.poll_id ?? poll.id
    case 'call_id':
      return call.call_id
    case 'file_id':
      return file.id
    case 'file_path':
    case 'media_path':
      return file.path
    case 'scheduled_id':
      return scheduled.scheduled_id
    case 'bot_id':
      return bot.bot_id
    case 'session_id':
      return sessionId
    case 'username':
    case 'ref':
      return victim.username
  }
  const type = Array.isArray(schema?.type) ? schema.type.find((t: string) => t !== 'null') : schema?.type
  if (schema?.enum) return schema.enum[0]
  if (schema?.anyOf) return fieldValue(name, schema.anyOf.find((s: any) => s.type !== 'null') ?? schema.anyOf[0], variant)
  if (type === 'integer' || type === 'number') return Math.max(1, schema.minimum ?? 1)
  if (type === 'boolean') return true
  if (type === 'array') return []
  if (type === 'object') return {}
  return 'x'.repeat(Math.max(1, schema?.minLength ?? 1))
}

/** optional fields that name one of the victim's things: filled in whenever an operation has them */
const VICTIM_FIELDS = new Set([
  'chat_id',
  'group_id',
  'channel_id',
  'message_id',
  'reply_to_id',
  'user_id',
  'receiver_id',
  'member_id',
  'story_id',
  'poll_id',
  'call_id',
  'file_id',
  'file_path',
  'scheduled_id',
  'bot_id',
  'session_id',
])

interface Operation {
  method: string
  path: string
  key: string
  query: { name: string; schema: any; required: boolean }[]
  body: any
}

const openapi = (await server.api.get('/openapi.json')).body
const operations: Operation[] = []
for (const [path, item] of Object.entries<any>(openapi.paths)) {
  for (const [method, op] of Object.entries<any>(item)) {
    if (method === 'parameters') continue
    const query = (op.parameters ?? [])
      .filter((p: any) => p.in === 'query')
      .map((p: any) => ({ name: p.name, schema: p.schema, required: p.required === true }))
    const body = op.requestBody?.content?.['application/json']?.schema ?? null
    operations.push({ method: method.toUpperCase(), path, key: keyOf(method.toUpperCase(), path), query, body })
  }
}

function request(op: Operation, variant: number) {
  const url = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(victimId(name, op.path) ?? 1)))
  const query: Record<string, string> = {}
  for (const param of op.query) {
    const value = fieldValue(param.name, param.schema, variant)
    if (param.required || VICTIM_FIELDS.has(param.name)) query[param.name] = String(value)
  }
  let body: Record<string, unknown> | undefined
  if (op.body) {
    body = {}
    for (const [name, schema] of Object.entries<any>(op.body.properties ?? {})) {
      if ((op.body.required ?? []).includes(name) || VICTIM_FIELDS.has(name.replace(/_ids$/, '_id'))) {
        const value = fieldValue(name.replace(/_ids$/, '_id'), schema, variant)
        body[name] = name.endsWith('_ids') ? [value] : value
      }
    }
  } else if (op.method !== 'GET' && op.method !== 'DELETE' && op.method !== 'HEAD') body = {}
  return { url, query, body }
}

async function call_(api: Client, op: Operation, variant: number): Promise<Response> {
  const { url, query, body } = request(op, variant)
  return api.request(op.method, url, body, { query })
}

/** The victim's state that no one else may change. */
async function snapshot() {
  const db = server.ctx.db
  const chatIds = [personal.chat_id, group.group_id, channel.channel_id]
  const [messages, chats, members, user, polls, stories, calls] = await Promise.all([
    db
      .selectFrom('messages')
      .selectAll()
      .where('chat_id', 'in', chatIds)
      .where('sender_id', 'in', [victim.id, confidant.id])
      .orderBy('id')
      .execute(),
    db
      .selectFrom('chats')
      .select(['id', 'title', 'description', 'avatar', 'is_public', 'owner_id', 'is_verified', 'is_forum', 'invite_code'])
      .where('id', 'in', chatIds)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('chat_members')
      .select(['chat_id', 'user_id', 'role'])
      .where('chat_id', 'in', chatIds)
      .where('user_id', 'in', [victim.id, confidant.id])
      .orderBy('chat_id')
      .orderBy('user_id')
      .execute(),
    db
      .selectFrom('users')
      .select(['username', 'display_name', 'bio', 'email', 'is_active', 'is_admin', 'password_hash'])
      .where('id', '=', victim.id)
      .execute(),
    db.selectFrom('polls').selectAll().where('chat_id', '=', group.group_id).execute(),
    db.selectFrom('stories').selectAll().where('user_id', '=', victim.id).execute(),
    db.selectFrom('calls').selectAll().where('id', '=', call.call_id).execute(),
  ])
  return JSON.stringify({ messages, chats, members, user, polls, stories, calls })
}

/** the answer as a leak would show: its body and its headers (a file name in Content-Disposition) */
const shown = (res: Response) => `${res.text}\n${JSON.stringify([...res.headers])}`
/** the proxy's documented answer while no video service runs (the harness starts none) */
const isVideoDown = (op: Operation, res: Response) =>
  op.path === '/video/integration/config' && res.status === 504 && res.body?.error?.code === 'upstream_timeout'
const leaksIn = (text: string) => [...markers.keys()].filter((value) => text.includes(value)).map((value) => markers.get(value)!)

test('every operation has an entry in the matrix', () => {
  const missing = operations.filter((op) => accessOf(op.key) === undefined).map((op) => op.key)
  assert.deepEqual(missing, [], 'operations without an access entry: add them to ACCESS')
  assert.ok(operations.length > 150, `${operations.length} operations`)
})

test('anonymous callers get 401 wherever a session is needed', async () => {
  const wrong: string[] = []
  for (const op of operations) {
    const access = accessOf(op.key)
    const res = await call_(server.api, op, 1)
    walked('anonymous')
    assert.ok(res.status < 500 || isVideoDown(op, res), `${op.key} answered ${res.status}: ${res.text.slice(0, 200)}`)
    if ((access === 'user' || access === 'admin') && res.status !== 401) wrong.push(`${op.key} → ${res.status}`)
    if (op.path !== '/uploads/{path}' && leaksIn(shown(res)).length) wrong.push(`${op.key} leaks ${leaksIn(shown(res))} to anonymous`)
  }
  assert.deepEqual(wrong, [])
})

test('non-admins get 403 in the admin area; a platform admin gets in (the control)', async () => {
  const wrong: string[] = []
  const adminOps = operations.filter((op) => accessOf(op.key) === 'admin')
  assert.ok(adminOps.length >= 15)
  for (const op of adminOps) {
    for (const [role, who] of [
      ['stranger', stranger],
      ['adminElsewhere', adminElsewhere],
      ['member', member],
    ] as const) {
      const res = await call_(who.api, op, 1)
      walked(role)
      if (res.status !== 403) wrong.push(`${op.key} as a non-admin (${role}) → ${res.status}`)
    }
    if (op.method === 'GET') {
      const res = await call_(admin.api, op, 1)
      walked('platformAdmin')
      if (res.status >= 300 && res.status !== 404) wrong.push(`${op.key} as admin → ${res.status}`)
    }
  }
  assert.deepEqual(wrong, [])
})

test('a stranger, an admin elsewhere and a plain member, walking every operation with the victim’s ids, see no secret and change nothing', async (t) => {
  // the roles are what they claim to be when the walk begins (the stranger in nothing; the admin
  // elsewhere owning its group and channel, none of them the victim's; the member in the victim's group)
  assert.deepEqual(await chatsOf(stranger.id), [], 'the stranger is in no chat')
  const elsewhere = await chatsOf(adminElsewhere.id)
  assert.deepEqual(elsewhere.map((chat) => [chat.chat_type, chat.role]).sort(), [
    ['channel', 'owner'],
    ['group', 'owner'],
  ])
  assert.ok(elsewhere.every((chat) => ![personal.chat_id, group.group_id, channel.channel_id].includes(chat.id)))
  assert.ok(
    (await chatsOf(member.id)).some((chat) => chat.id === group.group_id),
    'the member is in the victim’s group',
  )

  const before = await snapshot()
  const leaks: string[] = []
  const walkable = operations.filter((op) => accessOf(op.key) !== 'admin' && op.key !== 'POST V2/auth/logout')
  // The stranger walks the reads first, then the writes, and last the writes that by design give
  // the caller a chat of its own (a chat with someone, a group, a channel): as many cells as
  // possible meet a user who belongs to nothing. The diagnostic names the cell that ended that.
  const joins = new Set(['POST V2/chat/create', 'POST V2/messages/send', 'POST V2/groups/create', 'POST V2/channels/create'])
  const rank = (op: Operation) => (op.method === 'GET' ? 0 : joins.has(op.key) ? 2 : 1)
  const readsFirst = [...walkable].sort((a, b) => rank(a) - rank(b))
  let strangerInNothing = 0
  let strangerJoined = '(nothing)'
  const here = new Map<string, number>()
  const roles = [
    ['stranger', stranger, readsFirst],
    ['adminElsewhere', adminElsewhere, walkable],
    ['member', member, walkable],
  ] as const
  for (const [who, user, ops] of roles) {
    for (const op of ops) {
      for (const variant of [0, 1, 2]) {
        const inNothing = who === 'stranger' && (await chatsOf(stranger.id)).length === 0
        const res = await call_(user.api, op, variant)
        if (inNothing) {
          strangerInNothing++
          if ((await chatsOf(stranger.id)).length > 0) strangerJoined = `${op.key} (variant ${variant})`
        }
        walked(who)
        here.set(who, (here.get(who) ?? 0) + 1)
        assert.ok(
          res.status < 500 || isVideoDown(op, res),
          `${who}: ${op.key} (variant ${variant}) answered ${res.status}: ${res.text.slice(0, 300)}`,
        )
        // a member of the victim's group may read what is in it
        const allowed =
          who === 'member' ? new Set(['GROUPTITLE', 'GROUPDESC', 'GROUPMSG', 'POLLQ', 'OPTA', 'OPTB'].map(marker)) : new Set<string>()
        // a file's own URL is its capability (unguessable, like Telegram's file links): who holds it may read the file and its name
        const text = op.path === '/uploads/{path}' ? '' : shown(res)
        const found = [...markers.keys()].filter((value) => !allowed.has(value) && text.includes(value))
        if (found.length)
          leaks.push(`${who}: ${op.key} (variant ${variant}) → ${res.status} shows ${found.map((value) => markers.get(value)).join(', ')}`)
      }
    }
  }
  assert.deepEqual(leaks, [])
  assert.equal(await snapshot(), before, 'the victim’s messages, chats, memberships, profile, poll and story are unchanged')
  // the victim's session and bot token still work
  assert.equal((await victim.api.get(`${V2}/auth/me`)).status, 200)
  assert.equal((await server.api.get(`/bot${bot.token}/getMe`)).status, 200)
  // and every walker was still signed in at the end (a walk that logged itself out would prove little)
  for (const [who, user] of roles) assert.equal((await user.api.get(`${V2}/auth/me`)).status, 200, `${who} is still signed in`)
  // every role walked every cell, as many as before the stranger came (two roles then, over 500)
  const per = roles.map(([who]) => here.get(who) ?? 0)
  assert.deepEqual(
    per,
    roles.map(() => walkable.length * 3),
  )
  assert.ok(per[0] > 250, `${per[0]} cells per role`)
  // every cell before the joins met a stranger in nothing (a read or another write that put it in a chat would show here)
  assert.ok(
    strangerInNothing >= readsFirst.filter((op) => rank(op) < 2).length * 3,
    `the stranger was in no chat for ${strangerInNothing} cells, until ${strangerJoined}`,
  )
  t.diagnostic(
    `cells: ${roles.map(([who], i) => `${who} ${per[i]}`).join(', ')}; the stranger in no chat for ${strangerInNothing} of its ${per[0]}, until ${strangerJoined}`,
  )
})

test('the control: the victim walking the same requests does see its own secrets', async () => {
  const seen = new Set<string>()
  for (const op of operations) {
    if (op.method !== 'GET' || accessOf(op.key) !== 'user') continue
    for (const variant of [0, 1, 2]) {
      const res = await call_(victim.api, op, variant)
      walked('owner')
      for (const what of leaksIn(shown(res))) seen.add(what)
    }
  }
  for (const what of ['PERSONAL', 'GROUPTITLE', 'GROUPMSG', 'CHANTITLE', 'POST', 'POLLQ', 'SCHEDULED', 'FILENAME', 'STORY']) {
    assert.ok(seen.has(what), `the victim sees ${what} somewhere (seen: ${[...seen].join(', ')})`)
  }
})
