/**
 * A minimal XMPP client (RFC 6120/6121) on `net`, for load generation: the stream, in-band
 * registration (XEP-0077), SASL PLAIN, resource binding, the session and the initial presence,
 * then whole top-level stanzas handed over as strings. No TLS and no XML parser: a stanza's end is
 * found by counting its tags, which is enough for what a server writes (it escapes `<` and `>` in
 * text and attribute values); one load core can then outrun one server core.
 */
import net from 'node:net'

export interface XmppAccount {
  port: number
  /** the server's domain (its `hosts`) */
  domain: string
  username: string
  password: string
  resource: string
  /** register the account in band first (an account that exists already is fine) */
  register?: boolean
}

const TIMEOUT_MS = 10_000

/** `'` and `&` would end an attribute or start an entity; the load only writes plain names and text. */
function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/'/g, '&apos;').replace(/"/g, '&quot;')
}

export class XmppConnection {
  /** every top-level stanza once the session is up (messages, presences, errors) */
  onStanza: (stanza: string) => void = () => {}
  /** the stream ended or failed after the session was up */
  onClose: (error: Error) => void = () => {}
  /** the full JID the server bound */
  jid = ''
  private buffer = ''
  private waiter: { match: (stanza: string) => boolean; resolve: (stanza: string) => void; reject: (error: Error) => void } | null = null
  private closed = false
  /** the load closing the stream itself: not an error */
  private closing = false
  /** the session is up: stanzas go to onStanza (before, they wait in the buffer for `next`) */
  private ready = false

