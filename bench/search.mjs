// Search latency and a gateway's per-run catalog cost from JS, on the release addon.
//   node bench/search.mjs [--json]
// Catalogs: the first 1,000 dev tools, the 13,163-tool dev catalog, and 50k
// (the dev catalog replicated under other owners). Medians over repeats. The
// event-loop probe spins the loop (one core busy) while a build runs.
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loopStall, median } from './timing.mjs'

const require = createRequire(import.meta.url)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const { ToolCatalog } = require(join(root, 'index.js'))
const dataDir = join(root, 'bench', 'data', 'retrieval-dev')

const lines = readFileSync(join(dataDir, 'catalog.jsonl'), 'utf8').split('\n').filter(Boolean)
const dev = lines.map((l) => JSON.parse(l))
const queries = readFileSync(join(dataDir, 'queries.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).query)

function replicate(tools, copies) {
  const out = [...tools]
  for (let c = 1; c < copies; c++) {
    for (const t of tools) out.push({ ...t, id: undefined, owner: `${t.owner}-r${c}` })
  }
  return out.map(({ id, ...t }) => t)
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]
const ms = (ns) => Number(ns) / 1e6

function time(fn) {
  const t0 = process.hrtime.bigint()
  const value = fn()
  return { value, ms: ms(process.hrtime.bigint() - t0) }
}

/** Tools with content of their own (owners suffixed), as fresh objects. */
const variant = (tools, tag) => tools.map(({ id, ...t }) => ({ ...t, owner: `${t.owner}-${tag}` }))

/** Resident memory per catalog: a child process builds `copies` distinct catalogs of `size` tools. */
function rssPerCatalog(label) {
  const out = execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--rss-child', label], { encoding: 'utf8' })
  return JSON.parse(out)
}

const catalogs = [['1k', dev.slice(0, 1000)], ['12.8k', dev], ['50k', replicate(dev, 4).slice(0, 50_000)]]

if (process.argv.includes('--rss-child')) {
  const label = process.argv[process.argv.indexOf('--rss-child') + 1]
  const tools = catalogs.find(([l]) => l === label)[1]
  const copies = 4
  const inputs = Array.from({ length: copies }, (_, i) => variant(tools, `m${i}`))
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      globalThis.gc()
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  new ToolCatalog(dev.slice(0, 10)) // load the addon and warm its pools first
  await settle()
  const before = process.memoryUsage().rss
  const held = []
  for (const input of inputs) held.push(await ToolCatalog.build(input))
  inputs.length = 0
  await settle()
  const perCatalog = (process.memoryUsage().rss - before) / copies / 2 ** 20
  process.stdout.write(JSON.stringify({ rssMbPerCatalog: Number(perCatalog.toFixed(1)), catalogs: held.length }))
  process.exit(0)
}

const results = []
for (const [label, tools] of catalogs) {
  // Search latency (and the one-turn constructor, uncached).
  const builds = []
  let catalog
  for (let i = 0; i < 3; i++) {
    const r = time(() => new ToolCatalog(tools, { cache: false }))
    builds.push(r.ms)
    catalog = r.value
  }
  for (const q of queries.slice(0, 200)) catalog.search(q) // warm-up
  const lat = []
  for (const q of queries) lat.push(time(() => catalog.search(q)).ms)

  // Per-run cost through ToolCatalog.build: a first build (tool objects and content never
  // seen), an unchanged rebuild (the same objects), and one source of 30 tools changed.
  const firsts = []
  for (let i = 0; i < 3; i++) {
    const input = variant(tools, `first${i}`)
    firsts.push(await loopStall(() => ToolCatalog.build(input)))
  }
  const same = variant(tools, 'same')
  await ToolCatalog.build(same)
  const unchanged = []
  for (let i = 0; i < 7; i++) unchanged.push(await loopStall(() => ToolCatalog.build(same)))
  const unchangedSync = []
  for (let i = 0; i < 7; i++) unchangedSync.push(time(() => new ToolCatalog(same)).ms)
  // One server's 30 tools come back changed (new objects, new text); the rest are the same objects.
  const changedOne = []
  for (let i = 0; i < 3; i++) {
    const input = same.map((t, k) => (k < 30 ? { ...t, owner: 'changed-server', description: `${t.description} (v${i})` } : t))
    changedOne.push(await loopStall(() => ToolCatalog.build(input)))
  }
  results.push({
    catalog: label,
    tools: catalog.size,
    buildMs: median(builds),
    searchP50Ms: median(lat),
    searchP99Ms: pct(lat, 0.99),
    queries: lat.length,
    firstBuildMs: median(firsts.map((s) => s.wall)),
    firstBuildStallMs: median(firsts.map((s) => s.longest)),
    unchangedMs: median(unchangedSync),
    unchangedBuildMs: median(unchanged.map((s) => s.wall)),
    unchangedStallMs: median(unchanged.map((s) => s.longest)),
    oneSourceChangedMs: median(changedOne.map((s) => s.wall)),
    oneSourceChangedStallMs: median(changedOne.map((s) => s.longest)),
    ...rssPerCatalog(label),
  })
}

if (process.argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`)
} else {
  const row = (cells, widths) => cells.map((c, i) => String(c).padStart(widths[i])).join('  ')
  const w1 = [7, 6, 15, 13, 13]
  console.log(row(['catalog', 'tools', 'constructor ms', 'search p50 ms', 'search p99 ms'], w1))
  for (const r of results) {
    console.log(row([r.catalog, r.tools, r.buildMs.toFixed(1), r.searchP50Ms.toFixed(3), r.searchP99Ms.toFixed(3)], w1))
  }
  console.log('\nper-run cost (medians; "stall" = longest event-loop turn while it ran; RSS from a separate process)')
  const w2 = [7, 17, 19, 22, 20, 19, 16]
  console.log(row(['catalog', 'first build ms', 'first build stall', 'unchanged new/build ms', 'unchanged build stall', '30 changed build ms', 'RSS MB/catalog'], w2))
  for (const r of results) {
    console.log(
      row(
        [
          r.catalog,
          r.firstBuildMs.toFixed(1),
          r.firstBuildStallMs.toFixed(1),
          `${r.unchangedMs.toFixed(2)} / ${r.unchangedBuildMs.toFixed(2)}`,
          r.unchangedStallMs.toFixed(2),
          `${r.oneSourceChangedMs.toFixed(1)} (stall ${r.oneSourceChangedStallMs.toFixed(1)})`,
          r.rssMbPerCatalog.toFixed(1),
        ],
        w2
      )
    )
  }
}
