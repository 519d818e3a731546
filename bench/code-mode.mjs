// Code-mode cells through the real path: ToolSearchSession.handle('tool_search_code')
// → sandbox runner → contained node child → bridge → session → JS executor.
//   OPENCLAW_TOOL_SEARCH_NODE=/path/to/node24 node bench/code-mode.mjs [--json]
// Cell: search + describe + call on the QA scenario's 36 fake plugin tools.
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { median } from './timing.mjs'
import { setTimeout as sleep } from 'node:timers/promises'

const require = createRequire(import.meta.url)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const { ToolCatalog, ToolSearchSession, resolveToolSearchConfig, probeCodeMode } = require(join(root, 'index.js'))

const capability = await probeCodeMode()
if (!capability.available) {
  console.log(`code mode unavailable here: ${capability.reason}`)
  process.exit(0)
}

const tools = Array.from({ length: 36 }, (_, i) => ({
  name: `fake_plugin_tool_${String(i + 1).padStart(2, '0')}`,
  owner: 'fake-plugin',
  description: `Fake plugin tool ${i + 1}: returns FAKE_PLUGIN_OK with its marker.`,
  parameters: { type: 'object', properties: { marker: { type: 'string' } }, required: ['marker'], additionalProperties: false },
}))
const catalog = new ToolCatalog(tools)
const session = new ToolSearchSession(catalog, resolveToolSearchConfig(true), {
  executor: async (call) => ({ content: [{ type: 'text', text: `FAKE_PLUGIN_OK ${call.name} ${JSON.stringify(call.args)}` }] }),
})
const code = `const [hit] = await openclaw.tools.search('fake plugin tool 17', { limit: 1 });
const d = await openclaw.tools.describe(hit.id);
return await openclaw.tools.call(d.id, { marker: 'bench' });`

async function cell() {
  const t0 = process.hrtime.bigint()
  const r = await session.handle('tool_search_code', { code })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (!r.ok || !JSON.stringify(r.value).includes('FAKE_PLUGIN_OK fake_plugin_tool_17')) throw new Error(`cell failed: ${JSON.stringify(r).slice(0, 400)}`)
  return { ms, warm: r.value?.telemetry?.warm === true }
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]

const first = await cell() // cold: the pool starts with this process
const warm = []
for (let i = 0; i < 40; i++) {
  await sleep(150) // let the pool refill: each child serves exactly one cell
  warm.push(await cell())
}
const backToBack = []
for (let i = 0; i < 20; i++) backToBack.push(await cell())
const t0 = process.hrtime.bigint()
const concurrent = await Promise.allSettled(Array.from({ length: 20 }, () => cell()))
const concurrentMs = Number(process.hrtime.bigint() - t0) / 1e6

const result = {
  node: capability.node?.version,
  firstCellMs: first.ms,
  warmP50Ms: median(warm.filter((c) => c.warm).map((c) => c.ms)),
  warmP99Ms: pct(warm.filter((c) => c.warm).map((c) => c.ms), 0.99),
  warmCells: warm.filter((c) => c.warm).length,
  backToBackP50Ms: median(backToBack.map((c) => c.ms)),
  concurrent20: { ok: concurrent.filter((c) => c.status === 'fulfilled').length, wallMs: concurrentMs },
}
if (process.argv.includes('--json')) console.log(JSON.stringify(result, null, 2))
else {
  console.log(`code-mode cell (search + describe + call, 36 tools, Node ${result.node})`)
  console.log(`  first cell (cold, empty pool)     ${result.firstCellMs.toFixed(1)} ms`)
  console.log(`  warm child p50 / p99 (${result.warmCells} cells)  ${result.warmP50Ms.toFixed(2)} / ${result.warmP99Ms.toFixed(2)} ms`)
  console.log(`  back-to-back p50 (pool of 1)      ${result.backToBackP50Ms.toFixed(1)} ms`)
  console.log(`  20 concurrent cells               ${result.concurrent20.ok}/20 ok in ${result.concurrent20.wallMs.toFixed(0)} ms`)
}
