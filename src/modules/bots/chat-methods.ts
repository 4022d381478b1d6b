/**
 * Bot API methods on messages and chats beyond sendMessage: editMessageText, deleteMessage,
 * sendChatAction, sendPhoto, sendDocument, getChat, getFile, answerCallbackQuery. Every message
 * goes through messages.send / messages' actions with the bot as the member acting, so the same
 * rules (membership, blocks, who may edit or delete) hold as for people.
 */
import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import type { AppContext } from '../../context.js'
import { fromJson } from '../../db/json.js'
import { inTransaction } from '../../events/outbox.js'
import { AppError } from '../../http/errors.js'
import * as files from '../files/index.js'
import * as actions from '../messages/index.js'
import { MAX_CONTENT } from '../messages/index.js'
import * as messages from '../messages/index.js'
import { replyMarkup, replyTarget } from './bot-markup.js'
import { badRequest, InputFile, type Params } from './bot-params.js'
import { asBotApiError, botUser, checkExternalId, sendAsBot, targetChat } from './bot-send.js'
import * as repo from './repo.js'
import type { AuthBot } from './service.js'
import { factsOfRow, fileUniqueId, tgMessage, uploadOf } from './tg-messages.js'
import { isReplyTarget } from '../../policies/chats.js'

interface Call {
  ctx: AppContext
  bot: AuthBot
  params: Params
  signal: AbortSignal
}
type Method = (call: Call) => Promise<unknown>

const rethrow = (error: unknown) => {
  throw asBotApiError(error)
}

/** Telegram's limit on a caption (a file's text). */
const MAX_CAPTION = 1024
/** How long a button press may be answered (answerCallbackQuery). */
export const CALLBACK_ANSWER_MS = 15 * 60_000

function checkText(text: string) {
  if (text.trim().length === 0) throw badRequest('message text is empty')
  if (text.length > MAX_CONTENT) throw badRequest('message is too long')
  return text
}

/** A message of the bot's chat (not deleted for everyone), or 400 in Telegram's words. */
async function messageIn(ctx: AppContext, chatId: number, messageId: number, missing: string) {
  const row = await messages.messageRow(ctx, messageId)
  if (!row || row.chat_id !== chatId || row.deleted_for_all === 1) throw badRequest(missing)
  return row
}

const editMessageText: Method = async ({ ctx, bot, params }) => {
  if (params.has('inline_message_id')) throw badRequest('inline messages are not supported: give chat_id and message_id')
  const chatIdParam = params.int('chat_id', { required: true })
  const messageId = params.int('message_id', { required: true, min: 1 })
  const text = checkText(params.string('text', { required: true }))
  const markup = replyMarkup(params)
  const target = await targetChat(ctx, bot, chatIdParam)
  const row = await messageIn(ctx, target.chatId, messageId, 'message to edit not found')
  if (row.sender_id !== bot.bot_id) throw badRequest("message can't be edited")
  if (row.file_path !== null) throw badRequest('there is no text in the message to edit')
  const current = await repo.findMarkup(ctx.db, row.id)
  const sameMarkup = JSON.stringify(markup ?? null) === JSON.stringify(current ? fromJson<unknown>(current.reply_markup) : null)
  if (row.content === text && sameMarkup) {
    throw badRequest(
      'message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
    )
  }
  const sender = await botUser(ctx, bot)
  if (row.content !== text) await actions.edit(ctx, sender, row.id, text).catch(rethrow)
  // as in Telegram, an edit without reply_markup takes the keyboard away
  if (!sameMarkup) await repo.replaceMarkup(ctx.db, row.id, bot.bot_id, markup)
  const edited = await messages.messageRow(ctx, row.id)
  return tgMessage(ctx, factsOfRow(edited ?? row), target.tgChat, { markup: true })
}

const deleteMessage: Method = async ({ ctx, bot, params }) => {
  const chatIdParam = params.int('chat_id', { required: true })
  const messageId = params.int('message_id', { required: true, min: 1 })
  const target = await targetChat(ctx, bot, chatIdParam)
  const row = await messageIn(ctx, target.chatId, messageId, 'message to delete not found')
  const sender = await botUser(ctx, bot)
  await actions.remove(ctx, sender, row.id, true).catch((error: unknown) => {
    if (error instanceof AppError && error.code === 'forbidden') throw badRequest("message can't be deleted")
    rethrow(error)
  })
  return true
}

/** Telegram's chat actions; each shows as Tern's typing indicator (Tern has no kinds of typing). */
const CHAT_ACTIONS = new Set([
  'typing',
  'upload_photo',
  'record_video',
  'upload_video',
  'record_voice',
  'upload_voice',
  'upload_document',
  'choose_sticker',
  'find_location',
  'record_video_note',
  'upload_video_note',
])

const sendChatAction: Method = async ({ ctx, bot, params }) => {
  const chatIdParam = params.int('chat_id', { required: true })
  const action = params.string('action', { required: true, max: 64 })
  if (!CHAT_ACTIONS.has(action)) throw badRequest('wrong parameter action in request')
  const target = await targetChat(ctx, bot, chatIdParam)
  await actions.typing(ctx, await botUser(ctx, bot), target.chatId, true).catch(rethrow)
  return true
}

/**
 * The upload a file_id names for this bot: its own, or one shared with it in a chat it is in (a
 * user's photo in an update), which becomes the bot's own upload of the same content (a new path,
 * as every upload has) so it can be sent on.
 */
