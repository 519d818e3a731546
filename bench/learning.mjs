// Replay bench for learned ranking (`CatalogOptions.learning`): the dev queries of each source
// in a fixed shuffled order; each query is ranked first (scored before its own feedback), then
// its gold tools are "called" successfully (`recordOutcome`), as a gateway's agents would.
// Compared with the same stream on the same catalog without learning, per source and macro,
// over the whole stream, its first 10% and its last half. Three streams:
//   clean   every gold tool called after its query;
//   noisy   20% of the calls land on a wrong tool from the query's top 10 instead;
//   poison  clean, plus one server's tool called after every query (a flooding server): the
//           bench counts queries where that tool enters the top 3 only with learning.
// Deterministic: a seeded shuffle and seeded noise; the prior lives in memory, one scope per
// source and stream. Also measured: a search's and a recording's cost with a prior of 100k events
// on the whole catalog, and the prior's size at 100k events.
//
//   node bench/learning.mjs [--data DIR] [--ranking lexical|hybrid] [--weight W] [--json FILE]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { ndcg10 as ndcg, prng as random } from './experiments/loso.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const { ToolCatalog } = require(join(root, 'index.js'))

const args = process.argv.slice(2)
const flag = (name, fallback) => {
  const at = args.indexOf(name)
  return at >= 0 ? args[at + 1] : fallback
}
const dataDir = resolve(root, flag('--data', '../shared/data/retrieval-dev'))
const ranking = flag('--ranking', 'lexical')
const weight = flag('--weight') === undefined ? undefined : Number(flag('--weight'))
const jsonOut = flag('--json')
const SEED = 20261206
const K = 10

