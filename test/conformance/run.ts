/**
 * Sync conformance (docs/operations.md): N clients exchange M messages in personal chats,
 * groups and a channel, with edits, deletes, reactions and reads, while their sockets drop at random
 * (closed, terminated, half-open until the server's heartbeat finds them) and resume, on the other
 * instance when there are two, and one instance is killed with SIGKILL and restarted mid-run. At
 * the end every client must hold every event of its logs exactly once, in order, without a gap in
 * its seq, and its state (content, edits, reactions, read state) must equal the server's history.
 *
 * Two instances on PostgreSQL + Redis when TEST_DATABASE_URL and TEST_REDIS_URL are set (a
 * database of the run's own next to TEST_DATABASE_URL), one on SQLite otherwise.
 *
 *   npm run conformance                       # the full run: 100 clients, 10,000 messages
 *   CONFORMANCE_CLIENTS=20 CONFORMANCE_MESSAGES=1000 npm run conformance
 */
import { ConformanceClient } from './client.js'
import { Cluster } from './cluster.js'
import { verify, settle, type Divergence, type ReadFigures } from './verify.js'
import { drive, seeded, setUp, type WorkloadFigures } from './workload.js'

export interface ConformanceOptions {
  clients: number
  messages: number
  /** senders at once */
  workers: number
  /** the mean time between two drops of one client's socket */
  dropEveryMs: number
  seed: number
  databaseUrl: string | null
  redisUrl: string | null
  /** print progress lines */
  log?: (line: string) => void
}

export interface ConformanceResult {
  ok: boolean
  /** lines the instances logged at level error (a handler that failed) */
  serverErrors: number
  divergence: Divergence | null
  /** violations seen live, over all clients */
  violations: number
  instances: number
  dialect: 'sqlite' | 'postgres'
  workload: WorkloadFigures
  figures: {
    clients: number
    eventsDelivered: number
    eventsChecked: number
    messagesChecked: number
    /** how much read state the comparison had to bite on */
    read: ReadFigures
    drops: { close: number; terminate: number; halfOpen: number }
    halfOpenDetected: number
    resumes: number
    resumesElsewhere: number
    socketsLostToTheKill: number
    kills: number
    seconds: number
    eventsPerSecond: number
  }
}

