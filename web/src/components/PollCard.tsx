/**
 * A poll inside its message: the question, each option with its share of the votes, and a vote
 * (radio buttons, or checkboxes when several answers are allowed). Voting again replaces my vote;
 * "Retract" takes it back; the creator (or the chat's admins) may close it.
 */
import { useSignal } from '@preact/signals'
import { useEffect } from 'preact/hooks'
import { describe } from '../api'
import { closePoll, ensurePoll, polls, vote } from '../polls'
import { me, notice } from '../store'

export function PollCard({ pollId, canClose }: { pollId: number; canClose: boolean }) {
  const poll = polls.value.get(pollId)
  const picked = useSignal<number[]>([])
  useEffect(() => {
    ensurePoll(pollId).catch((error) => (notice.value = describe(error)))
  }, [pollId])
  if (!poll) return <p class="muted small">Loading the poll…</p>
  const voted = poll.my_votes.length > 0
  const showResults = voted || poll.closed
  const run = (fn: () => Promise<unknown>) => void fn().catch((error) => (notice.value = describe(error)))
  const choose = (index: number, on: boolean) => {
    if (!poll.is_multiple) return (picked.value = [index])
    picked.value = on ? [...new Set([...picked.value, index])].sort((a, b) => a - b) : picked.value.filter((i) => i !== index)
  }
  const name = `poll-${pollId}`
  return (
    <fieldset class="poll" aria-describedby={`${name}-meta`}>
      <legend class="poll-question">{poll.question}</legend>
      <ul class="plain poll-options">
        {poll.options.map((option, index) => {
          const share = poll.total_votes ? Math.round((option.votes / poll.total_votes) * 100) : 0
          const mine = poll.my_votes.includes(index)
          return (
            <li class={`poll-option${mine ? ' mine' : ''}`}>
              {showResults ? (
                <div
                  class="poll-result"
                  role="img"
                  aria-label={`${option.text}: ${option.votes} ${option.votes === 1 ? 'vote' : 'votes'}, ${share}%${mine ? ', my vote' : ''}`}
                >
                  <span class="poll-bar" style={{ width: `${share}%` }} aria-hidden="true" />
                  <span class="poll-text">
                    {mine ? '✓ ' : ''}
                    {option.text}
                  </span>
                  <span class="poll-share">{share}%</span>
                </div>
              ) : (
                <label class="poll-choice">
                  <input
                    type={poll.is_multiple ? 'checkbox' : 'radio'}
                    name={name}
                    checked={picked.value.includes(index)}
                    onChange={(e) => choose(index, (e.target as HTMLInputElement).checked)}
                  />
                  {option.text}
                </label>
              )}
            </li>
          )
        })}
      </ul>
      <p class="muted small" id={`${name}-meta`}>
        {poll.closed ? 'Final results · ' : ''}
        {poll.total_votes} {poll.total_votes === 1 ? 'vote' : 'votes'}
        {poll.is_anonymous ? ' · anonymous' : ''}
        {poll.is_multiple ? ' · several answers' : ''}
      </p>
      <div class="poll-actions">
        {!poll.closed && !voted ? (
          <button type="button" disabled={picked.value.length === 0} onClick={() => run(() => vote(pollId, picked.value))}>
            Vote
          </button>
        ) : null}
        {!poll.closed && voted ? (
          <button
            type="button"
            class="link"
            onClick={() =>
              run(async () => {
                picked.value = []
                await vote(pollId, [])
              })
            }
          >
            Retract my vote
          </button>
        ) : null}
        {!poll.closed && (canClose || poll.creator_id === me.value?.id) ? (
          <button type="button" class="link" onClick={() => run(() => closePoll(pollId))}>
            Close the poll
          </button>
        ) : null}
      </div>
    </fieldset>
  )
}
