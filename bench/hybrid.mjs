// Hybrid ranking's costs, on the release addon with the model package:
//   node bench/hybrid.mjs [--json] [--queries N]
// - embedding new tools (500, then the whole dev catalog) into a fresh vector cache: time from
//   an async build to ready vectors, process CPU (build included), progress events, the longest
//   event-loop gap while the vectors were computed;
// - a restart: another process with the same tools and cache (nothing recomputed);
// - search at full size: lexical p50/p99, hybrid with a new query each time (the query is
//   embedded) and with a repeated query (cached vector), on the calling thread.
// The model comes from OPENCLAW_TOOL_SEARCH_MODEL_DIR or the installed package; without
// one the bench says so and exits 0.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { median } from './timing.mjs'

const require = createRequire(import.meta.url)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const { ToolCatalog, rankingCapability } = require(join(root, 'index.js'))
const args = process.argv.slice(2)
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback)
const dataDir = join(root, 'bench', 'data', 'retrieval-dev')
const tools = readFileSync(join(dataDir, 'catalog.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
const queries = readFileSync(join(dataDir, 'queries.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).query)

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]

/**
 * Time from an async build to ready vectors, process CPU meanwhile, progress events, and the
 * longest event-loop gap while the vectors were computed (after the build resolved).
 */
async function embed(list, cache) {
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const catalog = await ToolCatalog.build(list, { ranking: 'hybrid', vectorCache: cache, cache: false })
  let last = performance.now()
  let longest = 0
  const timer = setInterval(() => {
    const now = performance.now()
    longest = Math.max(longest, now - last - 1)
    last = now
  }, 1)
  let events = 0
  const status = await catalog.whenRankingReady(() => events++)
  const wall = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  clearInterval(timer)
  return { catalog, status, wallS: wall / 1000, cpuS: (cpu.user + cpu.system) / 1e6, events, longestGapMs: longest }
}

if (args.includes('--restart-child')) {
  const cache = option('--restart-child')
  const { status, wallS } = await embed(tools, cache)
  console.log(JSON.stringify({ wallS, reused: status.reused, embedded: status.embedded, state: status.state }))
  process.exit(0)
}

const capability = rankingCapability()
if (!capability.hybrid) {
  console.log(`hybrid ranking skipped: ${capability.reason}`)
  process.exit(0)
}

const cache = mkdtempSync(join(tmpdir(), 'ots-bench-vectors-'))
const report = { date: new Date().toISOString().slice(0, 10), node: process.version, tools: tools.length, model: capability.model }
try {
  // The model loads with the first hybrid catalog (off the event loop).
  const load = await embed([{ name: 'warm_up', description: 'loads the model' }], cache)
  report.modelLoadS = load.wallS
  const small = await embed(tools.slice(0, 500), cache)
  report.embed500 = { wallS: small.wallS, cpuS: small.cpuS, embedded: small.status.embedded, events: small.events, longestGapMs: small.longestGapMs }
  const full = await embed(tools, cache)
  report.embedAll = { wallS: full.wallS, cpuS: full.cpuS, embedded: full.status.embedded, reused: full.status.reused, events: full.events, longestGapMs: full.longestGapMs }

  const restart = JSON.parse(
    execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--restart-child', cache], { encoding: 'utf8' }),
  )
  report.restart = restart

  const hybrid = full.catalog
  const lexical = new ToolCatalog(tools, { ranking: 'lexical' })
  const count = Number(option('--queries', '400'))
  const sample = queries.filter((_, i) => i % Math.max(1, Math.floor(queries.length / count)) === 0).slice(0, count)
  const timed = (catalog, list) =>
    list.map((q) => {
      const t0 = performance.now()
      catalog.search(q, { limit: 10 })
      return performance.now() - t0
    })
  timed(lexical, sample.slice(0, 50)) // warm-up
  const lexicalMs = timed(lexical, sample)
  const missMs = timed(hybrid, sample) // each query embedded once
  const hitMs = timed(hybrid, sample) // the same queries again: cached vectors
  report.search = {
    queries: sample.length,
    lexicalP50Ms: median(lexicalMs),
    lexicalP99Ms: pct(lexicalMs, 0.99),
    hybridNewQueryP50Ms: median(missMs),
    hybridNewQueryP99Ms: pct(missMs, 0.99),
    hybridRepeatedQueryP50Ms: median(hitMs),
  }
} finally {
  rmSync(cache, { recursive: true, force: true })
}

if (args.includes('--json')) {
  console.log(JSON.stringify(report, null, 2))
} else {
  const s = report.search
  const f = (x, d = 2) => x.toFixed(d)
  console.log(`${report.tools} tools, Node ${report.node}, model ${report.model}`)
  console.log(`model load (first hybrid catalog):      ${f(report.modelLoadS)} s`)
  for (const [label, r] of [['500 new tools', report.embed500], [`${report.tools} tools (500 reused)`, report.embedAll]]) {
    console.log(`embed ${label.padEnd(26)} ${f(r.wallS)} s wall, ${f(r.cpuS)} s CPU, ${r.embedded} embedded, ${r.events} progress events, longest loop gap ${f(r.longestGapMs, 1)} ms`)
  }
  console.log(`restart (new process, warm cache):      ${f(report.restart.wallS)} s to ready, ${report.restart.reused} reused, ${report.restart.embedded} embedded`)
  console.log(`search p50 / p99 (${s.queries} queries, limit 10):`)
  console.log(`  lexical                  ${f(s.lexicalP50Ms, 3)} / ${f(s.lexicalP99Ms, 3)} ms`)
  console.log(`  hybrid, new query        ${f(s.hybridNewQueryP50Ms, 3)} / ${f(s.hybridNewQueryP99Ms, 3)} ms (query embedded + fused re-rank)`)
  console.log(`  hybrid, repeated query   ${f(s.hybridRepeatedQueryP50Ms, 3)} ms (cached query vector)`)
}
