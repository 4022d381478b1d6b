import assert from 'node:assert/strict'
import test from 'node:test'
import { escapeHtml } from './html.js'

test('escapeHtml neutralises markup and attribute quotes', () => {
  assert.equal(escapeHtml(`<script>alert("x")</script>&'`), '&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;&#38;&#39;')
})
