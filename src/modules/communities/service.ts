/**
 * What groups and channels share: creation, the shapes' data, membership changes with their
 * events, metadata edits and invite links. Each change runs in one transaction that first locks
 * the chat row, so concurrent role changes, joins and leaves of one chat apply one at a time and
 * every check sees the state it changes.
 *
 * Events: a membership change is logged once in the chat's own log (every member hears it) and in
 * the affected user's own update log, with the chat seq it happened at, so each of that user's
 * sockets starts or stops following the chat from exactly there.
 */
import { randomBytes } from 'node:crypto'
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import type { ChatRow, InviteLinkRow, UserRow } from '../../db/tables.js'
import { AppError, conflict, forbidden, notFound, validationError } from '../../http/errors.js'
import { iso, parseInstant } from '../../lib/time.js'
import { inTransaction, type Outbox } from '../../events/outbox.js'
import { recordModeration } from '../modlog/index.js'
import * as blocks from '../../policies/blocks.js'
import { seer } from '../../policies/sight.js'
import { presentPeer } from '../users/index.js'
import * as users from '../users/index.js'
import { resolveAvatar } from './avatar.js'
import { can, memberRole, type Action } from '../../policies/chats.js'
import * as members from './members-repo.js'
import * as repo from './repo.js'
import { isPlatformAdmin, isUsable } from '../../policies/accounts.js'

export type CommunityType = 'group' | 'channel'

const NOUN: Record<CommunityType, string> = { group: 'Group', channel: 'Channel' }

export const newInviteCode = () => randomBytes(16).toString('base64url')

/** The invite link of a code: {base}/join/<code> for groups, {base}/channel/<code> for channels. */
export function inviteLink(ctx: AppContext, type: string, code: string) {
  return `${ctx.config.publicBaseUrl.replace(/\/+$/, '')}/${type === 'channel' ? 'channel' : 'join'}/${code}`
}

