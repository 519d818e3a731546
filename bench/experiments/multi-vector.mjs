#!/usr/bin/env node
// Multi-vector queries and dense candidates, offline: does embedding each
// clause of a request (the lexical planner's split) and/or adding the
// encoder's own nearest tools to the lexical pool help, leave-one-source-out?
//
//   B=target/x86_64-unknown-linux-gnu/release/examples
//   $B/clause_vectors npm/model-minilm/model bench/data/retrieval-dev $VEC --product [--whole-pass]
//   node bench/experiments/multi-vector.mjs --vectors $VEC [--dump FILE] [--split joint|separate|connectors|sentences]
//     [--text plain-32] [--signals whole,clauses,best,mix:A,...] [--lex max,minmax] [--cos raw,minmax,z]
//     [--zweights 0.05,...] [--dense 0,20] [--cover none,champions,rr] [--cw 0.15,...]
//     [--prf none,K:BETA,...] [--hub none,K:BETA,...] [--prereq 0,TOP[:PER],...] [--prereq-mentions]
//     [--floor noise|strict] [--final] [--pool-only] [--prereq-skip request|entity]
//     [--siblings K:GAMMA:MAX[:continuous]] [--own-source-only]
// --split joint (the default) reads the product's query vectors (clause_vectors --product:
// queries-joint.f32 and clauses-joint.*); separate, the rule before joint pooling (--whole-pass);
// connectors / sentences, clause_vectors' older study files (with queries.f32 from rerank).
// $VEC also holds tools-<text>.f32 and tool-ids.json (crates/embed rerank example);
// FILE is `quality --dump 100` on the shipped lexical defaults (made when absent). Defaults are
// the grid the shipped rule was chosen from (240 settings). --final prints JSON of the shipped
// rule (`mix:0.25 max/z w=0.2 dense=0 prereq=10:2`, or --final-rule LABEL) with its LOSO estimate, for
// bench/quality.mjs --hybrid. Signals are cached in /tmp/mv (a full scan per query: minutes).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

import { reference } from '../quality.mjs'
import { groupBySource, leaveOneSourceOutWithFloor, ndcg10, pairedBootstrap, perSource, table } from './loso.mjs'
import { loadPrerequisites } from './prerequisites.mjs'

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback
}
const root = resolve(new URL('../..', import.meta.url).pathname)
const dataDir = resolve(root, option('--data', 'bench/data/retrieval-dev'))
const vectorDir = resolve(option('--vectors', '/tmp/quality-vec'))
const split = option('--split', 'joint')
const DIM = 384
const DENSE = 50

const queries = readFileSync(join(dataDir, 'queries.jsonl'), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l))
const groups = groupBySource(queries.map((q) => q.set))
const sources = [...groups.keys()]
const dumpText = option('--dump', null)
  ? readFileSync(option('--dump', null), 'utf8')
  : execFileSync('cargo', ['run', '--release', '-q', '--target', 'x86_64-unknown-linux-gnu', '-p', 'tool-search-core', '--example', 'quality', '--', dataDir, '--dump', '100'],
      { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 256 * 1024 * 1024 })
const lexical = dumpText.trim().split('\n').map((l) => JSON.parse(l))
const golds = lexical.map((row) => new Set(row.gold))
const vec = (name) => {
  const b = readFileSync(join(vectorDir, name))
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4)
}
// The whole queries' vectors of the same rule as the clauses' when written beside them.
const Q = vec(existsSync(join(vectorDir, `queries-${split}.f32`)) ? `queries-${split}.f32` : 'queries.f32')
const toolText = option('--text', 'plain-32')
const T = vec(`tools-${toolText}.f32`)
const nTools = T.length / DIM
const suffix = split === 'sentences' ? '' : `-${split}`
const C = vec(`clauses${suffix}.f32`)
const clauseIndex = JSON.parse(readFileSync(join(vectorDir, `clauses${suffix}.json`), 'utf8'))

