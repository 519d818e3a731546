#!/usr/bin/env node
// Search inside OpenClaw, both engines: the dev queries go through OpenClaw's own
// `ToolSearchRuntime.search` (openclaw@2026.9.6, its Tool Search module loaded through this
// package's seam), once with OpenClaw's built-in ranking and once with the native engine, and
// straight through the addon (`ToolCatalog.search`) for comparison: nDCG@10 per source and macro
// (as bench/quality-hybrid.mjs computes it), search latency inside OpenClaw, and the per-run cost
// (a new run hands OpenClaw new entry objects with the same content: its first search rebuilds
// OpenClaw's index; the native engine finds its built catalog again).
//
// The first search of a new process is timed in child processes (as `openclaw agent exec` runs
// one turn per process): with an empty index cache (the index is built and stored), with the
// index a previous process stored (loaded), and with that index after one server's 30 tools
// changed (an MCP server's `list_changed`, a plugin update: each run changes them anew).
//
//   node bench/openclaw.mjs [--ranking auto|lexical|hybrid] [--runs N] [--json]
// Runs on the Node OpenClaw needs (>= 24.16; re-executes itself on the QA's cached Node 24).
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const { values: flags } = parseArgs({ options: { ranking: { type: 'string', default: 'auto' }, runs: { type: 'string', default: '3' }, json: { type: 'boolean' }, data: { type: 'string' }, 'first-search-with-index-cache': { type: 'string' }, 'changed-server': { type: 'string' } } })
const { openclawNode, openclawPackage, OPENCLAW_VERSION } = await import('../qa/openclaw/setup.mjs')

const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 24 || (major === 24 && minor < 16)) {
  const node = openclawNode()
  const rerun = spawnSync(node, process.argv.slice(1), { stdio: 'inherit', env: process.env })
  process.exit(rerun.status ?? 1)
}

const require = createRequire(import.meta.url)
const { installSeamHooks } = await import('../openclaw/hooks.mjs')
const { engine, resolveSettings } = await import('../openclaw/engine.mjs')
const { groupBySource, ndcg10, perSource } = await import('./experiments/loso.mjs')
const { ToolCatalog, rankingCapability } = require(join(root, 'index.js'))

const dataDir = resolve(flags.data ?? join(root, 'bench', 'data', 'retrieval-dev'))
const readJsonl = (file) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
const tools = readJsonl(join(dataDir, 'catalog.jsonl'))
const queries = readJsonl(join(dataDir, 'queries.jsonl'))

// ------------------------------------------------------------------ OpenClaw's runtime, through the seam
const openclaw = openclawPackage()
const seam = installSeamHooks()
if (seam.reason) throw new Error(seam.reason)
const dist = join(openclaw, 'dist')
let moduleFile
for (const file of readdirSync(dist)) {
  if (file.endsWith('.mjs') && readFileSync(join(dist, file), 'utf8').includes('//#region ' + 'src/agents/tool-search-runtime.ts')) moduleFile = join(dist, file)
}
const source = readFileSync(moduleFile, 'utf8')
const exportLine = source.slice(source.lastIndexOf('export {'))
const alias = /\bToolSearchRuntime as (\w+)/.exec(exportLine)?.[1]
if (!alias) throw new Error('ToolSearchRuntime is not exported by OpenClaw\'s Tool Search module')
const tool = engine()
tool.packageRoot = root
// The in-process figures build without an index cache; child processes time it (below).
const firstSearchOnly = flags['first-search-with-index-cache']
// `--first-search-with-index-cache off`: a child that stores nothing (the rankings' reference).
const settings = resolveSettings({ ranking: flags.ranking, indexCache: firstSearchOnly === undefined || firstSearchOnly === 'off' ? false : firstSearchOnly })
const silent = { info() {}, warn: (m) => process.stderr.write(`${m}\n`) }
tool.configure({ ...settings, enabled: false }, silent)
const chunk = await import(pathToFileURL(moduleFile).href)
if (!seam.modules.some((m) => m.patched)) throw new Error(`the seam did not patch ${moduleFile}: ${JSON.stringify(seam.modules)}`)
const ToolSearchRuntime = chunk[alias]

/** Tools one server changes in the changed-server case. */
const CHANGED_TOOLS = 30

