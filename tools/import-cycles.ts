/**
 * Finds import cycles among the TypeScript files under a directory: every `import … from`,
 * `export … from`, side-effect `import '…'` and dynamic `import('…')` of a relative path counts,
 * type-only imports included (a type cycle still ties two modules' designs together).
 *
 * `npm run check:cycles` prints them; test/structure/import-cycles.test.ts fails on any.
 */
import fs from 'node:fs'
import path from 'node:path'

const SPECIFIER = /(?:^|[^\w$.])(?:import|export)\s*(?:type\s+)?(?:[\w$*{}\s,]*?\s*from\s*)?\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...sourceFiles(full))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) out.push(full)
  }
  return out
}

/** Comments out of the way (an example import in a comment is not an import). */
const stripComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1')

function resolve(from: string, specifier: string): string | null {
  const base = path.resolve(path.dirname(from), specifier)
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, path.join(base, 'index.ts')]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate
  }
  return null
}

/** Each file's relative imports (files that exist). */
export function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sourceFiles(root)) {
    const text = stripComments(fs.readFileSync(file, 'utf8'))
    const targets = new Set<string>()
    for (const match of text.matchAll(SPECIFIER)) {
      const target = resolve(file, match[1])
      if (target) targets.add(target)
    }
    graph.set(file, [...targets])
  }
  return graph
}

/** The strongly connected components with more than one file (or a file importing itself), Tarjan's algorithm. */
export function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (node: string) => {
    index.set(node, next)
    low.set(node, next++)
    stack.push(node)
    onStack.add(node)
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target)
        low.set(node, Math.min(low.get(node)!, low.get(target)!))
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!))
      }
    }
    if (low.get(node) !== index.get(node)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort())
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return found
}

/** One path around a component, to show how it closes (a → b → … → a). */
export function loopThrough(graph: Map<string, string[]>, component: string[]): string[] {
  const inside = new Set(component)
  const start = component[0]
  const previous = new Map<string, string>()
  const queue = [start]
  while (queue.length) {
    const node = queue.shift()!
    for (const target of graph.get(node) ?? []) {
      if (!inside.has(target)) continue
      if (target === start) {
        const loop = [node]
        while (loop[0] !== start) loop.unshift(previous.get(loop[0])!)
        return [...loop, start]
      }
      if (!previous.has(target)) {
        previous.set(target, node)
        queue.push(target)
      }
    }
  }
  return component
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = path.resolve(process.argv[2] ?? 'src')
  const graph = importGraph(root)
  const found = cycles(graph)
  const rel = (file: string) => path.relative(root, file)
  for (const component of found) console.log(`cycle: ${loopThrough(graph, component).map(rel).join(' → ')}`)
  console.log(`${graph.size} files, ${[...graph.values()].reduce((n, t) => n + t.length, 0)} imports, ${found.length} cycles`)
  process.exit(found.length ? 1 : 0)
}