// Per query: cosines (whole query; best clause) for the lexical top 100 and
// for the DENSE nearest tools by either signal. Cached: a full scan per query.
const cacheDir = '/tmp/mv'
// Caches are per vector folder (its vectors differ).
const cacheTag = vectorDir === '/tmp/quality-vec' ? '' : `-${vectorDir.replace(/[^A-Za-z0-9]+/g, '_')}`
if (!existsSync(cacheDir)) mkdirSync(cacheDir)
const poolOnly = args.includes('--pool-only')
const cachePath = `/tmp/mv/signals${suffix}${cacheTag}-${toolText}${poolOnly ? '-pool' : ''}.json`
let signals
if (existsSync(cachePath)) signals = JSON.parse(readFileSync(cachePath, 'utf8'))
else {
  signals = []
  const whole = new Float32Array(nTools)
  const best = new Float32Array(nTools)
  for (let q = 0; q < queries.length; q++) {
    const rows = [[Q, q]]
    const [first, count] = clauseIndex[q]
    for (let c = 0; c < count; c++) rows.push([C, first + c])
    best.fill(-2)
    // --pool-only: the lexical top 100 only (no dense candidates; seconds instead of minutes).
    const scan = poolOnly ? lexical[q].hits.map(([o]) => o) : [...Array(nTools).keys()]
    rows.forEach(([M, r], k) => {
      const a = r * DIM
      for (const t of scan) {
        let dot = 0
        const b = t * DIM
        for (let d = 0; d < DIM; d++) dot += M[a + d] * T[b + d]
        if (k === 0) whole[t] = dot
        else if (dot > best[t]) best[t] = dot
      }
    })
    if (count === 0) best.set(whole)
    const top = (arr) => (poolOnly ? [] : [...arr.keys()].sort((x, y) => arr[y] - arr[x]).slice(0, DENSE))
    const pool = new Set([...lexical[q].hits.map(([o]) => o), ...top(whole), ...top(best)])
    const entry = {}
    for (const o of pool) entry[o] = [Number(whole[o].toFixed(5)), Number(best[o].toFixed(5))]
    signals.push({ entry, denseWhole: top(whole), denseBest: top(best) })
    if (q % 500 === 0) process.stderr.write(`${q}/${queries.length}\n`)
  }
  writeFileSync(cachePath, JSON.stringify(signals))
}

// Per clause, the cosines of each pooled tool (multi-clause queries only): the
// coverage variants below rank each clause's own champions.
const perClausePath = `/tmp/mv/per-clause${suffix}${cacheTag}-${toolText}${poolOnly ? '-pool' : ''}.json`
let perClause
if (existsSync(perClausePath)) perClause = JSON.parse(readFileSync(perClausePath, 'utf8'))
else {
  perClause = signals.map((sig, q) => {
    const [first, count] = clauseIndex[q]
    if (count === 0) return null
    const out = {}
    for (const o of Object.keys(sig.entry)) {
      const b = Number(o) * DIM
      out[o] = []
      for (let c = 0; c < count; c++) {
        let dot = 0
        const a = (first + c) * DIM
        for (let d = 0; d < DIM; d++) dot += C[a + d] * T[b + d]
        out[o].push(dot)
      }
    }
    return out
  })
  writeFileSync(perClausePath, JSON.stringify(perClause))
}

