import assert from 'node:assert/strict'
import test from 'node:test'
import { AppError } from '../../src/http/errors.js'
import { sendMail, type MailKind } from '../../src/modules/mail/service.js'
import { captureLog } from '../harness/log-capture.js'
import { startTestServer } from '../harness/server.js'
import { closedPortUrl, startSilentServer, startSmtpServer } from '../harness/smtp.js'

const smtp = await startSmtpServer()
const server = await startTestServer({ env: { SMTP_URL: smtp.url, MAIL_FROM: 'Tern Test <tern@example.test>' } })

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof AppError, `an AppError, got ${error}`)
    return error
  }
  assert.fail('expected a refusal')
}

test('a mail goes through the SMTP server: From, To, subject, plain text and HTML', async () => {
  const result = await sendMail(server.ctx, { to: 'ann@example.test', kind: 'test' })
  assert.equal(typeof result.messageId, 'string')
  const mail = await smtp.next('ann@example.test')
  assert.equal(mail.from, 'tern@example.test')
  assert.deepEqual(mail.to, ['ann@example.test'])
  assert.equal(mail.parsed.from?.text, '"Tern Test" <tern@example.test>')
  assert.equal(mail.subject, 'Tern test mail')
  assert.match(mail.text, /This is a test mail from Tern\./)
  assert.match(mail.html, /<p>This is a test mail from Tern\.<\/p>/)
  assert.equal(mail.parsed.messageId, result.messageId)
})

test('the sign-in code mail carries the code in both bodies', async () => {
  await sendMail(server.ctx, { to: 'bo@example.test', kind: 'login_code', data: { code: '493021', minutes: '10' } })
  const mail = await smtp.next('bo@example.test')
  assert.match(mail.subject, /493021/)
  assert.match(mail.text, /Your Tern sign-in code is 493021/)
  assert.match(mail.html, /<strong>493021<\/strong>/)
  assert.match(mail.text, /for 10 minutes/)
})

test('values are escaped in the HTML body and kept as they are in the text', async () => {
  const link = 'http://x.test/verify-email?token=a"><script>alert(1)</script>&b=<i>'
  await sendMail(server.ctx, { to: 'cy@example.test', kind: 'verify_email', data: { link } })
  const mail = await smtp.next('cy@example.test')
  assert.ok(mail.text.includes(link), 'the text body has the link as it is')
  assert.ok(!mail.html.includes('<script>'), 'no markup from the data in the HTML')
  assert.ok(!mail.html.includes('<i>'))
  assert.ok(mail.html.includes('&#60;script&#62;alert(1)&#60;/script&#62;'))
  assert.ok(mail.html.includes('href="http://x.test/verify-email?token=a&#34;&#62;'), 'the attribute cannot be closed')
})

test('data fields a template does not use, and inherited names, change nothing', async () => {
  const data = JSON.parse('{"__proto__": {"note": "polluted"}, "constructor": "x", "extra": "<b>"}')
  await sendMail(server.ctx, { to: 'di@example.test', kind: 'test', data })
  const mail = await smtp.next('di@example.test')
  assert.match(mail.text, /Mail from Tern works\./)
  assert.ok(!mail.text.includes('polluted') && !mail.html.includes('<b>'))
})

test('an unknown kind or a recipient that is not one address is refused (400) and sends nothing', async () => {
  const before = smtp.received.length
  const unknown = await refusal(sendMail(server.ctx, { to: 'ed@example.test', kind: 'toString' as MailKind }))
  assert.equal(unknown.statusCode, 400)
  assert.equal(unknown.code, 'validation_error')
  for (const to of [
    'ed@example.test, eve@example.test',
    'ed@example.test\r\nBcc: eve@example.test',
    'not an address',
    '',
    `${'a'.repeat(250)}@x.test`,
  ]) {
    const error = await refusal(sendMail(server.ctx, { to, kind: 'test' }))
    assert.equal(error.statusCode, 400, JSON.stringify(to))
  }
  // positive control: the same server takes a good mail, and it is the only one since
  await sendMail(server.ctx, { to: 'ed@example.test', kind: 'test' })
  await smtp.next('ed@example.test')
  assert.equal(smtp.received.length, before + 1)
  assert.equal(smtp.to('eve@example.test').length, 0)
})

test('a mail the SMTP server refuses is 503 mail_unavailable, and mail works again once it accepts', async () => {
  smtp.refuse(true)
  try {
    const error = await refusal(sendMail(server.ctx, { to: 'fay@example.test', kind: 'test' }))
    assert.equal(error.statusCode, 503)
    assert.equal(error.code, 'mail_unavailable')
  } finally {
    smtp.refuse(false)
  }
  await sendMail(server.ctx, { to: 'fay@example.test', kind: 'test' })
  assert.equal((await smtp.next('fay@example.test')).subject, 'Tern test mail')
})

test('an SMTP server that refuses connections is 503 mail_unavailable at once', async () => {
  const down = await startTestServer({ env: { SMTP_URL: await closedPortUrl() } })
  const started = Date.now()
  const error = await refusal(sendMail(down.ctx, { to: 'gus@example.test', kind: 'test' }))
  assert.equal(error.statusCode, 503)
  assert.equal(error.code, 'mail_unavailable')
  assert.ok(Date.now() - started < 3000)
})

test('an SMTP server that never answers is 503 mail_unavailable after MAIL_TIMEOUT_SECONDS', async () => {
  const silent = await startSilentServer()
  const hung = await startTestServer({ env: { SMTP_URL: silent.url, MAIL_TIMEOUT_SECONDS: '1' } })
  const started = Date.now()
  const error = await refusal(sendMail(hung.ctx, { to: 'hal@example.test', kind: 'test' }))
  const took = Date.now() - started
  assert.equal(error.code, 'mail_unavailable')
  assert.ok(took >= 900 && took < 3000, `took ${took} ms`)
})

test('without SMTP_URL a mail is written to the log, so a developer can read the code', async () => {
  const log = captureLog('info')
  const local = await startTestServer({ log: log.logger })
  const result = await sendMail(local.ctx, { to: 'ida@example.test', kind: 'login_code', data: { code: '771234', minutes: '10' } })
  assert.equal(result.messageId, null)
  const entry = log.entries().find((line) => line.mail?.to === 'ida@example.test')
  assert.ok(entry, 'a log line for the mail')
  assert.equal(entry.level, 30)
  assert.equal(entry.mail.kind, 'login_code')
  assert.match(entry.mail.text, /771234/)
})
