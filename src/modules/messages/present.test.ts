import assert from 'node:assert/strict'
import test from 'node:test'
import type { MessageRow } from '../../db/tables.js'
import fc from 'fast-check'
import { firstCharacters, formatSize, messageJson, presentMessage, presentRich } from './present.js'

test('formatSize: bytes, then one decimal under 10 units, whole numbers above', () => {
  assert.equal(formatSize(0), '0 B')
  assert.equal(formatSize(1023), '1023 B')
  assert.equal(formatSize(1536), '1.5 KB')
  assert.equal(formatSize(10 * 1024 * 1024), '10 MB')
  assert.equal(formatSize(3 * 1024 ** 3), '3 GB')
})

const row: MessageRow = {
  id: 7,
  chat_id: 3,
  seq: 2,
  sender_id: 1,
  receiver_id: 2,
  content: 'see attached',
  reply_to_id: 5,
  forwarded_from: null,
  forwarded_from_id: null,
  file_path: 'ab/cd.pdf',
  file_type: 'document',
  file_name: 'cd.pdf',
  file_size: 2_621_440,
  thumbnail_path: null,
  is_encrypted: 0,
  encrypted_content: null,
  encryption_key_id: null,
  emoji: null,
  emoji_file: null,
  emoji_size: null,
  emoji_count: null,
  deleted_for_all: 0,
  edited_at: null,
  scheduled_at: null,
  delivered_at: null,
  read_at: null,
  client_message_id: null,
  created_at: Date.UTC(2026, 10, 21, 9, 5),
  topic_id: null,
  preview_size: null,
  poll_id: null,
  is_from_external: 0,
  external_message_id: null,
}

test('the richer shape: id, HH:MM, is_own, a 50-character reply preview and attachment fields', () => {
  const v2 = presentMessage(row, { username: 'alice', avatar: null, privacy_avatar: 'everyone' }, false)
  const rich = presentRich(v2, row, 1, { content: 'x'.repeat(80), sender_name: 'Bob' })
  assert.equal(rich.id, 7)
  assert.equal('message_id' in rich, false)
  assert.equal(rich.timestamp_formatted, '09:05')
  assert.equal(rich.is_own, true)
  assert.equal(rich.reply_to_content, 'x'.repeat(50))
  assert.equal(rich.reply_to_sender, 'Bob')
  assert.equal(rich.has_attachment, true)
  assert.equal(rich.file_url, '/uploads/ab/cd.pdf')
  assert.equal(rich.formatted_size, '2.5 MB')
  assert.equal(presentRich(v2, row, 2, null).is_own, false)
})

test('firstCharacters counts what a reader sees: emoji, flags and combined emoji stay whole', () => {
  assert.equal(firstCharacters('short', 50), 'short')
  assert.equal(firstCharacters('a'.repeat(60), 50), 'a'.repeat(50))
  assert.equal(firstCharacters(`${'a'.repeat(49)}😀😀😀`, 50), `${'a'.repeat(49)}😀`)
  assert.equal(firstCharacters('🇩🇪🇫🇷🇮🇹', 2), '🇩🇪🇫🇷')
  assert.equal(firstCharacters('👩‍👩‍👧x', 1), '👩‍👩‍👧')
  assert.equal(firstCharacters('e\u0301tude', 2), 'e\u0301t')
})

test('messageJson writes a message view as JSON.stringify does, whichever fields are set', () => {
  const text = fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('plain', 'a "quote" \\ \n', '\ud83d\ude00', 'lone \udc00'))
  const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: null })
  const rows = fc.record({
    id: fc.nat(),
    content: text,
    reply_to_id: maybe(fc.nat()),
    forwarded_from: maybe(text),
    file_path: maybe(fc.constant('ab/cd.pdf')),
    file_type: maybe(fc.constant('document')),
    is_encrypted: fc.constantFrom(0, 1),
    encrypted_content: maybe(text),
    emoji: maybe(text),
    emoji_size: maybe(fc.integer()),
    read_at: maybe(fc.nat()),
    delivered_at: maybe(fc.nat()),
    edited_at: maybe(fc.nat()),
    client_message_id: maybe(text),
    topic_id: maybe(fc.nat()),
    poll_id: maybe(fc.nat()),
    is_from_external: fc.constantFrom(0, 1),
  })
  const senders = fc.record({
    username: text,
    avatar: maybe(fc.constant('a/b.png')),
    privacy_avatar: fc.constantFrom('everyone' as const, 'nobody' as const),
  })
  const reactions = fc.dictionary(fc.string(), fc.integer())
  fc.assert(
    fc.property(rows, senders, fc.boolean(), reactions, (fields, sender, read, counts) => {
      const view = presentMessage({ ...row, ...fields }, sender, read, counts)
      assert.equal(messageJson(view), JSON.stringify(view))
    }),
    { numRuns: 1000 },
  )
  // a pending message's view has more fields: written as JSON.stringify writes it
  const pending = {
    ...presentMessage(row, { username: 'alice', avatar: null, privacy_avatar: 'everyone' }, false),
    scheduled_id: 4,
    is_scheduled: true,
  }
  assert.equal(messageJson(pending), JSON.stringify(pending))
})
