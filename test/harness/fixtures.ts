/** Groups and channels as tests need them: created through the API, each step asserted. */
import assert from 'node:assert/strict'
import { V2 } from './messaging.js'
import type { TestUser } from './server.js'

function data(res: { status: number; body: any; text: string }, what: string) {
  assert.equal(res.status, 200, `${what}: ${res.text}`)
  assert.equal(res.body.success, true, what)
  return res.body.data
}

/** A group `owner` creates (title "Group" unless given), with `member_ids` added at creation; its Group shape. */
export async function createGroup(owner: TestUser, fields: Record<string, unknown> = {}) {
  return data(await owner.api.post(`${V2}/groups/create`, { title: 'Group', ...fields }), 'groups/create')
}

/** A channel `owner` creates (public unless `is_public: false`), then `subscribers` subscribe; its Channel shape. */
export async function createChannel(owner: TestUser, fields: Record<string, unknown> = {}, subscribers: TestUser[] = []) {
  const channel = data(await owner.api.post(`${V2}/channels/create`, { title: 'Channel', ...fields }), 'channels/create')
  for (const user of subscribers)
    data(await user.api.post(`${V2}/channels/subscribe`, { channel_id: channel.channel_id }), 'channels/subscribe')
  return channel
}
