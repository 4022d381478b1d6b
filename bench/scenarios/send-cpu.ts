/**
 * send-cpu: the CPU work of one message sent, as instructions counted by valgrind (callgrind) in
 * the server process: one V2/messages/send, one `send` frame over the WebSocket (stored, acked and
 * delivered to the peer's socket), and one request of the bare Fastify + SQLite insert route.
 * Unlike req/s, the count does not move when the machine is shared or its hypervisor withholds CPU
 * (steal), so it compares builds and baselines on any machine. It leaves out the kernel's share
 * (socket and file writes), which is larger for the bare route (one commit per request) than for
 * Tern (group commits), so the time ratio of send-throughput is the kinder one.
 *
 * How it counts is bench/lib/server-instructions.ts': the main thread apart from the others, each
 * server counting exactly MEASURED sends after WARM_UP uncounted ones: 32 in flight over HTTP, as
 * in send-throughput's closed loop; over sockets 16 pairs with 2 in flight each.
 */
import type { Row } from '../lib/report.js'
import { fmt, type BenchContext, type Scenario } from '../lib/scenario.js'
import type { ServerKind } from '../lib/server.js'
import { countInstructions, hasValgrind, type Counted } from '../lib/server-instructions.js'

const WARM_UP = 6_000
const MEASURED = 3_000
const IN_FLIGHT = 32
/** socket sends: sender → receiver pairs, and messages in flight per pair */
const SOCKET_PAIRS = 16
const SOCKET_WINDOW = 2

const measure = (ctx: BenchContext, kind: ServerKind, target: 'http' | 'socket' = 'http') =>
  countInstructions(ctx.machine, {
    kind,
    target,
    warmUp: WARM_UP,
    measured: MEASURED,
    inFlight: IN_FLIGHT,
    pairs: SOCKET_PAIRS,
    window: SOCKET_WINDOW,
  })

export const sendCpu: Scenario = {
  name: 'send-cpu',
  summary:
    'instructions per message: V2/messages/send and socket send frames vs a bare Fastify + SQLite insert request (valgrind; immune to steal)',
  async run(ctx) {
    if (!hasValgrind()) throw new Error('send-cpu needs valgrind (Debian package valgrind)')
    const bare: Counted[] = []
    const tern: Counted[] = []
    const socket: Counted[] = []
    const both = (counted: Counted) => `${fmt(counted.main)} + ${fmt(counted.others)} in other threads`
    for (let run = 1; run <= ctx.runs; run++) {
      bare.push(await measure(ctx, 'bare-insert'))
      tern.push(await measure(ctx, 'tern'))
      socket.push(await measure(ctx, 'tern', 'socket'))
      ctx.log(
        `  run ${run}, instructions per message on the main thread + other threads: bare ${both(bare.at(-1)!)}; Tern HTTP ${both(tern.at(-1)!)}; Tern socket ${both(socket.at(-1)!)}`,
      )
    }
    const scenario = this.name
    const k = (counts: Counted[], pick: (c: Counted) => number) => counts.map((c) => pick(c) / 1000)
    const rows: Row[] = [
      { scenario, figure: 'bare Fastify + 1 SQLite insert, per request: main thread', unit: 'k instr', samples: k(bare, (c) => c.main) },
      { scenario, figure: "bare, per request: other threads (V8's GC and compiler)", unit: 'k instr', samples: k(bare, (c) => c.others) },
      { scenario, figure: 'Tern V2/messages/send, per send: main thread', unit: 'k instr', samples: k(tern, (c) => c.main) },
      { scenario, figure: 'Tern V2/messages/send, per send: other threads (see note)', unit: 'k instr', samples: k(tern, (c) => c.others) },
      {
        scenario,
        figure: 'Tern socket send (stored, acked, delivered), per message: main thread',
        unit: 'k instr',
        samples: k(socket, (c) => c.main),
      },
      { scenario, figure: 'Tern socket send, per message: other threads (see note)', unit: 'k instr', samples: k(socket, (c) => c.others) },
      { scenario, figure: 'bare / Tern HTTP, main threads', unit: 'x', samples: tern.map((c, i) => bare[i].main / c.main) },
      {
        scenario,
        figure: 'bare / Tern HTTP, all threads',
        unit: 'x',
        samples: tern.map((c, i) => (bare[i].main + bare[i].others) / (c.main + c.others)),
      },
    ]
    ctx.log(
      "  note: other threads' counts are partly paced by the clock (Tern's WAL checkpoint every 25 ms, its search index worker, V8's compiler), so valgrind's slowdown inflates them per message; the main threads' counts are the comparable ones",
    )
    return rows
  },
}
