/** Group and channel rows → the API's Group and Channel shapes. Pure. */
import { iso } from '../../lib/time.js'
import { uploadUrl } from '../users/index.js'
import type { ChatView } from '../communities/index.js'
import type { Group } from './schemas.js'
import { can } from '../../policies/chats.js'

/** The invite link is public in a public chat; in a private one only its owner and admins see it. */
export function visibleInvite(chat: ChatView, link: (code: string) => string): string | null {
  if (!chat.invite_code) return null
  return chat.is_public === 1 || can(chat, chat.my_role, 'invite_links') ? link(chat.invite_code) : null
}

export function presentGroup(chat: ChatView, link: (code: string) => string): Group {
  return {
    group_id: chat.id,
    name: chat.title ?? '',
    description: chat.description ?? '',
    avatar_url: uploadUrl(chat.avatar),
    owner_id: chat.owner_id,
    is_public: chat.is_public === 1,
    invite_link: visibleInvite(chat, link),
    member_count: chat.member_count,
    my_role: chat.my_role,
    last_message:
      chat.lm_id === null
        ? null
        : {
            message_id: chat.lm_id,
            content: chat.lm_content ?? '',
            sender_id: chat.lm_sender_id!,
            sender_username: chat.lm_sender_username ?? '',
            timestamp: iso(chat.lm_created_at!),
          },
    created_at: iso(chat.created_at),
    is_forum: chat.is_forum === 1,
    chat_seq: chat.event_seq,
  }
}
