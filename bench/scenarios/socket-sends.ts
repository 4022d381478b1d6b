/**
 * socket-sends: messages sent over the WebSocket (`send` frames, each answered by an `ack` after
 * its commit) in 100 personal chats, against ejabberd relaying the same messages over XMPP on the
 * same core, in the same run, with the same load (bench/lib/pair-load.ts): 100 sender → receiver
 * pairs, each pair's sender and receiver on connections of their own in the load process.
 *
 *  - maximum: closed loop, WINDOW messages in flight per pair; a message is done when its receiver
 *    has it (Tern: and its sender has the ack, so it is stored). Tern and ejabberd alternate run by
 *    run, so drift on the machine hits both alike.
 *  - latency: open loop at the two target rates, 16,000 msg/s and half of it (8,000), each when
 *    Tern's maximum reaches it, and at half of Tern's own maximum for reference (where a send shares
 *    its commit with fewer others than at the maximum, so it costs more); ejabberd at the same rates
 *    for reference where its own maximum reaches them.
 *
 * ejabberd stores nothing (no offline storage, no archive): its figure is a relay's, Tern's a
 * durable store's (SQLite, synchronous=NORMAL, Tern's default). Without the `ejabberd` package the
 * scenario says so loudly and its ejabberd rows read n/a.
 *
 *  - ceilings: a bare `ws` relay (bench/servers/bare-relay.ts) on the same load, alternating with
 *    Tern and ejabberd: with one SQLite insert per message, group-committed and acked after it
 *    (the socket twin of send-throughput's plain ceiling), and storing nothing. What a Node server
 *    can do here with no rules, no update log and no events: set beside Tern's and ejabberd's CPU
 *    per message, it tells Node's share of the gap from Tern's own. Both also run at the two
 *    target rates, after Tern in each run: their p99 there is what a Node server with nothing but
 *    the relay reaches on this machine, the floor under Tern's p99 targets.
 *  - floor: once Tern has stopped, its messages service's send runs in process on the same data
 *    (bench/servers/send-alone.ts), with the closed loop's sends in flight: the CPU per message of
 *    the checks, the transaction and its share of the commit, before any transport. Beside each
 *    server's CPU per message at its maximum, it shows how much of Tern's cost is the store's.
 */
import { openPairs } from '../lib/api.js'
import { ejabberdMissing, startEjabberd, type Ejabberd } from '../lib/ejabberd.js'
import { runLoad } from '../lib/load.js'
import { SATURATED, type PairLoadResult } from '../lib/pair-load.js'
import { makeDataDir, removeDataDir } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, type BenchContext, type Scenario } from '../lib/scenario.js'
import { sendAlone, type SendAlone } from '../lib/send-alone.js'
import { startServer, type Server } from '../lib/server.js'
import { median } from '../lib/stats.js'
import type { SocketSendsSpec } from '../load/socket-sends.js'
import type { XmppLoadSpec } from '../load/xmpp.js'

/** sender → receiver pairs, each in its own personal chat (Tern) or between two accounts (XMPP) */
const PAIRS = 100
/** closed loop: messages each pair keeps in flight (BENCH_SOCKET_WINDOW) */
const WINDOW = Number(process.env.BENCH_SOCKET_WINDOW || 4)
/**
 * The targets: this rate at least, with send → peer receipt p99 under 50 ms at that rate and
 * under 10 ms at half of it (8,000 msg/s)
 */
const TARGET_RATE = 16_000
const HALF_TARGET_RATE = TARGET_RATE / 2
const P99_AT_TARGET_MS = 50
const P99_AT_HALF_MS = 10
const XMPP_PASSWORD = 'bench-password'

/** "120.5 µs of CPU per message, 97% of its core": what the server spent, which other processes hardly move. */
const serverCpu = (result: PairLoadResult) =>
  `${fmt(result.serverCpuPerMessageUs ?? Number.NaN, 1)} µs of CPU per message, ${Math.round((result.serverCpu ?? Number.NaN) * 100)}% of its core`

