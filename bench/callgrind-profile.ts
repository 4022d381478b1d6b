/**
 * Where a callgrind count went, by function: a dump of bench/instructions.ts or send-cpu (one
 * thread's file, `callgrind.out.<n>-01` for the main thread), with V8's JIT code named from
 * Node's `--perf-basic-prof` map. callgrind_annotate cannot name JIT code (it shows bare
 * addresses), and its inclusive view follows V8's recursive builtins in circles; this prints
 * each function's own instructions, or one function's callers or callees with the instructions
 * spent through each call, divided by the messages counted.
 *
 *   BENCH_KEEP_DATA=1 BENCH_NODE_FLAGS=--perf-basic-prof \
 *     node --import tsx bench/instructions.ts ../before --path socket --runs 1
 *   node --import tsx bench/callgrind-profile.ts <dump> --per 10000 [--top 40]
 *   node --import tsx bench/callgrind-profile.ts <dump> --per 10000 --callers 'ObjectValues'
 *   node --import tsx bench/callgrind-profile.ts <dump> --per 10000 --callees 'shared-json.js'
 *
 * The map is `/tmp/perf-<pid>.map` for the pid the dump names (`--map` gives another). A pattern
 * matches any part of a function's name. A call's instructions are its callee's inclusive cost
 * as callgrind recorded it for that call site; through recursion they count more than once.
 */
import fs from 'node:fs'
import { parseArgs } from 'node:util'

interface Profile {
  /** instructions spent in each function itself */
  self: Map<string, number>
  /** `caller\u0000callee` → instructions spent through those calls, and how many calls */
  calls: Map<string, { cost: number; count: number }>
}

/** JIT code's address ranges and names, from a perf map (`<start hex> <size hex> <name>` lines). */
class PerfMap {
  private starts: number[] = []
  private ends: number[] = []
  private names: string[] = []

  constructor(text: string) {
    const entries = text
      .split('\n')
      .map((line) => /^([0-9a-fA-F]+) ([0-9a-fA-F]+) (.*)$/.exec(line))
      .filter((match) => match !== null)
      .map(([, start, size, name]) => ({ start: parseInt(start, 16), size: parseInt(size, 16), name }))
      .sort((a, b) => a.start - b.start)
    for (const { start, size, name } of entries) {
      this.starts.push(start)
      this.ends.push(start + size)
      this.names.push(name)
    }
  }

  /** The name of the code at `address`, or undefined. */
  find(address: number): string | undefined {
    let low = 0
    let high = this.starts.length - 1
    let found = -1
    while (low <= high) {
      const middle = (low + high) >> 1
      if (this.starts[middle] <= address) {
        found = middle
        low = middle + 1
      } else high = middle - 1
    }
    return found >= 0 && address < this.ends[found] ? this.names[found] : undefined
  }
}

/**
 * Reads a callgrind dump (format version 1, name compression on, one event: Ir). Unknown
 * function names that are bare addresses (`0x…`, with callgrind's `'2` recursion suffix or not)
 * get their perf map names.
 */
function parseCallgrind(text: string, map: PerfMap | null): Profile {
  const names = new Map<string, string>()
  const name = (spec: string): string => {
    const match = /^\((\d+)\)(?: (.*))?$/.exec(spec.trim())
    if (!match) return spec.trim()
    const [, id, given] = match
    if (given !== undefined) {
      const address = /^0x([0-9a-fA-F]+)('\d+)?$/.exec(given)
      const named = address && map?.find(parseInt(address[1], 16))
      names.set(id, named ? `${named}${address[2] ?? ''}` : given)
    }
    return names.get(id) ?? `(${id})`
  }
  const self = new Map<string, number>()
  const calls = new Map<string, { cost: number; count: number }>()
  let fn = ''
  let callee = ''
  /** the number of calls of the `calls=` line before this cost line, or null */
  let pending: number | null = null
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=')) fn = name(line.slice(3))
    else if (line.startsWith('cfn=')) callee = name(line.slice(4))
    else if (line.startsWith('calls=')) pending = Number(line.slice(6).split(' ')[0])
    else if (/^[0-9+\-*]/.test(line)) {
      const cost = Number(line.split(' ')[1] ?? 0)
      if (pending === null) self.set(fn, (self.get(fn) ?? 0) + cost)
      else {
        const key = `${fn}\u0000${callee}`
        const edge = calls.get(key) ?? { cost: 0, count: 0 }
        edge.cost += cost
        edge.count += pending
        calls.set(key, edge)
        pending = null
      }
    }
  }
  return { self, calls }
}

function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      per: { type: 'string', default: '1' },
      top: { type: 'string', default: '40' },
      callers: { type: 'string' },
      callees: { type: 'string' },
      map: { type: 'string' },
    },
  })
  const per = Number(values.per)
  const top = Number(values.top)
  if (positionals.length !== 1 || !(per > 0) || !Number.isInteger(top) || top < 1) {
    console.error(
      'usage: node --import tsx bench/callgrind-profile.ts <callgrind dump> [--per N] [--top N] [--callers PATTERN | --callees PATTERN] [--map FILE]',
    )
    process.exit(2)
  }
  const text = fs.readFileSync(positionals[0], 'utf8')
  const pid = /^pid: (\d+)$/m.exec(text)?.[1]
  const mapFile = values.map ?? (pid ? `/tmp/perf-${pid}.map` : null)
  const map = mapFile && fs.existsSync(mapFile) ? new PerfMap(fs.readFileSync(mapFile, 'utf8')) : null
  if (!map)
    console.error(`(no perf map${mapFile ? ` at ${mapFile}` : ''}: JIT code keeps its addresses; run the server with --perf-basic-prof)`)
  const profile = parseCallgrind(text, map)
  const figure = (n: number) =>
    Math.round(n / per)
      .toLocaleString('en-US')
      .padStart(11)
  const total = [...profile.self.values()].reduce((a, b) => a + b, 0)
  console.log(`${figure(total)}  in all${per === 1 ? '' : `, divided by ${per}`}`)
  const pattern = values.callers ?? values.callees
  if (pattern === undefined) {
    for (const [fn, cost] of [...profile.self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${figure(cost)}  ${fn}`)
    return
  }
  const edges = [...profile.calls]
    .map(([key, edge]) => {
      const [caller, callee] = key.split('\u0000')
      return { caller, callee, ...edge }
    })
    .filter((edge) => (values.callers !== undefined ? edge.callee : edge.caller).includes(pattern))
    .sort((a, b) => b.cost - a.cost)
    .slice(0, top)
  for (const { caller, callee, cost, count } of edges) {
    console.log(`${figure(cost)}  ${(count / per).toFixed(2).padStart(8)} calls  ${caller}  →  ${callee}`)
  }
}

main()
