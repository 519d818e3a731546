// Live catalogs: what following a changed MCP server costs, from JS, on the release addon.
//   node bench/live.mjs [--json]
// On the 13,163-tool dev catalog: one server of 30 tools changes (withSource / withSourceAsync),
// a server of 1,000 tools changes, a server goes unavailable (withUnavailable); the wall time,
// the longest event-loop stall while it ran, and search latency on the result against a full
// build of the same tools. Medians over repeats.
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



function searchP50(catalog) {
  for (const q of queries.slice(0, 200)) catalog.search(q)
  const lat = []
  for (const q of queries) {
    const t0 = performance.now()
    catalog.search(q)
    lat.push(performance.now() - t0)
  }
  return median(lat)
}

// A server of `size` MCP tools, version `v`, made from dev tools under a new owner.
const server = (owner, size, v) =>
  dev.slice(0, size).map((t, i) => ({ name: `${t.name}_${i}`, description: `${t.description ?? ''} (v${v})`, inputSchema: t.inputSchema }))

const results = []
for (const size of [30, 1000]) {
  const owner = `live-${size}`
  const selector = { source: 'mcp', owner }
  const base = await ToolCatalog.build([...dev, ...server(owner, size, 0).map((t) => ({ ...t, source: 'mcp', owner }))])
  const syncMs = []
  const asyncRuns = []
  let last
  for (let v = 1; v <= 3; v++) {
    const tools = server(owner, size, v)
    const t0 = performance.now()
    base.withSource(selector, tools)
    syncMs.push(performance.now() - t0)
    const run = await loopStall(() => base.withSourceAsync(selector, server(owner, size, v + 10)))
    asyncRuns.push(run)
    last = run.value
  }
  const full = await ToolCatalog.build([...dev, ...server(owner, size, 13).map((t) => ({ ...t, source: 'mcp', owner }))], { cache: false })
  const unavailableMs = []
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now()
    base.withUnavailable(selector, 'server disconnected')
    unavailableMs.push(performance.now() - t0)
  }
  results.push({
    serverTools: size,
    catalogTools: base.size,
    withSourceSyncMs: median(syncMs),
    withSourceAsyncMs: median(asyncRuns.map((r) => r.wall)),
    withSourceAsyncStallMs: median(asyncRuns.map((r) => r.longest)),
    withUnavailableMs: median(unavailableMs),
    sameAsFullBuild: last.fingerprint === full.fingerprint,
    searchP50Ms: searchP50(last),
    fullBuildSearchP50Ms: searchP50(full),
  })
}

if (process.argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`)
} else {
  console.log('server tools  catalog  withSource (sync) ms  withSourceAsync ms (stall)  withUnavailable ms  = full build  search p50 ms (full build)')
  for (const r of results) {
    console.log(
      `${String(r.serverTools).padStart(12)}  ${String(r.catalogTools).padStart(7)}  ${r.withSourceSyncMs.toFixed(1).padStart(20)}  ${`${r.withSourceAsyncMs.toFixed(1)} (${r.withSourceAsyncStallMs.toFixed(1)})`.padStart(26)}  ${r.withUnavailableMs.toFixed(2).padStart(18)}  ${String(r.sameAsFullBuild).padStart(12)}  ${r.searchP50Ms.toFixed(3)} (${r.fullBuildSearchP50Ms.toFixed(3)})`
    )
  }
}
