#!/usr/bin/env node
// Offline check of hybrid ranking with the Rust encoder (crates/embed): the engine's
// lexical top 50 per query, re-ranked by (1 + k) / (rank + k) + w * cosine(query, tool)
// (issue 14: k = 10, w = 2), nDCG@10 per source as crates/core/examples/quality.rs
// computes it (binary relevance, ideal DCG over min(10, |gold|)).
//
//   node bench/experiments/hybrid-rerank.mjs --data DIR [--addon PATH] [--model DIR]
//        [--max-tokens 256,64] [--k 10] [--w 1,2,3]
//
//   --addon  the built package's index.js (default: this checkout's index.js)
//   --model  the model folder (default npm/model-minilm/model, from scripts/model-package.mjs)
// Builds and runs `cargo run --release -p tool-search-embed --example rerank` once per
// token limit (it embeds every candidate tool and every query: minutes of CPU).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const args = process.argv.slice(2)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback
}
const dataDir = resolve(option('--data', join(root, 'bench/data/retrieval-dev')))
const addon = resolve(option('--addon', join(root, 'index.js')))
const modelDir = resolve(option('--model', join(root, 'npm/model-minilm/model')))
const limits = option('--max-tokens', '256,64').split(',').map(Number)
const k = Number(option('--k', '10'))
const weights = option('--w', '1,2,3').split(',').map(Number)
const DEPTH = 50

const { ToolCatalog } = createRequire(import.meta.url)(addon)
const catalogText = readFileSync(join(dataDir, 'catalog.jsonl'), 'utf8')
const queries = readFileSync(join(dataDir, 'queries.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l))
const catalog = ToolCatalog.fromJson(catalogText, { maxSearchLimit: DEPTH })
const candidates = queries.map((q) => catalog.search(q.query, { limit: DEPTH }).map((h) => h.id))

function ndcg10(ranked, gold) {
  const relevant = new Set(gold)
  let dcg = 0
  ranked.slice(0, 10).forEach((id, i) => {
    if (relevant.has(id)) dcg += 1 / Math.log2(i + 2)
  })
  let ideal = 0
  for (let i = 0; i < Math.min(10, gold.length); i++) ideal += 1 / Math.log2(i + 2)
  return ideal > 0 ? dcg / ideal : 0
}

// Per-set mean nDCG@10 (percent) and the macro over sets.
function score(rankings) {
  const sets = new Map()
  queries.forEach((q, i) => {
    const s = sets.get(q.set) ?? { sum: 0, n: 0 }
    s.sum += ndcg10(rankings[i], q.gold)
    s.n += 1
    sets.set(q.set, s)
  })
  const perSet = Object.fromEntries([...sets].sort().map(([name, s]) => [name, (100 * s.sum) / s.n]))
  const values = Object.values(perSet)
  return { perSet, macro: values.reduce((a, b) => a + b, 0) / values.length }
}

const fuse = (ids, cosines, w) =>
  ids
    .map((id, rank) => ({ id, score: (1 + k) / (rank + 1 + k) + w * cosines[rank] }))
    .sort((a, b) => b.score - a.score)
    .map((h) => h.id)

const columns = [['lexical', score(candidates)]]
const work = mkdtempSync(join(tmpdir(), 'ots-hybrid-'))
try {
  const request = join(work, 'candidates.json')
  writeFileSync(request, JSON.stringify({ queries: queries.map((q, i) => ({ query: q.query, candidates: candidates[i] })) }))
  for (const limit of limits) {
    const stdout = execFileSync(
      'cargo',
      ['run', '--release', '-q', '--target', 'x86_64-unknown-linux-gnu', '-p', 'tool-search-embed', '--example', 'rerank', '--',
        modelDir, join(dataDir, 'catalog.jsonl'), request, '--max-tokens', String(limit)],
      { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 256 * 1024 * 1024 },
    )
    const cosines = stdout.trim().split('\n').map((l) => JSON.parse(l))
    for (const w of weights) {
      columns.push([`hybrid w=${w} t=${limit}`, score(candidates.map((ids, i) => fuse(ids, cosines[i], w)))])
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}

const sets = Object.keys(columns[0][1].perSet)
const rows = [['set', ...columns.map(([name]) => name)]]
for (const set of sets) rows.push([set, ...columns.map(([, s]) => s.perSet[set].toFixed(1))])
rows.push(['macro', ...columns.map(([, s]) => s.macro.toFixed(1))])
const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)))
for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c])).join('  '))
console.log(`\n${queries.length} queries, lexical top ${DEPTH} from ${addon}; fusion (1 + ${k}) / (rank + ${k}) + w * cosine, rank from 1`)