/** The server whose tools change: the first (by source and owner) with at least CHANGED_TOOLS tools. */
const changedServer = (() => {
  const counts = new Map()
  for (const t of tools) {
    const key = `${t.source ?? 'openclaw'}:${t.owner ?? 'core'}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return [...counts].filter(([, n]) => n >= CHANGED_TOOLS).map(([key]) => key).sort()[0]
})()

/**
 * OpenClaw's catalog entries for the dev tools (toCatalogEntry's shape), new objects each call;
 * with `change` (a run number), the first CHANGED_TOOLS tools of `changedServer` describe
 * themselves anew.
 */
function entriesOf(change) {
  let changed = 0
  return tools
    .map((t) => {
      const source = t.source ?? 'openclaw'
      const owner = t.owner ?? 'core'
      let description = t.description ?? ''
      if (change !== undefined && `${source}:${owner}` === changedServer && changed < CHANGED_TOOLS) {
        changed += 1
        description = `${description} (revision ${change})`
      }
      return { id: `${source}:${owner}:${t.name}`, source, sourceName: owner, name: t.name, label: t.label, description, parameters: t.inputSchema, tool: { name: t.name } }
    })
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}

function runtimeFor(entries) {
  const ctx = { runId: 'bench', catalogRef: { current: { entries, counterScope: 'bench', searchCount: 0, describeCount: 0, callCount: 0 } } }
  return new ToolSearchRuntime(ctx, { enabled: true, mode: 'tools', codeTimeoutMs: 10000, searchDefaultLimit: 10, maxSearchLimit: 50 })
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}
const median = (values) => quantile(values, 0.5)

function score(rankings) {
  const { bySource, macro } = perSource(
    rankings.map((ranked, i) => ndcg10(ranked, new Set(queries[i].gold))),
    groupBySource(queries.map((q) => q.set)),
  )
  return { bySource, macro }
}

/** Every dev query through `runtime.search`: rankings, per-search times, and the first search's time. */
async function searchAll(runtime) {
  const rankings = []
  const times = []
  for (const q of queries) {
    const t0 = performance.now()
    const hits = await runtime.search(q.query, { limit: 10 })
    times.push(performance.now() - t0)
    rankings.push(hits.map((h) => h.id))
  }
  return { rankings, first: times[0], p50: median(times.slice(1)), p99: quantile(times.slice(1), 0.99) }
}

/** A new run's first search: new entry objects, same content (the per-run cost inside OpenClaw). */
async function newRunFirstSearch() {
  const runtime = runtimeFor(entriesOf())
  const t0 = performance.now()
  await runtime.search(queries[1].query, { limit: 10 })
  return performance.now() - t0
}

/** This process: the native engine's first search only (a child of the main bench). */
if (firstSearchOnly !== undefined) {
  tool.configure(settings, silent)
  const runtime = runtimeFor(entriesOf(flags['changed-server']))
  const t0 = performance.now()
  await runtime.search(queries[0].query, { limit: 10 })
  const firstMs = performance.now() - t0
  const view = await tool.viewFor(runtime.ctx.catalogRef.current, runtime.ctx.catalogRef.current.entries)
  // After the timing: every dev query's top 20 (ids in order, weak, neededBy), hashed, to compare
  // with a full build's (scores are compared bit for bit by the core's tests).
  const hash = createHash('sha256')
  for (const q of queries) hash.update(`${JSON.stringify(view.catalog.search(q.query, { limit: 20 }).map((h) => [h.id, h.weak, h.neededBy]))}\n`)
  process.stdout.write(`${JSON.stringify({ firstMs, index: view.catalog.rankingStatus().index, rankings: hash.digest('hex') })}\n`)
  process.exit(0)
}

/** A new process's first search with the index cache in `dir` (`change`: after one server changed, run `change`). */
function childFirstSearch(dir, change) {
  const args = [...process.argv.slice(1).filter((a) => a !== '--json'), '--first-search-with-index-cache', dir]
  if (change !== undefined) args.push('--changed-server', String(change))
  const child = spawnSync(process.execPath, args, { encoding: 'utf8', env: process.env, stdio: ['ignore', 'pipe', 'inherit'] })
  if (child.status !== 0) throw new Error(`the first-search child failed (${child.status})`)
  return JSON.parse(child.stdout.trim().split('\n').pop())
}

const runs = Number(flags.runs)
const report = { openclaw: OPENCLAW_VERSION, tools: tools.length, queries: queries.length, ranking: flags.ranking }

// Built-in.
tool.configure({ ...settings, enabled: false }, silent)
const builtin = await searchAll(runtimeFor(entriesOf()))
const builtinRuns = []
for (let i = 0; i < runs; i++) builtinRuns.push(await newRunFirstSearch())
report.builtin = { ...score(builtin.rankings), firstSearchMs: builtin.first, p50Ms: builtin.p50, p99Ms: builtin.p99, newRunFirstSearchMs: median(builtinRuns) }

// Native, inside OpenClaw.
tool.configure(settings, silent)
const nativeRuntime = runtimeFor(entriesOf())
const native = await (async () => {
  const t0 = performance.now()
  await nativeRuntime.search(queries[0].query, { limit: 10 })
  const firstMs = performance.now() - t0
  const view = await tool.viewFor(nativeRuntime.ctx.catalogRef.current, nativeRuntime.ctx.catalogRef.current.entries)
  const status = await view.catalog.whenRankingReady()
  return { ...(await searchAll(nativeRuntime)), firstMs, view, status }
})()
const nativeRuns = []
for (let i = 0; i < runs; i++) nativeRuns.push(await newRunFirstSearch())
report.native = {
  ...score(native.rankings),
  activeRanking: native.view.catalog.rankingStatus().active,
  firstSearchMs: native.firstMs,
  p50Ms: native.p50,
  p99Ms: native.p99,
  newRunFirstSearchMs: median(nativeRuns),
}

// A new process's first search: cold (empty index cache: built and stored), then loaded, then
// after one server's tools changed since the index was stored (a new change each run).
const indexDir = mkdtempSync(join(tmpdir(), 'ots-bench-index-'))
try {
  // Cold: each run with an empty folder of its own; the last one's index serves the cases below.
  const colds = []
  for (let i = 0; i < runs; i++) {
    rmSync(indexDir, { recursive: true, force: true })
    colds.push(childFirstSearch(indexDir))
  }
  const cold = { firstMs: median(colds.map((r) => r.firstMs)), index: colds.at(-1).index, rankings: colds.at(-1).rankings }
  const loaded = []
  for (let i = 0; i < runs; i++) loaded.push(childFirstSearch(indexDir))
  const changed = []
  for (let i = 0; i < runs; i++) changed.push(childFirstSearch(indexDir, i + 1))
  // The rankings of each case against a full build of the same catalog (no index cache).
  const reference = childFirstSearch('off').rankings
  const changedReference = changed.map((_, i) => childFirstSearch('off', i + 1).rankings)
  const equal = [...colds, ...loaded].filter((r) => r.rankings === reference).length + changed.filter((r, i) => r.rankings === changedReference[i]).length
  const states = (results) => [...new Set(results.map((r) => r.index.state))].join('+')
  report.newProcess = {
    coldMs: cold.firstMs,
    coldIndex: [...new Set(colds.map((r) => r.index.state))].join('+'),
    loadedMs: median(loaded.map((r) => r.firstMs)),
    loadedIndex: states(loaded),
    changedServer,
    changedTools: CHANGED_TOOLS,
    changedServerMs: median(changed.map((r) => r.firstMs)),
    changedServerIndex: states(changed),
    processesRankingAsAFullBuild: `${equal} of ${colds.length + loaded.length + changed.length}`,
  }
} finally {
  rmSync(indexDir, { recursive: true, force: true })
}

// The addon alone, on the catalog the engine built (same records, same options).
const addonCatalog = native.view.catalog
const addonRankings = queries.map((q) => addonCatalog.search(q.query, { limit: 10 }).map((h) => h.id))
report.addon = score(addonRankings)
report.rankingsThatDiffer = addonRankings.filter((ranked, i) => ranked.join('\n') !== native.rankings[i].join('\n')).length
report.capability = rankingCapability()

if (flags.json) {
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
} else {
  const f = (n) => (typeof n === 'number' ? n.toFixed(1) : '-')
  const ms = (n) => (n < 1 ? n.toFixed(3) : n.toFixed(1))
  console.log(`OpenClaw ${OPENCLAW_VERSION}, ${tools.length} dev tools, ${queries.length} queries (native ranking: ${report.native.activeRanking})`)
  const sources = Object.keys(report.native.bySource)
  console.log(`| source | OpenClaw built-in | native in OpenClaw | addon |`)
  console.log(`|---|---|---|---|`)
  for (const s of sources) console.log(`| ${s} | ${f(report.builtin.bySource[s])} | ${f(report.native.bySource[s])} | ${f(report.addon.bySource[s])} |`)
  console.log(`| macro | ${f(report.builtin.macro)} | ${f(report.native.macro)} | ${f(report.addon.macro)} |`)
  console.log(`rankings that differ between the native engine in OpenClaw and the addon: ${report.rankingsThatDiffer} of ${queries.length}`)
  console.log(`search inside OpenClaw, p50 / p99: built-in ${ms(report.builtin.p50Ms)} / ${ms(report.builtin.p99Ms)} ms; native ${ms(report.native.p50Ms)} / ${ms(report.native.p99Ms)} ms`)
  console.log(`first search of the process (index build): built-in ${ms(report.builtin.firstSearchMs)} ms; native ${ms(report.native.firstSearchMs)} ms (no index cache)`)
  const p = report.newProcess
  console.log(`first search of a new process, native: empty index cache, median of ${runs}: ${ms(p.coldMs)} ms (${p.coldIndex}); index stored by an earlier process, median of ${runs}: ${ms(p.loadedMs)} ms (${p.loadedIndex}); stored, then ${p.changedTools} tools of ${p.changedServer} changed, median of ${runs}: ${ms(p.changedServerMs)} ms (${p.changedServerIndex}); processes whose every dev ranking (top 20) equals a full build's: ${p.processesRankingAsAFullBuild}`)
  console.log(`a new run's first search (new entry objects, same content), median of ${runs}: built-in ${ms(report.builtin.newRunFirstSearchMs)} ms; native ${ms(report.native.newRunFirstSearchMs)} ms`)
}
