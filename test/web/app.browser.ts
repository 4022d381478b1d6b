/**
 * The web app at /app in a real headless Chromium (playwright-core, system /usr/bin/chromium):
 * people register and sign in through the pages, then chat live in two browser contexts (send,
 * reply, react, edit, delete, typing, read receipts), one goes offline and gets every message
 * once and in order after reconnecting, a file upload shows its progress bar and thumbnail, a
 * group is created and joined by its invite link, older history loads on scroll, and axe-core
 * finds no serious or critical violation. Pages must load with no console error and no CSP
 * violation. Screenshots (a phone-sized chat list and chat) are kept in test-artifacts/app-*.png.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import test from 'node:test'
import sharp from 'sharp'
import {
  action,
  AXE,
  chatLink,
  messages,
  messageWith,
  noProblems,
  openChatWith,
  registerInBrowser,
  send,
  server,
  shot,
  signInInBrowser,
  texts,
  V2,
} from './app-people.js'

test('register and sign in through the pages: the app holds no token, and a mutation without the CSRF header is refused', async () => {
  const alice = await registerInBrowser('Alice Example')
  const bobUser = await server.registerUser({ display_name: 'Bob Builder' })
  const bob = await signInInBrowser(bobUser)
  try {
    const cookie = (await alice.context.cookies()).find((c) => c.name === 'tern_session')
    assert.ok(cookie?.httpOnly, 'the session cookie is HttpOnly')
    const stored = await alice.page.evaluate(() => ({
      local: JSON.stringify(localStorage),
      session: JSON.stringify(sessionStorage),
      cookie: document.cookie,
    }))
    assert.equal(stored.local, '{}', 'nothing in localStorage')
    assert.equal(stored.session, '{}', 'nothing in sessionStorage')
    assert.doesNotMatch(stored.cookie, /tern_session/, 'scripts cannot read the session cookie')
    // the app's own requests work with the cookie and the CSRF token; without the header: 403
    const refused = await alice.page.evaluate(async (v2) => {
      const r = await fetch(`${v2}/chat/create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user_id: 1 }),
      })
      return r.status
    }, V2)
    assert.equal(refused, 403)
    assert.match(alice.problems.pop() ?? '', /status of 403/, 'the refusal the test asked for')
    assert.equal((await alice.page.getByRole('heading', { level: 1 }).textContent())?.trim(), 'Tern')
    assert.match(await bob.page.title(), /Tern/)
    noProblems(alice, bob)
  } finally {
    await alice.context.close()
    await bob.context.close()
  }
})

test('two people chat live: send, typing, read receipts, reply, react, edit, delete for me and for everyone', async () => {
  const alice = await registerInBrowser('Alice Live')
  const bob = await registerInBrowser('Bob Live')
  try {
    const chatId = await openChatWith(alice, bob)
    await send(alice, 'Hello Bob')
    const aliceMsg = messageWith(alice, 'Hello Bob')
    assert.equal(await aliceMsg.getByRole('img', { name: 'Sent' }).count(), 1, 'one tick: sent, not read')

    // Bob's list shows the chat with one unread message, live
    const item = chatLink(bob, /Alice Live.*1 unread/)
    await item.waitFor()
    assert.match((await item.textContent()) ?? '', /Hello Bob/)
    await item.click()
    await bob.page.waitForURL(new RegExp(`/app/chat/${chatId}$`))
    await messageWith(bob, 'Hello Bob').waitFor()
    // Alice sees ✓✓ once Bob has read it
    await aliceMsg.getByRole('img', { name: 'Read' }).waitFor()
    await chatLink(bob, /Alice Live/).waitFor()
    assert.doesNotMatch((await chatLink(bob, /Alice Live/).getAttribute('aria-label')) ?? '', /unread/, 'read: no unread count left')

    // typing indicator in the chat header
    await bob.page.getByLabel('Message', { exact: true }).pressSequentially('Hi A')
    await alice.page
      .getByTestId('chat-status')
      .filter({ hasText: /Bob Live is typing/ })
      .waitFor()
    await bob.page.getByLabel('Message', { exact: true }).fill('')

    // Bob replies to Alice's message
    await action(bob, messageWith(bob, 'Hello Bob'), 'Reply')
    assert.match((await bob.page.locator('.context-bar').textContent()) ?? '', /Replying to .*Hello Bob/)
    await send(bob, 'Hi Alice, replying')
    const reply = messageWith(alice, 'Hi Alice, replying')
    await reply.waitFor()
    assert.match((await reply.locator('blockquote').textContent()) ?? '', /Hello Bob/, 'the reply quotes the message')

    // Alice reacts with 👍 to Bob's reply; Bob sees the count
    await reply.getByRole('button', { name: 'Message actions' }).click()
    await reply.getByRole('button', { name: 'React 👍' }).click()
    await messageWith(bob, 'Hi Alice, replying').getByRole('button', { name: '👍 1' }).waitFor()
    await reply.getByRole('button', { name: '👍 1', pressed: true }).waitFor()

    // Alice edits her message; Bob sees the new text marked edited
    await action(alice, aliceMsg, 'Edit')
    const box = alice.page.getByLabel('Message', { exact: true })
    // the composer takes the message's text in an effect, a frame after the click (CI on
    // PostgreSQL once read the box before it)
    await alice.page.waitForFunction(
      () => (document.getElementById('composer-text') as HTMLTextAreaElement | null)?.value === 'Hello Bob',
      undefined,
      { timeout: 5000 },
    )
    assert.equal(await box.inputValue(), 'Hello Bob')
    await box.fill('Hello Bob, edited')
    await alice.page.getByRole('button', { name: 'Save' }).click()
    const edited = messageWith(bob, 'Hello Bob, edited')
    await edited.waitFor()
    assert.match((await edited.locator('.meta').textContent()) ?? '', /edited/)
    // the quote in the reply follows the original text's id, the reply itself stays
    assert.equal(await messageWith(bob, 'Hi Alice, replying').count(), 1)

    // delete for everyone: gone on both sides
    await send(alice, 'oops, wrong chat')
    await messageWith(bob, 'oops, wrong chat').waitFor()
    await action(alice, messageWith(alice, 'oops, wrong chat'), 'Delete for everyone')
    await messageWith(bob, 'oops, wrong chat').waitFor({ state: 'detached' })
    await messageWith(alice, 'oops, wrong chat').waitFor({ state: 'detached' })

    // delete for me: gone for Bob only (Alice still has it)
    await send(alice, 'keep this on my side')
    await messageWith(bob, 'keep this on my side').waitFor()
    await action(bob, messageWith(bob, 'keep this on my side'), 'Delete for me')
    await messageWith(bob, 'keep this on my side').waitFor({ state: 'detached' })
    await bob.page.reload()
    await messageWith(bob, 'Hi Alice, replying').waitFor()
    assert.equal(await messageWith(bob, 'keep this on my side').count(), 0, 'still gone after a reload')
    assert.equal(await messageWith(alice, 'keep this on my side').count(), 1, 'Alice keeps it')

    // forward Bob's reply to Alice's Saved Messages
    await action(alice, messageWith(alice, 'Hi Alice, replying'), 'Forward')
    await alice.page.getByRole('dialog', { name: 'Forward to…' }).getByRole('button', { name: 'Saved Messages' }).click()
    await alice.page.getByRole('heading', { name: 'Saved Messages' }).waitFor()
    const copy = messageWith(alice, 'Hi Alice, replying')
    await copy.waitFor()
    assert.match((await copy.locator('.forwarded').textContent()) ?? '', /^Forwarded from /)

    // the online dot: Bob sees Alice online while her tab is open, and not once she has closed it
    await chatLink(bob, /^Alice Live, Personal chat, online/).waitFor()
    await alice.page.close()
    await chatLink(bob, /^Alice Live, Personal chat(?!, online)/).waitFor({ timeout: 20_000 })
    assert.equal(await bob.page.locator(`a[data-chat-id="${chatId}"] .dot`).count(), 0)
    noProblems(alice, bob)
  } finally {
    await alice.context.close()
    await bob.context.close()
  }
})

test('offline and back: the messages sent meanwhile arrive after reconnecting, each once and in order', async () => {
  const alice = await registerInBrowser('Alice Away')
  const bob = await registerInBrowser('Bob Away')
  try {
    await openChatWith(alice, bob)
    await send(alice, 'before 0')
    await chatLink(bob, /Alice Away/).click()
    await messageWith(bob, 'before 0').waitFor()

    await bob.context.setOffline(true)
    await bob.page
      .getByRole('status')
      .filter({ hasText: /Offline/ })
      .waitFor()
    const sent: string[] = []
    for (let i = 1; i <= 6; i++) {
      sent.push(`while away ${i}`)
      await send(alice, `while away ${i}`)
    }
    // positive control of the wait below: Alice's page has them all; Bob's does not (yet)
    await bob.page.waitForTimeout(1000)
    assert.deepEqual(await texts(bob), ['before 0'], 'nothing arrives while offline')

    await bob.context.setOffline(false)
    await messageWith(bob, 'while away 6').waitFor({ timeout: 20_000 })
    assert.deepEqual(await texts(bob), ['before 0', ...sent], 'every message once, in order')
    // live again after the catch-up
    await send(alice, 'after')
    await messageWith(bob, 'after').waitFor()
    assert.deepEqual(await texts(bob), ['before 0', ...sent, 'after'])
    // and a reload agrees with what the live view built
    await bob.page.reload()
    await messageWith(bob, 'after').waitFor()
    assert.deepEqual(await texts(bob), ['before 0', ...sent, 'after'])
    // while offline the socket's failures are expected console noise; nothing else
    const other = bob.problems.filter((p) => !/ERR_INTERNET_DISCONNECTED|WebSocket/.test(p))
    assert.deepEqual(other, [])
    noProblems(alice)
  } finally {
    await alice.context.close()
    await bob.context.close()
  }
})

test('an image upload shows its progress bar, then the image as its thumbnail on both sides', async () => {
  const alice = await registerInBrowser('Alice Photo')
  const bob = await registerInBrowser('Bob Photo')
  const file = path.join(server.dataDir, 'holiday.png')
  // noise does not compress: ~1.2 MB, which takes seconds at the throttled speed below
  const width = 640
  const height = 640
  const raw = Buffer.alloc(width * height * 3)
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 7919 + (i >> 5) * 104729) % 251
  await sharp(raw, { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toFile(file)
  try {
    await openChatWith(alice, bob)
    const cdp = await alice.context.newCDPSession(alice.page)
    await cdp.send('Network.enable')
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 20,
      downloadThroughput: -1,
      uploadThroughput: 400 * 1024,
    })
    await alice.page.getByLabel('Attach a file').setInputFiles(file)
    const bar = alice.page.getByRole('progressbar')
    await bar.waitFor()
    const seen = new Set<number>()
    for (let i = 0; i < 40 && (await bar.count()); i++) {
      const value = await bar.evaluate((el) => (el as HTMLProgressElement).value / (el as HTMLProgressElement).max).catch(() => null)
      if (value !== null) seen.add(Math.round(value * 100))
      await alice.page.waitForTimeout(100)
    }
    assert.ok(
      [...seen].some((v) => v > 0 && v < 100),
      `the bar moved between 0 and 100%: ${[...seen].join(', ')}`,
    )
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 })
    await bar.waitFor({ state: 'detached', timeout: 30_000 })

    for (const p of [alice, bob]) {
      if (p === bob) await chatLink(bob, /Alice Photo/).click()
      const img = p.page.locator('ol.messages img.thumb')
      await img.waitFor()
      await p.page.waitForFunction(() => {
        const el = document.querySelector('ol.messages img.thumb') as HTMLImageElement | null
        return el?.complete && el.naturalWidth > 0
      })
      const src = (await img.getAttribute('src')) ?? ''
      const link = (await p.page.locator('ol.messages a.image-link').getAttribute('href')) ?? ''
      assert.match(link, /^\/uploads\//)
      assert.notEqual(src, link, `${p.username} is shown the thumbnail, not the full image`)
      const natural = await img.evaluate((el) => (el as HTMLImageElement).naturalWidth)
      assert.ok(natural > 0 && natural < width, `a thumbnail smaller than the picture: ${natural}`)
    }
    noProblems(alice, bob)
  } finally {
    await alice.context.close()
    await bob.context.close()
  }
})

test('a large file goes over tus: its progress bar moves, a dropped connection resumes where the server stands, the other side gets the same bytes', async () => {
  const alice = await registerInBrowser('Alice Tus')
  const bob = await registerInBrowser('Bob Tus')
  const file = path.join(server.dataDir, 'big-report.bin')
  const bytes = Buffer.alloc(9 * 1024 * 1024)
  for (let i = 0; i < bytes.length; i += 4) bytes.writeUInt32LE((i * 2654435761) >>> 0, i)
  fs.writeFileSync(file, bytes)
  const requests: string[] = []
  // the connection drops under the second chunk (the first one is stored by then)
  let patches = 0
  await alice.page.route('**/uploads/tus**', async (route) => {
    const method = route.request().method()
    requests.push(method)
    if (method === 'PATCH' && ++patches === 2) return route.abort('connectionreset')
    return route.continue()
  })
  try {
    await openChatWith(alice, bob)
    await alice.page.getByLabel('Attach a file').setInputFiles(file)
    const bar = alice.page.getByRole('progressbar')
    await bar.waitFor()
    const seen = new Set<number>()
    while (await bar.count()) {
      const value = await bar.evaluate((el) => (el as HTMLProgressElement).value / (el as HTMLProgressElement).max).catch(() => null)
      if (value !== null) seen.add(Math.round(value * 100))
      await alice.page.waitForTimeout(50)
    }
    assert.ok(
      [...seen].some((v) => v > 0 && v < 100),
      `the bar moved between 0 and 100%: ${[...seen].sort((x, y) => x - y).join(', ')}`,
    )
    assert.equal(requests.filter((m) => m === 'POST').length, 1, `created once, then resumed (not started over): ${requests.join(' ')}`)
    assert.ok(requests.includes('HEAD'), `after the drop it asked the server where it stands: ${requests.join(' ')}`)
    assert.equal(
      requests.filter((m) => m === 'PATCH').length,
      4,
      `4 MiB chunks: 2 of 3 sent once, the cut one again: ${requests.join(' ')}`,
    )

    await chatLink(bob, /Alice Tus/).click()
    const link = bob.page.locator('ol.messages a.file', { hasText: 'big-report.bin' })
    await link.waitFor()
    const href = (await link.getAttribute('href')) ?? ''
    const got = await bob.page.evaluate(async (url) => {
      const buf = new Uint8Array(await (await fetch(url)).arrayBuffer())
      const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', buf))
      return { size: buf.length, sha: [...digest].map((b) => b.toString(16).padStart(2, '0')).join('') }
    }, href)
    assert.deepEqual(got, { size: bytes.length, sha: createHash('sha256').update(bytes).digest('hex') })
    // the cut request is the console's one complaint
    assert.deepEqual(
      alice.problems.filter((p) => !/uploads\/tus/.test(p)),
      [],
    )
    noProblems(bob)
  } finally {
    await alice.context.close()
    await bob.context.close()
  }
})

