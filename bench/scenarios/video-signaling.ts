/**
 * video-signaling: the video service on its own (`dist/src/video/main.js`, as `npm run
 * start:video` runs it) with ROOMS rooms of PEERS peers, every peer an idle joined signaling
 * socket; then offers relayed peer to peer at RATE a second. Figures: the relay latency (offer
 * written → offer received on the other socket) p50/p99, the service's CPU per offer, and the memory
 * an idle participant holds: heap + external after a full GC (the service runs under
 * bench/servers/video-gc.ts). RSS is only logged: the start-up heap shrinking swamps it.
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import fs from 'node:fs'
import { LoadProcess } from '../lib/load.js'
import { freePort, makeDataDir, removeDataDir, rssBytes, SERVER_CORE, sleep, spawnNode, stopChild } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, type Scenario } from '../lib/scenario.js'
import { NODE_FLAGS } from '../lib/server.js'
import { median } from '../lib/stats.js'
import type { VideoSignalingResult, VideoSignalingSpec } from '../load/video-signaling.js'

const ROOMS = Number(process.env.BENCH_VIDEO_ROOMS || 200)
const PEERS = 4
const RATE = Number(process.env.BENCH_VIDEO_RATE || 1000)
const KiB = 1024

/** CPU time (user + system) a process has used, in ms (Linux /proc). */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

async function settledRss(pid: number, ms = 3000): Promise<number> {
  const readings: number[] = []
  for (let t = 0; t < ms; t += 500) {
    await sleep(500)
    readings.push(rssBytes(pid))
  }
  return median(readings)
}

export const videoSignaling: Scenario = {
  name: 'video-signaling',
  summary: `signaling relay latency (offer → peer) at ${ROOMS} rooms of ${PEERS}, ${fmt(RATE)} offers/s; RSS per idle participant`,
  async run(ctx) {
    const latencyP50: number[] = []
    const latencyP99: number[] = []
    const cpuPer1000: number[] = []
    const heapPerPeer: number[] = []
    for (let run = 1; run <= ctx.runs; run++) {
      const dataDir = makeDataDir('video')
      const port = await freePort()
      const secret = randomBytes(32).toString('base64url')
      const logFile = path.join(dataDir, 'video.log')
      const out = fs.openSync(logFile, 'a')
      const child = spawnNode(
        ctx.machine,
        SERVER_CORE,
        [...NODE_FLAGS, '--expose-gc', '--import', 'tsx', 'bench/servers/video-gc.ts'],
        {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          DATA_DIR: dataDir,
          VIDEO_PORT: String(port),
          VIDEO_HOST: '127.0.0.1',
          VIDEO_SECRET: secret,
          LOG_LEVEL: 'warn',
        },
        ['ignore', out, out, 'ipc'],
      )
      /** the service's memory right after a full garbage collection */
      const memory = () =>
        new Promise<NodeJS.MemoryUsage>((resolve) => {
          child.once('message', (usage) => resolve(usage as NodeJS.MemoryUsage))
          child.send('gc')
        })
      fs.closeSync(out)
      const url = `http://127.0.0.1:${port}`
      const load = LoadProcess.start(ctx.machine, 'video-signaling')
      try {
        for (let i = 0; ; i++) {
          if (child.exitCode !== null) throw new Error(`the video service exited: ${fs.readFileSync(logFile, 'utf8')}`)
          if (
            await fetch(`${url}/health`).then(
              (r) => r.ok,
              () => false,
            )
          )
            break
          if (i > 400) throw new Error('the video service did not answer /health in 20 s')
          await sleep(50)
        }
        const spec: VideoSignalingSpec = { url, secret, rooms: ROOMS, peers: PEERS, step: 'connect' }
        // The first half of the rooms warms the code paths and the heap up; the memory figure is
        // what the second half adds.
        const half = Math.floor(ROOMS / 2)
        const first = await load.request<VideoSignalingResult>({ ...spec, fromRoom: 0, toRoom: half })
        const rss0 = await settledRss(child.pid!)
        const heap0 = await memory()
        const second = await load.request<VideoSignalingResult>({ ...spec, fromRoom: half, toRoom: ROOMS })
        const rssN = await settledRss(child.pid!)
        const heapN = await memory()
        const joined = second.joined!
        const added = second.joined! - first.joined!
        const participant = (rssN - rss0) / added
        heapPerPeer.push((heapN.heapUsed + heapN.external - heap0.heapUsed - heap0.external) / added / KiB)
        const cpuBefore = cpuMs(child.pid!)
        const result = await load.request<VideoSignalingResult>({
          ...spec,
          step: 'offers',
          rate: RATE,
          warmupMs: ctx.warmupMs,
          durationMs: ctx.durationMs,
        })
        // every offer sent, warm-up included: roughly RATE × (warm-up + window)
        const offersAll = (RATE * (ctx.warmupMs + ctx.durationMs)) / 1000
        cpuPer1000.push(((cpuMs(child.pid!) - cpuBefore) / offersAll) * 1000)
        if (result.missing) throw new Error(`${result.missing} offers never reached their peer`)
        ctx.log(
          `  run ${run}: ${fmt(joined)} participants, RSS ${fmt(rss0 / KiB / 1024)} → ${fmt(rssN / KiB / 1024)} MiB (${fmt(participant / KiB, 1)} KiB each; heap + external after GC ${fmt(heapPerPeer.at(-1)!, 1)} KiB each); ` +
            `${fmt(result.sent!)} offers, CPU ${fmt(cpuPer1000.at(-1)!, 1)} ms per 1,000, p50 ${fmt(result.latency!.p50, 2)} ms, p99 ${fmt(result.latency!.p99, 2)} ms, max ${fmt(result.latency!.max, 2)} ms`,
        )
        latencyP50.push(result.latency!.p50)
        latencyP99.push(result.latency!.p99)
      } finally {
        await load.close()
        await stopChild(child)
        removeDataDir(dataDir)
      }
    }
    const scenario = this.name
    const at = `${ROOMS} rooms of ${PEERS}, ${fmt(RATE)} offers/s`
    return [
      { scenario, figure: `relay latency p50, ${at}`, unit: 'ms', samples: latencyP50 },
      { scenario, figure: `relay latency p99, ${at}`, unit: 'ms', samples: latencyP99, target: { max: 5 } },
      { scenario, figure: 'video service CPU per 1,000 relayed offers', unit: 'ms', samples: cpuPer1000 },
      { scenario, figure: 'heap + external per idle participant (after GC)', unit: 'KiB', samples: heapPerPeer },
    ] satisfies Row[]
  },
}
