/** Writing a poll: a question, 2–10 options, one answer or several; posted as a message of the chat. */
import { useSignal } from '@preact/signals'
import { useEffect, useRef } from 'preact/hooks'
import { describe } from '../api'
import { createPoll } from '../polls'

const MAX_OPTIONS = 10

export function PollDialog({
  chat,
  onClose,
}: {
  chat: { chat_type: 'personal' | 'group' | 'channel'; chat_id: number }
  onClose: () => void
}) {
  const dialog = useRef<HTMLDialogElement>(null)
  const question = useSignal('')
  const options = useSignal(['', ''])
  const multiple = useSignal(false)
  const error = useSignal<string | null>(null)
  const busy = useSignal(false)
  useEffect(() => {
    dialog.current?.showModal()
  }, [])
  const setOption = (index: number, value: string) => (options.value = options.value.map((o, i) => (i === index ? value : o)))
  const submit = async (event: Event) => {
    event.preventDefault()
    const filled = options.value.map((o) => o.trim()).filter(Boolean)
    if (!question.value.trim()) return (error.value = 'Write the question.')
    if (filled.length < 2) return (error.value = 'A poll needs at least two options.')
    busy.value = true
    error.value = null
    try {
      await createPoll(chat, question.value.trim(), filled, multiple.value)
      dialog.current?.close()
    } catch (e) {
      error.value = describe(e)
    } finally {
      busy.value = false
    }
  }
  return (
    <dialog ref={dialog} aria-labelledby="poll-title" onClose={onClose}>
      <form onSubmit={submit} class="stack">
        <h2 id="poll-title">New poll</h2>
        <label>
          Question
          <input value={question.value} maxLength={255} required onInput={(e) => (question.value = (e.target as HTMLInputElement).value)} />
        </label>
        {options.value.map((option, index) => (
          <label>
            Option {index + 1}
            <input value={option} maxLength={100} onInput={(e) => setOption(index, (e.target as HTMLInputElement).value)} />
          </label>
        ))}
        {options.value.length < MAX_OPTIONS ? (
          <button type="button" class="link" onClick={() => (options.value = [...options.value, ''])}>
            Add an option
          </button>
        ) : null}
        <label class="inline">
          <input type="checkbox" checked={multiple.value} onChange={(e) => (multiple.value = (e.target as HTMLInputElement).checked)} />
          Several answers allowed
        </label>
        {error.value ? <p role="alert">{error.value}</p> : null}
        <div class="row-actions">
          <button type="submit" disabled={busy.value}>
            Post the poll
          </button>
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  )
}