test('a group created in the app and joined with its invite link; both chat in it', async () => {
  const alice = await registerInBrowser('Alice Owner')
  const bob = await registerInBrowser('Bob Joiner')
  try {
    await alice.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'New' }).click()
    await alice.page.getByLabel('Group', { exact: true }).check()
    await alice.page.getByLabel('Name', { exact: true }).fill('Weekend hikers')
    await alice.page.getByRole('button', { name: 'Create' }).click()
    await alice.page.waitForURL(/\/app\/chat\/\d+$/)
    await alice.page.getByRole('heading', { name: 'Weekend hikers' }).waitFor()
    await send(alice, 'Welcome, hikers')
    await alice.page.getByRole('link', { name: 'Group info' }).click()
    const linkField = alice.page.getByLabel('Anyone with this link can join')
    await alice.page.getByRole('heading', { name: 'Invite link' }).waitFor()
    if (!(await linkField.count())) await alice.page.getByRole('button', { name: 'Create link' }).click()
    await linkField.waitFor()
    const invite = await linkField.inputValue()
    assert.match(invite, /\/join\/\S+$/)

    await bob.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'New' }).click()
    await bob.page.getByLabel('Invite link or code').fill(invite)
    await bob.page.getByRole('button', { name: 'Join' }).click()
    await bob.page.waitForURL(/\/app\/chat\/\d+$/)
    await bob.page.getByRole('heading', { name: 'Weekend hikers' }).waitFor()
    await messageWith(bob, 'Welcome, hikers').waitFor()
    await send(bob, 'Glad to be here')
    // Alice is on the info page: the chat list shows Bob's message live, then the chat does
    await chatLink(alice, /Weekend hikers/).click()
    const fromBob = messageWith(alice, 'Glad to be here')
    await fromBob.waitFor()
    assert.equal((await fromBob.locator('.sender').textContent())?.trim(), bob.username, 'group messages name their sender')
    await alice.page.getByRole('link', { name: 'Group info' }).click()
    const members = alice.page.getByRole('list', { name: 'Members' })
    await members.getByText(`@${bob.username}`).waitFor()
    assert.equal(await members.locator('li').count(), 2)

    // the link itself opens the server's preview page; its Join button leads into the app
    const carol = await registerInBrowser('Carol Linked')
    try {
      await carol.page.goto(new URL(invite).pathname)
      await Promise.all([carol.page.waitForURL(/\/app\/chat\/\d+$/), carol.page.getByRole('button', { name: 'Join the group' }).click()])
      await messageWith(carol, 'Glad to be here').waitFor()
      await send(carol, 'Carol here too')
      // Alice's open info page follows the join live
      await members.getByText(`@${carol.username}`).waitFor()
      assert.equal(await members.locator('li').count(), 3)
      noProblems(carol)
    } finally {
      await carol.context.close()
    }
    noProblems(alice, bob)
  } finally {
    await alice.context.close()
    await bob.context.close()
  }
})