/** A code from the code itself or from a whole invite link. */
export function codeOf(input: string) {
  const path = input.trim().split(/[?#]/)[0].replace(/\/+$/, '')
  return path.slice(path.lastIndexOf('/') + 1)
}

/**
 * The group or channel as the caller may see it: a member sees it; anyone sees a public one;
 * otherwise 404, so outsiders cannot tell a private chat exists.
 */
export async function view(ctx: AppContext, me: UserRow, chatId: number, type: CommunityType, db: Db = ctx.db) {
  const chat = await repo.findView(db, chatId, me.id)
  if (!chat || chat.chat_type !== type || (chat.my_role === null && chat.is_public !== 1)) throw notFound(`${NOUN[type]} not found`)
  return chat
}

/**
 * A page of members in join order, as `viewerId` sees them (privacy and blocks): their Peer shape
 * with role and join time.
 */
export async function memberPage(
  ctx: AppContext,
  chat: { id: number; member_count: number },
  viewerId: number,
  page: number,
  perPage: number,
) {
  const [rows, blocked] = await Promise.all([members.page(ctx.db, chat.id, page, perPage), blocks.blockedAround(ctx.db, viewerId)])
  const now = ctx.clock.now()
  const see = await seer(ctx.db, viewerId, rows, blocked)
  return {
    items: rows.map((row) => ({ ...presentPeer(row, now, see(row)), role: row.role, joined_at: iso(row.joined_at) })),
    total: chat.member_count,
  }
}

/** Inside a change: the chat (locked) and my role in it; 404 unless I am a member, 403 unless my role allows `action`. */
async function authorize(
  ctx: AppContext,
  trx: Db,
  me: UserRow,
  chatId: number,
  type: CommunityType,
  action: Action | null,
  target?: string,
) {
  await repo.lockChat(trx, chatId)
  const chat = await view(ctx, me, chatId, type, trx)
  assertMay(chat, type, action, target)
  return chat
}

/**
 * 403 unless the viewer of `chat` (from view(), which already answered 404 to outsiders of a private
 * chat) is a member whose role allows `action`. An outsider of a public chat sees it, so hears 403
 * (join first), not 404.
 */
export function assertMay<T extends Pick<ChatRow, 'chat_type'> & { my_role: string | null }>(
  chat: T,
  type: CommunityType,
  action: Action | null,
  target?: string,
  denied?: string,
): asserts chat is T & { my_role: string } {
  if (chat.my_role === null) throw forbidden(`Only members can do this: join the ${type} first`)
  if (action && !can(chat, chat.my_role, action, target)) throw forbidden(denied ?? `Your role (${chat.my_role}) does not allow this`)
}

/** Logs a membership change in the chat's log and in the user's own. */
async function membershipEvent(
  events: Outbox,
  chat: Pick<ChatRow, 'id' | 'chat_type' | 'peer1_id' | 'peer2_id'>,
  type: 'member.joined' | 'member.left',
  userId: number,
  role: string | null,
) {
  const data = { chat_id: chat.id, user_id: userId, role }
  const inChat = await events.toChat(chat, type, data)
  // the user's own frame goes first: their sockets start (or stop) following the chat from it
  await events.toUsers([userId], type, { ...data, chat_type: chat.chat_type, chat_seq: inChat.chatSeq ?? undefined }, { before: inChat })
}

async function requireActiveUser(ctx: AppContext, userId: number, db: Db = ctx.db) {
  const user = await users.findByIdIn(db, userId)
  if (!user || !isUsable(user)) throw notFound('User not found')
  return user
}

export interface CreateInput {
  title: string
  description?: string
  avatar?: string | null
  is_public?: boolean
  member_ids?: number[]
}

/** Creates a group or channel owned by `me`, with its permanent invite link and any first members. */
export async function create(ctx: AppContext, me: UserRow, type: CommunityType, input: CreateInput, isPublicByDefault: boolean) {
  const avatar = await resolveAvatar(ctx, me.id, input.avatar ?? null)
  const others = (input.member_ids ?? []).filter((id) => id !== me.id)
  for (const id of others) await requireActiveUser(ctx, id)
  const chatId = await inTransaction(ctx, async (trx, events) => {
    const { now } = events
    const code = newInviteCode()
    const chat = await repo.insertChat(trx, {
      chat_type: type,
      title: input.title.trim(),
      description: input.description ?? '',
      avatar,
      is_public: (input.is_public ?? isPublicByDefault) ? 1 : 0,
      owner: me.id,
      code,
      now,
    })
    await repo.insertInvite(trx, { chat_id: chat.id, code, created_by: me.id, usage_limit: null, expires_at: null, now })
    for (const [userId, role] of [[me.id, 'owner'], ...others.map((id) => [id, memberRole(chat)])] as [number, string][]) {
      await members.add(trx, chat.id, userId, role, now)
      await membershipEvent(events, chat, 'member.joined', userId, role)
    }
    return chat.id
  })
  return view(ctx, me, chatId, type)
}

/** Adds `userId` (an owner's or admin's action in a group). */
export async function addMember(ctx: AppContext, me: UserRow, chatId: number, userId: number, type: CommunityType) {
  const role = await inTransaction(ctx, async (trx, events) => {
    const chat = await authorize(ctx, trx, me, chatId, type, 'add_member')
    await requireActiveUser(ctx, userId, trx)
    if ((await members.roleOf(trx, chat.id, userId)) !== null) throw conflict('Already a member')
    const role = memberRole(chat)
    await members.add(trx, chat.id, userId, role, events.now)
    await membershipEvent(events, chat, 'member.joined', userId, role)
    return role
  })
  return { chat_id: chatId, user_id: userId, role }
}

/** Removes another member: an owner or admin ranking above them. */
export async function removeMember(ctx: AppContext, me: UserRow, chatId: number, userId: number, type: CommunityType) {
  if (userId === me.id) throw validationError('To leave, use leave')
  await inTransaction(ctx, async (trx, events) => {
    const chat = await authorize(ctx, trx, me, chatId, type, null)
    const target = await members.roleOf(trx, chat.id, userId)
    if (target === null) throw notFound('Not a member')
    if (!can(chat, chat.my_role, 'remove_member', target)) throw forbidden(`Your role (${chat.my_role}) cannot remove a ${target}`)
    await members.remove(trx, chat.id, userId)
    await membershipEvent(events, chat, 'member.left', userId, null)
  })
  return { chat_id: chatId, user_id: userId, role: null }
}

/** Makes a member an admin (`admin`) or an admin a plain member again: the owner's call. */
export async function setAdmin(ctx: AppContext, me: UserRow, chatId: number, userId: number, type: CommunityType, admin: boolean) {
  const role = await inTransaction(ctx, async (trx, events) => {
    const chat = await authorize(ctx, trx, me, chatId, type, null)
    if (!can(chat, chat.my_role, admin ? 'promote' : 'demote', admin ? memberRole(chat) : 'admin'))
      throw forbidden('Only the owner can promote or demote')
    const target = await members.roleOf(trx, chat.id, userId)
    if (target === null) throw notFound('Not a member')
    if (admin && target !== memberRole(chat)) throw conflict(`Already ${target === 'owner' ? 'the owner' : 'an admin'}`)
    if (!admin && target !== 'admin') throw conflict('Not an admin')
    if (!can(chat, chat.my_role, admin ? 'promote' : 'demote', target)) throw forbidden('Not allowed')
    const role = admin ? 'admin' : memberRole(chat)
    await members.setRole(trx, chat.id, userId, role)
    await events.toChat(chat, 'chat.updated', { chat_id: chat.id, user_id: userId, role })
    return role
  })
  return { chat_id: chatId, user_id: userId, role }
}

/** Hands the owner role to another member; the old owner becomes an admin. */
export async function transfer(ctx: AppContext, me: UserRow, chatId: number, userId: number, type: CommunityType) {
  await inTransaction(ctx, async (trx, events) => {
    // permission first: only the owner learns that naming themselves is pointless
    const chat = await authorize(ctx, trx, me, chatId, type, 'transfer')
    if (userId === me.id) throw validationError('You already own it')
    if ((await members.roleOf(trx, chat.id, userId)) === null) throw notFound('Not a member')
    await handOver(events, chat, userId, me.id)
  })
  return view(ctx, me, chatId, type)
}

/** The owner role moves to `heir`; the previous owner, if staying, becomes an admin. */
async function handOver(events: Outbox, chat: ChatRow, heir: number, previous: number, previousStays = true) {
  await members.setRole(events.db, chat.id, heir, 'owner')
  await repo.updateChat(events.db, chat.id, { owner_id: heir })
  await events.toChat(chat, 'chat.updated', { chat_id: chat.id, owner_id: heir, user_id: heir, role: 'owner' })
  if (!previousStays) return
  await members.setRole(events.db, chat.id, previous, 'admin')
  await events.toChat(chat, 'chat.updated', { chat_id: chat.id, user_id: previous, role: 'admin' })
}

/**
 * Leaves. An owner leaving hands ownership to the longest-standing admin, else (in a group) the
 * longest-standing member; a channel needs an admin to inherit it. The last one out dissolves it.
 */
export async function leave(ctx: AppContext, me: UserRow, chatId: number, type: CommunityType) {
  const dissolved = await inTransaction(ctx, async (trx, events) => {
    const chat = await authorize(ctx, trx, me, chatId, type, null)
    if (chat.my_role === 'owner') {
      const heir =
        (await members.eldest(trx, chat.id, 'admin', me.id)) ??
        (type === 'group' ? await members.eldest(trx, chat.id, memberRole(chat), me.id) : undefined)
      if (heir) await handOver(events, chat, heir.user_id, me.id, false)
      else if (chat.member_count > 1) throw conflict('Make someone an admin or transfer the channel before leaving it')
    }
    await members.remove(trx, chat.id, me.id)
    if (chat.member_count <= 1) {
      await repo.deleteChat(trx, chat.id)
      // nobody is left to hear the chat's log; my own devices still learn I left
      const left = {
        chat_id: chat.id,
        user_id: me.id,
        role: null,
        chat_type: chat.chat_type,
        chat_seq: chat.event_seq + 1,
        dissolved: true,
      }
      await events.toUsers([me.id], 'member.left', left)
      return true
    }
    await membershipEvent(events, chat, 'member.left', me.id, null)
    return false
  })
  return { chat_id: chatId, left: true, dissolved }
}

/**
 * The owner's account is going: they leave each group and channel they own, which hands it to
 * the longest-standing admin (in a group, else the longest-standing member) or dissolves it when
 * they were alone. A channel with subscribers but no admin to inherit it stays theirs, read-only
 * under "Deleted account". Answers how many were handed over or dissolved.
 */
export async function leaveOwnedChats(ctx: AppContext, me: UserRow): Promise<number> {
  let left = 0
  for (const chat of await repo.ownedBy(ctx.db, me.id)) {
    try {
      await leave(ctx, me, chat.id, chat.chat_type as CommunityType)
      left++
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'conflict')) throw error
    }
  }
  return left
}

