import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okItems, okItemsSchema, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { PageQuery } from '../../http/schemas.js'
import { CreateStory, FeedStory, ReactionBody, StoryParams, StoryV1, StoryViewer } from './schemas.js'
import * as stories from './service.js'

const secured = { tags: ['stories'], security: [{ bearer: [] }] }
const Story = okSchema(FeedStory)

/** V2: stories (the bearer API). */
export const storyRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.post(
    '/stories/create',
    {
      schema: { summary: 'Post a story (an uploaded image or video)', ...secured, body: CreateStory, response: { 200: Story } },
    },
    async (request) => ok(await stories.create(ctx, request.user, request.body)),
  )

  app.get(
    '/stories/feed',
    {
      schema: { summary: 'My active stories, then those of the people I follow', ...secured, response: { 200: okItemsSchema(FeedStory) } },
    },
    async (request) => okItems(await stories.feed(ctx, request.user)),
  )

  app.get(
    '/stories/:id',
    {
      schema: { summary: 'One story', ...secured, params: StoryParams, response: { 200: Story } },
    },
    async (request) => ok(await stories.get(ctx, request.user, request.params.id)),
  )

  app.delete(
    '/stories/:id',
    {
      schema: {
        summary: 'Delete my story (its media goes unless used elsewhere)',
        ...secured,
        params: StoryParams,
        response: { 200: okSchema(Type.Object({ story_id: Type.Integer(), deleted: Type.Boolean() })) },
      },
    },
    async (request) => ok(await stories.remove(ctx, request.user, request.params.id)),
  )

  app.post(
    '/stories/:id/view',
    {
      schema: { summary: 'Register my view (counted once)', ...secured, params: StoryParams, response: { 200: Story } },
    },
    async (request) => ok(await stories.view(ctx, request.user, request.params.id)),
  )

  app.post(
    '/stories/:id/like',
    {
      schema: { summary: 'Like a story', ...secured, params: StoryParams, response: { 200: Story } },
    },
    async (request) => ok(await stories.setLike(ctx, request.user, request.params.id, true)),
  )

  app.post(
    '/stories/:id/unlike',
    {
      schema: { summary: 'Take my like back', ...secured, params: StoryParams, response: { 200: Story } },
    },
    async (request) => ok(await stories.setLike(ctx, request.user, request.params.id, false)),
  )

  app.post(
    '/stories/:id/reaction',
    {
      schema: {
        summary: 'Set (one emoji) or clear (null) my reaction',
        ...secured,
        params: StoryParams,
        body: ReactionBody,
        response: { 200: Story },
      },
    },
    async (request) => ok(await stories.react(ctx, request.user, request.params.id, request.body.reaction)),
  )

  app.post(
    '/stories/:id/views',
    {
      schema: {
        summary: "My story's viewers, newest first (Tern Premium)",
        ...secured,
        params: StoryParams,
        querystring: PageQuery,
        response: { 200: okPageSchema(StoryViewer) },
      },
    },
    async (request) => {
      const { page, per_page: perPage } = request.query
      const { items, total } = await stories.viewers(ctx, request.user, request.params.id, page, perPage)
      return okPage(items, { page, perPage, total })
    },
  )
}

/** V1 JSON helpers for the web pages (cookie session): stories in the V1 variant. */
export const storyV1Routes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))
  const v1 = { tags: ['stories'], security: [{ bearer: [] }] }

  app.get(
    '/api/stories',
    {
      schema: { summary: 'The story feed in the V1 variant (web pages)', ...v1, response: { 200: okItemsSchema(StoryV1) } },
    },
    async (request) => okItems(await stories.feedV1(ctx, request.user)),
  )

  app.get(
    '/api/stories/:id',
    {
      schema: { summary: 'One story in the V1 variant (web pages)', ...v1, params: StoryParams, response: { 200: okSchema(StoryV1) } },
    },
    async (request) => ok(await stories.getV1(ctx, request.user, request.params.id)),
  )
}
