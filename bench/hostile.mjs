// What hostile cells, schemas and lookups cost the gateway (issue measurements 1-6), rerun as a
// hostile user would. Prints one row per scenario: the event loop's longest gap (a 1 ms timer
// probe), gateway RSS growth, and the scenario's own figure.
//
//   OPENCLAW_TOOL_SEARCH_NODE=<node 24> node bench/hostile.mjs [--only 1,2,...]
//
// Needs code mode (a sound Node) for scenarios 1, 2, 4, 5. Not part of `pnpm test`: timings
// vary with the machine; the bounds are checked by reading the table.
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const { ToolCatalog, ToolSearchSession, resolveToolSearchConfig, probeCodeMode } = require(join(root, 'index.js'))

const only = (() => {
  const at = process.argv.indexOf('--only')
  return at > 0 ? new Set(process.argv[at + 1].split(',').map(Number)) : null
})()
const capability = await probeCodeMode()
const rows = []

/** Runs `work` while probing the event loop every millisecond; returns its longest gap. */
async function probed(work) {
  let last = performance.now()
  let maxGap = 0
  const timer = setInterval(() => {
    const now = performance.now()
    maxGap = Math.max(maxGap, now - last)
    last = now
  }, 1)
  let peakRss = process.memoryUsage().rss
  const rssTimer = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage().rss) }, 20)
  const rss0 = process.memoryUsage().rss
  const started = performance.now()
  let result
  try {
    result = await work()
  } finally {
    clearInterval(timer)
    clearInterval(rssTimer)
  }
  return { maxGap, rssGrowth: peakRss - rss0, ms: performance.now() - started, result }
}

function row(item, scenario, m, figure) {
  rows.push({ item, scenario, gap: m.maxGap.toFixed(1), rss: (m.rssGrowth / 2 ** 20).toFixed(0), figure })
}

const mcpTool = { source: 'mcp', owner: 'notes', name: 'create_note', description: 'Create a note.', inputSchema: { type: 'object' } }
const codeSession = (executor, timeoutMs = 10000, tools = [mcpTool]) =>
  new ToolSearchSession(new ToolCatalog(tools), resolveToolSearchConfig({ mode: 'code', codeTimeoutMs: timeoutMs }), { executor })

function exponentialSchema(depth) {
  const defs = {}
  for (let i = 0; i < depth; i++) defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] }
  defs[`d${depth}`] = { type: 'object', properties: { x: { type: 'string' } } }
  return { $ref: '#/$defs/d0', $defs: defs }
}

const want = (n) => !only || only.has(n)
const codeMode = capability.available
if (!codeMode) console.error(`code mode unavailable (${capability.reason}): scenarios 1, 2, 4, 5 skipped`)

if (want(1) && codeMode) {
  // 8 parallel loops calling an MCP tool with ~350k empty objects for 8 s.
  const s = codeSession(async () => 'ok', 9000)
  const code = `const pad = Array.from({ length: 340000 }, () => ({})); const end = Date.now() + 8000; let n = 0, refused = 0;
    await Promise.all(Array.from({ length: 8 }, async () => { while (Date.now() < end) { try { await openclaw.tools.call('mcp:notes:create_note', { title: 't', pad }); n++ } catch (e) { refused++ } } }));
    return { n, refused }`
  const m = await probed(() => s.handle('tool_search_code', { code }))
  row(1, '8 loops x call with 340k-object args, 8 s', m, JSON.stringify(m.result.value?.value ?? m.result.error))
  // Under the value cap: 20k objects each, every one delivered to the executor.
  const s2 = codeSession(async () => 'ok', 9000)
  const code2 = code.replace('340000', '20000')
  const m2 = await probed(() => s2.handle('tool_search_code', { code: code2 }))
  row(1, '8 loops x call with 20k-object args, 8 s', m2, JSON.stringify(m2.result.value?.value ?? m2.result.error))
}

if (want(2) && codeMode) {
  // 200 un-awaited ~1 MiB calls against a slow executor (5 s each), 10 s deadline.
  const s = codeSession(() => new Promise((resolve) => setTimeout(() => resolve('late'), 5000)), 10000)
  const code = `const big = 'x'.repeat(1000000); let refused = 0;
    const all = Array.from({ length: 200 }, () => openclaw.tools.call('mcp:notes:create_note', { big }).catch(() => { refused++ }));
    await new Promise((r) => setTimeout(r, 500)); return { refused }`
  const m = await probed(() => s.handle('tool_search_code', { code }))
  row(2, '200 un-awaited 1 MiB calls, slow executor', m, JSON.stringify(m.result.value?.value ?? m.result.error?.code))
}