async function usableFile(ctx: AppContext, botId: number, fileId: string, copy: boolean) {
  const upload = fileId.length <= 64 ? await uploadOf(ctx, fileId) : undefined
  if (!upload) return null
  if (upload.owner_id === botId) return upload
  if (!(await files.isSharedWith(ctx, upload.path, botId))) return null
  if (!copy) return upload
  const name = randomBytes(16).toString('base64url')
  const ext = /\.([a-z0-9]{1,10})$/.exec(upload.path)?.[1] ?? 'bin'
  const own = await files.insertUploadRow(ctx, {
    owner_id: botId,
    hash: upload.hash,
    path: `${name}.${ext}`,
    thumbnail_path: upload.thumbnail_path ? `${name}.thumb.webp` : null,
    original_name: upload.original_name,
    size: upload.size,
    mime_type: upload.mime_type,
    source: null,
    created_at: ctx.clock.now(),
  })
  return { ...upload, ...own }
}

const WRONG_FILE_ID = 'wrong file identifier/HTTP URL specified'

function sendFileMethod(kind: 'photo' | 'document'): Method {
  return async ({ ctx, bot, params }) => {
    const chatIdParam = params.int('chat_id', { required: true })
    const input = params.input(kind)
    if (input === undefined) throw badRequest(`there is no ${kind} in the request`)
    const caption = params.string('caption') ?? ''
    if (caption.length > MAX_CAPTION) throw badRequest('message caption is too long')
    const markup = replyMarkup(params)
    const reply = replyTarget(params)
    const externalId = params.has('external_message_id')
      ? checkExternalId(params.string('external_message_id', { required: true }))
      : undefined
    const target = await targetChat(ctx, bot, chatIdParam)
    const sender = await botUser(ctx, bot)

    let filePath: string
    let fileType: string
    if (input instanceof InputFile) {
      if (input.data.length === 0) throw badRequest(`${kind} must not be empty`)
      const uploaded = await files.upload(ctx, sender, Readable.from([input.data]), input.filename).catch(rethrow)
      filePath = uploaded.path
      fileType = uploaded.file_type
    } else {
      if (/^https?:\/\//i.test(input)) throw badRequest('sending a file by URL is not supported: upload it (multipart) or give a file_id')
      const upload = await usableFile(ctx, bot.bot_id, input, true)
      if (!upload) throw badRequest(WRONG_FILE_ID)
      filePath = upload.path
      fileType = upload.file_type
    }
    if (kind === 'photo' && fileType !== 'image') throw badRequest('IMAGE_PROCESS_FAILED: the photo is not an image')

    let replyToId = reply?.messageId
    if (reply) {
      const original = await messages.messageRow(ctx, reply.messageId)
      if (!isReplyTarget(original ?? undefined, target.chatId)) {
        if (!reply.lenient) throw badRequest('message to be replied not found')
        replyToId = undefined
      }
    }
    const { message, repeated } = await sendAsBot(
      ctx,
      sender,
      target,
      { content: caption, file_path: filePath, ...(replyToId !== undefined ? { reply_to_id: replyToId } : {}) },
      externalId,
    ).catch(rethrow)
    if (markup !== undefined && !repeated) await repo.insertMarkup(ctx.db, message.message_id!, bot.bot_id, markup)
    const row = await messages.messageRow(ctx, message.message_id!)
    return row ? tgMessage(ctx, factsOfRow(row), target.tgChat, { markup: true }) : null
  }
}

const getChat: Method = async ({ ctx, bot, params }) => {
  const target = await targetChat(ctx, bot, params.int('chat_id', { required: true }))
  return { ...target.tgChat, accent_color_id: 0, max_reaction_count: 11 }
}

const getFile: Method = async ({ ctx, bot, params }) => {
  const fileId = params.string('file_id', { required: true })
  const upload = await usableFile(ctx, bot.bot_id, fileId, false)
  if (!upload) throw badRequest('wrong file_id or the file is temporarily unavailable')
  // file_path is the upload's path: downloaded at /file/bot<token>/<file_path>, as Telegram's
  return { file_id: upload.path, file_unique_id: fileUniqueId(upload), file_size: upload.size, file_path: upload.path }
}

/** The file a bot may download at /file/bot<token>/<path>: its own, or one shared with it. */
export const downloadable = (ctx: AppContext, botId: number, path: string) => usableFile(ctx, botId, path, false)

const answerCallbackQuery: Method = async ({ ctx, bot, params }) => {
  const id = params.string('callback_query_id', { required: true, max: 64 })
  const text = params.string('text', { max: 200 })
  const showAlert = params.bool('show_alert') ?? false
  const url = params.string('url', { max: 2048 })
  if (url !== undefined && !/^(https?|tg):\/\//i.test(url)) throw badRequest('URL_INVALID')
  params.int('cache_time', { min: 0 })
  const expired = badRequest('query is too old and response timeout expired or query ID is invalid')
  const query = await repo.findCallbackQuery(ctx.db, bot.bot_id, id)
  const now = ctx.clock.now()
  if (!query || query.answered_at !== null || now - query.created_at > CALLBACK_ANSWER_MS) throw expired
  await inTransaction(ctx, async (trx, events) => {
    if (!(await repo.markCallbackAnswered(trx, query.id, events.now))) throw expired
    await events.toUsers([query.user_id], 'bot.callback_answer', {
      callback_query_id: query.id,
      bot_id: bot.bot_id,
      chat_id: query.chat_id,
      message_id: query.message_id,
      text: text ?? null,
      show_alert: showAlert,
      url: url ?? null,
    })
  })
  return true
}

/** By lower-cased name (bot-methods.ts adds them to METHODS). */
export const CHAT_METHODS: [string, Method][] = [
  ['editmessagetext', editMessageText],
  ['deletemessage', deleteMessage],
  ['sendchataction', sendChatAction],
  ['sendphoto', sendFileMethod('photo')],
  ['senddocument', sendFileMethod('document')],
  ['getchat', getChat],
  ['getfile', getFile],
  ['answercallbackquery', answerCallbackQuery],
]
