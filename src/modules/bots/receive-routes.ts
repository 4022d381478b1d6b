/**
 * The shared receive endpoint, `POST /api/bots/webhook` (Tern's envelope), authorized with the bot
 * token as `Authorization: Bearer <bot_id>:<secret>` (a user's token, or none, is 401): what
 * another system (a bridge, a CI job, a form) hands a bot to say in one of its chats.
 *
 * - `{chat_id, text}` sends the text as the bot into the chat (a Tern chat id: its personal chat
 *   with a user, or a group or channel it is a member of; any other is 403).
 * - `{chat_id, command, args?}` runs one of the bot's commands (allowed or defined): the bot posts
 *   `/<command> <args>` there. A command it neither allows nor defines answers `{ignored: true}`:
 *   no error, no message.
 * - `external_message_id` (a bridge's id for the message in the other messenger) marks the message
 *   relayed (`is_from_external`); a retry with the same id in the same chat answers the first
 *   message (`repeated: true`) instead of sending it again.
 * The bots' rate limits apply (429 `rate_limited` with Retry-After).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import type { AppContext } from '../../context.js'
import { bearerToken } from '../../http/auth.js'
import { ok, okSchema } from '../../http/envelope.js'
import { forbidden, unauthorized, validationError } from '../../http/errors.js'
import { Id } from '../../http/schemas.js'
import * as chats from '../chats/index.js'
import { MAX_CONTENT, MessageView } from '../messages/index.js'
import { botUser, sendAsBot } from './bot-send.js'
import * as repo from './repo.js'
import { allowedCommandsOf, authenticateToken, type AuthBot } from './service.js'

const ReceiveBody = Type.Object(
  {
    chat_id: Id,
    text: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_CONTENT })),
    command: Type.Optional(
      Type.String({ pattern: '^/?[A-Za-z0-9_]{1,32}$', errorMessage: 'command must be 1 to 32 characters: letters, digits and _' }),
    ),
    args: Type.Optional(Type.Union([Type.String({ maxLength: 4000 }), Type.Array(Type.String({ maxLength: 4000 }), { maxItems: 100 })])),
    external_message_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\u0000-\\u001f\\u007f]+$' })),
  },
  { additionalProperties: false },
)
type ReceiveBody = Static<typeof ReceiveBody>

const ReceiveResult = Type.Object({
  /** true: an unknown command, nothing was sent */
  ignored: Type.Boolean(),
  message: Type.Optional(MessageView),
  /** the external_message_id was relayed before: this is the first message, not a new one */
  repeated: Type.Optional(Type.Boolean()),
})

/** The text a request makes the bot send; null for a command the bot neither allows nor defines. */
async function textOf(ctx: AppContext, bot: AuthBot, body: ReceiveBody): Promise<string | null> {
  if ((body.text === undefined) === (body.command === undefined)) throw validationError('Give either text or command (with optional args)')
  if (body.text !== undefined) {
    if (body.args !== undefined) throw validationError('args go with command')
    if (!body.text.trim()) throw validationError('text must not be empty')
    return body.text
  }
  const command = body.command!.replace(/^\//, '').toLowerCase()
  const known = allowedCommandsOf(bot).includes(command) || (await repo.findCommand(ctx.db, bot.bot_id, command)) !== undefined
  if (!known) return null
  const args = Array.isArray(body.args) ? body.args.join(' ') : (body.args ?? '')
  const text = args.trim() ? `/${command} ${args.trim()}` : `/${command}`
  if (text.length > MAX_CONTENT) throw validationError(`The command with its args is longer than ${MAX_CONTENT} characters`)
  return text
}

export const botReceiveRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    '/webhook',
    {
      schema: {
        summary: 'Shared receive endpoint: send as the bot into one of its chats (authorized with the bot token)',
        tags: ['bots'],
        security: [{ bearer: [] }],
        body: ReceiveBody,
        response: { 200: okSchema(ReceiveResult) },
      },
    },
    async (request) => {
      const token = bearerToken(request)
      const bot = token ? await authenticateToken(ctx, token) : null
      if (!bot) throw unauthorized(token ? 'Not a valid bot token' : 'A bot token is required (Authorization: Bearer <bot token>)')
      const body = request.body
      const chat = await chats.findChat(ctx.db, body.chat_id)
      const inChat =
        chat !== undefined &&
        (chat.chat_type === 'personal'
          ? chat.peer1_id === bot.bot_id || chat.peer2_id === bot.bot_id
          : await repo.isMember(ctx.db, chat.id, bot.bot_id))
      if (!chat || !inChat) throw forbidden('The bot is not a member of this chat')
      const text = await textOf(ctx, bot, body)
      if (text === null) return ok({ ignored: true })
      const sender = await botUser(ctx, bot).catch(() => {
        throw unauthorized('Not a valid bot token')
      })
      const sent = await sendAsBot(
        ctx,
        sender,
        { chatId: chat.id, group: chat.chat_type !== 'personal' },
        { content: text },
        body.external_message_id,
      )
      return ok({ ignored: false, message: sent.message, repeated: sent.repeated })
    },
  )
}