test('older history loads on scroll (before_id pages), without duplicates or gaps', async () => {
  const alice = await registerInBrowser('Alice History')
  const bobUser = await server.registerUser({ display_name: 'Bob History' })
  try {
    for (let i = 1; i <= 70; i++) {
      const res = await bobUser.api.post(`${V2}/messages/send`, { receiver_id: alice.id, content: `old ${i}` })
      assert.equal(res.status, 200, res.text)
    }
    // a fresh start: the 70 messages came in live while the app was open; now only the newest page loads
    await alice.page.reload()
    await chatLink(alice, /Bob History/).click()
    await messageWith(alice, 'old 70').waitFor()
    assert.equal(await messages(alice).count(), 30, 'the first page')
    for (let i = 0; i < 10 && (await messages(alice).count()) < 70; i++) {
      await alice.page.locator('ol.messages').evaluate((el) => (el.scrollTop = 0))
      await alice.page.waitForTimeout(300)
    }
    await alice.page.getByText('The beginning of the chat').waitFor()
    assert.deepEqual(
      await texts(alice),
      Array.from({ length: 70 }, (_, i) => `old ${i + 1}`),
    )
    noProblems(alice)
  } finally {
    await alice.context.close()
  }
})

test('on a phone-sized screen: the chat list, then a chat, fit the width; axe-core finds no serious violation', async () => {
  const phone = { width: 390, height: 844 }
  const alice = await registerInBrowser('Alice Phone', phone)
  const bob = await server.registerUser({ display_name: 'Bob Phone' })
  const carol = await server.registerUser({ display_name: 'Carol Phone' })
  try {
    await bob.api.post(`${V2}/messages/send`, { receiver_id: alice.id, content: 'Are we still on for tonight?' })
    await carol.api.post(`${V2}/messages/send`, { receiver_id: alice.id, content: 'Sent you the photos 📸' })
    await chatLink(alice, /Carol Phone/).waitFor()
    await chatLink(alice, /Bob Phone/).waitFor()
    assert.ok((await alice.page.evaluate(() => document.documentElement.scrollWidth)) <= phone.width)
    await shot(alice.page, 'app-chat-list-390')
    // the keyboard: the first Tab shows the skip link, with a visible outline; Enter moves to the content
    await alice.page.keyboard.press('Tab')
    const skip = await alice.page.evaluate(() => {
      const el = document.activeElement as HTMLElement
      return { text: el.textContent, outline: getComputedStyle(el).outlineStyle, left: el.getBoundingClientRect().left }
    })
    assert.deepEqual({ text: skip.text, outline: skip.outline }, { text: 'Skip to content', outline: 'solid' })
    assert.ok(skip.left >= 0, 'on screen when focused')

    await chatLink(alice, /Bob Phone/).click()
    await messageWith(alice, 'Are we still on for tonight?').waitFor()
    await send(alice, 'Yes! 8 pm at the usual place.')
    await messageWith(alice, 'Yes! 8 pm at the usual place.').getByRole('button', { name: 'Message actions' }).waitFor()
    assert.equal(await alice.page.getByRole('navigation', { name: 'Chats' }).isVisible(), false, 'one pane at a time')
    assert.ok(await alice.page.getByRole('link', { name: 'Back to chats' }).isVisible())
    assert.ok((await alice.page.evaluate(() => document.documentElement.scrollWidth)) <= phone.width)
    await shot(alice.page, 'app-chat-390')

    // axe-core through the DevTools protocol (the page's CSP rightly refuses injected script tags)
    await alice.page.evaluate(AXE)
    const violations = await alice.page.evaluate(async () => {
      const axe = (
        window as unknown as {
          axe: {
            run: (
              ctx: Document,
              options: object,
            ) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>
          }
        }
      ).axe
      const result = await axe.run(document, { resultTypes: ['violations'] })
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) }))
    })
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    assert.deepEqual(serious, [], JSON.stringify(violations, null, 2))
    noProblems(alice)
  } finally {
    await alice.context.close()
  }
})