/** Joins a public chat, or any chat through one of its invite links (one use, taken atomically). */
export async function join(ctx: AppContext, me: UserRow, chatId: number, invite: InviteLinkRow | null, type: CommunityType) {
  await inTransaction(ctx, async (trx, events) => {
    const { now } = events
    await repo.lockChat(trx, chatId)
    const chat = await repo.findView(trx, chatId, me.id)
    if (!chat || chat.chat_type !== type || (!invite && chat.is_public !== 1)) throw notFound(`${NOUN[type]} not found`)
    if (chat.my_role !== null) throw conflict('Already a member')
    if (invite && !(await repo.takeInviteUse(trx, invite.id, now))) throw forbidden(inviteRefusal(invite, now))
    const role = memberRole(chat)
    await members.add(trx, chat.id, me.id, role, now)
    await membershipEvent(events, chat, 'member.joined', me.id, role)
  })
  return view(ctx, me, chatId, type)
}

function inviteRefusal(invite: InviteLinkRow, now: number) {
  if (invite.revoked_at !== null) return 'This invite link was revoked'
  if (invite.expires_at !== null && invite.expires_at <= now) return 'This invite link has expired'
  return 'This invite link has reached its usage limit'
}

/** The invite behind a code or link, and its chat; 404 for unknown codes. */
export async function findInvite(ctx: AppContext, input: string) {
  const invite = await repo.findInvite(ctx.db, codeOf(input))
  if (!invite) throw notFound('Invite link not found')
  return invite
}

