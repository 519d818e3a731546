// Does the gateway stay responsive? The gateway's longest event-loop gap (a 1 ms timer in the
// gateway process) while it serves:
//   (a) 100 concurrent CPU-spinning cells (each spins 300 ms of wall time);
//   (b) 100 concurrent ordinary cells (search + describe + call on 36 tools);
//   (c) 1,000 `tool_search` calls of distinct new queries through a session in hybrid mode
//       (the 13,163-tool dev catalog; tool vectors from a disk cache kept between runs, so only
//       the first run embeds the catalog; every query is new to the process);
//   (d) `await ToolCatalog.build` of the 12.8k dev tools (fresh objects, lexical ranking: the
//       build's own stall);
//   (e) a memory flood (3 cells allocating 256 MiB Buffers until the children's memory group
//       kills them), then 100 concurrent trivial cells: the gap during the 100 cells, in a new
//       process each repetition ("e new") and 10 times in one process ("e same").
// Each repetition of (a)-(d) and "e new" runs in a new gateway process (this script with
// `--child`); medians and maxima over the repetitions. Cells/s: cells finished per second of
// the 100-cell batch. Code-mode settings can be passed as JSON (`--settings '{"maxConcurrentCells":8}'`,
// handed to `configureCodeMode`), to compare configurations.
//
//   OPENCLAW_TOOL_SEARCH_NODE=<node 24> OPENCLAW_TOOL_SEARCH_MODEL_DIR=<model> \
//     <node 24> bench/responsive.mjs [--only a,b,c,d,e] [--reps N] [--reps-e N] [--json] [--settings JSON]
//     [--addon-root DIR]   (the package to load, e.g. a copy of an earlier build; default this repo)
//
// Not a test: timings depend on the machine (2 shared cores here); targets are read off the
// table (issue #24: (a)(b)(c)(e) max ≤ 50 ms, median ≤ 20 ms; (d) median ≤ 5 ms).
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const self = fileURLToPath(import.meta.url)
const args = process.argv.slice(2)
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback)
const dataDir = join(root, 'bench', 'data', 'retrieval-dev')
const addonRoot = option('--addon-root', root)

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** The gateway's longest event-loop gap while `work` runs (a 1 ms interval timer). */
async function gapDuring(work) {
  let last = performance.now()
  let longest = 0
  const timer = setInterval(() => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
  }, 1)
  const t0 = performance.now()
  const faults0 = process.resourceUsage().majorPageFault
  let value
  try {
    value = await work()
  } finally {
    clearInterval(timer)
  }
  const now = performance.now()
  longest = Math.max(longest, now - last)
  // Major page faults of the gateway meanwhile (a read from disk, e.g. of its own code).
  return { gapMs: longest, wallMs: now - t0, majorFaults: process.resourceUsage().majorPageFault - faults0, value }
}

// ---------------------------------------------------------------- one gateway process (child)