const HEARTBEAT_SECONDS = 1
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export function optionsFromEnv(defaults: { clients: number; messages: number }): ConformanceOptions {
  const int = (name: string, fallback: number) => {
    const value = process.env[name]
    if (value === undefined || value === '') return fallback
    const n = Number(value)
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer (got ${JSON.stringify(value)})`)
    return n
  }
  return {
    clients: Math.max(3, int('CONFORMANCE_CLIENTS', defaults.clients)),
    messages: int('CONFORMANCE_MESSAGES', defaults.messages),
    workers: int('CONFORMANCE_WORKERS', 8),
    // about one drop every 150 ms over all clients (every 3 s per client at 20): the same churn per instance at any N
    dropEveryMs: int('CONFORMANCE_DROP_MS', Math.max(3000, 150 * int('CONFORMANCE_CLIENTS', defaults.clients))),
    seed: int('CONFORMANCE_SEED', Math.floor(Math.random() * 2 ** 31) + 1),
    databaseUrl: process.env.TEST_DATABASE_URL || null,
    redisUrl: process.env.TEST_REDIS_URL || null,
  }
}

export async function runConformance(options: ConformanceOptions): Promise<ConformanceResult> {
  const t0 = Date.now()
  const log = (line: string) => options.log?.(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}`)
  const random = seeded(options.seed)
  // two instances need Redis for their fan-out; SQLite is one process's
  const instances = options.databaseUrl && options.redisUrl ? 2 : 1
  log(
    `conformance: seed ${options.seed}; ${instances} instance(s) on ${options.databaseUrl ? 'PostgreSQL' : 'SQLite'}${options.redisUrl && instances === 2 ? ' + Redis' : ''}; ${options.clients} clients, ${options.messages} messages`,
  )
  const cluster = await Cluster.start({
    instances,
    databaseUrl: options.databaseUrl,
    redisUrl: options.redisUrl,
    heartbeatSeconds: HEARTBEAT_SECONDS,
  })
  const clients: ConformanceClient[] = []
  // the chaos loops and the kill are the run's own timers and processes: a run that fails midway
  // stops them too (finally), or its drop loops keep the test's process alive for ever
  let chaos = true
  let calm: () => void = () => {}
  let kill: Promise<void> | null = null
  try {
    log('conformance: instances up; registering users, making chats')
    const { users, chats } = await setUp(cluster, options.clients, random)
    const personalChats = new Map<number, number[]>()
    for (const chat of chats) {
      if (chat.kind !== 'personal') continue
      for (const member of chat.members) personalChats.set(member.index, [...(personalChats.get(member.index) ?? []), chat.id!])
    }
    for (const user of users) {
      const communities = chats.filter((chat) => chat.kind !== 'personal' && chat.members.includes(user)).map((chat) => chat.id!)
      clients.push(new ConformanceClient(user.index, user.id, user.token, communities, cluster, HEARTBEAT_SECONDS))
    }
    await Promise.all(clients.map((client) => client.start()))
    log(`conformance: ${users.length} users, ${chats.length} chats, all connected; sending`)

    const started = Date.now()
    // the drops: each client's socket fails every dropEveryMs on average, in one of three ways
    const calmed = new Promise<void>((resolve) => (calm = resolve))
    const drops = clients.map(async (client) => {
      while (chaos) {
        await Promise.race([sleep(-Math.log(1 - Math.random()) * options.dropEveryMs), calmed])
        if (!chaos) break
        const r = Math.random()
        await client.drop(r < 0.35 ? 'close' : r < 0.6 ? 'terminate' : 'halfOpen')
      }
    })
    // the kill: instance 1 at 40% of the messages, restarted at once (its clients resume on the other, or wait for it)
    let kills = 0
    const killAt = Math.max(1, Math.floor(options.messages * 0.4))
    const workload = await drive(cluster, chats, {
      messages: options.messages,
      workers: options.workers,
      random,
      progress: (sent) => {
        if (sent === killAt && !kill) {
          kill = (async () => {
            const victim = cluster.instances[0]
            log(`conformance: SIGKILL ${victim.name} after ${sent} messages`)
            await cluster.kill(victim)
            kills++
            await sleep(200 + Math.random() * 300)
            const started = Date.now()
            await cluster.restart(victim)
            log(`conformance: ${victim.name} restarted (${((Date.now() - started) / 1000).toFixed(1)} s to answer /health)`)
          })()
          // awaited after the workload; a failed restart must not end the process before that
          kill.catch(() => {})
        }
        if (sent % Math.max(1, Math.floor(options.messages / 10)) === 0) log(`conformance: ${sent} messages sent`)
      },
    })
    if (kill) await kill
    // A short run (a fast machine sends the messages in a few seconds) may not have had every kind
    // of drop yet: the drops go on until each has happened once, for at most 15 s more.
    const everyKind = () => (['close', 'terminate', 'halfOpen'] as const).every((kind) => clients.some((c) => c.figures.drops[kind] > 0))
    for (const until = Date.now() + 15_000; !everyKind() && Date.now() < until; ) await sleep(100)
    chaos = false
    calm()
    await Promise.all(drops)
    log('conformance: drops stopped; waiting for every client to catch up')
    await Promise.all(clients.map((client) => client.whenConnected()))
    const settled = await settle(cluster, clients, 30_000)
    const seconds = (Date.now() - started) / 1000
    if (!settled) log('conformance: some clients did not catch up within 30 s of the end (the comparison shows what they lack)')

    const sent = workload.sentMessages
    log('conformance: comparing every client with the server')
    const { divergence, eventsChecked, messagesChecked, read } = await verify(cluster, clients, personalChats, sent)
    const sum = (pick: (client: ConformanceClient) => number) => clients.reduce((total, client) => total + pick(client), 0)
    const eventsDelivered = sum((c) => c.figures.events)
    for (const line of cluster.errors.slice(0, 20)) log(`server error: ${line.slice(0, 4000)}`)
    return {
      serverErrors: cluster.errors.length,
      ok: divergence === null && cluster.errors.length === 0,
      divergence,
      violations: sum((c) => c.violations.length),
      instances,
      dialect: options.databaseUrl ? 'postgres' : 'sqlite',
      workload: workload.figures,
      figures: {
        clients: clients.length,
        eventsDelivered,
        eventsChecked,
        messagesChecked,
        read,
        drops: {
          close: sum((c) => c.figures.drops.close),
          terminate: sum((c) => c.figures.drops.terminate),
          halfOpen: sum((c) => c.figures.drops.halfOpen),
        },
        halfOpenDetected: sum((c) => c.figures.halfOpenDetected),
        resumes: sum((c) => c.figures.resumes),
        resumesElsewhere: sum((c) => c.figures.resumesElsewhere),
        socketsLostToTheKill: sum((c) => c.figures.serverLost),
        kills,
        seconds,
        eventsPerSecond: Math.round(eventsDelivered / seconds),
      },
    }
  } catch (error) {
    // what the servers said is the first thing to read about a failed request
    for (const line of cluster.errors.slice(0, 20)) log(`server error: ${line.slice(0, 4000)}`)
    throw error
  } finally {
    chaos = false
    calm()
    if (kill) await (kill as Promise<void>).catch(() => {})
    await Promise.all(clients.map((client) => client.stop()))
    await cluster.stop()
  }
}

