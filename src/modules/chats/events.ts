/** The events of chats: a chat's state and its membership. */
import { Type } from 'typebox'
import { defineEvents } from '../../events/define.js'
import { Nullable } from '../../http/schemas.js'
import { Topic } from './schemas.js'

/** Only the fields that changed are present, with `chat_id` always. */
export const ChatUpdated = Type.Object({
  chat_id: Type.Integer(),
  title: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  avatar_url: Type.Optional(Nullable(Type.String())),
  is_forum: Type.Optional(Type.Boolean()),
  is_verified: Type.Optional(Type.Boolean()),
  discussion_group_id: Type.Optional(Nullable(Type.Integer())),
  owner_id: Type.Optional(Type.Integer()),
  /** with `role`: this member's role is now `role` */
  user_id: Type.Optional(Type.Integer()),
  role: Type.Optional(Type.String()),
  topic: Type.Optional(Topic),
  last_message_id: Type.Optional(Nullable(Type.Integer())),
  /** to my own devices only: I blocked (or unblocked) the peer of this personal chat */
  is_blocked: Type.Optional(Type.Boolean()),
})

/**
 * In the chat's log: who joined or left and their role. The member's own copy (their `seq`) adds
 * the chat's type and the `chat_seq` of the event, from which their sockets follow the chat (or
 * stop); `dissolved` when the last one out deleted it.
 */
export const MembershipChange = Type.Object({
  chat_id: Type.Integer(),
  user_id: Type.Integer(),
  role: Nullable(Type.String()),
  chat_type: Type.Optional(Type.String()),
  chat_seq: Type.Optional(Type.Integer()),
  dissolved: Type.Optional(Type.Boolean()),
})

export const chatEvents = defineEvents({
  'chat.updated': {
    payload: ChatUpdated,
    routes: ['chat', 'user'],
    summary: "A chat's information, a member's role, its topics or its last message changed.",
  },
  'member.joined': { payload: MembershipChange, routes: ['chat', 'user'], summary: 'Someone joined (or was added to) a group or channel.' },
  'member.left': { payload: MembershipChange, routes: ['chat', 'user'], summary: 'Someone left (or was removed from) a group or channel.' },
})
