#!/usr/bin/env node
// Hybrid ranking, offline: the engine's lexical top D per query re-ranked by
//   (1 + k) / (rank + k) + w * cosine(query, tool)        (rank from 1)
// with all-MiniLM-L6-v2 vectors from crates/embed, tuned leave-one-source-out
// (LOSO). nDCG@10 as crates/core/examples/quality.rs computes it.
//
// 1. Vectors, once per tool text (minutes of CPU; reused by every trial):
//      B=target/x86_64-unknown-linux-gnu/release/examples/rerank
//      cargo build --release --target x86_64-unknown-linux-gnu -p tool-search-embed --example rerank
//      nice -n 19 $B npm/model-minilm/model bench/data/retrieval-dev $VEC --queries   # full text, 256 tokens
//      nice -n 19 $B npm/model-minilm/model bench/data/retrieval-dev $VEC --max-tokens 128
//      nice -n 19 $B npm/model-minilm/model bench/data/retrieval-dev $VEC --text plain [--max-tokens 64, 32]
// 2. node bench/experiments/hybrid-rerank.mjs --vectors $VEC [--data DIR] [--dump FILE]
//      [--texts full-256,full-128,plain-256] [--gates none,confidence,...]
//      [--final [--no-loso]] [--rule text:D:k:w:gate] [--examples N]
//    --dump: the lexical top 100 (`quality --dump 100` output); made with the shipped
//      defaults when absent.
//    default: the exploration grid (w, k, D, tool text, gates) with per-source
//      figures, the all-source best, the LOSO selection and paired bootstraps;
//    --final: JSON of the final rule (FINAL below) for bench/quality.mjs --hybrid, with the
//      LOSO estimate of the selection that chose it (--no-loso: skip that, seconds instead
//      of minutes); --rule evaluates another configuration in FINAL's place;
//    --examples N: N worked examples of FINAL (query, lexical order, cosines,
//      fused order) for a unit test of the product's fusion.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { reference } from '../quality.mjs'
import { bestByMacro, groupBySource, ndcg10, pairedBootstrap, perSource, table } from './loso.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const args = process.argv.slice(2)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback
}
const dataDir = resolve(root, option('--data', 'bench/data/retrieval-dev'))
const vectorDir = resolve(option('--vectors', '/tmp/quality-vec'))
const DIM = 384
const MAX_DEPTH = 100

// The rule picked by LOSO (see bench/QUALITY.md, "Hybrid fusion").
const ruleOption = option('--rule', null) // text:depth:k:w:gate, instead of FINAL (for comparisons)
export const FINAL = ruleOption
  ? (([text, depth, k, w, gate]) => ({ text, depth: Number(depth), k: Number(k), w: Number(w), gate }))(ruleOption.split(':').length > 5 ? [...ruleOption.split(':').slice(0, 4), ruleOption.split(':').slice(4).join(':')] : ruleOption.split(':'))
  : { text: 'plain-32', depth: 100, k: 0, w: 0.5, gate: 'score' }