/** The figures and, on failure, the first divergent event, as lines. */
export function report(result: ConformanceResult): string {
  const { figures: f, workload: w } = result
  const lines = [
    `conformance ${result.ok ? 'PASSED' : 'FAILED'}: ${result.instances} instance(s) on ${result.dialect}`,
    `  clients ${f.clients}; messages ${w.sent}; edits ${w.edits}; deletes ${w.deletes} (for me ${w.deletesForMe}); reactions ${w.reactions}; reads ${w.reads}; refused after a delete ${w.raced}; requests retried after the kill ${w.retried}`,
    `  events delivered ${f.eventsDelivered}; events checked ${f.eventsChecked}; messages checked against history ${f.messagesChecked}`,
    `  read state: receipts (message.read) held by the clients ${f.read.receipts}; personal-chat messages compared exactly ${f.read.exact} (read ${f.read.exactRead}); group and channel messages a client knew read ${f.read.known}`,
    `  drops ${f.drops.close + f.drops.terminate + f.drops.halfOpen} (closed ${f.drops.close}, terminated ${f.drops.terminate}, half-open ${f.drops.halfOpen}, of which the server dropped ${f.halfOpenDetected}); resumes ${f.resumes} (on the other instance ${f.resumesElsewhere}); sockets lost to the kill ${f.socketsLostToTheKill}; kills ${f.kills}`,
    `  time ${f.seconds.toFixed(1)} s; ${f.eventsPerSecond} events/s delivered; live protocol violations ${result.violations}; server errors logged ${result.serverErrors}`,
  ]
  if (result.divergence) {
    const d = result.divergence
    lines.push(
      `  first divergence: client ${d.client} (user ${d.userId}), ${d.where}, chat ${d.chatId ?? '-'}${d.index !== undefined ? `, event #${d.index}` : ''}`,
    )
    lines.push(`    expected: ${JSON.stringify(d.expected)}`)
    lines.push(`    got:      ${JSON.stringify(d.got)}`)
  }
  return lines.join('\n')
}

// `npm run conformance`: the full run
if (import.meta.url === `file://${process.argv[1]}`) {
  // Ctrl-C: exit, and the 'exit' hook kills the servers (cluster.ts)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130))
  const options = optionsFromEnv({ clients: 100, messages: 10_000 })
  runConformance({ ...options, log: (line) => console.log(line) })
    .then((result) => {
      console.log(report(result))
      process.exit(result.ok ? 0 : 1)
    })
    .catch((error) => {
      console.error(`conformance: ${(error as Error).stack ?? error}`)
      process.exit(1)
    })
}
