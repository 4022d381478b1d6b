/** The events of contacts: the owner's other devices keep the same contact list. */
import { Type } from 'typebox'
import { defineEvents } from '../../events/define.js'
import { ContactView } from './schemas.js'

export const contactEvents = defineEvents({
  'contact.added': {
    payload: Type.Object({ contact: ContactView }),
    routes: ['user'],
    summary: 'I added a contact (by hand or by importing phone numbers), on my own devices.',
  },
  'contact.removed': {
    payload: Type.Object({ user_id: Type.Integer() }),
    routes: ['user'],
    summary: 'I removed a contact, on my own devices.',
  },
})
