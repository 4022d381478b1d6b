/**
 * A real coturn for tests (Debian package coturn, /usr/bin/turnserver) on loopback with the TURN
 * REST API secret, and a minimal TURN client (RFC 5766 Allocate over UDP with long-term
 * credentials, RFC 5389 MESSAGE-INTEGRITY) to prove an allocation with given credentials.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash, createHmac, randomBytes } from 'node:crypto'
import dgram from 'node:dgram'
import fs from 'node:fs'
import path from 'node:path'
import { after } from 'node:test'
import { tempDir } from './database.js'
import { freePort } from './process.js'

export const TURNSERVER = process.env.TURNSERVER_BIN ?? '/usr/bin/turnserver'
export const coturnInstalled = () => fs.existsSync(TURNSERVER)

export interface Coturn {
  port: number
  realm: string
  secret: string
  child: ChildProcess
  log(): string
}

export async function startCoturn(secret: string): Promise<Coturn> {
  const dir = tempDir('tern-coturn-')
  const port = await freePort()
  const realm = 'tern.test'
  const logFile = path.join(dir, 'turn.log')
  const child = spawn(
    TURNSERVER,
    [
      '-n',
      '--listening-ip=127.0.0.1',
      `--listening-port=${port}`,
      '--relay-ip=127.0.0.1',
      '--min-port=49152',
      '--max-port=65535',
      '--use-auth-secret',
      `--static-auth-secret=${secret}`,
      `--realm=${realm}`,
      '--no-tls',
      '--no-dtls',
      '--no-cli',
      '--no-tcp-relay',
      '--allow-loopback-peers',
      `--log-file=${logFile}`,
      '--simple-log',
      `--pidfile=${path.join(dir, 'turn.pid')}`,
      `--userdb=${path.join(dir, 'turn.db')}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let output = ''
  child.stdout!.on('data', (c) => (output += c))
  child.stderr!.on('data', (c) => (output += c))
  after(() => {
    child.kill('SIGTERM')
    fs.rmSync(dir, { recursive: true, force: true })
  })
  const log = () => output + (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '')
  // ready once it answers a STUN binding request
  const deadline = Date.now() + 15_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`turnserver exited (${child.exitCode}):\n${log()}`)
    const answer = await transact(port, message(0x0001, []), 300).catch(() => null)
    if (answer && answer.type === 0x0101) break
    if (Date.now() > deadline) throw new Error(`turnserver did not answer in 15 s:\n${log()}`)
  }
  return { port, realm, secret, child, log }
}

const MAGIC = 0x2112a442
const ATTR = {
  USERNAME: 0x0006,
  MESSAGE_INTEGRITY: 0x0008,
  ERROR_CODE: 0x0009,
  REALM: 0x0014,
  NONCE: 0x0015,
  XOR_RELAYED_ADDRESS: 0x0016,
  REQUESTED_TRANSPORT: 0x0019,
  LIFETIME: 0x000d,
}

interface Attribute {
  type: number
  value: Buffer
}
interface Message {
  type: number
  id: Buffer
  attributes: Attribute[]
}

function encodeAttributes(attributes: Attribute[]): Buffer {
  return Buffer.concat(
    attributes.map(({ type, value }) => {
      const head = Buffer.alloc(4)
      head.writeUInt16BE(type, 0)
      head.writeUInt16BE(value.length, 2)
      return Buffer.concat([head, value, Buffer.alloc((4 - (value.length % 4)) % 4)])
    }),
  )
}

function message(type: number, attributes: Attribute[], id = randomBytes(12), integrityKey?: Buffer): Buffer {
  const body = encodeAttributes(attributes)
  const header = Buffer.alloc(20)
  header.writeUInt16BE(type, 0)
  header.writeUInt32BE(MAGIC, 4)
  id.copy(header, 8)
  if (!integrityKey) {
    header.writeUInt16BE(body.length, 2)
    return Buffer.concat([header, body])
  }
  // MESSAGE-INTEGRITY covers the message with the length counting the integrity attribute itself
  header.writeUInt16BE(body.length + 24, 2)
  const mac = createHmac('sha1', integrityKey)
    .update(Buffer.concat([header, body]))
    .digest()
  return Buffer.concat([header, body, encodeAttributes([{ type: ATTR.MESSAGE_INTEGRITY, value: mac }])])
}

function parse(buf: Buffer): Message {
  const type = buf.readUInt16BE(0)
  const length = buf.readUInt16BE(2)
  const attributes: Attribute[] = []
  let at = 20
  while (at < 20 + length) {
    const t = buf.readUInt16BE(at)
    const l = buf.readUInt16BE(at + 2)
    attributes.push({ type: t, value: buf.subarray(at + 4, at + 4 + l) })
    at += 4 + l + ((4 - (l % 4)) % 4)
  }
  return { type, id: buf.subarray(8, 20), attributes }
}

/** Sends `request` and waits for the answer; on `socket` (one client 5-tuple: a nonce holds for it only) or a new one. */
function transact(port: number, request: Buffer, timeoutMs = 2000, shared?: dgram.Socket): Promise<Message> {
  return new Promise((resolve, reject) => {
    const socket = shared ?? dgram.createSocket('udp4')
    const done = () => {
      clearTimeout(timer)
      socket.off('message', onMessage)
      socket.off('error', onError)
      if (!shared) socket.close()
    }
    const timer = setTimeout(() => {
      done()
      reject(new Error('no answer from the TURN server'))
    }, timeoutMs)
    const onMessage = (data: Buffer) => {
      done()
      try {
        resolve(parse(data))
      } catch (error) {
        reject(error)
      }
    }
    const onError = (error: Error) => {
      done()
      reject(error)
    }
    socket.on('message', onMessage)
    socket.on('error', onError)
    socket.send(request, port, '127.0.0.1')
  })
}

