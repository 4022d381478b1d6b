/** The reply_markup and reply_parameters a bot sends with a message (sendMessage, sendPhoto, editMessageText…). */
import { badRequest, field, storableText, type Params } from './bot-params.js'

const MAX_CALLBACK_DATA_BYTES = 64

/** reply_markup: an inline keyboard is checked and kept with the message; the other kinds are accepted. */
export function replyMarkup(params: Params): unknown {
  const markup = params.json('reply_markup')
  if (markup === undefined) return undefined
  if (markup === null || typeof markup !== 'object' || Array.isArray(markup)) throw badRequest('reply_markup must be an object')
  const keyboard = field(markup, 'inline_keyboard')
  if (keyboard === undefined) return undefined
  if (!Array.isArray(keyboard) || keyboard.length > 100) throw badRequest('inline_keyboard must be an array of button rows')
  const rows = keyboard.map((row) => {
    if (!Array.isArray(row) || row.length > 8) throw badRequest('each inline_keyboard row must be an array of at most 8 buttons')
    return row.map((button) => {
      const text = field(button, 'text')
      const data = field(button, 'callback_data')
      const url = field(button, 'url')
      if (typeof text !== 'string' || text.length === 0 || text.length > 256) throw badRequest('an inline keyboard button needs a text')
      if (data !== undefined && (typeof data !== 'string' || Buffer.byteLength(data) > MAX_CALLBACK_DATA_BYTES))
        throw badRequest('BUTTON_DATA_INVALID')
      if (url !== undefined && (typeof url !== 'string' || !/^(https?|tg):\/\//i.test(url) || url.length > 2048))
        throw badRequest('BUTTON_URL_INVALID')
      if (data === undefined && url === undefined) throw badRequest('an inline keyboard button needs callback_data or url')
      storableText(text + (data ?? '') + (url ?? ''), 'an inline keyboard button')
      return { text, ...(data !== undefined ? { callback_data: data } : {}), ...(url !== undefined ? { url } : {}) }
    })
  })
  return { inline_keyboard: rows }
}

/** The message replied to: reply_parameters.message_id, or the older reply_to_message_id. */
export function replyTarget(params: Params): { messageId: number; lenient: boolean } | undefined {
  const parameters = params.json('reply_parameters')
  if (parameters !== undefined) {
    const id = field(parameters, 'message_id')
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) throw badRequest('reply_parameters.message_id must be a message id')
    return { messageId: id, lenient: field(parameters, 'allow_sending_without_reply') === true }
  }
  const legacy = params.int('reply_to_message_id', { min: 1 })
  return legacy === undefined ? undefined : { messageId: legacy, lenient: params.bool('allow_sending_without_reply') === true }
}