async function child(scenario, reps) {
  const require = createRequire(import.meta.url)
  const api = require(join(addonRoot, 'index.js'))
  const { ToolCatalog, ToolSearchSession, resolveToolSearchConfig, probeCodeMode, configureCodeMode, rankingCapability } = api
  const settings = option('--settings', '')
  if (settings) configureCodeMode(JSON.parse(settings))
  const out = { scenario, pid: process.pid, runs: [] }

  if (scenario === 'd') {
    const text = readFileSync(join(dataDir, 'catalog.jsonl'), 'utf8')
    const lines = text.split('\n').filter(Boolean).slice(0, 12800)
    for (let i = 0; i < reps; i++) {
      const tools = lines.map((l) => JSON.parse(l)) // fresh objects: a first build
      await new Promise((r) => setTimeout(r, 50))
      const m = await gapDuring(() => ToolCatalog.build(tools, { ranking: 'lexical', cache: false }))
      out.runs.push({ gapMs: m.gapMs, wallMs: m.wallMs, tools: m.value.size ?? tools.length })
    }
    return out
  }

  if (scenario === 'c') {
    const capability = rankingCapability()
    if (!capability.hybrid) return { scenario, skipped: `hybrid ranking unavailable: ${capability.reason}` }
    const tools = readFileSync(join(dataDir, 'catalog.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const queries = [...new Set(readFileSync(join(dataDir, 'queries.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).query))]
    const cache = join(tmpdir(), 'openclaw-tool-search-bench-vectors')
    mkdirSync(cache, { recursive: true })
    const catalog = await ToolCatalog.build(tools, { ranking: 'hybrid', vectorCache: cache })
    const status = await catalog.whenRankingReady()
    if (status.active !== 'hybrid') return { scenario, skipped: `tool vectors not ready: ${JSON.stringify(status)}` }
    const session = new ToolSearchSession(catalog, resolveToolSearchConfig({ mode: 'tools' }), { executor: async () => 'ok' })
    for (let i = 0; i < reps; i++) {
      // 1,000 queries this process has not searched yet.
      const batch = queries.slice(i * 1000, i * 1000 + 1000)
      if (batch.length < 1000) break
      await new Promise((r) => setTimeout(r, 50))
      const m = await gapDuring(async () => {
        let failed = 0
        for (const query of batch) {
          const r = await session.handle('tool_search', { query })
          if (r.ok === false) failed++
        }
        return failed
      })
      out.runs.push({ gapMs: m.gapMs, wallMs: m.wallMs, failed: m.value, queries: batch.length })
    }
    return out
  }

  const capability = await probeCodeMode()
  if (!capability.available) return { scenario, skipped: `code mode unavailable: ${capability.reason}` }
  out.capability = {
    maxConcurrentCells: capability.maxConcurrentCells,
    cpu: capability.cpuIsolation ?? null,
    memoryCgroup: capability.memoryCgroup?.applied ? capability.memoryCgroup.version : capability.memoryCgroup?.reason,
  }
  const tools = Array.from({ length: 36 }, (_, i) => ({
    name: `fake_plugin_tool_${String(i + 1).padStart(2, '0')}`,
    owner: 'fake-plugin',
    description: `Fake plugin tool ${i + 1}: returns FAKE_PLUGIN_OK with its marker.`,
    parameters: { type: 'object', properties: { marker: { type: 'string' } }, required: ['marker'], additionalProperties: false },
  }))
  const session = new ToolSearchSession(new ToolCatalog(tools, { ranking: 'lexical' }), resolveToolSearchConfig({ mode: 'code', codeTimeoutMs: 60000 }), {
    executor: async (call) => ({ content: [{ type: 'text', text: `FAKE_PLUGIN_OK ${call.name} ${JSON.stringify(call.args)}` }] }),
  })
  // Let the warm pool fill before measuring.
  await session.handle('tool_search_code', { code: 'return 0' })
  await new Promise((r) => setTimeout(r, 300))

  const batch = async (code) => {
    const m = await gapDuring(() => Promise.all(Array.from({ length: 100 }, (_, i) => session.handle('tool_search_code', { code: code(i) }))))
    const results = m.value
    const ok = results.filter((r) => r.ok !== false && r.value?.ok !== false).length
    const codes = {}
    for (const r of results) {
      const code = r.value?.error?.code ?? r.error?.code
      if (code) codes[code] = (codes[code] ?? 0) + 1
    }
    return { gapMs: m.gapMs, wallMs: m.wallMs, majorFaults: m.majorFaults, ok, cellsPerS: 100 / (m.wallMs / 1000), errors: codes }
  }
  const spin = () => 'const end = Date.now() + 300; let x = 0; while (Date.now() < end) { x++ } return x > 0'
  const ordinary = () => `const [hit] = await openclaw.tools.search('fake plugin tool 17', { limit: 1 });
const d = await openclaw.tools.describe(hit.id);
return await openclaw.tools.call(d.id, { marker: 'bench' });`
  const trivial = (i) => `return ${i}`
  const flood = 'const held = []; for (;;) { const b = Buffer.alloc(256 * 1024 * 1024); b.fill(1); held.push(b) }'

  for (let i = 0; i < reps; i++) {
    if (scenario === 'a') out.runs.push(await batch(spin))
    else if (scenario === 'b') out.runs.push(await batch(ordinary))
    else if (scenario === 'e') {
      const f = await gapDuring(() => Promise.all([0, 1, 2].map(() => session.handle('tool_search_code', { code: flood }))))
      const floodCodes = f.value.map((r) => r.value?.error?.code ?? r.error?.code ?? 'ok')
      const cells = await batch(trivial)
      out.runs.push({ ...cells, floodGapMs: f.gapMs, floodMs: f.wallMs, flood: floodCodes })
    }
  }
  return out
}

if (args.includes('--child')) {
  const scenario = option('--child')
  const reps = Number(option('--in-process', '1'))
  const result = await child(scenario, reps)
  process.stdout.write(`${JSON.stringify(result)}\n`)
  process.exit(0)
}

// ---------------------------------------------------------------- driver