// signal: whole | best (max over clauses, whole included) | clauses (max over clauses only) | mix:a (a·whole + (1−a)·best)
// approx:A: as mix:A, but the whole query's vector is the normalized sum of its clauses'
// vectors (no forward pass over the whole query).
const clauseSumNorm = clauseIndex.map(([first, count]) => {
  if (count === 0) return 1
  const sum = new Float64Array(DIM)
  for (let c = 0; c < count; c++) for (let d = 0; d < DIM; d++) sum[d] += C[(first + c) * DIM + d]
  return Math.sqrt(sum.reduce((a, x) => a + x * x, 0)) || 1
})
function cosOf(q, o, signal) {
  if (signal.startsWith('approx:') && perClause[q]) {
    const cs = perClause[q][o]
    const w = cs.reduce((a, x) => a + x, 0) / clauseSumNorm[q]
    const b = Math.max(w, ...cs)
    const a = Number(signal.slice(7))
    return a * w + (1 - a) * b
  }
  if (signal.startsWith('approx:')) signal = `mix:${signal.slice(7)}`
  const [w, b0] = signals[q].entry[o]
  const b = Math.max(w, b0)
  if (signal === 'whole') return w
  if (signal === 'best') return b
  if (signal === 'clauses') return b0
  const a = Number(signal.slice(4))
  return a * w + (1 - a) * b
}
// lex: max (s / s1) | minmax ((s − s_D) / (s1 − s_D)); cos: raw | minmax | z (within the pool).
// Dense candidates (not in the lexical top D) get the lexical floor (s_D).
// --hub K:BETA: a tool's mean cosine to its K nearest tools (hub-K.f32 in --hub-dir, from
// hubness.mjs) times BETA is taken off its similarity: a tool near many others matches every
// request a little.
const hubDir = option('--hub-dir', '/tmp/hub')
const hubs = new Map()
const hubOf = (k) => {
  if (!hubs.has(k)) { const b = readFileSync(join(hubDir, `hub-${k}.f32`)); hubs.set(k, new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4)) }
  return hubs.get(k)
}
// --prereq TOP[:PER]: each of the fused top TOP hits brings the same-server tools (at most PER
// per identifier, default 1) that find an identifier it requires (prerequisites.mjs) to just
// after it.
// --prereq-skip entity: skip only the needs whose entity the request gives an id for, instead of
// every need of a request that states an id (prerequisites.mjs).
const toolIds = JSON.parse(readFileSync(join(vectorDir, 'tool-ids.json'), 'utf8'))
const promote = loadPrerequisites(dataDir, toolIds, {
  mentions: args.includes('--prereq-mentions'),
  skip: option('--prereq-skip', 'request'),
})
// --siblings K:GAMMA:MAX[:continuous]: a tool whose server (its id without the name) has
// another tool among the fused top K gains GAMMA (continuous: GAMMA times that sibling's score as
// a share of the pool's range); servers of more than MAX tools are left alone. Not adopted: see
// bench/QUALITY.md, "Same-server siblings".
// --own-source-only: each query's candidates are only the tools of the servers its own source's
// gold uses (as if its benchmark were the whole catalog), the control that tells a lever's use of
// the dev set's composition (every query's gold lies in one server of its own source) from a gain
// a single catalog would see.
const serverOf = toolIds.map((id) => id.slice(0, id.lastIndexOf(':')))
const serverSize = new Map()
for (const sv of serverOf) serverSize.set(sv, (serverSize.get(sv) ?? 0) + 1)
const sourceServers = new Map()
for (const q of queries) {
  if (!sourceServers.has(q.set)) sourceServers.set(q.set, new Set())
  for (const g of q.gold) sourceServers.get(q.set).add(g.slice(0, g.lastIndexOf(':')))
}
const ownSourceOnly = args.includes('--own-source-only')
const candidates = (q) => (ownSourceOnly ? lexical[q].hits.filter(([o]) => sourceServers.get(queries[q].set).has(serverOf[o])) : lexical[q].hits)
const siblings = option('--siblings', null)
function addSiblingBonus(pool) {
  const [K, gamma, MAX] = siblings.split(':').map(Number)
  const continuous = siblings.endsWith(':continuous')
  const top = pool.map((_, i) => i).sort((a, b) => pool[b].score - pool[a].score || pool[a].i - pool[b].i).slice(0, K).map((i) => pool[i])
  const hi = top[0].score
  const lo = Math.min(...pool.map((c) => c.score))
  const bonus = pool.map((c) => {
    const sv = serverOf[c.o]
    if (serverSize.get(sv) > MAX) return 0
    const others = top.filter((t) => t !== c && serverOf[t.o] === sv)
    if (!others.length) return 0
    return continuous ? gamma * Math.max(0, (others[0].score - lo) / (hi - lo || 1)) : gamma
  })
  pool.forEach((c, i) => { c.score += bonus[i] })
}
function fuse(q, c) {
  const ranked = fuseOnly(q, c)
  if (!c.prereq) return ranked
  const [top, perNeed = 1] = String(c.prereq).split(':').map(Number)
  return promote(ranked, { top, perNeed, query: queries[q].query })
}
function fuseOnly(q, { signal, w, dense, lexNorm = 'max', cosNorm = 'raw', depth = 100, cover = null, cw = 0.15, prf = null, hub = null }) {
  const hits = candidates(q).slice(0, depth)
  const seen = new Set(hits.map(([o]) => o))
  const pool = hits.map(([o, s], i) => ({ o, i, s }))
  const floor = hits.length ? hits[hits.length - 1][1] : 0
  if (dense > 0) {
    const list = signal === 'whole' ? signals[q].denseWhole : signals[q].denseBest
    for (const o of list.slice(0, dense)) if (!seen.has(o)) { seen.add(o); pool.push({ o, i: 1e6 + pool.length, s: floor }) }
  }
  const top = hits[0]?.[1] > 0 ? hits[0][1] : 1
  let cos = pool.map((c) => cosOf(q, c.o, signal))
  if (hub) {
    const [k, beta] = hub.split(':').map(Number)
    const h = hubOf(k)
    cos = cos.map((x, i) => x - beta * h[pool[i].o])
  }
  const score = (cos) => {
    let cmin = Infinity, cmax = -Infinity, mean = 0
    for (const c of cos) { cmin = Math.min(cmin, c); cmax = Math.max(cmax, c); mean += c / cos.length }
    const sd = Math.sqrt(cos.reduce((a, c) => a + (c - mean) ** 2, 0) / Math.max(1, cos.length)) || 1
    pool.forEach((c, k) => {
      const lexTerm = lexNorm === 'max' ? c.s / top : top > floor ? (c.s - floor) / (top - floor) : 1
      const cosTerm = cosNorm === 'raw' ? cos[k] : cosNorm === 'minmax' ? (cmax > cmin ? (cos[k] - cmin) / (cmax - cmin) : 0) : (cos[k] - mean) / sd
      c.score = lexTerm + w * cosTerm
    })
  }
  score(cos)
  if (prf) {
    // Pseudo-relevance feedback: each tool's mean cosine with the first pass's top k tools
    // (itself included) is added to its query cosine, and the pool is scored again.
    const [k, beta] = prf.split(':').map(Number)
    const topK = pool.map((_, i) => i).sort((a, b) => pool[b].score - pool[a].score || pool[a].i - pool[b].i).slice(0, k).map((i) => pool[i].o)
    score(pool.map((c, i) => {
      let sum = 0
      const a = c.o * DIM
      for (const t of topK) { const b = t * DIM; let dot = 0; for (let d = 0; d < DIM; d++) dot += T[a + d] * T[b + d]; sum += dot }
      return cos[i] + beta * (sum / topK.length)
    }))
  }
  if (siblings && pool.length) addSiblingBonus(pool)
  pool.sort((a, b) => b.score - a.score || a.i - b.i)
  const fused = pool.map((c) => c.o)
  if (!cover || !perClause[q]) return fused
  // Each clause's own ranking: the lexical term plus its standardized cosine.
  const clauseLists = perClause[q][pool[0].o].map((_, c) => {
    const cs = pool.map((p) => perClause[q][p.o]?.[c] ?? 0)
    const m = cs.reduce((a, x) => a + x, 0) / cs.length
    const d = Math.sqrt(cs.reduce((a, x) => a + (x - m) ** 2, 0) / cs.length) || 1
    return pool.map((p, k) => ({ o: p.o, i: p.i, v: (p.s / top) + cw * ((cs[k] - m) / d) })).sort((a, b) => b.v - a.v || a.i - b.i).map((x) => x.o)
  })
  const out = []
  const seen2 = new Set()
  const add = (o) => { if (!seen2.has(o)) { seen2.add(o); out.push(o) } }
  if (cover === 'champions') {
    add(fused[0])
    const rankOf = new Map(fused.map((o, r) => [o, r]))
    clauseLists.map((l) => l[0]).sort((a, b) => rankOf.get(a) - rankOf.get(b)).forEach(add)
    fused.forEach(add)
  } else {
    // round robin: the fused list, then each clause's list, one item at a time
    const lists = [fused, ...clauseLists]
    for (let r = 0; out.length < fused.length && r < fused.length; r++) for (const l of lists) if (r < l.length) add(l[r])
  }
  return out
}
// The product's lexical ranking: the index's, with the prerequisite tools placed (depth 10, 2 per
// identifier, as crates/core/src/search/prerequisites.rs).
const lexScores = lexical.map((row, q) => ndcg10(promote(candidates(q).map(([o]) => o), { top: 10, perNeed: 2, query: queries[q].query }), golds[q]))
const lex = perSource(lexScores, groups)
const grid = []
const signalsList = option('--signals', 'whole,clauses,best,mix:0.25').split(',')
for (const signal of signalsList)
  for (const lexNorm of option('--lex', 'max,minmax').split(','))
    for (const cosNorm of option('--cos', 'raw,minmax,z').split(','))
      for (const w of cosNorm === 'z' ? option('--zweights', '0.05,0.1,0.15,0.2,0.3').split(',').map(Number) : cosNorm === 'minmax' ? [0.2, 0.3, 0.5, 0.75, 1] : [0.3, 0.5, 0.75, 1, 1.5])
        for (const dense of option('--dense', '0,20').split(',').map(Number))
          for (const cover of option('--cover', 'none').split(','))
            for (const cw of cover === 'none' ? [0] : option('--cw', '0.15').split(',').map(Number))
              for (const prf of option('--prf', 'none').split(','))
                for (const hub of option('--hub', 'none').split(','))
                  for (const prereq of option('--prereq', '0,10:2').split(','))
                    grid.push({ signal, w, dense, lexNorm, cosNorm, ...(cover === 'none' ? {} : { cover, cw }), ...(prf === 'none' ? {} : { prf }), ...(hub === 'none' ? {} : { hub }), ...(prereq !== '0' ? { prereq } : {}) })