/** Title, description, avatar or forum mode: an owner's or admin's edit, told to every member. */
export async function edit(
  ctx: AppContext,
  me: UserRow,
  chatId: number,
  type: CommunityType,
  changes: { title?: string; description?: string; avatar?: string | null; is_forum?: boolean },
) {
  if (changes.avatar !== undefined) {
    // who may edit is answered before what they sent (checked again, locked, below)
    assertMay(await view(ctx, me, chatId, type), type, 'edit_info')
  }
  const avatar = changes.avatar === undefined ? undefined : await resolveAvatar(ctx, me.id, changes.avatar)
  await inTransaction(ctx, async (trx, events) => {
    const chat = await authorize(ctx, trx, me, chatId, type, 'edit_info')
    const stored = {
      ...(changes.title !== undefined ? { title: changes.title.trim() } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(avatar !== undefined ? { avatar } : {}),
      ...(changes.is_forum !== undefined ? { is_forum: changes.is_forum ? 1 : 0 } : {}),
    }
    await repo.updateChat(trx, chat.id, stored)
    const event = {
      chat_id: chat.id,
      ...(stored.title !== undefined ? { title: stored.title } : {}),
      ...(stored.description !== undefined ? { description: stored.description } : {}),
      ...(avatar !== undefined ? { avatar_url: avatar === null ? null : `/uploads/${avatar}` } : {}),
      ...(changes.is_forum !== undefined ? { is_forum: changes.is_forum } : {}),
    }
    await events.toChat(chat, 'chat.updated', event)
  })
  return view(ctx, me, chatId, type)
}

export function presentInvite(ctx: AppContext, type: string, invite: InviteLinkRow, primaryCode: string | null) {
  return {
    code: invite.code,
    invite_link: inviteLink(ctx, type, invite.code),
    uses: invite.uses,
    expires_at: invite.expires_at === null ? null : iso(invite.expires_at),
    usage_limit: invite.usage_limit,
    is_revoked: invite.revoked_at !== null,
    is_primary: invite.code === primaryCode,
    created_at: iso(invite.created_at),
  }
}

/** A new invite link with an optional expiry and usage limit (owner or admin). */
export async function createInvite(
  ctx: AppContext,
  me: UserRow,
  chatId: number,
  type: CommunityType,
  options: { expires_at?: string; usage_limit?: number },
) {
  const now = ctx.clock.now()
  // validated as a timestamp already; parseInstant is the one reading of one (lib/time.ts)
  const expiresAt = options.expires_at === undefined ? null : parseInstant(options.expires_at)
  if (expiresAt !== null && expiresAt <= now) throw validationError('expires_at must be in the future')
  const invite = await ctx.db.transaction().execute(async (trx) => {
    const chat = await authorize(ctx, trx, me, chatId, type, 'invite_links')
    return repo.insertInvite(trx, {
      chat_id: chat.id,
      code: newInviteCode(),
      created_by: me.id,
      usage_limit: options.usage_limit ?? null,
      expires_at: expiresAt,
      now,
    })
  })
  return presentInvite(ctx, type, invite, null)
}

/** Revokes a link; revoking the permanent link replaces it with a new one (as in Telegram). */
export async function revokeInvite(ctx: AppContext, me: UserRow, chatId: number, type: CommunityType, input: string) {
  const code = codeOf(input)
  const now = ctx.clock.now()
  const { invite, primary } = await ctx.db.transaction().execute(async (trx) => {
    const chat = await authorize(ctx, trx, me, chatId, type, 'invite_links')
    if (!(await repo.revokeInvite(trx, chat.id, code, now))) throw notFound('No active invite link with this code here')
    let primary = chat.invite_code
    if (code === chat.invite_code) {
      primary = newInviteCode()
      await repo.insertInvite(trx, { chat_id: chat.id, code: primary, created_by: me.id, usage_limit: null, expires_at: null, now })
      await repo.updateChat(trx, chat.id, { invite_code: primary })
    }
    return { invite: (await repo.findInvite(trx, code))!, primary }
  })
  return presentInvite(ctx, type, invite, primary)
}

export async function listInvites(ctx: AppContext, me: UserRow, chatId: number, type: CommunityType) {
  const chat = await view(ctx, me, chatId, type)
  assertMay(chat, type, 'invite_links', undefined, 'Only the owner and admins see invite links')
  return (await repo.listInvites(ctx.db, chat.id)).map((invite) => presentInvite(ctx, type, invite, chat.invite_code))
}

/** The group or channel as `viewerId` sees it (their role, its last message…), whatever their access. */
export const findView = (db: Db, chatId: number, viewerId: number) => repo.findView(db, chatId, viewerId)
export type { ChatView } from './repo.js'

/** The owner and admins, owner first. */
export const staff = (ctx: AppContext, chatId: number) => members.staff(ctx.db, chatId)

/** A member's role in a group or channel (null when not a member). */
export const roleOf = (db: Db, chatId: number, userId: number) => members.roleOf(db, chatId, userId)

/** A platform admin marks a channel verified; the ModLog row is written in the same transaction. */
export async function markVerified(ctx: AppContext, me: UserRow, channelId: number) {
  if (!isPlatformAdmin(me)) throw forbidden('Only platform admins verify channels')
  await inTransaction(ctx, async (trx, events) => {
    const chat = await repo.findView(trx, channelId, me.id)
    if (chat?.chat_type !== 'channel') throw notFound('Channel not found')
    await repo.updateChat(trx, chat.id, { is_verified: 1 })
    await recordModeration(trx, me, 'channel.verify', chat.id, { title: chat.title }, events.now)
    await events.toChat(chat, 'chat.updated', { chat_id: chat.id, is_verified: true })
  })
}

/** An invite link by its code (null: none). */
export const inviteByCode = (ctx: AppContext, code: string) => repo.findInvite(ctx.db, code)
/** A group or channel as `viewerId` sees it (null viewer: signed out). */
export const chatView = (ctx: AppContext, chatId: number, viewerId: Parameters<typeof repo.findView>[2]) =>
  repo.findView(ctx.db, chatId, viewerId)
