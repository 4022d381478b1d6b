/**
 * The parts of the web app around the chat, in a real headless Chromium: polls (written in the
 * app, voted on live by the other person, closed), a bot's inline keyboard (a real Bot API bot
 * answers the press; an edit changes the buttons), members' roles and the group's settings
 * (owner only; an admin sees no role buttons), and stories (the strip shows who posted, the viewer
 * marks a story seen, a story posted in the app appears, a new one arrives live). Screenshots go
 * to test-artifacts/features-*.png.
 */
import assert from 'node:assert/strict'
import test from 'node:test'
import { upload } from '../harness/files.js'
import { png } from '../harness/media.js'
import { uniqueName, type TestUser } from '../harness/server.js'
import { chatLink, noProblems, server, shot, signInInBrowser, V2, type Person } from './app-people.js'

async function close(...people: Person[]) {
  for (const p of people) await p.context.close()
}

/** A personal chat between two users (b writes to a), opened in a's app, where b is called `bName`. */
async function chatBetween(a: Person, b: TestUser, bName: string, text: string) {
  const sent = await b.api.post(`${V2}/messages/send`, { receiver_id: a.id, content: text })
  assert.equal(sent.status, 200, sent.text)
  await a.page.reload()
  await chatLink(a, new RegExp(bName)).first().click()
  await a.page.locator('ol.messages p.text', { hasText: text }).waitFor()
  return sent.body.data.chat_id as number
}

test('polls: written in the app, voted on by the other person, counted live on both sides, then closed', async () => {
  const aliceUser = await server.registerUser({ display_name: 'Alice Poller' })
  const bobUser = await server.registerUser({ display_name: 'Bob Voter' })
  const alice = await signInInBrowser(aliceUser)
  const bob = await signInInBrowser(bobUser)
  try {
    await chatBetween(alice, bobUser, 'Bob Voter', 'lunch plans?')
    await bob.page.reload()
    await chatLink(bob, /Alice Poller/)
      .first()
      .click()
    await bob.page.locator('ol.messages p.text', { hasText: 'lunch plans?' }).waitFor()

    await alice.page.getByRole('button', { name: 'New poll' }).click()
    const dialog = alice.page.getByRole('dialog', { name: 'New poll' })
    // a poll with one option is refused in the form, and nothing is posted
    await dialog.getByLabel('Question').fill('Where do we eat?')
    await dialog.getByLabel('Option 1').fill('Noodles')
    await dialog.getByRole('button', { name: 'Post the poll' }).click()
    await dialog.getByRole('alert').filter({ hasText: 'at least two options' }).waitFor()
    await dialog.getByLabel('Option 2').fill('Tacos')
    await dialog.getByRole('button', { name: 'Add an option' }).click()
    await dialog.getByLabel('Option 3').fill('Salad')
    await dialog.getByRole('button', { name: 'Post the poll' }).click()
    await dialog.waitFor({ state: 'hidden' })

    // Bob sees it live, votes Tacos; both see one vote at 100 %
    const bobPoll = bob.page.getByRole('group', { name: 'Where do we eat?' })
    await bobPoll.waitFor()
    await bobPoll.getByLabel('Tacos').check()
    await bobPoll.getByRole('button', { name: 'Vote' }).click()
    await bobPoll.getByLabel(/^Tacos: 1 vote, 100%, my vote$/).waitFor()
    const alicePoll = alice.page.getByRole('group', { name: 'Where do we eat?' })
    await alicePoll.getByText('1 vote').waitFor()
    // Alice has not voted: she still sees the choices (the count is everyone's, the vote is Bob's)
    assert.equal(await alicePoll.getByRole('radio').count(), 3)

    // the server agrees
    const poll = (
      await bobUser.api.get(`${V2}/chat/history`, { query: { chat_id: (await bobUser.api.get(`${V2}/chat_list`)).body.items[0].chat_id } })
    ).body.items.find((m: any) => m.poll_id !== null)
    const results = await bobUser.api.get(`${V2}/poll/${poll.poll_id}/results`)
    assert.deepEqual(
      results.body.data.options.map((o: any) => o.votes),
      [0, 1, 0],
    )
    assert.deepEqual(results.body.data.my_votes, [1])

    await alicePoll.getByRole('button', { name: 'Close the poll' }).click()
    await bobPoll.getByText(/^Final results/).waitFor()
    // control: a closed poll offers Bob no way to vote or retract
    assert.equal(await bobPoll.getByRole('button', { name: /Vote|Retract/ }).count(), 0)
    await shot(bob.page, 'features-poll')
    noProblems(alice, bob)
  } finally {
    await close(alice, bob)
  }
})

