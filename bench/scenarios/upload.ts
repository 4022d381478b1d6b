/**
 * upload: a 1 GiB file through POST /files/upload (one multipart request) and through 8 MiB chunks
 * of /uploads/multipart + /uploads/complete, sent from a load process that streams it from disk.
 * Figures: how far the server's RSS rises above its idle level while it receives (sampled every
 * 50 ms; target < 64 MiB), and throughput against `cp` copying the same file on the same disk
 * (target ≥ 50%). Every run uploads different bytes (so dedupe never shortcuts), and dirty pages
 * are flushed (`sync`) before each measurement so that none inherits another's writeback.
 */
import { execFileSync } from 'node:child_process'
import { createHash, randomFillSync } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { register } from '../lib/api.js'
import { runLoad } from '../lib/load.js'
import { makeDataDir, removeDataDir, sleep } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, type Scenario } from '../lib/scenario.js'
import { openTernDb } from '../lib/seed.js'
import { startServer, type Server } from '../lib/server.js'
import { median } from '../lib/stats.js'
import type { UploadResult, UploadSpec } from '../load/upload.js'

const GiB = 1024 ** 3
const MiB = 1024 ** 2
const SIZE = GiB
const CHUNK = 8 * MiB

/** A file of `size` bytes that do not compress or repeat (so nothing can shortcut them). */
function makeSource(file: string, size: number) {
  const fd = fs.openSync(file, 'w')
  const buffer = Buffer.alloc(16 * MiB)
  for (let written = 0; written < size; written += buffer.length) {
    fs.writeSync(fd, randomFillSync(buffer), 0, Math.min(buffer.length, size - written))
  }
  fs.closeSync(fd)
}

/** Makes this run's bytes unique: a different first 16 bytes, a different SHA-256. */
function stamp(file: string, label: string) {
  const fd = fs.openSync(file, 'r+')
  fs.writeSync(fd, createHash('md5').update(label).digest(), 0, 16, 0)
  fs.closeSync(fd)
}

const flush = () => execFileSync('sync')

/** Samples RSS every 50 ms while `work` runs; returns its result and the peak. */
async function withPeakRss<T>(server: Server, work: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = server.rss()
  const timer = setInterval(() => (peak = Math.max(peak, server.rss())), 50)
  try {
    const result = await work()
    return { result, peak: Math.max(peak, server.rss()) }
  } finally {
    clearInterval(timer)
  }
}

interface Measured {
  mbps: number
  rssRise: number
}

export const upload: Scenario = {
  name: 'upload',
  summary: '1 GiB through /files/upload and through 8 MiB chunks: server RSS rise (< 64 MiB), throughput vs cp (≥ 50%)',
  async run(ctx) {
    const dataDir = makeDataDir('upload')
    try {
      const source = path.join(dataDir, 'source.bin')
      ctx.log(`  writing a ${fmt(SIZE / MiB)} MiB source file`)
      makeSource(source, SIZE)

      // The uploader is premium (the default premium cap is 2 GiB; the plain one is 50 MiB); there is
      // no premium API yet, so the flag is seeded while the server is stopped.
      let server = await startServer(ctx.machine, 'tern', dataDir)
      const user = await register(server.url, 'uploader')
      await server.stop()
      const db = openTernDb(dataDir)
      db.prepare('update users set premium_expires_at = ? where id = ?').run(Date.now() + 86_400_000, user.id)
      db.close()
      server = await startServer(ctx.machine, 'tern', dataDir)

      const spec = (mode: UploadSpec['mode']): UploadSpec => ({
        port: server.port,
        token: user.token,
        file: source,
        mode,
        chunkBytes: CHUNK,
      })
      const measure = async (mode: UploadSpec['mode'], label: string): Promise<Measured> => {
        stamp(source, label)
        flush()
        await sleep(500)
        const idle = median([server.rss(), await sleep(100).then(() => server.rss()), await sleep(100).then(() => server.rss())])
        const { result, peak } = await withPeakRss(server, () => runLoad<UploadResult>(ctx.machine, 'upload', spec(mode)))
        if (result.size !== SIZE) throw new Error(`${mode}: the server stored ${result.size} bytes, not ${SIZE}`)
        const mbps = SIZE / MiB / (result.ms / 1000)
        ctx.log(`  ${mode}: ${fmt(result.ms)} ms, ${fmt(mbps)} MiB/s; RSS ${fmt(idle / MiB)} → peak ${fmt(peak / MiB)} MiB`)
        return { mbps, rssRise: peak - idle }
      }
      const copy = (label: string): number => {
        stamp(source, label)
        flush()
        const target = path.join(dataDir, 'copy.bin')
        const started = performance.now()
        execFileSync('cp', [source, target])
        const ms = performance.now() - started
        fs.rmSync(target)
        ctx.log(`  cp: ${fmt(ms)} ms, ${fmt(SIZE / MiB / (ms / 1000))} MiB/s`)
        return SIZE / MiB / (ms / 1000)
      }

      // Warm-up: the code paths of both kinds of upload, with a small file.
      const warm = path.join(dataDir, 'warm.bin')
      makeSource(warm, 4 * MiB)
      for (const mode of ['single', 'chunked'] as const) await runLoad(ctx.machine, 'upload', { ...spec(mode), file: warm })

      const single: Measured[] = []
      const chunked: Measured[] = []
      const cp: number[] = []
      for (let run = 1; run <= ctx.runs; run++) {
        cp.push(copy(`cp ${run}`))
        single.push(await measure('single', `single ${run}`))
        chunked.push(await measure('chunked', `chunked ${run}`))
      }
      await server.stop()

      const scenario = this.name
      return [
        {
          scenario,
          figure: 'RSS rise, 1 GiB via /files/upload',
          unit: 'MiB',
          samples: single.map((m) => m.rssRise / MiB),
          target: { max: 64 },
        },
        {
          scenario,
          figure: 'RSS rise, 1 GiB via 8 MiB chunks',
          unit: 'MiB',
          samples: chunked.map((m) => m.rssRise / MiB),
          target: { max: 64 },
        },
        { scenario, figure: 'cp of the same file (reference)', unit: 'MiB/s', samples: cp },
        { scenario, figure: '/files/upload throughput', unit: 'MiB/s', samples: single.map((m) => m.mbps) },
        { scenario, figure: '/files/upload vs cp', unit: 'x', samples: single.map((m, i) => m.mbps / cp[i]), target: { min: 0.5 } },
        { scenario, figure: 'chunked upload throughput', unit: 'MiB/s', samples: chunked.map((m) => m.mbps) },
        { scenario, figure: 'chunked upload vs cp', unit: 'x', samples: chunked.map((m, i) => m.mbps / cp[i]), target: { min: 0.5 } },
      ] satisfies Row[]
    } finally {
      removeDataDir(dataDir)
    }
  },
}
