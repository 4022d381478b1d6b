/**
 * Load process for socket-sends' XMPP side: `pairs` sender → receiver account pairs (`<prefix><2i>`
 * → `<prefix><2i+1>`), each account on its own XMPP connection with an available presence; message
 * n is a `<message type='chat'>` to the receiver's bare JID whose body ends with `#<n>`. The load
 * shape (closed loop with a window per pair, or open loop at a rate) is bench/lib/pair-load.ts's.
 */
import { MESSAGE_TEXT } from '../lib/api.js'
import { PairLoad, type PairLoadResult, type PairLoadSpec } from '../lib/pair-load.js'
import { XmppConnection } from '../lib/xmpp-client.js'
import { serve } from './ipc.js'

export interface XmppLoadSpec extends PairLoadSpec {
  port: number
  domain: string
  pairs: number
  prefix: string
  password: string
  /** register the accounts in band first (the first run) */
  register: boolean
}

/** connections opened at once */
const CONNECT_BATCH = 20

serve(async (spec: XmppLoadSpec): Promise<PairLoadResult> => {
  const load = new PairLoad(spec.pairs, false)
  // a resource of this process's own: a session left by an earlier run is never the one written to
  const resource = `bench-${process.pid}`
  const accounts = Array.from({ length: spec.pairs * 2 }, (_, i) => `${spec.prefix}${i}`)
  const connections: XmppConnection[] = []
  for (let i = 0; i < accounts.length; i += CONNECT_BATCH) {
    const batch = accounts
      .slice(i, i + CONNECT_BATCH)
      .map((username) =>
        XmppConnection.open({ port: spec.port, domain: spec.domain, username, password: spec.password, resource, register: spec.register }),
      )
    connections.push(...(await Promise.all(batch)))
  }
  const received = (stanza: string) => {
    const now = performance.now()
    if (!stanza.startsWith('<message')) return // presences
    if (stanza.includes("type='error'")) return load.fail(new Error(`a receiver got an error: ${stanza.slice(0, 500)}`))
    const end = stanza.indexOf('</body>')
    const n = Number(stanza.slice(stanza.lastIndexOf('#', end) + 1, end))
    if (end < 0 || !Number.isSafeInteger(n)) return load.fail(new Error(`a message without its number: ${stanza.slice(0, 500)}`))
    load.deliveredAt(n, now)
  }
  // a sender hears back only when something went wrong (an error bounce)
  const senderGot = (stanza: string) => {
    if (stanza.includes("type='error'")) load.fail(new Error(`a sender got an error: ${stanza.slice(0, 500)}`))
  }
  try {
    connections.forEach((connection, i) => {
      connection.onClose = (error) => load.fail(error)
      connection.onStanza = i % 2 === 1 ? received : senderGot
    })
    const heads = Array.from({ length: spec.pairs }, (_, pair) => `<message to='${accounts[2 * pair + 1]}@${spec.domain}' type='chat' id='`)
    return await load.run(spec, (pair, n) =>
      connections[2 * pair].write(`${heads[pair]}${n}'><body>${MESSAGE_TEXT} #${n}</body></message>`),
    )
  } finally {
    await Promise.all(connections.map((connection) => connection.close()))
  }
})
