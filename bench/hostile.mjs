// What hostile cells, schemas and lookups cost the gateway (issue measurements 1-6), rerun as a
// hostile user would; 7-9: live catalogs under a noisy or hostile server (issue #28). Prints one row per scenario: the event loop's longest gap (a 1 ms timer
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

// Issue #28: live catalogs under a hostile or noisy server (items 7-9 here).
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
const devTools = () => readFileSync(join(root, 'bench', 'data', 'retrieval-dev', 'catalog.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => { const t = JSON.parse(l); delete t.id; return t })
const mib = (bytes) => (bytes / 2 ** 20).toFixed(0)

if (want(7)) {
  // 1,000 quiet updates of a 30-tool server on the 13k dev catalog: withSourceAsync, then a turn
  // of the loop, nothing else allocating on the JS heap (no explicit GC). Peak RSS over the chain.
  const updates = Number(process.env.HOSTILE_CHAIN_UPDATES ?? 1000)
  let catalog = await ToolCatalog.build(devTools())
  const server = (v) => Array.from({ length: 30 }, (_, i) => ({ name: `live_${i}`, description: `Live tool ${i}, version ${v}: creates and lists the things of the live server.`, inputSchema: { type: 'object', properties: { id: { type: 'string' } } } }))
  catalog = await catalog.withSourceAsync({ source: 'mcp', owner: 'live' }, server(0))
  await new Promise((r) => setTimeout(r, 200))
  const rss0 = process.memoryUsage().rss
  let peak = rss0
  const times = []
  const m = await probed(async () => {
    for (let v = 1; v <= updates; v++) {
      const t0 = performance.now()
      catalog = await catalog.withSourceAsync({ source: 'mcp', owner: 'live' }, server(v))
      times.push(performance.now() - t0)
      peak = Math.max(peak, process.memoryUsage().rss)
      await new Promise((r) => setImmediate(r))
    }
  })
  const rss1 = process.memoryUsage().rss
  row(7, `${updates} quiet updates of a 30-tool server, 13k catalog`, m, `RSS ${mib(rss0)} MiB at one version, peak ${mib(peak)} MiB, end ${mib(rss1)} MiB; update median ${median(times).toFixed(1)} ms`)
}

if (want(8)) {
  // withSourceAsync of a 100k-tool server (the dev catalog's tools renamed): the loop's longest stall.
  const dev = devTools()
  // New content each run: no run finds an earlier one's build.
  const bulk = (run) => Array.from({ length: 100_000 }, (_, i) => { const t = dev[i % dev.length]; return { name: `${t.name}_${i}`, description: `${t.description} (${run})`, inputSchema: t.inputSchema } })
  const catalog = new ToolCatalog(dev.slice(0, 1000))
  const gaps = []
  const totals = []
  for (let run = 0; run < 3; run++) {
    const tools = bulk(run)
    await new Promise((r) => setTimeout(r, 100))
    const m = await probed(() => catalog.withSourceAsync({ source: 'mcp', owner: 'bulk' }, tools))
    gaps.push(m.maxGap)
    totals.push(m.ms)
  }
  row(8, 'withSourceAsync of 100k tools (3 runs)', { maxGap: median(gaps), rssGrowth: 0 }, `longest stall median ${median(gaps).toFixed(1)} ms (runs ${gaps.map((g) => g.toFixed(1)).join(' / ')}), ${(median(totals) / 1000).toFixed(2)} s each`)
}

if (want(9)) {
  // 2,000 MCP servers of 2 tools beside the dev catalog, marked unavailable one by one; then search.
  const servers = Array.from({ length: 2000 }, (_, i) => [0, 1].map((k) => ({ source: 'mcp', owner: `down${String(i).padStart(4, '0')}`, name: `create_item_${k}`, description: 'Create an item in the tracker' }))).flat()
  let catalog = new ToolCatalog([...devTools(), ...servers])
  const marks = []
  const rss0 = process.memoryUsage().rss
  for (let i = 0; i < 2000; i++) {
    const t0 = performance.now()
    catalog = catalog.withUnavailable({ source: 'mcp', owner: `down${String(i).padStart(4, '0')}` }, `server ${i} disconnected`)
    marks.push(performance.now() - t0)
  }
  // Each mark is synchronous: the loop's longest stall is the longest mark.
  const m = { maxGap: Math.max(...marks), rssGrowth: process.memoryUsage().rss - rss0 }
  const queries = readFileSync(join(root, 'bench', 'data', 'retrieval-dev', 'queries.jsonl'), 'utf8').split('\n').filter(Boolean).slice(0, 400).map((l) => JSON.parse(l).query)
  const searches = []
  for (const q of queries) {
    const t0 = performance.now()
    catalog.search(q, { limit: 10 })
    searches.push(performance.now() - t0)
  }
  // A query whose matches are the unavailable servers' tools (every one checked and left out).
  const downQuery = []
  for (let i = 0; i < 21; i++) {
    const t0 = performance.now()
    catalog.search('create an item in the tracker', { limit: 10 })
    downQuery.push(performance.now() - t0)
  }
  row(9, '2,000 owners marked unavailable, then search', m, `all marks ${marks.reduce((a, b) => a + b, 0).toFixed(0)} ms (median ${median(marks).toFixed(3)} ms); search p50 ${median(searches).toFixed(3)} ms over ${searches.length} dev queries, ${median(downQuery).toFixed(2)} ms for one matching the unavailable tools`)
}

console.log(`item  scenario                                             max gap ms  RSS growth MiB  figure`)
for (const r of rows) {
  console.log(`${String(r.item).padEnd(4)}  ${r.scenario.padEnd(52)} ${r.gap.padStart(10)}  ${r.rss.padStart(14)}  ${r.figure}`)
}