test('a session ended elsewhere sends the app to the login page; a refused request is a readable message, not a broken screen', async () => {
  const alice = await registerInBrowser('Alice Ends')
  const bob = await registerInBrowser('Bob Ends')
  try {
    await openChatWith(alice, bob)
    // a server refusal: a message over 4,096 characters is 400; the app says why and keeps the text
    const box = alice.page.getByLabel('Message', { exact: true })
    await box.fill('x'.repeat(4100))
    await alice.page.getByRole('button', { name: 'Send' }).click()
    const alert = alice.page.getByRole('alert')
    await alert.waitFor()
    assert.match((await alert.textContent()) ?? '', /content|4096|long/i)
    assert.equal((await box.inputValue()).length, 4100, 'the text is still there to fix')
    assert.deepEqual(
      alice.problems.splice(0).map((p) => /status of 400/.test(p)),
      [true],
      'the 400 is the one console line',
    )
    await alert.getByRole('button', { name: 'Dismiss' }).click()
    await alert.waitFor({ state: 'detached' })

    // signing out in another tab ends the session: this tab's socket closes and the app goes to /login
    const other = await alice.context.newPage()
    await other.goto('/logout')
    await other.getByRole('button', { name: 'Sign out' }).click()
    await alice.page.waitForURL(/\/login/, { timeout: 20_000 })
    assert.equal(await alice.page.getByRole('button', { name: 'Sign in' }).count(), 1)
    assert.deepEqual(
      alice.problems.filter((p) => !/status of 401|WebSocket/.test(p)),
      [],
    )
    noProblems(bob)
  } finally {
    await alice.context.close()
    await bob.context.close()
  }
})

