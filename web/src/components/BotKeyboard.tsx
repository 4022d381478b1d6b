/** A bot's inline keyboard under its message: callback buttons press, URL buttons are links. */
import { useEffect } from 'preact/hooks'
import { describe } from '../api'
import { ensureKeyboard, keyboards, press } from '../bots'
import { notice } from '../store'

const safeUrl = (url: string) => /^https?:\/\//i.test(url)

export function BotKeyboard({ messageId }: { messageId: number }) {
  useEffect(() => {
    ensureKeyboard(messageId).catch(() => {})
  }, [messageId])
  const keyboard = keyboards.value.get(messageId)
  if (!keyboard?.length) return null
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group of buttons outside any form, not a fieldset
    <div class="keyboard" role="group" aria-label="Bot buttons">
      {keyboard.map((row) => (
        <div class="keyboard-row">
          {row.map((button) =>
            button.url && safeUrl(button.url) ? (
              <a class="key" href={button.url} target="_blank" rel="noopener noreferrer">
                {button.text} ↗
              </a>
            ) : button.callback_data !== undefined ? (
              <button
                type="button"
                class="key"
                onClick={() => press(messageId, button.callback_data!).catch((error) => (notice.value = describe(error)))}
              >
                {button.text}
              </button>
            ) : (
              <span class="key muted">{button.text}</span>
            ),
          )}
        </div>
      ))}
    </div>
  )
}
