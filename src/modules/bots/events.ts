/** The events of bots for people: a bot's answer to a button press reaches the user who pressed. */
import { Type } from 'typebox'
import { defineEvents } from '../../events/define.js'
import { Nullable } from '../../http/schemas.js'

export const CallbackAnswer = Type.Object({
  /** what POST messages/{id}/callback answered */
  callback_query_id: Type.String(),
  bot_id: Type.Integer(),
  chat_id: Type.Integer(),
  message_id: Type.Integer(),
  /** a notification to show (a toast, or an alert with show_alert), or null: just stop the button's spinner */
  text: Nullable(Type.String()),
  show_alert: Type.Boolean(),
  /** a URL the bot asks the client to open */
  url: Nullable(Type.String()),
})

export const botEvents = defineEvents({
  'bot.callback_answer': {
    payload: CallbackAnswer,
    routes: ['user'],
    summary: 'A bot answered a button press (answerCallbackQuery): to the devices of the user who pressed.',
  },
})