const label = (c) => `${c.signal} ${c.lexNorm}/${c.cosNorm} w=${c.w} dense=${c.dense}${c.cover ? ` ${c.cover} cw=${c.cw}` : ''}${c.prf ? ` prf=${c.prf}` : ''}${c.hub ? ` hub=${c.hub}` : ''}${c.prereq ? ` prereq=${c.prereq}` : ''}`
const cands = grid.map((c) => ({ label: label(c), c, scores: lexical.map((_, q) => ndcg10(fuse(q, c), golds[q])) }))
  .map((x) => ({ ...x, p: perSource(x.scores, groups) }))
  .map((x) => ({ ...x, minDiff: Math.min(...sources.map((s) => x.p.bySource[s] - lex.bySource[s])) }))
const fmt = (v) => v.toFixed(1)
const rowOf = (name, p) => [name, ...sources.map((s) => fmt(p.bySource[s])), fmt(p.macro)]
const rows = [['config', ...sources, 'macro', 'min diff']]
rows.push([...rowOf('lexical', lex), ''])
// The rule shipped before this study (one vector per query, raw cosine at 0.5).
const shipped = (() => {
  const c = { signal: 'whole', w: 0.5, dense: 0, lexNorm: 'max', cosNorm: 'raw' }
  const scores = lexical.map((_, q) => ndcg10(fuse(q, c), golds[q]))
  const p = perSource(scores, groups)
  return { label: label(c), scores, p, minDiff: Math.min(...sources.map((s) => p.bySource[s] - lex.bySource[s])) }
})()
rows.push([...rowOf('previous: ' + shipped.label, shipped.p), fmt(shipped.minDiff)])
for (const x of [...cands].sort((a, b) => b.p.macro - a.p.macro).slice(0, 20)) rows.push([...rowOf(x.label, x.p), fmt(x.minDiff)])
rows.push(['-- no source below lexical --'])
for (const x of cands.filter((x) => x.minDiff >= 0).sort((a, b) => b.p.macro - a.p.macro).slice(0, 10)) rows.push([...rowOf(x.label, x.p), fmt(x.minDiff)])
const asJson = args.includes('--final')
if (!asJson) {
  console.log(`split ${split}; ${grid.length} configurations`)
  console.log(table(rows))
}