test('search finds people and messages; the profile saves a new display name', async () => {
  const alice = await registerInBrowser('Alice Finds')
  const bob = await server.registerUser({ display_name: 'Bob Findable' })
  try {
    await bob.api.post(`${V2}/messages/send`, { receiver_id: alice.id, content: 'the quarterly zeppelin report is ready' })
    await chatLink(alice, /Bob Findable/).waitFor()
    await alice.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Search' }).click()
    await alice.page.getByLabel('Search people and messages').fill('zeppelin')
    await alice.page.getByRole('button', { name: 'Search', exact: true }).click()
    const found = alice.page.getByRole('link', { name: /zeppelin report/ })
    await found.waitFor()
    await found.click()
    await messageWith(alice, 'the quarterly zeppelin report is ready').waitFor()

    await alice.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Search' }).click()
    await alice.page.getByLabel('Search people and messages').fill(bob.username)
    await alice.page.getByRole('button', { name: 'Search', exact: true }).click()
    await alice.page.getByRole('button', { name: `Message ${bob.username}` }).waitFor()

    await alice.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Profile' }).click()
    const name = alice.page.getByLabel('Display name')
    await alice.page.waitForFunction(() => (document.getElementById('profile-name') as HTMLInputElement | null)?.value === 'Alice Finds')
    await name.fill('Alice Renamed')
    await alice.page.getByRole('button', { name: 'Save' }).click()
    await alice.page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    const me = await bob.api.get(`${V2}/profile/${alice.username}`)
    assert.equal(me.body.data.display_name, 'Alice Renamed')
    noProblems(alice)
  } finally {
    await alice.context.close()
  }
})