const only = new Set(option('--only', 'a,b,c,d,e').split(','))
const reps = Number(option('--reps', '5'))
const repsE = Number(option('--reps-e', '10'))
const passOn = [...(args.includes('--settings') ? ['--settings', option('--settings')] : []), '--addon-root', addonRoot]

function gateway(scenario, inProcess = 1) {
  const text = execFileSync(process.execPath, [self, '--child', scenario, '--in-process', String(inProcess), ...passOn], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 << 20,
  })
  return JSON.parse(text.trim().split('\n').pop())
}

const rows = []
const report = { date: new Date().toISOString(), node: process.version, rows }
function summarize(label, runs, extra = {}) {
  const gaps = runs.map((r) => r.gapMs)
  const row = { scenario: label, reps: runs.length, gapMedianMs: median(gaps), gapMaxMs: Math.max(...gaps), gaps, ...extra }
  const rates = runs.map((r) => r.cellsPerS).filter((x) => x !== undefined)
  if (rates.length) row.cellsPerS = median(rates)
  const ok = runs.map((r) => r.ok).filter((x) => x !== undefined)
  if (ok.length) row.cellsOk = `${ok.reduce((a, b) => a + b, 0)}/${ok.length * 100}`
  row.majorFaults = runs.reduce((sum, r) => sum + (r.majorFaults ?? 0), 0)
  const errors = {}
  for (const r of runs) for (const [k, v] of Object.entries(r.errors ?? {})) errors[k] = (errors[k] ?? 0) + v
  if (Object.keys(errors).length) row.errors = errors
  rows.push(row)
  if (!args.includes('--json')) {
    const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : '–')
    console.log(
      `${label.padEnd(34)} reps ${String(runs.length).padStart(2)}  gap median ${f(row.gapMedianMs).padStart(6)} ms  max ${f(row.gapMaxMs).padStart(6)} ms` +
        (row.cellsPerS ? `  ${f(row.cellsPerS).padStart(5)} cells/s  ok ${row.cellsOk}` : '') +
        (row.errors ? `  errors ${JSON.stringify(row.errors)}` : '') +
        (row.majorFaults ? `  major faults ${row.majorFaults}` : '') +
        (extra.note ? `  ${extra.note}` : ''),
    )
  }
}

function repeated(scenario, label, n, note = () => undefined) {
  const runs = []
  let capability
  for (let i = 0; i < n; i++) {
    const r = gateway(scenario)
    if (r.skipped) {
      if (!args.includes('--json')) console.log(`${label.padEnd(34)} skipped: ${r.skipped}`)
      rows.push({ scenario: label, skipped: r.skipped })
      return
    }
    capability ??= r.capability
    runs.push(...r.runs.map((run) => ({ ...run, pid: r.pid })))
  }
  summarize(label, runs, { note: note(runs), capability })
}

if (!args.includes('--json')) {
  console.log(`gateway Node ${process.version}; ${args.includes('--settings') ? `settings ${option('--settings')}` : 'default code-mode settings'}; addon ${addonRoot}`)
}
if (only.has('a')) repeated('a', '(a) 100 CPU-spinning cells', reps)
if (only.has('b')) repeated('b', '(b) 100 ordinary cells', reps)
if (only.has('c')) repeated('c', '(c) 1,000 new hybrid tool_search', reps, (runs) => `median ${(median(runs.map((r) => r.wallMs)) / 1000).toFixed(2)} ms/query`)
if (only.has('d')) repeated('d', '(d) await build of 12.8k tools', reps, (runs) => `build median ${median(runs.map((r) => r.wallMs)).toFixed(0)} ms`)
if (only.has('e')) {
  repeated('e', '(e) flood, then 100 cells, new proc', repsE, (runs) => `flood gap max ${Math.max(...runs.map((r) => r.floodGapMs)).toFixed(1)} ms; flood cells ${[...new Set(runs.flatMap((r) => r.flood))].join('/')}`)
  const same = gateway('e', repsE)
  if (same.skipped) console.log(`(e) same process skipped: ${same.skipped}`)
  else summarize('(e) flood, then 100 cells, same proc', same.runs, { note: `flood gap max ${Math.max(...same.runs.map((r) => r.floodGapMs)).toFixed(1)} ms` })
}
const capability = rows.find((r) => r.capability)?.capability
if (!args.includes('--json') && capability) console.log(`code mode: ${JSON.stringify(capability)}`)
if (args.includes('--json')) console.log(JSON.stringify(report, null, 2))
