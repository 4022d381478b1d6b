/**
 * Tern messages as Telegram Message objects for a bot, with what needs a lookup: the file behind
 * an attachment (photo or document), the message replied to, the inline keyboard kept with it.
 */
import type { AppContext } from '../../context.js'
import type { ChatRow, MessageRow } from '../../db/tables.js'
import { fromJson } from '../../db/json.js'
import * as users from '../users/index.js'
import * as repo from './repo.js'
import {
  commandEntities,
  tgGroupChat,
  tgPrivateChat,
  tgUser,
  unixSeconds,
  type TgChat,
  type TgDocument,
  type TgMessage,
  type TgPhotoSize,
} from './telegram.js'
import * as files from '../files/index.js'
import * as messages from '../messages/index.js'

/** The upload behind a file_id (an upload path), if it exists. */
export const uploadOf = (ctx: AppContext, fileId: string) => files.uploadByServedPath(ctx, fileId, false)

type Upload = NonNullable<Awaited<ReturnType<typeof uploadOf>>>

export const fileUniqueId = (upload: Pick<Upload, 'hash'>) => upload.hash.slice(0, 24)

/** An image as Telegram's one-size photo array; anything else as a document. */
export function tgFile(upload: Upload): { photo: TgPhotoSize[] } | { document: TgDocument } {
  if (upload.file_type === 'image') {
    return {
      photo: [
        {
          file_id: upload.path,
          file_unique_id: fileUniqueId(upload),
          width: upload.width ?? 0,
          height: upload.height ?? 0,
          file_size: upload.size,
        },
      ],
    }
  }
  return {
    document: {
      file_id: upload.path,
      file_unique_id: fileUniqueId(upload),
      file_name: upload.original_name,
      mime_type: upload.mime_type,
      file_size: upload.size,
    },
  }
}

/** How the bot sees a Tern chat: a personal chat is named after the other member. */
export async function tgChatOf(ctx: AppContext, chat: ChatRow, botId: number): Promise<TgChat | null> {
  if (chat.chat_type !== 'personal') return tgGroupChat(chat)
  const otherId = chat.peer1_id === botId ? chat.peer2_id : chat.peer1_id
  const other = otherId === null ? undefined : await users.findById(ctx, otherId)
  return other ? tgPrivateChat(other) : null
}

/** The message fields a Telegram Message is built from (a row, or a MessageView's). */
export interface MessageFacts {
  id: number
  chat_id: number
  sender_id: number
  content: string
  file_path: string | null
  reply_to_id: number | null
  created_at: number
  edited_at: number | null
}

export const factsOfRow = (row: MessageRow): MessageFacts => ({
  id: row.id,
  chat_id: row.chat_id,
  sender_id: row.sender_id,
  content: row.content,
  file_path: row.file_path,
  reply_to_id: row.reply_to_id,
  created_at: row.created_at,
  edited_at: row.edited_at,
})

/** A Tern message as a Telegram Message in `chat` (the bot's view of its chat). Null when its sender is gone. */
export async function tgMessage(
  ctx: AppContext,
  message: MessageFacts,
  chat: TgChat,
  options: { markup?: boolean; sender?: Parameters<typeof tgUser>[0] } = {},
): Promise<TgMessage | null> {
  const sender = options.sender ?? (await users.findById(ctx, message.sender_id))
  if (!sender) return null
  const upload = message.file_path ? await uploadOf(ctx, message.file_path) : undefined
  const entities = commandEntities(message.content)
  const replyTo = await repliedMessage(ctx, message.reply_to_id, message.chat_id, chat)
  const markup = options.markup ? await repo.findMarkup(ctx.db, message.id) : undefined
  const result: TgMessage = {
    message_id: message.id,
    from: tgUser(sender),
    chat,
    date: unixSeconds(message.created_at),
    ...(message.edited_at !== null ? { edit_date: unixSeconds(message.edited_at) } : {}),
  }
  if (upload) {
    Object.assign(result, tgFile(upload))
    if (message.content) result.caption = message.content
    if (message.content && entities.length) result.caption_entities = entities
  } else {
    if (message.content) result.text = message.content
    if (entities.length) result.entities = entities
  }
  if (replyTo) result.reply_to_message = replyTo
  if (markup) result.reply_markup = fromJson<unknown>(markup.reply_markup)
  return result
}

/**
 * The message replied to, as Telegram nests it (`reply_to_message`, itself without one); null when
 * it is gone (deleted for everyone) or not in this chat.
 */
export async function repliedMessage(
  ctx: AppContext,
  replyToId: number | null,
  chatId: number,
  chat: TgChat,
): Promise<Omit<TgMessage, 'reply_to_message'> | null> {
  if (replyToId === null) return null
  const found = await messages.moderatedMessage(ctx.db, replyToId)
  if (!found || found.row.chat_id !== chatId || found.row.deleted_for_all === 1) return null
  const sender = await users.findById(ctx, found.row.sender_id)
  if (!sender) return null
  const entities = commandEntities(found.row.content)
  return {
    message_id: found.row.id,
    from: tgUser(sender),
    chat,
    date: unixSeconds(found.row.created_at),
    ...(found.row.content ? { text: found.row.content } : {}),
    ...(entities.length ? { entities } : {}),
  }
}