function shuffled(items, next) {
  const out = items.slice()
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

const complete = (ids, gold) => [...gold].every((g) => ids.slice(0, K).includes(g))

const lines = (file) =>
  readFileSync(join(dataDir, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l))

async function main() {
  const tools = lines('catalog.jsonl')
  const queries = lines('queries.jsonl')
  const bySource = new Map()
  for (const q of queries) {
    if (!bySource.has(q.set)) bySource.set(q.set, [])
    bySource.get(q.set).push(q)
  }
  const cache = mkdtempSync(join(tmpdir(), 'ots-learning-'))
  const base = { ranking, vectorCache: ranking === 'hybrid' ? join(cache, 'vectors') : false, indexCache: false }
  const plain = await ToolCatalog.build(tools, base)
  if (ranking === 'hybrid') await plain.whenRankingReady()
  const learningOptions = (scope) => ({ folder: false, scope, ...(weight === undefined ? {} : { weight }) })
  const toolIds = plain.ids()
  const results = { date: new Date().toISOString().slice(0, 10), ranking, weight: weight ?? 1, tools: tools.length, queries: queries.length, sources: {} }

  for (const [source, all] of [...bySource].sort(([a], [b]) => a.localeCompare(b))) {
    const order = shuffled(all, random(SEED ^ hash(source)))
    const baseline = order.map((q) => plain.search(q.query, { limit: K }).map((h) => h.id))
    const sourceTools = toolIds.filter((id) => order.some((q) => q.gold.some((g) => g.split(':')[1] === id.split(':')[1])))
    const pickFlooder = random(SEED + 7)
    // The flooding server's tool: one of the source's tools that is nobody's gold here.
    const golds = new Set(order.flatMap((q) => q.gold))
    const candidates = sourceTools.filter((id) => !golds.has(id))
    const flooder = (candidates.length ? candidates : sourceTools)[Math.floor(pickFlooder() * (candidates.length || sourceTools.length))]
    const streams = {}
    for (const stream of ['clean', 'noisy', 'poison']) {
      const catalog = await ToolCatalog.build(tools, { ...base, learning: learningOptions(`${stream}-${source}-${process.pid}`) })
      if (ranking === 'hybrid') await catalog.whenRankingReady()
      const noise = random(SEED ^ hash(`${stream}:${source}`))
      const rows = []
      let floodedIn = 0
      for (let i = 0; i < order.length; i++) {
        const q = order[i]
        const gold = new Set(q.gold)
        const ids = catalog.search(q.query, { limit: K }).map((h) => h.id)
        const before = baseline[i]
        rows.push({ learned: ndcg(ids, gold), plain: ndcg(before, gold), learnedComplete: complete(ids, gold), plainComplete: complete(before, gold) })
        if (stream === 'poison' && ids.slice(0, 3).includes(flooder) && !before.slice(0, 3).includes(flooder)) floodedIn += 1
        for (const g of q.gold) {
          let called = g
          if (stream === 'noisy' && noise() < 0.2) {
            const wrong = ids.filter((id) => !gold.has(id))
            if (wrong.length) called = wrong[Math.floor(noise() * wrong.length)]
          }
          catalog.recordOutcome({ query: q.query, id: called, ok: true })
        }
        if (stream === 'poison') catalog.recordOutcome({ query: q.query, id: flooder, ok: true })
      }
      streams[stream] = summarize(rows)
      if (stream === 'poison') Object.assign(streams[stream], { flooder, floodedIntoTop3: floodedIn })
    }
    results.sources[source] = { queries: order.length, ...streams }
  }
  results.macro = {}
  for (const stream of ['clean', 'noisy', 'poison']) {
    const per = Object.values(results.sources).map((s) => s[stream])
    const mean = (f) => per.reduce((a, s) => a + f(s), 0) / per.length
    results.macro[stream] = {}
    for (const key of Object.keys(per[0])) if (typeof per[0][key] === 'number' && key !== 'floodedIntoTop3') results.macro[stream][key] = round(mean((s) => s[key]))
    if (stream === 'poison') results.macro[stream].floodedIntoTop3 = per.reduce((a, s) => a + s.floodedIntoTop3, 0)
  }
  results.cost = await cost(tools, base, queries, cache)
  rmSync(cache, { recursive: true, force: true })
  print(results)
  if (jsonOut) writeFileSync(resolve(jsonOut), JSON.stringify(results, null, 2) + '\n')
}

function hash(text) {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h >>> 0
}

const round = (x) => Math.round(x * 10) / 10

/** nDCG@10 and Complete@10 (×100) with and without learning: all, first 10%, last half. */
function summarize(rows) {
  const part = (from, to) => {
    const slice = rows.slice(from, to)
    const mean = (f) => (100 * slice.reduce((a, r) => a + f(r), 0)) / Math.max(1, slice.length)
    return { learned: mean((r) => r.learned), plain: mean((r) => r.plain), learnedComplete: mean((r) => r.learnedComplete), plainComplete: mean((r) => r.plainComplete) }
  }
  const n = rows.length
  const all = part(0, n)
  const first = part(0, Math.max(1, Math.round(n / 10)))
  const last = part(Math.floor(n / 2), n)
  return {
    ndcg: round(all.learned),
    ndcgPlain: round(all.plain),
    complete: round(all.learnedComplete),
    completePlain: round(all.plainComplete),
    first10: round(first.learned - first.plain),
    lastHalf: round(last.learned - last.plain),
    lastHalfComplete: round(last.learnedComplete - last.plainComplete),
  }
}

/** Cost on the whole catalog with a prior of 100k learned events (dev queries, cycled). */
async function cost(tools, base, queries, cache) {
  const folder = join(cache, 'prior')
  const catalog = await ToolCatalog.build(tools, { ...base, learning: { folder, scope: `cost-${process.pid}` } })
  const plain = await ToolCatalog.build(tools, base)
  const next = random(SEED + 1)
  const record = []
  for (let i = 0; i < 100_000; i++) {
    const q = queries[Math.floor(next() * queries.length)]
    const started = process.hrtime.bigint()
    catalog.recordOutcome({ query: q.query, id: q.gold[0], ok: true })
    record.push(Number(process.hrtime.bigint() - started) / 1e6)
  }
  await catalog.flushLearning()
  const status = catalog.learningStatus()
  const { statSync } = await import('node:fs')
  const fileBytes = statSync(status.file).size
  // Searches of queries the prior knows, alternating with and without learning (same queries).
  const withPrior = []
  const without = []
  const sample = shuffled(queries, random(SEED + 2)).slice(0, 1000)
  for (const round of [0, 1]) {
    for (const q of sample) {
      for (const [target, times] of round ? [[catalog, withPrior], [plain, without]] : [[plain, without], [catalog, withPrior]]) {
        const started = process.hrtime.bigint()
        target.search(q.query, { limit: K })
        times.push(Number(process.hrtime.bigint() - started) / 1e6)
      }
    }
  }
  const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  return {
    events: status.learned,
    tools: status.tools,
    memoryBytes: status.bytes,
    fileBytes,
    recordMedianMs: Number(median(record).toFixed(4)),
    searchMedianMs: Number(median(withPrior).toFixed(3)),
    searchPlainMedianMs: Number(median(without).toFixed(3)),
  }
}

function print(results) {
  console.log(`learned ranking replay: ${results.tools} tools, ${results.queries} queries, ranking ${results.ranking}, weight ${results.weight} (${results.date})`)
  const header = ['source', 'queries', 'stream', 'nDCG@10 learned / plain', 'C@10 learned / plain', 'first 10%', 'last half', 'last half C@10', 'flooder in top 3']
  const rows = [header]
  const add = (name, n, stream, s) =>
    rows.push([name, String(n), stream, `${s.ndcg.toFixed(1)} / ${s.ndcgPlain.toFixed(1)}`, `${s.complete.toFixed(1)} / ${s.completePlain.toFixed(1)}`, signed(s.first10), signed(s.lastHalf), signed(s.lastHalfComplete), s.floodedIntoTop3 === undefined ? '' : String(s.floodedIntoTop3)])
  for (const stream of ['clean', 'noisy', 'poison']) {
    for (const [name, s] of Object.entries(results.sources)) add(name, s.queries, stream, s[stream])
    add('macro', results.queries, stream, results.macro[stream])
  }
  const widths = header.map((_, i) => Math.max(...rows.map((r) => r[i].length)))
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  '))
  const c = results.cost
  console.log(
    `cost (15k catalog, prior of ${c.events} events over ${c.tools} tools): record ${c.recordMedianMs} ms median; search ${c.searchMedianMs} ms with the prior vs ${c.searchPlainMedianMs} ms without (median of 2,000 each); prior ${(c.memoryBytes / 1048576).toFixed(2)} MiB in memory, file ${(c.fileBytes / 1048576).toFixed(2)} MiB`,
  )
}

const signed = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