// LOSO with the lexical floor on the training sources: strict (not below lexical) or
// noise (not below lexical beyond noise: the paired bootstrap's upper end >= 0).
const loso = leaveOneSourceOutWithFloor(cands, lexScores, groups, { floor: option('--floor', 'noise') })
const bySource = Object.fromEntries(sources.map((s) => [s, { ...loso.bySource[s], label: loso.bySource[s].label === 'baseline' ? 'lexical' : loso.bySource[s].label }]))
const losoScores = loso.scores
const lrows = [['held out', 'chosen on the other six', 'held-out', 'previous', 'lexical', 'OpenClaw', 'diff vs previous [95% CI]']]
for (const s of sources) {
  const b = pairedBootstrap(losoScores, shipped.scores, groups.get(s))
  lrows.push([s, bySource[s].label, fmt(bySource[s].score), fmt(shipped.p.bySource[s]), fmt(lex.bySource[s]), fmt(reference[s].ndcg10), `${b.diff >= 0 ? '+' : ''}${b.diff.toFixed(1)} [${b.low.toFixed(1)}, ${b.high.toFixed(1)}]`])
}
const m = sources.reduce((a, s) => a + bySource[s].score, 0) / sources.length
lrows.push(['macro', '', fmt(m), fmt(shipped.p.macro), fmt(lex.macro), '', ''])
if (!asJson) console.log(table(lrows))

