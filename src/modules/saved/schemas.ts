import { Type } from 'typebox'
import { Id, Timestamp } from '../../http/schemas.js'
import { MessageView } from '../messages/index.js'

export const SavedBody = Type.Object({ message_id: Id }, { additionalProperties: false })

export const RemoveOptions = Type.Object({ message_id: Type.Optional(Id) }, { additionalProperties: false })

export const SavedMessage = Type.Object({ ...MessageView.properties, saved_at: Timestamp })
