// Soak: many sequential code cells, then many concurrent ones, through one session. Reports the
// gateway's RSS after warm-up and at the end, the event loop's longest gap, whether every cell
// settled, and what is left behind (child processes, working directories).
//
//   OPENCLAW_TOOL_SEARCH_NODE=<node 24> node bench/soak.mjs [--cells 10000] [--concurrent 100]
import { createRequire } from 'node:module'
import { readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const { ToolCatalog, ToolSearchSession, resolveToolSearchConfig, probeCodeMode } = require(join(root, 'index.js'))

const arg = (name, fallback) => {
  const at = process.argv.indexOf(name)
  return at > 0 ? Number(process.argv[at + 1]) : fallback
}
const cells = arg('--cells', 10000)
const concurrent = arg('--concurrent', 100)
const warmup = Math.min(500, Math.floor(cells / 10))

const capability = await probeCodeMode()
if (!capability.available) {
  console.error(`code mode unavailable: ${capability.reason}`)
  process.exit(1)
}

const tools = Array.from({ length: 36 }, (_, i) => ({
  name: `fake_plugin_tool_${String(i + 1).padStart(2, '0')}`,
  owner: 'fake-plugin',
  description: `Fake plugin tool number ${i + 1}.`,
  parameters: { type: 'object', properties: { marker: { type: 'string' } }, required: ['marker'], additionalProperties: false },
}))
const session = new ToolSearchSession(new ToolCatalog(tools), resolveToolSearchConfig({ mode: 'code' }), {
  executor: async (call) => ({ content: [{ type: 'text', text: `FAKE_PLUGIN_OK ${call.name}` }] }),
})
const code = `const [hit] = await openclaw.tools.search('fake plugin tool 17', { limit: 1 });
  const r = await openclaw.tools.call(hit.id, { marker: 'soak' }); console.log(r.tool.id); return r.tool.name`

const children = () => {
  let n = 0
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid) n++
    } catch {}
  }
  return n
}
const workdirs = () => readdirSync(tmpdir()).filter((n) => n.startsWith('openclaw-code-')).length
const dirsBefore = workdirs()

let last = performance.now()
let maxGap = 0
const probe = setInterval(() => { const now = performance.now(); maxGap = Math.max(maxGap, now - last); last = now }, 1)
const mib = (b) => (b / 2 ** 20).toFixed(1)

let ok = 0
let failed = 0
let rssWarm = 0
const t0 = performance.now()
for (let i = 0; i < cells; i++) {
  const r = await session.handle('tool_search_code', { code })
  if (r.ok && r.value.value === 'fake_plugin_tool_17') ok++
  else failed++
  if (i + 1 === warmup) rssWarm = process.memoryUsage().rss
}
const sequentialMs = performance.now() - t0
const rssSequential = process.memoryUsage().rss
const gapSequential = maxGap
maxGap = 0
const t1 = performance.now()
const results = await Promise.all(Array.from({ length: concurrent }, () => session.handle('tool_search_code', { code })))
const concurrentMs = performance.now() - t1
const concurrentOk = results.filter((r) => r.ok).length
clearInterval(probe)
await new Promise((resolve) => setTimeout(resolve, 500)) // the reaper removes the last workdirs
const rssEnd = process.memoryUsage().rss
const t = session.telemetry()

console.log(`sequential cells      ${ok}/${cells} ok (${failed} failed), ${(sequentialMs / cells).toFixed(1)} ms per cell, longest event-loop gap ${gapSequential.toFixed(1)} ms`)
console.log(`concurrent cells      ${concurrentOk}/${concurrent} ok in ${(concurrentMs / 1000).toFixed(1)} s, longest event-loop gap ${maxGap.toFixed(1)} ms`)
console.log(`gateway RSS           after ${warmup} cells ${mib(rssWarm)} MiB, after all sequential ${mib(rssSequential)} MiB, at the end ${mib(rssEnd)} MiB (growth after warm-up ${mib(rssEnd - rssWarm)} MiB)`)
console.log(`left behind           ${children()} child processes (the warm pool keeps ${capability.poolSize}), ${workdirs() - dirsBefore} new working directories`)
console.log(`session telemetry     codeRuns ${t.codeRuns}, callCount ${t.callCount}, searchCount ${t.searchCount}`)
