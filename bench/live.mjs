// Live catalogs: what following a changed MCP server costs, from JS, on the release addon.
//   node --expose-gc bench/live.mjs [--json]
// On the 13,163-tool dev catalog: one server of 30 tools changes (withSource / withSourceAsync),
// a server of 1,000 tools changes, a server goes unavailable (withUnavailable); the wall time,
// the CPU time of the change (all threads) and the part of it on the event loop, the longest
// event-loop stall while it ran, and search latency on the result against a full build of the
// same tools. Medians over repeats. A chain of 100 updates of one server checks that the
// index stays compact (parts are merged or rebuilt) and its search latency flat.
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loopStall, median } from './timing.mjs'

const require = createRequire(import.meta.url)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const { ToolCatalog } = require(join(root, 'index.js'))
const dataDir = join(root, 'bench', 'data', 'retrieval-dev')
const dev = readFileSync(join(dataDir, 'catalog.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).map(({ id, ...t }) => t)
const queries = readFileSync(join(dataDir, 'queries.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).query)



// Let dropped catalogs be freed first (off-thread frees would compete with the measurement).
async function settle() {
  globalThis.gc?.()
  await new Promise((resolve) => setTimeout(resolve, 500))
}

// Search p50 of two catalogs, measured query by query in turn (so machine load drifts alike),
// which goes first alternating (the second search of a query runs warmer).
function searchP50s(a, b) {
  for (const q of queries.slice(0, 200)) {
    a.search(q)
    b.search(q)
  }
  const lat = [[], []]
  let turn = 0
  for (let round = 0; round < 3; round++) {
    for (const q of queries) {
      const order = turn++ % 2 ? [1, 0] : [0, 1]
      for (const i of order) {
        const t0 = performance.now()
        ;[a, b][i].search(q)
        lat[i].push(performance.now() - t0)
      }
    }
  }
  return lat.map(median)
}

// A server of `size` MCP tools, version `v`, made from dev tools under a new owner.
const server = (owner, size, v) =>
  dev.slice(0, size).map((t, i) => ({ name: `${t.name}_${i}`, description: `${t.description ?? ''} (v${v})`, inputSchema: t.inputSchema }))

// CPU milliseconds (every thread of the process) and event-loop busy milliseconds of `run()`.
async function cpuAndLoop(run) {
  const cpu0 = process.cpuUsage()
  const elu0 = performance.eventLoopUtilization()
  const t0 = performance.now()
  const value = await run()
  const wall = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const elu = performance.eventLoopUtilization(elu0)
  return { value, wall, cpuMs: (cpu.user + cpu.system) / 1000, loopMs: elu.active }
}

const results = []
for (const size of [30, 1000]) {
  const owner = `live-${size}`
  const selector = { source: 'mcp', owner }
  const base = await ToolCatalog.build([...dev, ...server(owner, size, 0).map((t) => ({ ...t, source: 'mcp', owner }))])
  const syncRuns = []
  const asyncRuns = []
  const asyncCpu = []
  let last
  for (let v = 1; v <= 7; v++) {
    const tools = server(owner, size, v)
    syncRuns.push(await cpuAndLoop(() => base.withSource(selector, tools)))
    const run = await loopStall(() => base.withSourceAsync(selector, server(owner, size, v + 10)))
    asyncRuns.push(run)
    const tools2 = server(owner, size, v + 20)
    asyncCpu.push(await cpuAndLoop(() => base.withSourceAsync(selector, tools2)))
    last = run.value
  }
  // A chain: each update applied to the previous version (old versions dropped).
  let chained = base
  const chainCpu = []
  for (let v = 100; v < 200; v++) {
    const tools = server(owner, size, v)
    const run = await cpuAndLoop(() => chained.withSource(selector, tools))
    chainCpu.push(run.cpuMs)
    chained = run.value
  }
  const chainFull = await ToolCatalog.build([...dev, ...server(owner, size, 199).map((t) => ({ ...t, source: 'mcp', owner }))], { cache: false })
  const full = await ToolCatalog.build([...dev, ...server(owner, size, 17).map((t) => ({ ...t, source: 'mcp', owner }))], { cache: false })
  await settle()
  const unavailableMs = []
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now()
    base.withUnavailable(selector, 'server disconnected')
    unavailableMs.push(performance.now() - t0)
  }
  results.push({
    serverTools: size,
    catalogTools: base.size,
    withSourceSyncMs: median(syncRuns.map((r) => r.wall)),
    withSourceSyncCpuMs: median(syncRuns.map((r) => r.cpuMs)),
    withSourceAsyncMs: median(asyncRuns.map((r) => r.wall)),
    withSourceAsyncStallMs: median(asyncRuns.map((r) => r.longest)),
    withSourceAsyncCpuMs: median(asyncCpu.map((r) => r.cpuMs)),
    withSourceAsyncLoopMs: median(asyncCpu.map((r) => r.loopMs)),
    chain100CpuMedianMs: median(chainCpu),
    chain100CpuMaxMs: Math.max(...chainCpu),
    chain100SameAsFullBuild: chained.fingerprint === chainFull.fingerprint,
    ...((([live, built]) => ({ chain100SearchP50Ms: live, chain100FullBuildSearchP50Ms: built }))(searchP50s(chained, chainFull))),
    withUnavailableMs: median(unavailableMs),
    sameAsFullBuild: last.fingerprint === full.fingerprint,
    ...((([live, built]) => ({ searchP50Ms: live, fullBuildSearchP50Ms: built }))(searchP50s(last, full))),
  })
}

if (process.argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`)
} else {
  for (const r of results) {
    console.log(`server of ${r.serverTools} tools changes in a catalog of ${r.catalogTools} (medians):`)
    console.log(`  withSource (sync):    wall ${r.withSourceSyncMs.toFixed(1)} ms, CPU ${r.withSourceSyncCpuMs.toFixed(1)} ms (all on the event loop)`)
    console.log(`  withSourceAsync:      wall ${r.withSourceAsyncMs.toFixed(1)} ms, CPU ${r.withSourceAsyncCpuMs.toFixed(1)} ms, event loop ${r.withSourceAsyncLoopMs.toFixed(1)} ms, longest stall ${r.withSourceAsyncStallMs.toFixed(1)} ms`)
    console.log(`  withUnavailable:      ${r.withUnavailableMs.toFixed(2)} ms`)
    console.log(`  = full build: ${r.sameAsFullBuild}; search p50 ${r.searchP50Ms.toFixed(3)} ms (full build ${r.fullBuildSearchP50Ms.toFixed(3)} ms)`)
    console.log(`  100 chained updates:  CPU median ${r.chain100CpuMedianMs.toFixed(1)} ms, max ${r.chain100CpuMaxMs.toFixed(1)} ms; = full build: ${r.chain100SameAsFullBuild}; search p50 ${r.chain100SearchP50Ms.toFixed(3)} ms (full build ${r.chain100FullBuildSearchP50Ms.toFixed(3)} ms)`)
  }
}
