/**
 * Polls in chats: a message with a `poll_id` shows its poll (GET poll/{id}/results), people vote
 * and the poll's creator closes it; `poll.updated` frames replace the poll everywhere it shows.
 * The frame carries the counts for everyone, so the app keeps its own `my_votes` from the answers
 * to its own requests (as with reactions).
 */
import { signal } from '@preact/signals'
import { api, data, ok } from './api'
import type { GatewayFrames } from '@tern/client'
import type { Answered } from './api'

export type Poll = Answered<'/api.v2/api/poll/{id}/results', 'get'>['data']
type Shared = GatewayFrames['poll.updated']['data']['poll']

/** poll id → the poll as last seen; a new Map on every change, so views re-render */
export const polls = signal<Map<number, Poll>>(new Map())
const loading = new Map<number, Promise<void>>()

function put(poll: Poll) {
  const next = new Map(polls.value)
  next.set(poll.poll_id, poll)
  polls.value = next
}

/** Loads a poll once (views call it for every poll message they show). */
export function ensurePoll(pollId: number): Promise<void> {
  if (polls.value.has(pollId)) return Promise.resolve()
  let pending = loading.get(pollId)
  if (!pending) {
    pending = data(api.GET('/api.v2/api/poll/{id}/results', { params: { path: { id: pollId } } }))
      .then(put)
      .finally(() => loading.delete(pollId))
    loading.set(pollId, pending)
  }
  return pending
}

/** A `poll.updated` frame: the counts are everyone's, my own votes stay mine. */
export function pollArrived(shared: Shared) {
  const known = polls.value.get(shared.poll_id)
  put({ ...shared, my_votes: known?.my_votes ?? [] })
}

export async function vote(pollId: number, optionIndexes: number[]) {
  const poll = await data(
    api.POST('/api.v2/api/poll/{id}/vote', { params: { path: { id: pollId } }, body: { option_indexes: optionIndexes } }),
  )
  put(poll)
}

export async function closePoll(pollId: number) {
  put(await data(api.POST('/api.v2/api/poll/{id}/close', { params: { path: { id: pollId } } })))
}

export async function createPoll(
  chat: { chat_type: 'personal' | 'group' | 'channel'; chat_id: number },
  question: string,
  options: string[],
  isMultiple: boolean,
) {
  await ok(api.POST('/api.v2/api/poll/create', { body: { ...chat, question, options, is_multiple: isMultiple } }))
}
