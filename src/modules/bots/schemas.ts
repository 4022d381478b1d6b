/** The /api/bots contract (Tern's envelope). */
import { Type, type Static } from 'typebox'
import { Nullable, Timestamp } from '../../http/schemas.js'

/** A command name as Telegram allows it: 1–32 of [a-z0-9_]. */
export const COMMAND_PATTERN = '^[a-z0-9_]{1,32}$'
export const CommandName = Type.String({ pattern: COMMAND_PATTERN, errorMessage: 'command must be 1 to 32 characters: a-z, 0-9 and _' })

export const BotUsername = Type.String({
  pattern: '^[A-Za-z0-9_]{2,29}[Bb][Oo][Tt]$',
  errorMessage: "A bot's username must be 5 to 32 characters of letters, digits and underscores, ending in 'bot'",
})

export const RegisterBotBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    username: BotUsername,
    description: Type.Optional(Type.String({ maxLength: 512 })),
    allowed_commands: Type.Optional(Type.Array(CommandName, { maxItems: 100 })),
  },
  { additionalProperties: false },
)
export type RegisterBotBody = Static<typeof RegisterBotBody>

export const CommandBody = Type.Object(
  {
    command: CommandName,
    description: Type.String({ minLength: 1, maxLength: 256 }),
    handler: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false },
)
export type CommandBody = Static<typeof CommandBody>

export const BotView = Type.Object({
  bot_id: Type.Integer(),
  username: Type.String(),
  name: Type.String(),
  description: Type.String(),
  allowed_commands: Type.Array(Type.String()),
  created_at: Timestamp,
})
export type BotView = Static<typeof BotView>

export const RegisteredBot = Type.Object({
  ...BotView.properties,
  /** `<bot_id>:<secret>`, shown this once */
  token: Type.String(),
})

export const BotToken = Type.Object({ bot_id: Type.Integer(), token: Type.String() })

export const CommandView = Type.Object({
  bot_id: Type.Integer(),
  command: Type.String(),
  description: Type.String(),
  handler: Nullable(Type.String()),
  updated_at: Timestamp,
})
export type CommandView = Static<typeof CommandView>
