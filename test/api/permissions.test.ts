/**
 * The permission table for groups and channels (docs/permissions.md), tested cell by cell.
 *
 * Every cell is one `test()` named after it (`group: admin removes an admin → 403`), with a fresh
 * chat built for it: owner, two admins, two plain members (channel: subscribers), and an outsider
 * who is a registered user outside the chat. A cell asserts the exact status and error code, and
 * the effect: an allowed action changed what it should; a refused one left the chat exactly as it
 * was (info, members with roles, history with reactions, invite links, topics).
 *
 * Outsider cells run on a private and on a public chat (a public chat is readable by anyone, but
 * acting on it still needs membership: 404); member cells run on the default visibility (groups
 * private, channels public). Visibility rows run on both for every actor.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Response } from '../harness/client.js'
import { history, registerUsers, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'

const server = await startTestServer()
const [ownerU, adminU, admin2U, memberU, member2U, outsiderU, strangerU] = await registerUsers(server, 7)
const platformAdmin = await server.createAdmin()

type Kind = 'group' | 'channel'
type Actor = 'owner' | 'admin' | 'member' | 'outsider'
type Target = 'owner' | 'admin' | 'member'
type Status = 200 | 400 | 403 | 404 | 409

/** A chat built for one cell: owner; admin and admin2; member and member2; outsider is outside. */
interface Fx {
  kind: Kind
  id: number
  isPublic: boolean
}

const ACTOR: Record<Actor, TestUser> = { owner: ownerU, admin: adminU, member: memberU, outsider: outsiderU }
/** the target of an action on "an admin" / "a member" is never the actor themselves */
const TARGET: Record<Target, TestUser> = { owner: ownerU, admin: admin2U, member: member2U }
const CODE: Record<number, string> = { 400: 'validation_error', 403: 'forbidden', 404: 'not_found', 409: 'conflict' }

const plainRole = (kind: Kind) => (kind === 'group' ? 'member' : 'subscriber')
const actorName = (kind: Kind, actor: Actor) => (actor === 'member' ? plainRole(kind) : actor)
const targetName = (kind: Kind, target: Target) =>
  target === 'member' ? `a ${plainRole(kind)}` : target === 'admin' ? 'another admin' : 'the owner'
/** the role a target holds in every fixture before anyone acts on it */
const initialRole = (kind: Kind, target: Target) => (target === 'member' ? plainRole(kind) : target)

function data(res: Response) {
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body.success, true, res.text)
  return res.body.data ?? res.body
}