if (want(3)) {
  for (const depth of [20, 21, 30]) {
    const tools = [{ source: 'mcp', owner: 'x', name: `expo${depth}`, description: 'Exponential schema.', inputSchema: exponentialSchema(depth) }]
    const m = await probed(async () => {
      const catalog = new ToolCatalog(tools)
      const excluded = catalog.excluded.map((e) => e.code ?? e.reason).join(' ')
      let verdict
      const t0 = performance.now()
      try { verdict = JSON.stringify(catalog.validateArgs(`mcp:x:expo${depth}`, { x: 1 })).slice(0, 60) } catch (e) { verdict = e.code }
      return { excluded, verdict, validateMs: (performance.now() - t0).toFixed(2) }
    })
    row(3, `validateArgs, exponential schema depth ${depth}`, m, `${m.result.validateMs} ms: ${m.result.verdict} ${m.result.excluded ? '(excluded at build)' : ''}`)
  }
}

if (want(4) && codeMode) {
  // The depth-20 schema on a trusted tool, called from 3 cells; an unrelated 2 s looping cell.
  const trusted = { name: 'heavy', owner: 'p', description: 'Heavy schema.', inputSchema: exponentialSchema(20) }
  const s = codeSession(async () => 'ok', 10000, [trusted, mcpTool])
  const loop = codeSession(async () => 'ok', 2000)
  const m = await probed(async () => {
    const heavy = Array.from({ length: 3 }, () => s.handle('tool_search_code', { code: `for (let i = 0; i < 20; i++) { try { await openclaw.tools.call('heavy', { x: 1 }) } catch {} } return 1` }))
    const t0 = performance.now()
    const looping = await loop.handle('tool_search_code', { code: 'while (true) {}' })
    const loopMs = performance.now() - t0
    await Promise.all(heavy)
    return { loopMs, code: looping.error?.code }
  })
  row(4, '2 s looping cell beside 3 validation-heavy cells', m, `looping cell ended after ${m.result.loopMs.toFixed(0)} ms (${m.result.code})`)
}

if (want(5) && codeMode) {
  const group = capability.memoryCgroup?.applied ? capability.memoryCgroup.path : null
  const usage = (file) => { try { return Number(readFileSync(join(group, file), 'utf8')) } catch { return NaN } }
  const resetPeak = () => { try { require('node:fs').writeFileSync(join(group, 'memory.max_usage_in_bytes'), '0') } catch {} }
  if (group) resetPeak()
  const s = codeSession(async () => 'ok', 10000)
  const flood = `const held = []; try { for (;;) { const b = Buffer.alloc(256 * 1024 * 1024); b.fill(1); held.push(b) } } catch (e) { return held.length }`
  const m = await probed(() => Promise.all([0, 1, 2].map(() => s.handle('tool_search_code', { code: flood }))))
  const peak = group ? usage('memory.max_usage_in_bytes') || usage('memory.peak') : NaN
  row(5, '3 cells flooding 256 MiB Buffers', m, `children peak ${Number.isNaN(peak) ? 'n/a (no cgroup)' : (peak / 2 ** 30).toFixed(2) + ' GiB'}; ${m.result.map((r) => r.ok ? `held ${r.value.value}` : r.error.code).join(', ')}`)
  const s100 = codeSession(async () => 'ok', 60000)
  const m100 = await probed(() => Promise.all(Array.from({ length: 100 }, (_, i) => s100.handle('tool_search_code', { code: `return ${i}` }))))
  const ok = m100.result.filter((r) => r.ok).length
  row(5, '100 concurrent cells', m100, `${ok}/100 ok, ${(m100.ms / 1000).toFixed(1)} s`)
}

if (want(6)) {
  const text = readFileSync(join(root, 'bench', 'data', 'retrieval-dev', 'catalog.jsonl'), 'utf8')
  const lines = text.split('\n').filter(Boolean)
  const extra = lines.slice(0, 2200).map((l) => { const t = JSON.parse(l); t.owner = `${t.owner}-copy`; delete t.id; return JSON.stringify(t) })
  const catalog = ToolCatalog.fromJson([...lines, ...extra].join('\n'))
  const s = new ToolSearchSession(catalog, resolveToolSearchConfig({ mode: 'tools' }), { executor: async () => 'ok' })
  const ids = ['unknown_tool_xyz', 'github_create_isue', 'x'.repeat(512), 'mcp:nope:nothing_here_at_all', 'send emial to the team now']
  const times = []
  const m = await probed(async () => {
    for (let i = 0; i < 200; i++) {
      const id = ids[i % ids.length]
      const t0 = performance.now()
      await s.handle('tool_describe', { id })
      times.push(performance.now() - t0)
    }
  })
  times.sort((a, b) => a - b)
  row(6, `describe of unknown ids, ${catalog.size} tools`, m, `p50 ${times[100].toFixed(3)} ms, max ${times[199].toFixed(3)} ms per op`)
}

console.log(`item  scenario                                             max gap ms  RSS growth MiB  figure`)
for (const r of rows) {
  console.log(`${String(r.item).padEnd(4)}  ${r.scenario.padEnd(52)} ${r.gap.padStart(10)}  ${r.rss.padStart(14)}  ${r.figure}`)
}
