/** The events of messages: what members hear when messages are sent, changed, read or reacted to. */
import { Type } from 'typebox'
import { defineEvents } from '../../events/define.js'
import { Timestamp } from '../../http/schemas.js'
import { MessageView, ReactionResult } from './schemas.js'

export const MessageDeleted = Type.Object({ chat_id: Type.Integer(), message_id: Type.Integer(), deleted_for_all: Type.Boolean() })
export const MessageRead = Type.Object({
  chat_id: Type.Integer(),
  reader_id: Type.Integer(),
  message_id: Type.Integer(),
  read_at: Timestamp,
})
export const ReactionUpdated = Type.Object({ chat_id: Type.Integer(), message_id: Type.Integer(), reactions: ReactionResult })
export const ScheduledDropped = Type.Object({
  chat_id: Type.Integer(),
  scheduled_id: Type.Integer(),
  reason: Type.Union([Type.Literal('blocked'), Type.Literal('not_member'), Type.Literal('not_allowed')]),
})
export const Typing = Type.Object({ chat_id: Type.Integer(), user_id: Type.Integer(), is_typing: Type.Boolean() })

export const messageEvents = defineEvents({
  'message.new': {
    payload: Type.Object({ message: MessageView }),
    routes: ['chat'],
    summary: 'A message was sent to the chat (replayed as the message is now: edits, reactions, read state).',
  },
  'message.edited': { payload: Type.Object({ message: MessageView }), routes: ['chat'], summary: 'A message was edited.' },
  'message.deleted': {
    payload: MessageDeleted,
    routes: ['chat', 'user'],
    summary: 'A message was deleted for everyone (to the chat) or for me (to my own devices only).',
  },
  'message.read': {
    payload: MessageRead,
    routes: ['user'],
    summary: "A reader's position moved: to both members of a personal chat, to the reader's own devices in a group or channel.",
  },
  'reaction.updated': {
    payload: ReactionUpdated,
    routes: ['chat'],
    summary: "A message's reactions changed (the whole map, emoji → count).",
  },
  'scheduled.dropped': {
    payload: ScheduledDropped,
    routes: ['user'],
    summary: 'My scheduled message could not be sent when its time came (I left, lost the right to post, or was blocked).',
  },
  typing: {
    payload: Typing,
    routes: ['ephemeral'],
    summary: 'A member started or stopped typing; a start not refreshed within 5 s is followed by a stop from the server.',
  },
})