function expectStatus(res: Response, status: number) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`)
  if (status === 200) {
    assert.equal(res.body.success, true)
  } else {
    assert.equal(res.body.success, false, res.text)
    assert.equal(res.body.error.code, CODE[status], res.text)
    assert.equal(typeof res.body.error.message, 'string')
  }
}

// ---- per-kind endpoints --------------------------------------------------------------------------

const idOf = (fx: Fx) => (fx.kind === 'group' ? { chat_id: fx.id } : { channel_id: fx.id })
const post = (user: TestUser, fx: Fx, groupPath: string, channelPath: string, extra: Record<string, unknown> = {}) =>
  user.api.post(`${V2}/${fx.kind === 'group' ? groupPath : channelPath}`, { ...idOf(fx), ...extra })
const getInfo = (user: TestUser, fx: Fx) =>
  fx.kind === 'group' ? user.api.get(`${V2}/groups/info`, { query: { chat_id: fx.id } }) : user.api.get(`${V2}/channels/${fx.id}`)
const getMembers = (user: TestUser, fx: Fx) =>
  fx.kind === 'group'
    ? user.api.get(`${V2}/groups/members`, { query: { chat_id: fx.id, per_page: 100 } })
    : user.api.get(`${V2}/channels/subscribers`, { query: { channel_id: fx.id, per_page: 100 } })
const getHistory = (user: TestUser, fx: Fx) => user.api.get(`${V2}/chat/history`, { query: { chat_id: fx.id, per_page: 100 } })
const sendTo = (user: TestUser, fx: Fx, content: string) => user.api.post(`${V2}/messages/send`, { chat_id: fx.id, content })
const joinWith = (user: TestUser, fx: Fx, code: string) =>
  fx.kind === 'group' ? user.api.post(`${V2}/groups/invite-link/join`, { code }) : user.api.post(`${V2}/channels/subscribe`, { code })

/** A fresh chat: owner, admins (admin, admin2, promoted in that order), members (member, member2). */
async function build(kind: Kind, isPublic: boolean): Promise<Fx> {
  if (kind === 'group') {
    const group = data(
      await ownerU.api.post(`${V2}/groups/create`, {
        title: 'Perm group',
        is_public: isPublic,
        member_ids: [adminU.id, admin2U.id, memberU.id, member2U.id],
      }),
    )
    for (const u of [adminU, admin2U]) data(await ownerU.api.post(`${V2}/groups/promote`, { chat_id: group.group_id, user_id: u.id }))
    return { kind, id: group.group_id, isPublic }
  }
  const channel = data(await ownerU.api.post(`${V2}/channels/create`, { title: 'Perm channel', is_public: isPublic }))
  for (const u of [adminU, admin2U, memberU, member2U]) {
    data(await u.api.post(`${V2}/channels/subscribe`, isPublic ? { channel_id: channel.channel_id } : { code: channel.invite_link }))
  }
  for (const u of [adminU, admin2U])
    data(await ownerU.api.post(`${V2}/channels/add-admin`, { channel_id: channel.channel_id, user_id: u.id }))
  return { kind, id: channel.channel_id, isPublic }
}

/** Everything a cell may change, as `viewer` sees it. */
async function snapshot(fx: Fx, viewer: TestUser) {
  const info = data(await getInfo(viewer, fx))
  const members = data(await getMembers(viewer, fx))
  const messages = await history(viewer, fx.id)
  const snap: Record<string, unknown> = {
    info,
    members: members.items.map((m: any) => [m.user_id, m.role]),
    total: members.total,
    history: messages.map((m) => [m.message_id, m.sender_id, m.content, m.reactions]),
  }
  if (fx.kind === 'group') {
    const links = await viewer.api.get(`${V2}/groups/invite-links`, { query: { chat_id: fx.id } })
    if (links.status === 200) snap.links = links.body.items
    snap.topics = data(await viewer.api.get(`${V2}/groups/topics`, { query: { chat_id: fx.id } })).items
  }
  return snap
}

async function roleIn(fx: Fx, user: TestUser, viewer: TestUser = ownerU): Promise<string | null> {
  const members = data(await getMembers(viewer, fx))
  return members.items.find((m: any) => m.user_id === user.id)?.role ?? null
}

// ---- the actions of the table --------------------------------------------------------------------

interface ActionDef {
  kinds: Kind[]
  /** the verb phrase in the test name, e.g. "removes a member" */
  label: (kind: Kind, target?: Target) => string
  /** prepares what the action needs (a message, a link…); its result is passed on */
  setup?: (fx: Fx, actor: Actor, target?: Target) => Promise<any>
  act: (fx: Fx, actor: TestUser, prepared: any, target?: Target) => Promise<Response>
  /** the effect of an allowed action */
  allowed: (fx: Fx, res: Response, prepared: any, actor: Actor, target?: Target) => Promise<void>
  /** further checks that a refused action had no effect (besides the unchanged snapshot) */
  refused?: (fx: Fx, prepared: any, target?: Target) => Promise<void>
  /** who observes the chat before and after (default: the owner) */
  viewer?: TestUser
}

const ACTIONS: Record<string, ActionDef> = {
  send: {
    kinds: ['group'],
    label: () => 'sends a message',
    act: (fx, actor) => sendTo(actor, fx, `hello from ${actor.username}`),
    async allowed(fx, res) {
      const sent = res.body.data
      assert.equal(sent.chat_id, fx.id)
      const [newest] = await history(ownerU, fx.id)
      assert.equal(newest.message_id, sent.message_id)
      assert.equal(newest.content, sent.content)
    },
  },
  post: {
    kinds: ['channel'],
    label: () => 'posts',
    act: (fx, actor) => sendTo(actor, fx, `post by ${actor.username}`),
    async allowed(fx, res) {
      const sent = res.body.data
      assert.equal(sent.chat_id, fx.id)
      const [newest] = await history(memberU, fx.id)
      assert.equal(newest.message_id, sent.message_id, 'subscribers read the post')
      assert.equal(newest.content, sent.content)
    },
    async refused(fx) {
      assert.deepEqual(await history(ownerU, fx.id), [], 'no message was written')
    },
  },
  react: {
    kinds: ['group', 'channel'],
    label: (kind) => (kind === 'group' ? 'reacts to a message' : 'reacts to a post'),
    setup: async (fx) => data(await sendTo(fx.kind === 'group' ? member2U : ownerU, fx, 'react to me')),
    act: (_fx, actor, message) => actor.api.post(`${V2}/messages/${message.message_id}/reaction`, { emoji: '👍' }),
    async allowed(fx, res, message) {
      assert.deepEqual(res.body.data, { '👍': 1 })
      const seen = (await history(ownerU, fx.id)).find((m) => m.message_id === message.message_id)
      assert.deepEqual(seen.reactions, { '👍': 1 })
    },
    async refused(fx, message) {
      const seen = (await history(ownerU, fx.id)).find((m) => m.message_id === message.message_id)
      assert.deepEqual(seen.reactions, {})
    },
  },
  add_member: {
    kinds: ['group'],
    label: () => 'adds a member',
    act: (fx, actor) => actor.api.post(`${V2}/groups/add-member`, { chat_id: fx.id, user_id: strangerU.id }),
    async allowed(fx, res) {
      assert.deepEqual(res.body.data, { chat_id: fx.id, user_id: strangerU.id, role: 'member' })
      assert.equal(await roleIn(fx, strangerU), 'member')
      assert.equal(data(await getInfo(ownerU, fx)).member_count, 6)
    },
    async refused(fx) {
      assert.equal(await roleIn(fx, strangerU), null)
    },
  },
  remove: {
    kinds: ['group', 'channel'],
    label: (kind, target) => `removes ${targetName(kind, target!)}`,
    act: (fx, actor, _p, target) => post(actor, fx, 'groups/remove-member', 'channels/remove-subscriber', { user_id: TARGET[target!].id }),
    async allowed(fx, _res, _p, _actor, target) {
      assert.equal(await roleIn(fx, TARGET[target!]), null, 'no longer listed')
      const info = data(await getInfo(ownerU, fx))
      assert.equal(fx.kind === 'group' ? info.member_count : info.subscriber_count, 4)
      const gone = await getInfo(TARGET[target!], fx)
      if (!fx.isPublic) expectStatus(gone, 404)
      else assert.equal(data(gone).my_role, null)
    },
    async refused(fx, _p, target) {
      assert.equal(await roleIn(fx, TARGET[target!]), initialRole(fx.kind, target!), 'still listed with the same role')
    },
  },
  promote: {
    kinds: ['group', 'channel'],
    label: (kind, target) => `${kind === 'group' ? 'promotes' : 'adds as admin'} ${targetName(kind, target!)}`,
    act: (fx, actor, _p, target) => post(actor, fx, 'groups/promote', 'channels/add-admin', { user_id: TARGET[target!].id }),
    async allowed(fx, res, _p, _actor, target) {
      assert.deepEqual(res.body.data, { chat_id: fx.id, user_id: TARGET[target!].id, role: 'admin' })
      assert.equal(await roleIn(fx, TARGET[target!]), 'admin')
      if (fx.kind === 'channel') {
        const admins = data(await getInfo(ownerU, fx)).admins.map((a: any) => a.user_id)
        assert.ok(admins.includes(TARGET[target!].id), 'listed among the admins')
      }
    },
    async refused(fx, _p, target) {
      assert.equal(await roleIn(fx, TARGET[target!]), initialRole(fx.kind, target!), 'role unchanged')
    },
  },
  demote: {
    kinds: ['group', 'channel'],
    label: (kind, target) => `${kind === 'group' ? 'demotes' : 'removes as admin'} ${targetName(kind, target!)}`,
    act: (fx, actor, _p, target) => post(actor, fx, 'groups/demote', 'channels/remove-admin', { user_id: TARGET[target!].id }),
    async allowed(fx, res, _p, _actor, target) {
      assert.deepEqual(res.body.data, { chat_id: fx.id, user_id: TARGET[target!].id, role: plainRole(fx.kind) })
      assert.equal(await roleIn(fx, TARGET[target!]), plainRole(fx.kind))
    },
    async refused(fx, _p, target) {
      assert.equal(await roleIn(fx, TARGET[target!]), initialRole(fx.kind, target!), 'role unchanged')
    },
  },
  transfer: {
    kinds: ['group', 'channel'],
    label: () => 'transfers ownership',
    act: (fx, actor) => post(actor, fx, 'groups/transfer', 'channels/transfer', { user_id: member2U.id }),
    async allowed(fx, res) {
      assert.equal(res.body.data.owner_id, member2U.id)
      assert.equal(res.body.data.my_role, 'admin', 'the old owner stays as an admin')
      assert.equal(await roleIn(fx, member2U, member2U), 'owner')
      assert.equal(await roleIn(fx, ownerU, member2U), 'admin')
      assert.equal(data(await getInfo(adminU, fx)).owner_id, member2U.id)
    },
    async refused(fx) {
      assert.equal(data(await getInfo(ownerU, fx)).owner_id, ownerU.id)
      assert.equal(await roleIn(fx, ownerU), 'owner')
      assert.equal(await roleIn(fx, member2U), plainRole(fx.kind))
    },
  },
  set_title: {
    kinds: ['group', 'channel'],
    label: () => 'sets the title',
    act: (fx, actor) => post(actor, fx, 'groups/set-title', 'channels/set-title', { title: 'Renamed' }),
    async allowed(fx, res) {
      assert.equal(res.body.data.name, 'Renamed')
      assert.equal(data(await getInfo(memberU, fx)).name, 'Renamed')
    },
    async refused(fx) {
      assert.equal(data(await getInfo(ownerU, fx)).name, fx.kind === 'group' ? 'Perm group' : 'Perm channel')
    },
  },
  set_description: {
    kinds: ['group', 'channel'],
    label: () => 'sets the description',
    act: (fx, actor) => post(actor, fx, 'groups/set-description', 'channels/set-description', { description: 'new words' }),
    async allowed(fx, res) {
      assert.equal(res.body.data.description, 'new words')
      assert.equal(data(await getInfo(memberU, fx)).description, 'new words')
    },
    async refused(fx) {
      assert.equal(data(await getInfo(ownerU, fx)).description, '')
    },
  },
  set_avatar: {
    kinds: ['group', 'channel'],
    label: () => 'sets the avatar (null)',
    act: (fx, actor) => post(actor, fx, 'groups/set-avatar', 'channels/set-avatar', { avatar: null }),
    async allowed(fx, res) {
      assert.equal(res.body.data.avatar_url, null)
      assert.equal(data(await getInfo(memberU, fx)).avatar_url, null)
    },
  },
  set_forum: {
    kinds: ['group'],
    label: () => 'turns forum mode on',
    act: (fx, actor) => actor.api.post(`${V2}/groups/set-forum`, { chat_id: fx.id, is_forum: true }),
    async allowed(fx, res) {
      assert.equal(res.body.data.is_forum, true)
      assert.equal(data(await getInfo(memberU, fx)).is_forum, true)
    },
    async refused(fx) {
      assert.equal(data(await getInfo(ownerU, fx)).is_forum, false)
    },
  },
  invite_create: {
    kinds: ['group', 'channel'],
    label: () => 'creates an invite link',
    act: (fx, actor) => post(actor, fx, 'groups/invite-link/create', 'channels/invite-link/create', { usage_limit: 5 }),
    async allowed(fx, res) {
      const link = res.body.data
      assert.equal(link.usage_limit, 5)
      assert.equal(link.uses, 0)
      assert.ok(link.invite_link.endsWith(`/${fx.kind === 'group' ? 'join' : 'channel'}/${link.code}`), link.invite_link)
      if (fx.kind === 'group') {
        const listed = data(await ownerU.api.get(`${V2}/groups/invite-links`, { query: { chat_id: fx.id } })).items
        assert.ok(
          listed.some((l: any) => l.code === link.code),
          'listed',
        )
      }
      const joined = data(await joinWith(strangerU, fx, link.code))
      assert.equal(joined.my_role, plainRole(fx.kind), 'the new link admits')
    },
  },
  invite_list: {
    kinds: ['group'],
    label: () => 'lists the invite links',
    act: (fx, actor) => actor.api.get(`${V2}/groups/invite-links`, { query: { chat_id: fx.id } }),
    async allowed(fx, res) {
      const primary = data(await getInfo(ownerU, fx)).invite_link
      const items = res.body.items
      assert.equal(items.length, 1)
      assert.equal(items[0].invite_link, primary)
      assert.equal(items[0].is_primary, true)
    },
  },
  invite_revoke: {
    kinds: ['group', 'channel'],
    label: () => 'revokes an invite link',
    setup: async (fx) => data(await post(ownerU, fx, 'groups/invite-link/create', 'channels/invite-link/create', {})),
    act: (fx, actor, link) => post(actor, fx, 'groups/invite-link/revoke', 'channels/invite-link/revoke', { code: link.code }),
    async allowed(fx, res, link) {
      assert.equal(res.body.data.code, link.code)
      assert.equal(res.body.data.is_revoked, true)
      const refused = await joinWith(strangerU, fx, link.code)
      expectStatus(refused, 403)
    },
    async refused(fx, link) {
      if (fx.kind === 'group') {
        const listed = data(await ownerU.api.get(`${V2}/groups/invite-links`, { query: { chat_id: fx.id } })).items
        assert.equal(listed.find((l: any) => l.code === link.code).is_revoked, false)
      }
      data(await joinWith(strangerU, fx, link.code))
    },
  },
  delete_for_all: {
    kinds: ['group', 'channel'],
    label: (kind, target) =>
      `deletes ${target === 'owner' ? "the owner's" : target === 'admin' ? "another admin's" : `a ${plainRole(kind)}'s`} ${kind === 'group' ? 'message' : 'post'} for everyone`,
    async setup(fx, _actor, target) {
      const sender = TARGET[target!]
      if (fx.kind === 'channel' && target === 'member') {
        // a subscriber's post: written while they were an admin
        data(await ownerU.api.post(`${V2}/channels/add-admin`, { channel_id: fx.id, user_id: sender.id }))
        const message = data(await sendTo(sender, fx, 'to be deleted'))
        data(await ownerU.api.post(`${V2}/channels/remove-admin`, { channel_id: fx.id, user_id: sender.id }))
        return message
      }
      return data(await sendTo(sender, fx, 'to be deleted'))
    },
    act: (_fx, actor, message) => actor.api.delete(`${V2}/messages/${message.message_id}`, { query: { for_all: 'true' } }),
    async allowed(fx, res, message) {
      assert.deepEqual(res.body.data, { message_id: message.message_id, deleted_for_all: true })
      for (const viewer of [ownerU, memberU]) {
        assert.equal(
          (await history(viewer, fx.id)).some((m) => m.message_id === message.message_id),
          false,
          'gone for everyone',
        )
      }
    },
    async refused(fx, message) {
      const seen = (await history(memberU, fx.id)).find((m) => m.message_id === message.message_id)
      assert.equal(seen?.content, 'to be deleted', 'still there for everyone')
    },
  },
  create_topic: {
    kinds: ['group'],
    label: () => 'creates a forum topic',
    setup: async (fx) => data(await ownerU.api.post(`${V2}/groups/set-forum`, { chat_id: fx.id, is_forum: true })),
    act: (fx, actor) => actor.api.post(`${V2}/groups/topics/create`, { chat_id: fx.id, title: 'Routes' }),
    async allowed(fx, res) {
      assert.equal(res.body.data.title, 'Routes')
      const topics = data(await memberU.api.get(`${V2}/groups/topics`, { query: { chat_id: fx.id } })).items
      assert.deepEqual(
        topics.map((t: any) => t.topic_id),
        [res.body.data.topic_id],
      )
    },
    async refused(fx) {
      assert.deepEqual(data(await ownerU.api.get(`${V2}/groups/topics`, { query: { chat_id: fx.id } })).items, [])
    },
  },
  bind: {
    kinds: ['channel'],
    label: () => 'binds a discussion group (a group they own)',
    // the actor owns the group, so only the channel side decides
    setup: async (_fx, actor) => data(await ACTOR[actor].api.post(`${V2}/groups/create`, { title: 'Discussion' })),
    act: (fx, actor, group) => actor.api.post(`${V2}/channels/bind-group`, { channel_id: fx.id, group_id: group.group_id }),
    async allowed(fx, res, group) {
      assert.equal(res.body.data.discussion_group_id, group.group_id)
      assert.equal(data(await getInfo(memberU, fx)).discussion_group_id, group.group_id)
    },
    async refused(fx) {
      assert.equal(data(await getInfo(ownerU, fx)).discussion_group_id, null)
    },
  },
  unbind: {
    kinds: ['channel'],
    label: () => 'unbinds the discussion group',
    async setup(fx) {
      const group = data(await ownerU.api.post(`${V2}/groups/create`, { title: 'Discussion' }))
      data(await ownerU.api.post(`${V2}/channels/bind-group`, { channel_id: fx.id, group_id: group.group_id }))
      return group
    },
    act: (fx, actor) => actor.api.post(`${V2}/channels/unbind-group`, { channel_id: fx.id }),
    async allowed(fx, res) {
      assert.equal(res.body.data.discussion_group_id, null)
      assert.equal(data(await getInfo(memberU, fx)).discussion_group_id, null)
    },
    async refused(fx, group) {
      assert.equal(data(await getInfo(ownerU, fx)).discussion_group_id, group.group_id)
    },
  },
  leave: {
    kinds: ['group', 'channel'],
    label: () => 'leaves',
    // admin2 stays in every leave cell
    viewer: admin2U,
    act: (fx, actor) => post(actor, fx, 'groups/leave', 'channels/unsubscribe'),
    async allowed(fx, res, _p, actor) {
      assert.deepEqual(res.body.data, { chat_id: fx.id, left: true, dissolved: false })
      assert.equal(await roleIn(fx, ACTOR[actor], admin2U), null, 'no longer listed')
      const info = data(await getInfo(admin2U, fx))
      assert.equal(fx.kind === 'group' ? info.member_count : info.subscriber_count, 4)
      if (actor === 'owner') {
        assert.equal(info.owner_id, adminU.id, 'the longest-standing admin inherits')
        assert.equal(await roleIn(fx, adminU, admin2U), 'owner')
      } else {
        assert.equal(info.owner_id, ownerU.id)
      }
    },
  },
}

// ---- the cells -------------------------------------------------------------------------------------

interface Cell {
  action: keyof typeof ACTIONS
  actor: Actor
  target?: Target
  expect: Status
  /** only this kind (default: every kind the action applies to) */
  kind?: Kind
}

const cells: Cell[] = [
  // send in a group / post in a channel
  ...(['owner', 'admin', 'member'] as const).map((actor): Cell => ({ action: 'send', actor, expect: 200 })),
  { action: 'send', actor: 'outsider', expect: 404 },
  { action: 'post', actor: 'owner', expect: 200 },
  { action: 'post', actor: 'admin', expect: 200 },
  { action: 'post', actor: 'member', expect: 403 },
  { action: 'post', actor: 'outsider', expect: 404 },
  // react
  ...(['owner', 'admin', 'member'] as const).map((actor): Cell => ({ action: 'react', actor, expect: 200 })),
  { action: 'react', actor: 'outsider', expect: 404 },
  // add a member (groups)
  { action: 'add_member', actor: 'owner', expect: 200 },
  { action: 'add_member', actor: 'admin', expect: 200 },
  { action: 'add_member', actor: 'member', expect: 403 },
  { action: 'add_member', actor: 'outsider', expect: 404 },
  // remove a member / subscriber
  { action: 'remove', actor: 'owner', target: 'member', expect: 200 },
  { action: 'remove', actor: 'admin', target: 'member', expect: 200 },
  { action: 'remove', actor: 'member', target: 'member', expect: 403 },
  { action: 'remove', actor: 'outsider', target: 'member', expect: 404 },
  // remove an admin
  { action: 'remove', actor: 'owner', target: 'admin', expect: 200 },
  { action: 'remove', actor: 'admin', target: 'admin', expect: 403 },
  { action: 'remove', actor: 'member', target: 'admin', expect: 403 },
  { action: 'remove', actor: 'outsider', target: 'admin', expect: 404 },
  // remove the owner (the owner's own cell is "—": see the test after the table)
  { action: 'remove', actor: 'admin', target: 'owner', expect: 403 },
  { action: 'remove', actor: 'member', target: 'owner', expect: 403 },
  { action: 'remove', actor: 'outsider', target: 'owner', expect: 404 },
  // promote a member to admin (channel: add-admin)
  { action: 'promote', actor: 'owner', target: 'member', expect: 200 },
  { action: 'promote', actor: 'admin', target: 'member', expect: 403 },
  { action: 'promote', actor: 'member', target: 'member', expect: 403 },
  { action: 'promote', actor: 'outsider', target: 'member', expect: 404 },
  { action: 'promote', actor: 'owner', target: 'admin', expect: 409 },
  // demote an admin (channel: remove-admin)
  { action: 'demote', actor: 'owner', target: 'admin', expect: 200 },
  { action: 'demote', actor: 'admin', target: 'admin', expect: 403 },
  { action: 'demote', actor: 'member', target: 'admin', expect: 403 },
  { action: 'demote', actor: 'outsider', target: 'admin', expect: 404 },
  { action: 'demote', actor: 'owner', target: 'member', expect: 409 },
  // transfer ownership
  { action: 'transfer', actor: 'owner', expect: 200 },
  { action: 'transfer', actor: 'admin', expect: 403 },
  { action: 'transfer', actor: 'member', expect: 403 },
  { action: 'transfer', actor: 'outsider', expect: 404 },
  // set title, description, avatar, forum mode
  ...(['set_title', 'set_description', 'set_avatar', 'set_forum'] as const).flatMap((action): Cell[] => [
    { action, actor: 'owner', expect: 200 },
    { action, actor: 'admin', expect: 200 },
    { action, actor: 'member', expect: 403 },
    { action, actor: 'outsider', expect: 404 },
  ]),
  // create, list and revoke invite links
  ...(['invite_create', 'invite_list', 'invite_revoke'] as const).flatMap((action): Cell[] => [
    { action, actor: 'owner', expect: 200 },
    { action, actor: 'admin', expect: 200 },
    { action, actor: 'member', expect: 403 },
    { action, actor: 'outsider', expect: 404 },
  ]),
  // delete someone else's message for everyone
  { action: 'delete_for_all', actor: 'owner', target: 'admin', expect: 200 },
  { action: 'delete_for_all', actor: 'owner', target: 'member', expect: 200, kind: 'group' },
  { action: 'delete_for_all', actor: 'admin', target: 'member', expect: 200 },
  { action: 'delete_for_all', actor: 'admin', target: 'owner', expect: 403 },
  { action: 'delete_for_all', actor: 'admin', target: 'admin', expect: 403 },
  { action: 'delete_for_all', actor: 'member', target: 'owner', expect: 403 },
  { action: 'delete_for_all', actor: 'member', target: 'admin', expect: 403 },
  { action: 'delete_for_all', actor: 'member', target: 'member', expect: 403, kind: 'group' },
  { action: 'delete_for_all', actor: 'outsider', target: 'owner', expect: 404 },
  // create a forum topic
  { action: 'create_topic', actor: 'owner', expect: 200 },
  { action: 'create_topic', actor: 'admin', expect: 200 },
  { action: 'create_topic', actor: 'member', expect: 403 },
  { action: 'create_topic', actor: 'outsider', expect: 404 },
  // bind a discussion group (channel side)
  { action: 'bind', actor: 'owner', expect: 200 },
  { action: 'bind', actor: 'admin', expect: 403 },
  { action: 'bind', actor: 'member', expect: 403 },
  { action: 'bind', actor: 'outsider', expect: 404 },
  { action: 'unbind', actor: 'owner', expect: 200 },
  { action: 'unbind', actor: 'admin', expect: 403 },
  { action: 'unbind', actor: 'member', expect: 403 },
  { action: 'unbind', actor: 'outsider', expect: 404 },
  // leave
  { action: 'leave', actor: 'owner', expect: 200 },
  { action: 'leave', actor: 'admin', expect: 200 },
  { action: 'leave', actor: 'member', expect: 200 },
  { action: 'leave', actor: 'outsider', expect: 404 },
]

const defaultPublic: Record<Kind, boolean> = { group: false, channel: true }

for (const cell of cells) {
  const def = ACTIONS[cell.action]
  for (const kind of def.kinds) {
    if (cell.kind && cell.kind !== kind) continue
    // outsiders on a private and on a public chat; members on the default visibility
    const visibilities = cell.actor === 'outsider' ? [false, true] : [defaultPublic[kind]]
    for (const isPublic of visibilities) {
      const where = cell.actor === 'outsider' ? `${kind} (${isPublic ? 'public' : 'private'})` : kind
      // a public chat is visible to an outsider: refused with 403 (join first), not hidden behind 404
      const expect = cell.actor === 'outsider' && isPublic && cell.expect === 404 ? 403 : cell.expect
      const name = `${where}: ${actorName(kind, cell.actor)} ${def.label(kind, cell.target)} → ${expect}`
      test(name, async () => {
        const fx = await build(kind, isPublic)
        const prepared = def.setup ? await def.setup(fx, cell.actor, cell.target) : undefined
        const viewer = def.viewer ?? ownerU
        const before = await snapshot(fx, viewer)
        const res = await def.act(fx, ACTOR[cell.actor], prepared, cell.target)
        expectStatus(res, expect)
        if (expect === 200) {
          await def.allowed(fx, res, prepared, cell.actor, cell.target)
        } else {
          assert.deepEqual(await snapshot(fx, viewer), before, 'a refused action changes nothing')
          await def.refused?.(fx, prepared, cell.target)
        }
      })
    }
  }
}

// ---- "—": the owner cannot remove themselves (that is leave) --------------------------------------

for (const kind of ['group', 'channel'] as const) {
  test(`${kind}: owner removes the owner (themselves) → refused, the owner stays`, async () => {
    const fx = await build(kind, defaultPublic[kind])
    const before = await snapshot(fx, ownerU)
    const res = await post(ownerU, fx, 'groups/remove-member', 'channels/remove-subscriber', { user_id: ownerU.id })
    assert.ok(res.status >= 400 && res.status < 500, res.text)
    assert.equal(res.body.success, false)
    assert.deepEqual(await snapshot(fx, ownerU), before)
  })
}

// ---- read info, history, members (private and public chats) ---------------------------------------

const readFixtures = new Map<string, Promise<{ fx: Fx; seed: any }>>()
/** read cells change nothing, so the four actors share one chat per kind and visibility */
function readFixture(kind: Kind, isPublic: boolean) {
  const key = `${kind}:${isPublic}`
  if (!readFixtures.has(key)) {
    readFixtures.set(
      key,
      (async () => {
        const fx = await build(kind, isPublic)
        const seed = data(await sendTo(ownerU, fx, 'seed'))
        return { fx, seed }
      })(),
    )
  }
  return readFixtures.get(key)!
}

const ROLE_OF: Record<Actor, (kind: Kind) => string | null> = {
  owner: () => 'owner',
  admin: () => 'admin',
  member: (kind) => plainRole(kind),
  outsider: () => null,
}

for (const kind of ['group', 'channel'] as const) {
  for (const isPublic of [false, true]) {
    for (const actor of ['owner', 'admin', 'member', 'outsider'] as const) {
      const visible = isPublic || actor !== 'outsider'
      const membersStatus = !visible ? 404 : kind === 'channel' && !isPublic && actor === 'member' ? 403 : 200
      const summary = visible ? (membersStatus === 200 ? '✓' : `✓ (${kind === 'channel' ? 'subscribers' : 'members'} list → 403)`) : '404'
      test(`${kind} (${isPublic ? 'public' : 'private'}): ${actorName(kind, actor)} reads info, history, ${kind === 'group' ? 'members' : 'subscribers'} → ${summary}`, async () => {
        const { fx, seed } = await readFixture(kind, isPublic)
        const user = ACTOR[actor]
        const infos = [await getInfo(user, fx)]
        if (kind === 'channel') infos.push(await user.api.get(`${V2}/channels/info`, { query: { channel_id: fx.id } }))
        const hist = await getHistory(user, fx)
        const members = await getMembers(user, fx)
        if (!visible) {
          for (const res of [...infos, hist, members]) expectStatus(res, 404)
          return
        }
        for (const res of infos) {
          const info = data(res)
          assert.equal(kind === 'group' ? info.group_id : info.channel_id, fx.id)
          assert.equal(info.my_role, ROLE_OF[actor](kind))
          assert.equal(info.is_public, isPublic)
          // the invite link: everyone in a public chat, owner and admins in a private one
          const seesLink = isPublic || actor === 'owner' || actor === 'admin'
          if (seesLink) assert.match(info.invite_link, new RegExp(`/${kind === 'group' ? 'join' : 'channel'}/[A-Za-z0-9_-]+$`))
          else assert.equal(info.invite_link, null)
          if (kind === 'channel') assert.equal(info.is_subscribed, actor !== 'outsider')
        }
        expectStatus(hist, 200)
        assert.deepEqual(
          hist.body.items.map((m: any) => m.message_id),
          [seed.message_id],
        )
        expectStatus(members, membersStatus)
        if (membersStatus === 200) {
          assert.equal(members.body.total, 5)
          assert.deepEqual(
            members.body.items.map((m: any) => [m.user_id, m.role]),
            [
              [ownerU.id, 'owner'],
              [adminU.id, 'admin'],
              [admin2U.id, 'admin'],
              [memberU.id, plainRole(kind)],
              [member2U.id, plainRole(kind)],
            ],
            'join order, with roles',
          )
        }
      })
    }
  }
}

// ---- bind a discussion group: the group side --------------------------------------------------------

test('channel: owner binds a group where they are only a member → 403', async () => {
  const fx = await build('channel', true)
  const group = data(await strangerU.api.post(`${V2}/groups/create`, { title: 'Theirs', member_ids: [ownerU.id] }))
  const res = await ownerU.api.post(`${V2}/channels/bind-group`, { channel_id: fx.id, group_id: group.group_id })
  expectStatus(res, 403)
  assert.equal(data(await getInfo(ownerU, fx)).discussion_group_id, null)
})

test('channel: owner binds a group where they are an admin → 200', async () => {
  const fx = await build('channel', true)
  const group = data(await strangerU.api.post(`${V2}/groups/create`, { title: 'Theirs', member_ids: [ownerU.id] }))
  data(await strangerU.api.post(`${V2}/groups/promote`, { chat_id: group.group_id, user_id: ownerU.id }))
  const res = await ownerU.api.post(`${V2}/channels/bind-group`, { channel_id: fx.id, group_id: group.group_id })
  expectStatus(res, 200)
  assert.equal(res.body.data.discussion_group_id, group.group_id)
  assert.equal(data(await getInfo(ownerU, fx)).discussion_group_id, group.group_id)
})

for (const isPublic of [false, true]) {
  // a public group is visible to them (403: join first); a private one is not (404)
  test(`channel: owner binds a ${isPublic ? 'public' : 'private'} group they are not in → ${isPublic ? 403 : 404}`, async () => {
    const fx = await build('channel', true)
    const group = data(await strangerU.api.post(`${V2}/groups/create`, { title: 'Theirs', is_public: isPublic }))
    const res = await ownerU.api.post(`${V2}/channels/bind-group`, { channel_id: fx.id, group_id: group.group_id })
    expectStatus(res, isPublic ? 403 : 404)
    assert.equal(data(await getInfo(ownerU, fx)).discussion_group_id, null)
  })
}

// ---- verify a channel: platform admins only, whatever their role in it ------------------------------

async function isVerified(fx: Fx) {
  return data(await getInfo(ownerU, fx)).is_verified as boolean
}

for (const isPublic of [false, true]) {
  test(`channel (${isPublic ? 'public' : 'private'}): platform admin outside the channel verifies → 200`, async () => {
    const fx = await build('channel', isPublic)
    const res = await platformAdmin.api.post(`${V2}/channels/verify`, { channel_id: fx.id })
    expectStatus(res, 200)
    assert.equal(res.body.data.is_verified, true)
    assert.equal(await isVerified(fx), true)
  })
}

for (const role of ['owner', 'admin', 'subscriber'] as const) {
  test(`channel: platform admin who is its ${role} verifies → 200`, async () => {
    let fx: Fx
    if (role === 'owner') {
      const channel = data(await platformAdmin.api.post(`${V2}/channels/create`, { title: 'Admin channel' }))
      fx = { kind: 'channel', id: channel.channel_id, isPublic: true }
    } else {
      fx = await build('channel', true)
      data(await platformAdmin.api.post(`${V2}/channels/subscribe`, { channel_id: fx.id }))
      if (role === 'admin') data(await ownerU.api.post(`${V2}/channels/add-admin`, { channel_id: fx.id, user_id: platformAdmin.id }))
    }
    const res = await platformAdmin.api.post(`${V2}/channels/verify`, { channel_id: fx.id })
    expectStatus(res, 200)
    assert.equal(res.body.data.is_verified, true)
    assert.equal(data(await getInfo(platformAdmin, fx)).is_verified, true)
  })
}

for (const actor of ['owner', 'admin', 'member', 'outsider'] as const) {
  for (const isPublic of actor === 'outsider' ? [false, true] : [true]) {
    const where = actor === 'outsider' ? `channel (${isPublic ? 'public' : 'private'})` : 'channel'
    test(`${where}: ${actorName('channel', actor)} (not a platform admin) verifies → 403`, async () => {
      const fx = await build('channel', isPublic)
      const before = await snapshot(fx, ownerU)
      const res = await ACTOR[actor].api.post(`${V2}/channels/verify`, { channel_id: fx.id })
      expectStatus(res, 403)
      assert.equal(await isVerified(fx), false)
      assert.deepEqual(await snapshot(fx, ownerU), before)
    })
  }
}
