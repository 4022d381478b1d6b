import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isSingleEmoji } from './emoji.js'

test('one emoji of every kind is one emoji', () => {
  for (const emoji of ['👍', '❤️', '❤', '😀', '👍🏽', '🇫🇷', '🇺🇦', '1️⃣', '#️⃣', '👩‍👩‍👧', '👨🏿‍🚀', '🏳️‍🌈', '🏴󠁧󠁢󠁳󠁣󠁴󠁿', '🫠', '🧑‍🤝‍🧑', '☺️']) {
    assert.equal(isSingleEmoji(emoji), true, emoji)
  }
})

test('text, two emoji, names of Object.prototype members and broken sequences are not', () => {
  for (const text of [
    '',
    'a',
    'ok',
    '1',
    '#',
    '👍👍',
    '👍 ',
    ' 👍',
    '🇫',
    '__proto__',
    'constructor',
    'valueOf',
    '👍a',
    '\u200D👍',
    '\uFE0F',
    '❤️'.repeat(40),
  ]) {
    assert.equal(isSingleEmoji(text), false, JSON.stringify(text))
  }
})