/** The bot's next updates by long polling (and acknowledges them). */
async function updates(token: string, offset: number | undefined, want: (u: any) => boolean) {
  for (let tries = 0; tries < 10; tries++) {
    const res = await fetch(`${server.url}/bot${token}/getUpdates`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ offset, timeout: 5 }),
    })
    const body = await res.json()
    assert.equal(body.ok, true, JSON.stringify(body))
    const found = body.result.find(want)
    if (found) return found
    if (body.result.length) offset = body.result[body.result.length - 1].update_id + 1
  }
  throw new Error('no such update')
}

async function botApi(token: string, method: string, params: unknown) {
  const res = await fetch(`${server.url}/bot${token}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
  })
  const body = await res.json()
  assert.equal(body.ok, true, `${method}: ${JSON.stringify(body)}`)
  return body.result
}

test("a bot's inline keyboard: the press reaches the bot, its answer shows, and its edit changes the buttons", async () => {
  const owner = await server.registerUser()
  const aliceUser = await server.registerUser({ display_name: 'Alice Presser' })
  const registered = await owner.api.post('/api/bots/register', {
    name: 'Pizza',
    username: `${uniqueName('p').slice(0, 20)}_bot`,
    allowed_commands: ['start'],
  })
  assert.equal(registered.status, 200, registered.text)
  const { bot_id: botId, token } = registered.body.data
  const alice = await signInInBrowser(aliceUser)
  try {
    // Alice writes to the bot; the bot answers with a keyboard
    const hello = await aliceUser.api.post(`${V2}/messages/send`, { receiver_id: botId, content: '/start' })
    assert.equal(hello.status, 200, hello.text)
    await updates(token, undefined, (u) => u.message?.text === '/start')
    const question = await botApi(token, 'sendMessage', {
      chat_id: aliceUser.id,
      text: 'Pizza tonight?',
      reply_markup: {
        inline_keyboard: [
          [
            { text: 'Yes', callback_data: 'pizza:yes' },
            { text: 'No', callback_data: 'pizza:no' },
          ],
          [{ text: 'Menu', url: 'https://example.com/menu' }],
        ],
      },
    })
    // control: a message of a person (Alice's own) has no keyboard
    await alice.page.reload()
    await chatLink(alice, /Pizza/).first().click()
    const keyboard = alice.page.getByRole('group', { name: 'Bot buttons' })
    await keyboard.waitFor()
    assert.equal(await keyboard.count(), 1)
    assert.equal(await alice.page.getByRole('link', { name: /Menu/ }).getAttribute('href'), 'https://example.com/menu')

    await keyboard.getByRole('button', { name: 'Yes' }).click()
    const press = await updates(token, undefined, (u) => u.callback_query?.data === 'pizza:yes')
    assert.equal(press.callback_query.from.id, aliceUser.id)
    assert.equal(press.callback_query.message.message_id, question.message_id)
    await botApi(token, 'answerCallbackQuery', { callback_query_id: press.callback_query.id, text: 'Noted: yes!' })
    await alice.page.getByRole('alert').filter({ hasText: 'Noted: yes!' }).waitFor()

    await botApi(token, 'editMessageText', {
      chat_id: aliceUser.id,
      message_id: question.message_id,
      text: 'Pizza: yes',
      reply_markup: { inline_keyboard: [[{ text: 'Change my mind', callback_data: 'pizza:again' }]] },
    })
    await alice.page.getByText('Pizza: yes').waitFor()
    await keyboard.getByRole('button', { name: 'Change my mind' }).waitFor()
    assert.equal(await keyboard.getByRole('button', { name: 'Yes' }).count(), 0)
    await shot(alice.page, 'features-bot-keyboard')
    noProblems(alice)
  } finally {
    await close(alice)
  }
})

test('roles and settings: the owner makes a member an admin and back, renames the group and removes a member; an admin gets no role buttons', async () => {
  const aliceUser = await server.registerUser({ display_name: 'Alice Owner' })
  const bobUser = await server.registerUser({ display_name: 'Bob Member' })
  const carolUser = await server.registerUser({ display_name: 'Carol Member' })
  const created = await aliceUser.api.post(`${V2}/groups/create`, { title: 'Hiking club' })
  assert.equal(created.status, 200, created.text)
  const chatId = created.body.data.group_id
  for (const u of [bobUser, carolUser])
    assert.equal((await aliceUser.api.post(`${V2}/groups/add-member`, { chat_id: chatId, user_id: u.id })).status, 200)
  const role = async (userId: number) =>
    (await aliceUser.api.get(`${V2}/groups/members`, { query: { chat_id: chatId } })).body.items.find((m: any) => m.user_id === userId)
      ?.role
  const alice = await signInInBrowser(aliceUser)
  const bob = await signInInBrowser(bobUser)
  try {
    await alice.page.goto(`/app/chat/${chatId}/info`)
    const people = alice.page.getByRole('list', { name: 'Members' })
    await people.getByText('Bob Member').waitFor()
    await alice.page.getByRole('button', { name: 'Make Bob Member an admin' }).click()
    await alice.page.getByRole('button', { name: 'Dismiss Bob Member as admin' }).waitFor()
    assert.equal(await role(bobUser.id), 'admin')

    // Bob, an admin now, manages the chat but not roles: no role buttons, a Remove for the plain member
    await bob.page.goto(`/app/chat/${chatId}/info`)
    await bob.page.getByRole('list', { name: 'Members' }).getByText('Carol Member').waitFor()
    await bob.page.getByRole('button', { name: 'Remove Carol Member' }).waitFor()
    assert.equal(await bob.page.getByRole('button', { name: /an admin$|as admin$|the owner$/ }).count(), 0)
    assert.equal(await bob.page.getByRole('button', { name: 'Remove Alice Owner' }).count(), 0)

    await alice.page.getByRole('button', { name: 'Dismiss Bob Member as admin' }).click()
    await alice.page.getByRole('button', { name: 'Make Bob Member an admin' }).waitFor()
    assert.equal(await role(bobUser.id), 'member')

    await alice.page.getByLabel('Name', { exact: true }).fill('Hiking & climbing club')
    await alice.page.getByLabel('Description').fill('Saturdays, 8 am')
    await alice.page.getByRole('button', { name: 'Save' }).click()
    await alice.page.getByRole('heading', { name: 'Hiking & climbing club' }).waitFor()
    // the title's chat.updated may reload the page before the description is saved: wait for both
    await alice.page.locator('.card p', { hasText: 'Saturdays, 8 am' }).waitFor()
    const info = (await bobUser.api.get(`${V2}/groups/info`, { query: { chat_id: chatId } })).body.data
    assert.equal(info.name, 'Hiking & climbing club')
    assert.equal(info.description, 'Saturdays, 8 am')

    alice.page.once('dialog', (d) => void d.accept())
    await alice.page.getByRole('button', { name: 'Remove Carol Member' }).click()
    await people.getByText('Carol Member').waitFor({ state: 'detached' })
    assert.equal(await role(carolUser.id), undefined)
    assert.equal(await role(bobUser.id), 'member', 'control: Bob is still there')
    await shot(alice.page, 'features-roles')
    noProblems(alice, bob)
  } finally {
    await close(alice, bob)
  }
})

test('stories: the strip shows who posted, viewing marks a story seen, one posted in the app appears, a new one arrives live', async () => {
  const aliceUser = await server.registerUser({ display_name: 'Alice Viewer' })
  const bobUser = await server.registerUser({ display_name: 'Bob Storyteller' })
  // stories of people with a chat between them are visible to each other (privacy: everyone)
  assert.equal((await bobUser.api.post(`${V2}/messages/send`, { receiver_id: aliceUser.id, content: 'look at my story' })).status, 200)
  const file = await upload(server, bobUser, await png(120, 90, 7), 'sunset.png', 'image/png')
  const story = await bobUser.api.post(`${V2}/stories/create`, { media_path: file.path, caption: 'Sunset at the lake' })
  assert.equal(story.status, 200, story.text)
  const alice = await signInInBrowser(aliceUser)
  try {
    const strip = alice.page.getByRole('region', { name: 'Stories' })
    const ring = strip.getByRole('button', { name: 'Bob Storyteller: 1 story, new' })
    await ring.click()
    const viewer = alice.page.getByRole('dialog', { name: 'Story by Bob Storyteller' })
    await viewer.getByText('Sunset at the lake').waitFor()
    // the caption shows before the picture has loaded: wait for the picture, then check it is the one posted
    const picture = viewer.getByRole('img', { name: 'Sunset at the lake' })
    await picture.waitFor()
    const loaded = await picture.evaluate((img: HTMLImageElement) =>
      img.complete
        ? img.naturalWidth
        : new Promise<number>((resolve) => {
            img.addEventListener('load', () => resolve(img.naturalWidth), { once: true })
            img.addEventListener('error', () => resolve(0), { once: true })
          }),
    )
    assert.equal(loaded, 120)
    await viewer.getByRole('button', { name: '♡ Like' }).click()
    await viewer.getByRole('button', { name: '♥ Liked' }).waitFor()
    await viewer.getByRole('button', { name: 'Close' }).click()
    await strip.getByRole('button', { name: 'Bob Storyteller: 1 story' }).waitFor()
    const seen = (await bobUser.api.get(`${V2}/stories/${story.body.data.story_id}`)).body.data
    assert.equal(seen.view_count, 1)
    assert.equal(seen.like_count, 1)

    // Alice posts one from the strip
    await strip.getByLabel('Add story').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: await png(80, 80, 99) })
    await strip.getByRole('button', { name: 'My story: 1 story' }).waitFor()
    const bobFeed = (await bobUser.api.get(`${V2}/stories/feed`)).body.items
    assert.ok(
      bobFeed.some((s: any) => s.user_id === aliceUser.id),
      'Bob sees Alice’s new story',
    )

    // Bob posts another while Alice watches: it arrives live (story.new)
    const second = await upload(server, bobUser, await png(60, 60, 33), 'second.png', 'image/png')
    assert.equal((await bobUser.api.post(`${V2}/stories/create`, { media_path: second.path })).status, 200)
    await strip.getByRole('button', { name: 'Bob Storyteller: 2 stories, new' }).waitFor()
    await shot(alice.page, 'features-stories')
    noProblems(alice)
  } finally {
    await close(alice)
  }
})

/** The peers a call page is connected to, from its diagnostics handle (src/web/call-script.ts). */
async function connectedPeers(page: Person['page']): Promise<number[]> {
  const report = await page.evaluate(() =>
    (window as unknown as { ternCall: { report(): Promise<{ user_id: number; state: string }[]> } }).ternCall.report(),
  )
  return report.filter((r) => r.state === 'connected').map((r) => r.user_id)
}

test("calls from the app: the chat header calls, the callee's app rings on every device, Answer connects both, Decline stops it", async () => {
  const aliceUser = await server.registerUser({ display_name: 'Alice Caller' })
  const bobUser = await server.registerUser({ display_name: 'Bob Callee' })
  const alice = await signInInBrowser(aliceUser)
  const bob = await signInInBrowser(bobUser)
  // Bob's second device: it rings too, and stops when he answers on the first
  const bobTablet = await signInInBrowser(bobUser)
  try {
    await chatBetween(alice, bobUser, 'Bob Callee', 'call you in a minute')
    // control: nothing rings before the call
    assert.equal(await bob.page.getByRole('alertdialog').count(), 0)
    await Promise.all([
      alice.page.waitForURL(/\/call\?to=\d+&start=1$/),
      alice.page.getByRole('link', { name: 'Video call Bob Callee' }).click(),
    ])
    const ring = bob.page.getByRole('alertdialog', { name: 'Incoming call from Alice Caller' })
    await ring.waitFor()
    await bobTablet.page.getByRole('alertdialog', { name: 'Incoming call from Alice Caller' }).waitFor()
    await Promise.all([bob.page.waitForURL(/\/call\?answer=\d+$/), ring.getByRole('link', { name: 'Answer' }).click()])
    await bobTablet.page.getByRole('alertdialog').waitFor({ state: 'detached' })
    for (const [page, peer] of [
      [alice.page, bobUser.id],
      [bob.page, aliceUser.id],
    ] as const) {
      const deadline = Date.now() + 30_000
      while (!(await connectedPeers(page)).includes(peer)) {
        assert.ok(Date.now() < deadline, 'the call connects')
        await page.waitForTimeout(250)
      }
    }
    await shot(bob.page, 'features-call-answered')
    await alice.page.getByRole('button', { name: 'Hang up' }).click()
    await bob.page.getByRole('status').filter({ hasText: 'Call ended' }).waitFor()
    const history = (await aliceUser.api.get(`${V2}/calls/history`)).body.items
    assert.equal(history[0].status, 'ended')

    // a second call, declined from the app on the tablet: the ringing stops on Bob's devices, Alice's page says so
    await alice.page.goto(`/call?to=${bobUser.id}&start=1`)
    const again = bobTablet.page.getByRole('alertdialog', { name: 'Incoming call from Alice Caller' })
    await again.waitFor()
    await again.getByRole('button', { name: 'Decline' }).click()
    await again.waitFor({ state: 'detached' })
    await alice.page.getByRole('status').filter({ hasText: 'Call declined' }).waitFor()
    noProblems(bobTablet)
  } finally {
    await close(alice, bob, bobTablet)
  }
})
