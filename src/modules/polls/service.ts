/**
 * Polls: a question with 2 to 10 options, posted as a message of a chat the creator may post in.
 * Members vote (one option, or several when the poll is multiple; a new vote replaces the old),
 * see the results (with the voters unless the poll is anonymous) and hear `poll.updated`; the
 * creator or a chat admin closes it. Outsiders can neither vote nor read.
 */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import { fromJson } from '../../db/json.js'
import type { UserRow } from '../../db/tables.js'
import { inTransaction } from '../../events/outbox.js'
import { AppError, forbidden, notFound, validationError } from '../../http/errors.js'
import * as chats from '../chats/index.js'
import * as messages from '../messages/index.js'
import * as repo from './repo.js'
import { VOTERS_SHOWN } from './schemas.js'
import { can } from '../../policies/chats.js'

export interface NewPoll {
  question: string
  options: string[]
  is_multiple?: boolean
  is_anonymous?: boolean
  chat_type: 'personal' | 'group' | 'channel'
  chat_id: number
}

export async function create(ctx: AppContext, me: UserRow, input: NewPoll) {
  const question = input.question.trim()
  if (question === '') throw validationError('question must not be empty')
  const options = input.options.map((option) => option.trim())
  const empty = options.indexOf('')
  if (empty >= 0) throw validationError(`options[${empty}] must not be empty`)
  if (new Set(options).size !== options.length) throw validationError('options must differ from each other')
  const chat = await chats.requireMember(ctx, me.id, input.chat_id)
  if (chat.chat_type !== input.chat_type)
    throw validationError(`chat_type: chat ${chat.id} is a ${chat.chat_type} chat, not ${input.chat_type}`)
  return inTransaction(ctx, async (trx, events) => {
    const poll = await repo.insert(trx, {
      chat_id: chat.id,
      creator_id: me.id,
      question,
      options: JSON.stringify(options),
      is_multiple: input.is_multiple ? 1 : 0,
      is_anonymous: input.is_anonymous === false ? 0 : 1,
      created_at: events.now,
    })
    // the posting rules (a channel's subscribers cannot post, a peer's block) refuse it here
    await messages.postIn(events, chat, me, messages.textDraft(question, { poll_id: poll.id }))
    const found = (await repo.find(trx, poll.id))!
    return { ...(await stateOf(trx, found)), my_votes: [] as number[] }
  })
}

/** The poll, if its message stands and I am a member of its chat; 404 for anyone else. */
async function access(ctx: AppContext, me: UserRow, id: number) {
  const poll = await repo.find(ctx.db, id)
  if (!poll || poll.deleted_for_all === 1) throw notFound('Poll not found')
  const chat = await chats.requireMember(ctx, me.id, poll.chat_id).catch((error: unknown) => {
    throw error instanceof AppError ? notFound('Poll not found') : error
  })
  return { poll, chat }
}

const optionsOf = (poll: repo.PollWithMessage) => fromJson<string[]>(poll.options) ?? []

/** What everyone in the chat sees: counts per option, voters unless anonymous, closed or not. */
async function stateOf(db: Db, poll: repo.PollWithMessage) {
  const { perOption, voters } = await repo.counts(db, poll.id)
  const anonymous = poll.is_anonymous === 1
  const options = await Promise.all(
    optionsOf(poll).map(async (text, index) => ({
      text,
      votes: perOption.get(index) ?? 0,
      ...(anonymous ? {} : { voters: await repo.voters(db, poll.id, index, VOTERS_SHOWN) }),
    })),
  )
  return {
    poll_id: poll.id,
    chat_id: poll.chat_id,
    message_id: poll.message_id,
    question: poll.question,
    options,
    total_votes: voters,
    is_multiple: poll.is_multiple === 1,
    is_anonymous: anonymous,
    closed: poll.closed_at !== null,
    creator_id: poll.creator_id,
  }
}

export async function results(ctx: AppContext, me: UserRow, id: number) {
  const { poll } = await access(ctx, me, id)
  return { ...(await stateOf(ctx.db, poll)), my_votes: await repo.myVotes(ctx.db, poll.id, me.id) }
}

/** My vote: `option_index`, or `option_indexes` (several only in a multiple poll; [] takes it back). */
export async function vote(ctx: AppContext, me: UserRow, id: number, body: { option_index?: number; option_indexes?: number[] }) {
  if (body.option_index !== undefined && body.option_indexes !== undefined)
    throw validationError('Send option_index or option_indexes, not both')
  if (body.option_index === undefined && body.option_indexes === undefined)
    throw validationError('option_index (or option_indexes) is required')
  const chosen = body.option_indexes ?? [body.option_index!]
  const { poll, chat } = await access(ctx, me, id)
  const count = optionsOf(poll).length
  const outside = chosen.find((index) => index >= count)
  if (outside !== undefined) throw validationError(`option ${outside} is out of range: this poll has options 0 to ${count - 1}`)
  if (new Set(chosen).size !== chosen.length) throw validationError('option_indexes must not repeat an option')
  if (chosen.length > 1 && poll.is_multiple !== 1) throw validationError('This poll takes one option: send option_index')
  return inTransaction(ctx, async (trx, events) => {
    await repo.lock(trx, poll.id)
    const current = (await repo.find(trx, poll.id))!
    if (current.closed_at !== null) throw forbidden('This poll is closed')
    await repo.setVotes(trx, poll.id, me.id, chosen, events.now)
    const state = await stateOf(trx, current)
    await events.toChat(chat, 'poll.updated', { poll: state })
    return { ...state, my_votes: [...chosen].sort((a, b) => a - b) }
  })
}

/** Closes the poll: its creator, or an owner or admin of its group or channel. */
export async function close(ctx: AppContext, me: UserRow, id: number) {
  const { poll, chat } = await access(ctx, me, id)
  if (poll.creator_id !== me.id && !can(chat, chat.role, 'close_others_poll'))
    throw forbidden('Only its creator or a chat admin can close a poll')
  return inTransaction(ctx, async (trx, events) => {
    await repo.lock(trx, poll.id)
    const wasOpen = (await repo.find(trx, poll.id))!.closed_at === null
    await repo.close(trx, poll.id, events.now)
    const state = await stateOf(trx, (await repo.find(trx, poll.id))!)
    if (wasOpen) await events.toChat(chat, 'poll.updated', { poll: state })
    return { ...state, my_votes: await repo.myVotes(trx, poll.id, me.id) }
  })
}
