// Retrieval quality of the product's two rankings, through the addon: the dev catalog built
// once with `ranking: 'lexical'` and once with `ranking: 'hybrid'` (vectors from the on-disk
// cache when present, else computed: about a minute of one core), every dev query searched,
// nDCG@10 per source (binary relevance, ideal DCG over min(10, |gold|), as
// crates/core/examples/quality.rs computes it) and the macro over sources.
//
//   node bench/quality-hybrid.mjs [--data DIR] [--json]
//
// The model comes from OPENCLAW_TOOL_SEARCH_MODEL_DIR or the installed package; without one
// the script says so and exits 0. Used by bench/quality.mjs for its hybrid column.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { groupBySource, ndcg10, perSource } from './experiments/loso.mjs'

const require = createRequire(import.meta.url)
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const { ToolCatalog, rankingCapability } = require(join(root, 'index.js'))
const args = process.argv.slice(2)
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback)
const dataDir = resolve(option('--data', join(root, 'bench', 'data', 'retrieval-dev')))

/** Per-source mean nDCG@10 (percent) of `rankings` and the macro over sources. */
function score(queries, rankings) {
  const { bySource, macro } = perSource(
    rankings.map((ranked, i) => ndcg10(ranked, new Set(queries[i].gold))),
    groupBySource(queries.map((q) => q.set)),
  )
  return { perSet: bySource, macro }
}

async function main() {
  const capability = rankingCapability()
  if (!capability.hybrid) {
    console.log(`hybrid quality skipped: ${capability.reason}`)
    return
  }
  const tools = readFileSync(join(dataDir, 'catalog.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
  const queries = readFileSync(join(dataDir, 'queries.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
  const lexical = new ToolCatalog(tools, { ranking: 'lexical' })
  const hybrid = new ToolCatalog(tools, { ranking: 'hybrid' })
  const t0 = performance.now()
  const status = await hybrid.whenRankingReady()
  if (status.state !== 'ready') throw new Error(`tool vectors not ready: ${status.error}`)
  const vectorsS = (performance.now() - t0) / 1000
  const run = (catalog) => queries.map((q) => catalog.search(q.query, { limit: 10 }).map((h) => h.id))
  const lexicalScore = score(queries, run(lexical))
  const t1 = performance.now()
  const hybridScore = score(queries, run(hybrid))
  const searchS = (performance.now() - t1) / 1000
  const report = {
    tools: tools.length,
    queries: queries.length,
    vectors: { seconds: vectorsS, reused: status.reused, embedded: status.embedded },
    hybridSearchSeconds: searchS,
    lexical: lexicalScore,
    hybrid: hybridScore,
  }
  if (args.includes('--json')) {
    console.log(JSON.stringify(report))
    return
  }
  console.log(`set               lexical  hybrid  delta`)
  for (const set of Object.keys(lexicalScore.perSet)) {
    const a = lexicalScore.perSet[set]
    const b = hybridScore.perSet[set]
    console.log(`${set.padEnd(16)}  ${a.toFixed(1).padStart(7)}  ${b.toFixed(1).padStart(6)}  ${(b - a >= 0 ? '+' : '') + (b - a).toFixed(1)}`)
  }
  const d = hybridScore.macro - lexicalScore.macro
  console.log(`${'macro'.padEnd(16)}  ${lexicalScore.macro.toFixed(1).padStart(7)}  ${hybridScore.macro.toFixed(1).padStart(6)}  ${(d >= 0 ? '+' : '') + d.toFixed(1)}`)
  console.log(
    `\n${tools.length} tools, ${queries.length} queries; vectors ready in ${vectorsS.toFixed(1)} s (${status.reused} reused, ${status.embedded} embedded); hybrid searches ${searchS.toFixed(1)} s`,
  )
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main()
