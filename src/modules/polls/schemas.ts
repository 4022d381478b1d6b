import { Type } from 'typebox'
import { Id } from '../../http/schemas.js'

export const OPTIONS_MIN = 2
export const OPTIONS_MAX = 10
export const QUESTION_MAX = 255
export const OPTION_MAX = 100
/** voters listed per option in results (the newest) */
export const VOTERS_SHOWN = 100

const ChatType = Type.Union([Type.Literal('personal'), Type.Literal('group'), Type.Literal('channel')], {
  errorMessage: 'chat_type must be personal, group or channel',
})

export const CreatePoll = Type.Object(
  {
    question: Type.String({ minLength: 1, maxLength: QUESTION_MAX }),
    options: Type.Array(Type.String({ minLength: 1, maxLength: OPTION_MAX }), { minItems: OPTIONS_MIN, maxItems: OPTIONS_MAX }),
    is_multiple: Type.Optional(Type.Boolean()),
    is_anonymous: Type.Optional(Type.Boolean()),
    chat_type: ChatType,
    chat_id: Id,
  },
  { additionalProperties: false },
)

const OptionIndex = Type.Integer({ minimum: 0, maximum: OPTIONS_MAX - 1 })
/** `option_index`, or `option_indexes` (several when the poll is multiple; [] takes my vote back) */
export const VoteBody = Type.Object(
  { option_index: Type.Optional(OptionIndex), option_indexes: Type.Optional(Type.Array(OptionIndex, { maxItems: OPTIONS_MAX })) },
  { additionalProperties: false },
)

export const PollParams = Type.Object({ id: Id }, { additionalProperties: false })

const Voter = Type.Object({ user_id: Type.Integer(), username: Type.String(), display_name: Type.String() })
export const PollOption = Type.Object({
  text: Type.String(),
  votes: Type.Integer(),
  /** the newest voters, unless the poll is anonymous */
  voters: Type.Optional(Type.Array(Voter)),
})

/** What everyone in the chat sees of a poll. */
export const PollState = Type.Object({
  poll_id: Type.Integer(),
  chat_id: Type.Integer(),
  message_id: Type.Integer(),
  question: Type.String(),
  options: Type.Array(PollOption),
  /** how many people voted */
  total_votes: Type.Integer(),
  is_multiple: Type.Boolean(),
  is_anonymous: Type.Boolean(),
  closed: Type.Boolean(),
  creator_id: Type.Integer(),
})

/** The results as the caller sees them: the state plus my own votes. */
export const PollResults = Type.Object({ ...PollState.properties, my_votes: Type.Array(Type.Integer()) })