/** the samples of a figure that was not measured: its row reads n/a */
const NOT_MEASURED = [Number.NaN]

/** ", saturated" for a fixed-rate window where the server's CPU per message says nothing (pair-load.ts SATURATED) */
const saturated = (result: PairLoadResult) => ((result.serverCpu ?? 0) >= SATURATED ? ', saturated' : '')

/** Fails on a lost or unacknowledged message; warns when the load core, not the server, may have been the limit. */
function checked(ctx: BenchContext, label: string, result: PairLoadResult, rate?: number): PairLoadResult {
  if (result.missing > 0) throw new Error(`${label}: ${result.missing} messages never reached their receiver`)
  if (result.unacked > 0) throw new Error(`${label}: ${result.unacked} sends were never acknowledged`)
  if (result.cpu > 0.9) ctx.log(`  warning: ${label}: the load process used ${Math.round(result.cpu * 100)}% of its core`)
  if (rate !== undefined && result.throughput < rate * 0.95)
    ctx.log(`  warning: ${label}: only ${fmt(result.throughput)} of ${fmt(rate)} msg/s were done in the window`)
  return result
}

export const socketSends: Scenario = {
  name: 'socket-sends',
  summary: `WebSocket send frames, ${PAIRS} pairs: max msg/s stored + delivered vs ejabberd relaying (same core), p99 send → receipt`,
  async run(ctx) {
    if (!(WINDOW >= 1)) throw new Error('BENCH_SOCKET_WINDOW must be a positive integer')
    const dataDir = makeDataDir('socket-sends')
    let tern: Server | null = null
    let ejabberd: Ejabberd | null = null
    let relays: Server[] = []
    let relayDir: string | null = null
    try {
      tern = await startServer(ctx.machine, 'tern', dataDir)
      const pairs = await openPairs(tern.url, 'sock', PAIRS)

      const missing = ejabberdMissing()
      if (missing) {
        ctx.log(
          `  !!! ejabberd NOT MEASURED: ${missing}; its rows read n/a (for reference: ejabberd 23.01 has relayed 15,800 msg/s on one core of this machine class)`,
        )
      } else {
        ejabberd = await startEjabberd(ctx.machine)
        ctx.log(`  ejabberd ${ejabberd.version} on 127.0.0.1:${ejabberd.port} (pid ${ejabberd.pid}), no storage of messages`)
      }

      const port = tern.port
      const serverPid = tern.pid
      const ternLoad = (shape: Pick<SocketSendsSpec, 'mode' | 'window' | 'rate'>, label: string) =>
        runLoad<PairLoadResult>(ctx.machine, 'socket-sends', {
          port,
          pairs,
          warmupMs: ctx.warmupMs,
          durationMs: ctx.durationMs,
          serverPid,
          ...shape,
        } satisfies SocketSendsSpec).then((result) => checked(ctx, label, result, shape.rate))
      let registered = false
      const xmppLoad = async (server: Ejabberd, shape: Pick<XmppLoadSpec, 'mode' | 'window' | 'rate'>, label: string) => {
        const result = await runLoad<PairLoadResult>(ctx.machine, 'xmpp', {
          port: server.port,
          domain: server.domain,
          pairs: PAIRS,
          prefix: 'sock',
          password: XMPP_PASSWORD,
          // the first load registers the accounts in band (before its window)
          register: !registered,
          warmupMs: ctx.warmupMs,
          durationMs: ctx.durationMs,
          serverPid: server.pid,
          ...shape,
        } satisfies XmppLoadSpec)
        registered = true
        return checked(ctx, label, result, shape.rate)
      }

      // The ceilings of a Node server on this load (bench/servers/bare-relay.ts): a ws relay with one
      // insert per message, group-committed, acked after its commit; and the same relay storing nothing.
      relayDir = makeDataDir('socket-sends-relay')
      const ceilings = [
        {
          label: 'bare relay + insert',
          server: await startServer(ctx.machine, 'bare-relay', relayDir),
          max: [] as number[],
          cpu: [] as number[],
        },
        {
          label: 'bare relay, no store',
          server: await startServer(ctx.machine, 'bare-relay-none', relayDir),
          max: [] as number[],
          cpu: [] as number[],
        },
      ]
      relays = ceilings.map((ceiling) => ceiling.server)
      const [withInsert, noStore] = ceilings
      const relayPairs: SocketSendsSpec['pairs'] = pairs.map((_, i) => ({ senderToken: `s.${i}`, receiverToken: `r.${i}`, chatId: i }))
      const closed = { mode: 'closed', window: WINDOW } as const
      const relayLoad = (relay: Server, label: string, shape: Pick<SocketSendsSpec, 'mode' | 'window' | 'rate'> = closed) =>
        runLoad<PairLoadResult>(ctx.machine, 'socket-sends', {
          port: relay.port,
          pairs: relayPairs,
          warmupMs: ctx.warmupMs,
          durationMs: ctx.durationMs,
          serverPid: relay.pid,
          ...shape,
        } satisfies SocketSendsSpec).then((result) => checked(ctx, label, result, shape.rate))

      const ternMax: number[] = []
      const ejabberdMax: number[] = []
      const ternCpu: number[] = []
      const ejabberdCpu: number[] = []
      for (let run = 1; run <= ctx.runs; run++) {
        const line: string[] = []
        if (ejabberd) {
          const result = await xmppLoad(ejabberd, closed, 'ejabberd max')
          ejabberdMax.push(result.throughput)
          ejabberdCpu.push(result.serverCpuPerMessageUs ?? Number.NaN)
          line.push(`ejabberd ${fmt(result.throughput)} msg/s (p99 ${fmt(result.latency.p99, 2)} ms; ${serverCpu(result)})`)
        }
        const result = await ternLoad(closed, 'Tern max')
        ternMax.push(result.throughput)
        ternCpu.push(result.serverCpuPerMessageUs ?? Number.NaN)
        line.push(
          `Tern ${fmt(result.throughput)} msg/s (p99 receipt ${fmt(result.latency.p99, 2)} ms, ack ${fmt(result.ackLatency!.p99, 2)} ms; ${serverCpu(result)}; load CPU ${Math.round(result.cpu * 100)}%)`,
        )
        for (const ceiling of ceilings) {
          const result = await relayLoad(ceiling.server, ceiling.label)
          ceiling.max.push(result.throughput)
          ceiling.cpu.push(result.serverCpuPerMessageUs ?? Number.NaN)
          line.push(`${ceiling.label} ${fmt(result.throughput)} msg/s (${serverCpu(result)})`)
        }
        ctx.log(`  run ${run}, closed loop (${WINDOW} in flight per pair): ${line.join('; ')}`)
      }

      // Latency at half of Tern's maximum (reference), and at the two target rates once Tern's maximum reaches them.
      const half = Math.round(median(ternMax) / 2)
      const atRate = async (rate: number, withCeilings = false) => {
        const p50: number[] = []
        const p99: number[] = []
        const reference: number[] = []
        const ceilingP99 = ceilings.map(() => [] as number[])
        const ejabberdCan = ejabberd !== null && median(ejabberdMax) >= rate
        if (ejabberd && !ejabberdCan)
          ctx.log(`  ejabberd's maximum (${fmt(median(ejabberdMax))} msg/s) is below ${fmt(rate)} msg/s: not measured at that rate`)
        for (let run = 1; run <= ctx.runs; run++) {
          const open = { mode: 'open', rate } as const
          const result = await ternLoad(open, `Tern at ${fmt(rate)} msg/s`)
          p50.push(result.latency.p50)
          p99.push(result.latency.p99)
          let note = ''
          if (ejabberdCan) {
            const ref = await xmppLoad(ejabberd!, open, `ejabberd at ${fmt(rate)} msg/s`)
            reference.push(ref.latency.p99)
            note = `; ejabberd p50 ${fmt(ref.latency.p50, 2)} ms, p99 ${fmt(ref.latency.p99, 2)} ms (${serverCpu(ref)})`
          }
          if (withCeilings) {
            for (const [i, ceiling] of ceilings.entries()) {
              const ref = await relayLoad(ceiling.server, `${ceiling.label} at ${fmt(rate)} msg/s`, open)
              ceilingP99[i].push(ref.latency.p99)
              note += `; ${ceiling.label} p50 ${fmt(ref.latency.p50, 2)} ms, p99 ${fmt(ref.latency.p99, 2)} ms (${serverCpu(ref)})`
            }
          }
          ctx.log(
            `  run ${run} at ${fmt(rate)} msg/s: Tern p50 ${fmt(result.latency.p50, 2)} ms, p99 ${fmt(result.latency.p99, 2)} ms, max ${fmt(result.latency.max, 1)} ms (ack p99 ${fmt(result.ackLatency!.p99, 2)} ms; ${serverCpu(result)}${saturated(result)})${note}`,
          )
        }
        return {
          p50,
          p99,
          reference: reference.length ? reference : NOT_MEASURED,
          ceilings: ceilingP99.map((samples) => (samples.length ? samples : NOT_MEASURED)),
        }
      }
      const atHalf = await atRate(half)
      const notRun = { p50: NOT_MEASURED, p99: NOT_MEASURED, reference: NOT_MEASURED, ceilings: ceilings.map(() => NOT_MEASURED) }
      const reachable = (rate: number) => {
        const reached = median(ternMax) >= rate
        if (!reached) ctx.log(`  Tern's maximum (${fmt(median(ternMax))} msg/s) is below ${fmt(rate)} msg/s: no latency at that rate`)
        return reached
      }
      const halfReached = reachable(HALF_TARGET_RATE)
      const atHalfTarget = halfReached ? await atRate(HALF_TARGET_RATE, true) : notRun
      const reached = reachable(TARGET_RATE)
      const atTarget = reached ? await atRate(TARGET_RATE, true) : notRun
      for (const relay of relays) await relay.stop()
      relays = []

      // the floor: the same sends without the network, once Tern has stopped (on its data)
      await tern.stop()
      tern = null
      const alone: SendAlone[] = []
      for (let run = 1; run <= ctx.runs; run++) {
        const result = await sendAlone(ctx.machine, dataDir, WINDOW, ctx.warmupMs, ctx.durationMs)
        alone.push(result)
        ctx.log(
          `  run ${run}, Tern's send alone (in process, no network, ${WINDOW} in flight per pair): ${fmt(result.rate)} msg/s, ${fmt(result.cpuUsPerMessage, 1)} µs of CPU per message, ${Math.round(result.cpuShare * 100)}% of its core`,
        )
      }

      const scenario = this.name
      const ejabberdName = ejabberd ? `ejabberd ${ejabberd.version}` : 'ejabberd (not installed)'
      /** the relays' p99 rows at one of the target rates */
      const ceilingRows = (rate: number, samples: number[][]): Row[] =>
        ceilings.map((ceiling, i) => ({
          scenario,
          figure: `${ceiling.label} p99 at ${fmt(rate)} msg/s (reference)`,
          unit: 'ms',
          samples: samples[i],
        }))
      return [
        {
          scenario,
          figure: `Tern socket sends, max (stored + delivered, ${WINDOW} in flight per pair)`,
          unit: 'msg/s',
          samples: ternMax,
          target: { min: TARGET_RATE },
        },
        {
          scenario,
          figure: `${ejabberdName} relayed, max (not stored)`,
          unit: 'msg/s',
          samples: ejabberdMax.length ? ejabberdMax : NOT_MEASURED,
        },
        {
          scenario,
          figure: 'Tern / ejabberd',
          unit: 'x',
          samples: ejabberdMax.length ? ternMax.map((t, i) => t / ejabberdMax[i]) : NOT_MEASURED,
          target: { min: 1 },
        },
        { scenario, figure: 'Tern CPU per message at its max (socket: protocol, store, delivery)', unit: 'µs', samples: ternCpu },
        {
          scenario,
          figure: `${ejabberdName} CPU per message at its max (relay)`,
          unit: 'µs',
          samples: ejabberdCpu.length ? ejabberdCpu : NOT_MEASURED,
        },
        {
          scenario,
          figure: 'ceiling: bare ws relay + 1 SQLite insert per message (group commit, acked after it), max',
          unit: 'msg/s',
          samples: withInsert.max,
        },
        { scenario, figure: 'Tern / bare relay + insert', unit: 'x', samples: ternMax.map((t, i) => t / withInsert.max[i]) },
        { scenario, figure: 'bare relay + insert, CPU per message at its max', unit: 'µs', samples: withInsert.cpu },
        { scenario, figure: 'bare ws relay storing nothing, max', unit: 'msg/s', samples: noStore.max },
        { scenario, figure: 'bare relay storing nothing, CPU per message at its max', unit: 'µs', samples: noStore.cpu },
        {
          scenario,
          figure: "floor: Tern's send alone, CPU per message (in process, no network)",
          unit: 'µs',
          samples: alone.map((a) => a.cpuUsPerMessage),
        },
        { scenario, figure: "floor: Tern's send alone, max (in process, no network)", unit: 'msg/s', samples: alone.map((a) => a.rate) },
        {
          scenario,
          figure: `Tern p50 send → receipt at ${fmt(HALF_TARGET_RATE)} msg/s (half the target rate)${halfReached ? '' : ' (max below: not run)'}`,
          unit: 'ms',
          samples: atHalfTarget.p50,
        },
        {
          scenario,
          figure: `Tern p99 send → receipt at ${fmt(HALF_TARGET_RATE)} msg/s (half the target rate)${halfReached ? '' : ' (max below: not run)'}`,
          unit: 'ms',
          samples: atHalfTarget.p99,
          target: { max: P99_AT_HALF_MS },
        },
        {
          scenario,
          figure: `${ejabberdName} p99 at ${fmt(HALF_TARGET_RATE)} msg/s (reference)`,
          unit: 'ms',
          samples: atHalfTarget.reference,
        },
        ...ceilingRows(HALF_TARGET_RATE, atHalfTarget.ceilings),
        { scenario, figure: `Tern p50 send → receipt at ${fmt(half)} msg/s (half Tern's max, reference)`, unit: 'ms', samples: atHalf.p50 },
        { scenario, figure: `Tern p99 send → receipt at ${fmt(half)} msg/s (half Tern's max, reference)`, unit: 'ms', samples: atHalf.p99 },
        { scenario, figure: `${ejabberdName} p99 at ${fmt(half)} msg/s (reference)`, unit: 'ms', samples: atHalf.reference },
        {
          scenario,
          figure: `Tern p99 send → receipt at ${fmt(TARGET_RATE)} msg/s${reached ? '' : ' (max below: not run)'}`,
          unit: 'ms',
          samples: atTarget.p99,
          target: { max: P99_AT_TARGET_MS },
        },
        { scenario, figure: `${ejabberdName} p99 at ${fmt(TARGET_RATE)} msg/s (reference)`, unit: 'ms', samples: atTarget.reference },
        ...ceilingRows(TARGET_RATE, atTarget.ceilings),
      ] satisfies Row[]
    } finally {
      for (const relay of relays) await relay.stop()
      if (relayDir) removeDataDir(relayDir)
      await ejabberd?.stop()
      await tern?.stop()
      removeDataDir(dataDir)
    }
  },
}