test('a channel: its owner posts, a subscriber joins by the link page and reads it live, with no composer', async () => {
  const alice = await registerInBrowser('Alice Channel')
  const bob = await registerInBrowser('Bob Reader')
  try {
    await alice.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'New' }).click()
    await alice.page.getByLabel('Channel', { exact: true }).check()
    await alice.page.getByLabel('Name', { exact: true }).fill('Release notes')
    await alice.page.getByRole('button', { name: 'Create' }).click()
    await alice.page.waitForURL(/\/app\/chat\/\d+$/)
    const chatUrl = alice.page.url()
    await send(alice, 'Version 1.0 is out')
    await alice.page.getByRole('link', { name: 'Channel info' }).click()
    const linkField = alice.page.getByLabel('Anyone with this link can join')
    await alice.page.getByRole('heading', { name: 'Invite link' }).waitFor()
    if (!(await linkField.count())) await alice.page.getByRole('button', { name: 'Create link' }).click()
    await linkField.waitFor()
    const invite = await linkField.inputValue()
    assert.match(invite, /\/channel\/\S+$/)

    await bob.page.goto(new URL(invite).pathname)
    await Promise.all([bob.page.waitForURL(/\/app\/chat\/\d+$/), bob.page.getByRole('button', { name: 'Subscribe' }).click()])
    await messageWith(bob, 'Version 1.0 is out').waitFor()
    await chatLink(bob, /Release notes/).waitFor()
    await bob.page.getByText("Only the channel's admins post here.").waitFor()
    assert.equal(await bob.page.getByLabel('Message', { exact: true }).count(), 0, 'subscribers do not post')
    assert.ok(await bob.page.getByText("Only the channel's admins post here.").isVisible())
    await alice.page.goto(chatUrl)
    await send(alice, 'Version 1.1 fixes the login page')
    await messageWith(bob, 'Version 1.1 fixes the login page').waitFor()
    noProblems(alice, bob)
  } finally {
    await alice.context.close()
    await bob.context.close()
  }
})
