import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okSchema } from '../../http/envelope.js'
import { validationError } from '../../http/errors.js'
import { PageQuery } from '../../http/schemas.js'
import { emptyBodyAsObject } from '../../http/validation.js'
import type { RateLimiters } from '../../http/rate-limit.js'
import { AddContact, ContactList, ContactView, ImportContacts, ImportResult, RemoveContact } from './schemas.js'
import * as contacts from './service.js'

const secured = { tags: ['contacts'], security: [{ bearer: [] }] }

export const contactRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext; limiters: RateLimiters }> = async (app, { ctx, limiters }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.get(
    '/contacts',
    {
      schema: { summary: 'My contacts, by name', ...secured, querystring: PageQuery, response: { 200: okSchema(ContactList) } },
    },
    async (request) => ok(await contacts.list(ctx, request.user, request.query.page, request.query.per_page)),
  )

  app.post(
    '/contacts/add',
    {
      schema: { summary: 'Add a contact (already one: 409)', ...secured, body: AddContact, response: { 200: okSchema(ContactView) } },
    },
    async (request) => ok(await contacts.add(ctx, request.user, request.body.user_id, request.body.display_name)),
  )

  app.delete(
    '/contacts/remove',
    {
      schema: {
        summary: 'Remove a contact',
        ...secured,
        querystring: RemoveContact,
        body: RemoveContact,
        response: { 200: okSchema(ContactView) },
      },
      preValidation: emptyBodyAsObject,
    },
    async (request) => {
      const userId = request.query.user_id ?? request.body.user_id
      if (userId === undefined) throw validationError('user_id is required')
      return ok(await contacts.remove(ctx, request.user, userId))
    },
  )

  app.post(
    '/contacts/import',
    {
      schema: {
        summary: 'Add the users with these phone numbers as contacts (only those who may be found by their number)',
        ...secured,
        body: ImportContacts,
        response: { 200: okSchema(ImportResult) },
      },
      onRequest: limiters.contactImport,
    },
    async (request) => ok(await contacts.importPhones(ctx, request.user, request.body.phones)),
  )
}