export type AllocateResult = { ok: true; relayed: string } | { ok: false; code: number; reason: string }

/** A TURN Allocate (UDP relay) with long-term credentials: the 401 challenge, then the signed request. */
export async function allocate(port: number, username: string, password: string): Promise<AllocateResult> {
  const socket = dgram.createSocket('udp4')
  try {
    return await allocateOn(socket, port, username, password)
  } finally {
    socket.close()
  }
}

async function allocateOn(socket: dgram.Socket, port: number, username: string, password: string): Promise<AllocateResult> {
  const transport = { type: ATTR.REQUESTED_TRANSPORT, value: Buffer.from([17, 0, 0, 0]) }
  const challenge = await transact(port, message(0x0003, [transport]), 2000, socket)
  const get = (m: Message, t: number) => m.attributes.find((a) => a.type === t)?.value
  const errorOf = (m: Message) => {
    const v = get(m, ATTR.ERROR_CODE)
    return v ? { code: v[2] * 100 + v[3], reason: v.subarray(4).toString('utf8') } : { code: 0, reason: 'no error code' }
  }
  if (challenge.type !== 0x0113 || errorOf(challenge).code !== 401)
    throw new Error(`expected a 401 challenge, got type ${challenge.type.toString(16)}`)
  const realm = get(challenge, ATTR.REALM)!
  const nonce = get(challenge, ATTR.NONCE)!
  const key = createHash('md5')
    .update(`${username}:${realm.toString('utf8')}:${password}`)
    .digest()
  const answer = await transact(
    port,
    message(
      0x0003,
      [
        transport,
        { type: ATTR.USERNAME, value: Buffer.from(username, 'utf8') },
        { type: ATTR.REALM, value: realm },
        { type: ATTR.NONCE, value: nonce },
      ],
      randomBytes(12),
      key,
    ),
    2000,
    socket,
  )
  if (answer.type === 0x0103) {
    const relayed = get(answer, ATTR.XOR_RELAYED_ADDRESS)!
    const xport = relayed.readUInt16BE(2) ^ (MAGIC >>> 16)
    const xaddr = (relayed.readUInt32BE(4) ^ MAGIC) >>> 0
    return { ok: true, relayed: `${xaddr >>> 24}.${(xaddr >> 16) & 255}.${(xaddr >> 8) & 255}.${xaddr & 255}:${xport}` }
  }
  return { ok: false, ...errorOf(answer) }
}
