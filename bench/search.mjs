// Search latency and catalog build cost from JS, on the release addon.
//   node bench/search.mjs [--json]
// Catalogs: the first 1,000 dev tools, the 12,812-tool dev catalog, and 50k
// (the dev catalog replicated under other owners). Medians over repeats.
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

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

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]
const ms = (ns) => Number(ns) / 1e6

function time(fn) {
  const t0 = process.hrtime.bigint()
  const value = fn()
  return { value, ms: ms(process.hrtime.bigint() - t0) }
}

/**
 * Wall time of `run()` and the longest the event loop went without a turn meanwhile. The
 * probe spins the loop (one core busy), so an async build's wall time is measured under that load.
 */
async function loopStall(run) {
  let last = performance.now()
  let longest = 0
  let ticking = true
  const tick = () => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
    if (ticking) setImmediate(tick)
  }
  setImmediate(tick)
  const t0 = performance.now()
  await run()
  const wall = performance.now() - t0
  ticking = false
  tick()
  return { wall, longest }
}

const results = []
for (const [label, tools] of [['1k', dev.slice(0, 1000)], ['12.8k', dev], ['50k', replicate(dev, 4).slice(0, 50_000)]]) {
  const builds = []
  let catalog
  for (let i = 0; i < 3; i++) {
    const r = time(() => new ToolCatalog(tools, { cache: false }))
    builds.push(r.ms)
    catalog = r.value
  }
  // The same build through ToolCatalog.build (parse and index on a libuv worker).
  const stalls = []
  for (let i = 0; i < 3; i++) stalls.push(await loopStall(() => ToolCatalog.build(tools, { cache: false })))
  const syncStall = await loopStall(async () => new ToolCatalog(tools, { cache: false }))
  const unchanged = []
  new ToolCatalog(tools) // prime the cache
  for (let i = 0; i < 7; i++) unchanged.push(time(() => new ToolCatalog(tools)).ms)
  for (const q of queries.slice(0, 200)) catalog.search(q) // warm-up
  const lat = []
  for (const q of queries) lat.push(time(() => catalog.search(q)).ms)
  results.push({
    catalog: label,
    tools: catalog.size,
    buildMs: median(builds),
    unchangedMs: median(unchanged),
    asyncBuildMs: median(stalls.map((s) => s.wall)),
    asyncBuildLoopStallMs: median(stalls.map((s) => s.longest)),
    syncBuildLoopStallMs: syncStall.longest,
    searchP50Ms: median(lat),
    searchP99Ms: pct(lat, 0.99),
    queries: lat.length,
    rssMb: Math.round(process.memoryUsage().rss / 2 ** 20),
  })
}

if (process.argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`)
} else {
  console.log('catalog  tools   build ms  unchanged ms  search p50 ms  search p99 ms  RSS MB (cumulative)')
  for (const r of results) {
    console.log(
      `${r.catalog.padEnd(7)}  ${String(r.tools).padEnd(6)}  ${r.buildMs.toFixed(1).padStart(8)}  ${r.unchangedMs.toFixed(2).padStart(12)}  ${r.searchP50Ms.toFixed(3).padStart(13)}  ${r.searchP99Ms.toFixed(3).padStart(13)}  ${String(r.rssMb).padStart(6)}`
    )
  }
  console.log('\ncatalog  ToolCatalog.build ms (loop probe spinning)  longest event-loop stall: build / constructor ms')
  for (const r of results) {
    console.log(
      `${r.catalog.padEnd(7)}  ${r.asyncBuildMs.toFixed(1).padStart(39)}  ${r.asyncBuildLoopStallMs.toFixed(1).padStart(18)} / ${r.syncBuildLoopStallMs.toFixed(1)}`
    )
  }
}