  private constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true)
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => this.onData(chunk))
    socket.on('error', (error) => this.end(error))
    socket.on('close', () => this.end(new Error('the server closed the XMPP connection')))
  }

  /** Connects, (registers,) authenticates, binds, starts the session and sends the initial presence. */
  static async open(account: XmppAccount): Promise<XmppConnection> {
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect({ port: account.port, host: '127.0.0.1' }, () => {
        s.off('error', reject)
        resolve(s)
      })
      s.once('error', reject)
    })
    const connection = new XmppConnection(socket)
    try {
      await connection.handshake(account)
    } catch (error) {
      socket.destroy()
      throw error
    }
    return connection
  }

  write(data: string) {
    this.socket.write(data)
  }

  /** Ends the stream politely and waits (briefly) for the server to close it, so its session is gone. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closing = true
    const gone = new Promise<void>((resolve) => this.socket.once('close', () => resolve()))
    this.socket.end('</stream:stream>')
    const timer = setTimeout(() => this.socket.destroy(), 2000)
    await gone
    clearTimeout(timer)
  }

  private async handshake(account: XmppAccount) {
    const { domain, username, password } = account
    let features = await this.openStream(domain)
    if (account.register) {
      this.write(
        `<iq type='set' id='reg'><query xmlns='jabber:iq:register'><username>${escapeText(username)}</username><password>${escapeText(password)}</password></query></iq>`,
      )
      const answer = await this.next((s) => s.startsWith('<iq') && s.includes("id='reg'"))
      // conflict: registered by an earlier run of the load
      if (!answer.includes("type='result'") && !answer.includes('<conflict')) throw new Error(`registering ${username} failed: ${answer}`)
    }
    if (!features.includes('>PLAIN<')) throw new Error(`the server offers no SASL PLAIN: ${features}`)
    const credentials = Buffer.from(`\0${username}\0${password}`).toString('base64')
    this.write(`<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>${credentials}</auth>`)
    const auth = await this.next((s) => s.startsWith('<success') || s.startsWith('<failure'))
    if (!auth.startsWith('<success')) throw new Error(`SASL PLAIN failed for ${username}: ${auth}`)

    features = await this.openStream(domain)
    if (!features.includes('urn:ietf:params:xml:ns:xmpp-bind')) throw new Error(`no resource binding offered: ${features}`)
    this.write(
      `<iq type='set' id='bind'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>${escapeText(account.resource)}</resource></bind></iq>`,
    )
    const bound = await this.next((s) => s.startsWith('<iq') && s.includes("id='bind'"))
    const jid = /<jid>([^<]+)<\/jid>/.exec(bound)
    if (!bound.includes("type='result'") || !jid) throw new Error(`binding a resource failed: ${bound}`)
    this.jid = jid[1]
    // RFC 3921's session: optional for RFC 6121 servers, still answered by ejabberd
    if (features.includes('urn:ietf:params:xml:ns:xmpp-session')) {
      this.write(`<iq type='set' id='sess'><session xmlns='urn:ietf:params:xml:ns:xmpp-session'/></iq>`)
      const session = await this.next((s) => s.startsWith('<iq') && s.includes("id='sess'"))
      if (!session.includes("type='result'")) throw new Error(`starting the session failed: ${session}`)
    }
    // available: without it a message to the bare JID has no resource to go to
    this.write('<presence/>')
    this.ready = true
    this.drain()
  }

  /** Opens (or restarts) the stream; resolves with the server's stream features. */
  private async openStream(domain: string): Promise<string> {
    this.write(
      `<?xml version='1.0'?><stream:stream to='${escapeText(domain)}' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>`,
    )
    return this.next((s) => s.startsWith('<stream:features'))
  }

  /** The next stanza `match` accepts (others before it are dropped: presences, the stream header). */
  private next(match: (stanza: string) => boolean): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null
        reject(new Error(`the XMPP server did not answer within ${TIMEOUT_MS / 1000} s`))
      }, TIMEOUT_MS)
      this.waiter = {
        match,
        resolve: (stanza) => {
          clearTimeout(timer)
          resolve(stanza)
        },
        reject: (error) => {
          clearTimeout(timer)
          reject(error)
        },
      }
      this.drain()
    })
  }

  private onData(chunk: string) {
    this.buffer = this.buffer.length ? this.buffer + chunk : chunk
    this.drain()
  }

  /** Hands over every complete top-level element in the buffer. */
  private drain() {
    const buffer = this.buffer
    let pos = 0
    for (;;) {
      // during the handshake a stanza waits until a step asks for it
      if (!this.ready && !this.waiter) break
      const start = buffer.indexOf('<', pos)
      if (start < 0) {
        pos = buffer.length
        break
      }
      const headEnd = buffer.indexOf('>', start)
      if (headEnd < 0) break
      let end: number
      if (buffer.startsWith('<?', start) || buffer.startsWith('<stream:stream', start)) {
        end = headEnd + 1 // the XML declaration and the stream's open tag stand alone
      } else if (buffer.startsWith('</stream:stream', start)) {
        this.buffer = ''
        return this.end(new Error('the server ended the stream'))
      } else if (buffer.charCodeAt(headEnd - 1) === 47 /* '/' */) {
        end = headEnd + 1
      } else {
        let depth = 1
        let i = headEnd + 1
        while (depth > 0) {
          const lt = buffer.indexOf('<', i)
          if (lt < 0) break
          const gt = buffer.indexOf('>', lt)
          if (gt < 0) break
          if (buffer.charCodeAt(lt + 1) === 47) depth--
          else if (buffer.charCodeAt(gt - 1) !== 47) depth++
          i = gt + 1
        }
        if (depth > 0) break
        end = i
      }
      const stanza = buffer.slice(start, end)
      pos = end
      this.dispatch(stanza)
      if (this.closed) return
    }
    this.buffer = pos >= buffer.length ? '' : buffer.slice(pos)
  }

  private dispatch(stanza: string) {
    if (stanza.startsWith('<stream:error')) return this.end(new Error(`stream error: ${stanza}`))
    const waiter = this.waiter
    if (waiter) {
      if (waiter.match(stanza)) {
        this.waiter = null
        waiter.resolve(stanza)
      }
      return
    }
    if (!stanza.startsWith('<?') && !stanza.startsWith('<stream:')) this.onStanza(stanza)
  }

  private end(error: Error) {
    if (this.closed) return
    this.closed = true
    this.socket.destroy()
    if (this.waiter) {
      const waiter = this.waiter
      this.waiter = null
      waiter.reject(error)
    } else if (!this.closing) {
      this.onClose(error)
    }
  }
}