// The rule chosen on all seven sources (the product's), against lexical per source.
const finalLabel = option('--final-rule', 'mix:0.25 max/z w=0.2 dense=0 prereq=10:2')
const chosen = cands.find((x) => x.label === finalLabel)
if (!chosen && (asJson || option('--scores', null))) {
  console.error(`the rule "${finalLabel}" is not in the grid (see --prereq, --zweights, ...)`)
  process.exit(1)
}
if (chosen && option('--scores', null)) writeFileSync(option('--scores', null), JSON.stringify(chosen.scores))
if (chosen && asJson) {
  // For bench/quality.mjs --hybrid: the shipped rule per source with the LOSO estimate.
  const out = { rule: `hybrid (multi-vector): ${finalLabel}, query vectors ${split === 'joint' ? "joint (the product's: clauses, whole pooled over them)" : split}`, sets: {}, macro: {} }
  for (const s of sources) {
    const b = pairedBootstrap(chosen.scores, lexScores, groups.get(s))
    out.sets[s] = { lexical: lex.bySource[s], hybrid: chosen.p.bySource[s], diff: b.diff, low: b.low, high: b.high, loso: bySource[s].score, losoChoice: bySource[s].label }
  }
  out.macro = { lexical: lex.macro, hybrid: chosen.p.macro, loso: m }
  console.log(JSON.stringify(out))
} else if (chosen) {
  const frows = [['source', 'lexical', finalLabel, 'diff [95% CI]', 'OpenClaw']]
  for (const s of sources) {
    const b = pairedBootstrap(chosen.scores, lexScores, groups.get(s))
    frows.push([s, fmt(lex.bySource[s]), fmt(chosen.p.bySource[s]), `${b.diff >= 0 ? '+' : ''}${b.diff.toFixed(1)} [${b.low.toFixed(1)}, ${b.high.toFixed(1)}]`, fmt(reference[s].ndcg10)])
  }
  frows.push(['macro', fmt(lex.macro), fmt(chosen.p.macro), '', ''])
  console.log(table(frows))
}