// ---- data ----
const queries = readFileSync(join(dataDir, 'queries.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l))
const sets = queries.map((q) => q.set)
const groups = groupBySource(sets)
const ids = JSON.parse(readFileSync(join(vectorDir, 'tool-ids.json'), 'utf8'))

const dumpPath = option('--dump', null)
const dumpText = dumpPath
  ? readFileSync(dumpPath, 'utf8')
  : execFileSync(
      'cargo',
      ['run', '--release', '-q', '--target', 'x86_64-unknown-linux-gnu', '-p', 'tool-search-core', '--example', 'quality', '--',
        dataDir, '--dump', String(MAX_DEPTH)],
      { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 256 * 1024 * 1024 },
    )
const lexical = dumpText.trim().split('\n').map((l) => JSON.parse(l))
if (lexical.length !== queries.length) throw new Error(`dump has ${lexical.length} rows, queries.jsonl ${queries.length}`)

function readVectors(name) {
  const buf = readFileSync(join(vectorDir, name))
  return new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4)
}
const queryVectors = readVectors('queries.f32')
const texts = option('--texts', 'full-256,full-128,plain-256,plain-64,plain-32')
  .split(',')
  .filter((t) => t === FINAL.text || existsSync(join(vectorDir, `tools-${t}.f32`))).filter((t) => existsSync(join(vectorDir, `tools-${t}.f32`)))

// cosines[text][query][rank-1] for the lexical top 100 (vectors are L2-normalized).
const cosines = {}
for (const text of texts) {
  const tools = readVectors(`tools-${text}.f32`)
  if (tools.length !== ids.length * DIM) throw new Error(`tools-${text}.f32 does not match tool-ids.json`)
  cosines[text] = lexical.map((row, q) =>
    row.hits.map(([ordinal]) => {
      let dot = 0
      const a = q * DIM
      const b = ordinal * DIM
      for (let d = 0; d < DIM; d++) dot += queryVectors[a + d] * tools[b + d]
      return dot
    }),
  )
}

// ---- metric ----
const golds = lexical.map((row) => new Set(row.gold))

// ---- fusion ----
// Gates (each one principled, few):
//   none: the plain rule.
//   margin:τ: the lexical top hit keeps rank 1 when its score leads the second by at
//     least the fraction τ ((s1 - s2) / s1 ≥ τ): a clear lexical winner.
//   spread:s: w scaled by min(1, (max cos - min cos among the D candidates) / s): the
//     encoder counts less when it barely separates the candidates.
//   confidence: w scaled by 1 - (s1 - s2) / s1, the lexical top score's lead over the
//     second (continuous form of margin).
//   protect:α: candidates whose lexical score is at least α times the top score keep the
//     front places in lexical order (a set of clear lexical winners); the rest are fused.
//   score: the rank term replaced by the max-normalized lexical score s / s1 (score
//     fusion instead of rank fusion; k unused).
function fuse(q, { text, depth, k, w, gate }) {
  const hits = lexical[q].hits
  const n = Math.min(depth, hits.length)
  const cos = cosines[text][q]
  let weight = w
  let pinned = -1
  if (gate.startsWith('margin:') && n >= 2) {
    const tau = Number(gate.slice(7))
    const [s1, s2] = [hits[0][1], hits[1][1]]
    if (s1 > 0 && (s1 - s2) / s1 >= tau) pinned = 0
  } else if (gate.startsWith('spread:') && n >= 2) {
    let lo = Infinity
    let hi = -Infinity
    for (let i = 0; i < n; i++) {
      lo = Math.min(lo, cos[i])
      hi = Math.max(hi, cos[i])
    }
    weight = w * Math.min(1, (hi - lo) / Number(gate.slice(7)))
  } else if (gate === 'confidence' && n >= 2) {
    const [s1, s2] = [hits[0][1], hits[1][1]]
    if (s1 > 0) weight = w * Math.min(1, Math.max(0, 1 - (s1 - s2) / s1))
  }
  const top = hits[0]?.[1] > 0 ? hits[0][1] : 1
  const order = []
  for (let i = 0; i < n; i++) {
    const lexicalTerm = gate === 'score' ? hits[i][1] / top : (1 + k) / (i + 1 + k)
    order.push({ i, score: lexicalTerm + weight * cos[i] })
  }
  let protectedCount = pinned === 0 ? 1 : 0
  if (gate.startsWith('protect:')) {
    const alpha = Number(gate.slice(8))
    while (protectedCount < n && hits[protectedCount][1] >= alpha * top) protectedCount++
  }
  const head = order.splice(0, protectedCount)
  order.sort((a, b) => b.score - a.score || a.i - b.i)
  const ranked = head.concat(order).map((h) => hits[h.i][0])
  for (let i = n; i < hits.length; i++) ranked.push(hits[i][0])
  return ranked
}

const lexicalScores = lexical.map((row, q) => ndcg10(row.hits.map(([o]) => o), golds[q]))
const scoresOf = (config) => lexical.map((_, q) => ndcg10(fuse(q, config), golds[q]))
const label = (c) => `${c.text} D=${c.depth} k=${c.k} w=${c.w} ${c.gate}`

const fmt = (v) => v.toFixed(1)
const signed = (d) => `${d >= 0 ? '+' : ''}${d.toFixed(1)}`
const sources = [...groups.keys()]

function comparison(scores) {
  const lex = perSource(lexicalScores, groups)
  const hyb = perSource(scores, groups)
  return { lex, hyb, boot: sources.map((s) => pairedBootstrap(scores, lexicalScores, groups.get(s))) }
}

if (args.includes('--final')) {
  const finalScores = scoresOf(FINAL)
  // LOSO of the final rule's family (the exploration grid), for the report.
  // LOSO of the selection rule that picked FINAL: floor = lexical on every training source.
  const grid = args.includes('--no-loso') ? [FINAL] : explorationGrid()
  const loso = losoReport(grid.map((c) => ({ label: label(c), scores: scoresOf(c) })), perSource(lexicalScores, groups), 'lexical', false)
  const { lex, hyb, boot } = comparison(finalScores)
  const lexicalTerm = FINAL.gate === 'score' ? 'score / top score' : `(1 + ${FINAL.k}) / (rank + ${FINAL.k})`
  const out = { rule: `hybrid: ${lexicalTerm} + ${FINAL.w} * cosine over the lexical top ${FINAL.depth}, tool text ${FINAL.text}${FINAL.gate === 'score' ? '' : `, gate ${FINAL.gate}`}`, sets: {}, macro: {} }
  sources.forEach((s, i) => {
    out.sets[s] = { lexical: lex.bySource[s], hybrid: hyb.bySource[s], diff: boot[i].diff, low: boot[i].low, high: boot[i].high, loso: loso.bySource[s].score, losoChoice: loso.bySource[s].label }
    if (args.includes('--no-loso')) delete out.sets[s].losoChoice
  })
  out.macro = { lexical: lex.macro, hybrid: hyb.macro, loso: loso.macro }
  console.log(JSON.stringify(out))
} else if (args.includes('--examples')) {
  const count = Number(option('--examples', '4'))
  const catalog = new Map(
    readFileSync(join(dataDir, 'catalog.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l))
      .map((t) => [t.id, t]),
  )
  // Queries where the fused top 5 differs from the lexical top 5, from different sources.
  const shown = new Set()
  for (let q = 0; q < queries.length && shown.size < count; q++) {
    if (shown.has(queries[q].set)) continue
    const lex5 = lexical[q].hits.slice(0, 5).map(([o]) => o)
    const fused = fuse(q, { ...FINAL, depth: 5 })
    if (fused.slice(0, 5).join() === lex5.join()) continue
    shown.add(queries[q].set)
    console.log(JSON.stringify({
      query: queries[q].query.slice(0, 200),
      lexical: lex5.map((o) => ids[o]),
      lexicalScores: lexical[q].hits.slice(0, 5).map(([, score]) => Number(score.toFixed(4))),
      cosines: cosines[FINAL.text][q].slice(0, 5).map((c) => Number(c.toFixed(4))),
      fused: fused.slice(0, 5).map((o) => ids[o]),
      note: `top 5 only (D = 5), ${label(FINAL)}`,
    }))
    void catalog
  }
} else {
  explore()
}

function explorationGrid() {
  const grid = []
  for (const text of texts)
    for (const depth of [30, 50, 100])
      for (const w of [0.5, 1, 1.5, 2, 3])
        for (const gate of (option('--gates', 'none,margin:0.2,spread:0.2,confidence,protect:0.9,score')).split(','))
          for (const k of gate === 'score' ? [0] : [3, 5, 10, 20]) grid.push({ text, depth, k, w, gate })
  return grid
}

function explore() {
  const grid = explorationGrid()
  const candidates = grid.map((c) => ({ label: label(c), config: c, scores: scoresOf(c) }))
  const lex = perSource(lexicalScores, groups)
  console.log(`${queries.length} queries, ${grid.length} configurations; tool texts: ${texts.join(', ')}`)
  const rows = [['configuration', ...sources, 'macro', 'min diff']]
  const rowOf = (name, scores) => {
    const p = perSource(scores, groups)
    const minDiff = Math.min(...sources.map((s) => p.bySource[s] - lex.bySource[s]))
    return [name, ...sources.map((s) => fmt(p.bySource[s])), fmt(p.macro), signed(minDiff)]
  }
  rows.push(rowOf('lexical', lexicalScores))
  // Best by macro, and best among those never below lexical on any source.
  const ranked = candidates
    .map((c) => ({ ...c, p: perSource(c.scores, groups) }))
    .map((c) => ({ ...c, minDiff: Math.min(...sources.map((s) => c.p.bySource[s] - lex.bySource[s])) }))
    .sort((a, b) => b.p.macro - a.p.macro)
  for (const c of ranked.slice(0, 15)) rows.push(rowOf(c.label, c.scores))
  rows.push(['-- best with no source below lexical --', ...sources.map(() => ''), '', ''])
  for (const c of ranked.filter((c) => c.minDiff >= 0).slice(0, 10)) rows.push(rowOf(c.label, c.scores))
  const issue = candidates.find((c) => c.label === label({ text: 'full-256', depth: 50, k: 10, w: 2, gate: 'none' }))
  if (issue) rows.push(rowOf(`issue's rule: ${issue.label}`, issue.scores))
  console.log(table(rows))

  // Per-dimension marginals: the best macro with each value of one dimension.
  for (const dim of ['text', 'depth', 'k', 'w', 'gate']) {
    const best = new Map()
    for (const c of ranked) {
      const v = String(c.config[dim])
      if (!best.has(v)) best.set(v, c)
    }
    console.log(`best by ${dim}: ` + [...best].map(([v, c]) => `${v} ${fmt(c.p.macro)} (min diff ${signed(c.minDiff)})`).join('; '))
  }

  for (const constrained of [null, 'lexical', 'reference']) losoReport(candidates, lex, constrained)
}

// LOSO over the grid. Constrained: for each held-out source, only configurations that are
// not below a floor on any of the other six count: lexical (the issue's "hybrid >= lexical
// on every source") or OpenClaw's reference (its "no source below OpenClaw"), applied to
// the data the choice may see.
function floorOf(constrained, lex) {
  if (constrained === 'lexical') return lex.bySource
  if (constrained === 'reference') return Object.fromEntries(sources.map((s) => [s, reference[s].ndcg10]))
  return null
}
function losoReport(candidates, lex, constrained, print = true) {
  const floor = floorOf(constrained, lex)
  const pool = (heldOut) =>
    floor
      ? candidates.filter((c) => {
          const p = perSource(c.scores, groups).bySource
          return sources.every((s) => s === heldOut || p[s] >= floor[s] - 1e-9)
        })
      : candidates
  const bySource = {}
  const scores = new Array(queries.length).fill(0)
  for (const s of sources) {
    const eligible = pool(s)
    const others = new Map([...groups].filter(([name]) => name !== s))
    const choice = eligible.length ? bestByMacro(eligible, others) : null
    const chosen = choice ? eligible[choice.index] : { label: 'lexical', scores: lexicalScores }
    for (const i of groups.get(s)) scores[i] = chosen.scores[i]
    bySource[s] = { label: chosen.label, score: perSource(chosen.scores, groups).bySource[s] }
  }
  const loso = { bySource, scores, macro: sources.reduce((a, s) => a + bySource[s].score, 0) / sources.length }
  const allPool = floor ? candidates.filter((c) => sources.every((s) => perSource(c.scores, groups).bySource[s] >= floor[s] - 1e-9)) : candidates
  const all = allPool.length ? bestByMacro(allPool, groups) : { label: 'lexical', macro: lex.macro }
  if (!print) return loso
  const { boot } = comparison(loso.scores)
  const lrows = [['held out', 'chosen on the other six', 'held-out nDCG@10', 'lexical', 'diff [95% CI]']]
  sources.forEach((s, i) => {
    lrows.push([s, loso.bySource[s].label, fmt(loso.bySource[s].score), fmt(lex.bySource[s]), `${signed(boot[i].diff)} [${signed(boot[i].low)},${signed(boot[i].high)}]`])
  })
  lrows.push(['macro', '', fmt(loso.macro), fmt(lex.macro), signed(loso.macro - lex.macro)])
  console.log(`\nLOSO over the whole grid${constrained ? `, constrained to configurations not below ${constrained} on any training source` : ''} (all-source best: ${all.label}, macro ${fmt(all.macro)})`)
  console.log(table(lrows))
}
