/** Whether a string is one emoji: what a reaction may be. */

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' })

/**
 * One emoji as a reader sees one: a single grapheme cluster that is a flag (two regional
 * indicators), a keycap (0–9, # or * with U+20E3), or a pictograph with its optional variation
 * selector, skin tone, tag sequence (subdivision flags) and ZWJ-joined pictographs (families,
 * professions). Plain letters, digits, text and two emoji are not.
 */
const EMOJI = new RegExp(
  '^(?:\\p{Regional_Indicator}{2}' +
    '|[0-9#*]\\uFE0F?\\u20E3' +
    '|\\p{Extended_Pictographic}[\\uFE0F\\p{Emoji_Modifier}\\u{E0020}-\\u{E007F}]*' +
    '(?:\\u200D\\p{Extended_Pictographic}[\\uFE0F\\p{Emoji_Modifier}]*)*)$',
  'u',
)

export function isSingleEmoji(text: string): boolean {
  if (text.length === 0 || text.length > 64) return false
  let count = 0
  for (const _ of graphemes.segment(text)) if (++count > 1) return false
  return EMOJI.test(text)
}
