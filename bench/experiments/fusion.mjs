#!/usr/bin/env node
// Learned fusion and multi-need assembly, offline, leave-one-source-out (issue 26).
//
//   B=target/x86_64-unknown-linux-gnu/release/examples
//   $B/fusion_dump npm/model-minilm/model bench/data/retrieval-dev $DUMP
//   node bench/experiments/fusion.mjs --dump $DUMP [--features NAME,...] [--trainer ascent|newton]
//     [--lambda L,...] [--pool lexical|dense|needs|all] [--weighting source|query] [--own-source-only]
//     [--assemble none|GATE[:MAX]] [--scores FILE] [--group SOURCE,SOURCE] [--fixed] [--json]
//
// Reads the raw signals fusion_dump writes: per query, the lexical top 100 and the extra
// candidates, with their lexical score, match strength, whole-query and per-clause cosines and
// per-clause lexical scores. Computes per-candidate features (FEATURES below) and trains a
// linear scorer from the shipped hand-set rule (lexical 1, standardized similarity 0.2):
// - `ascent` (the default): coordinate ascent on nDCG@10 itself (trainAscent);
// - `newton`: a listwise softmax loss (gold uniform over the relevant tools in the pool) with L2
//   towards the shipped rule (--lambda), by Newton's method.
// Both are deterministic. `--fixed` skips training: it scores the shipped rule, e.g. on the
// cosines query_adapter.py rewrites.
// Leave-one-source-out: trained on the other sources, each weighted equally as the macro is;
// metatool and metatool-multi (one catalog) are held out together. Scored on the held-out source
// with the prerequisite tools placed after the fused order, as the product does.
// Results and decisions: bench/QUALITY.md, "Learned ranking".
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

import { reference } from '../quality.mjs'
import { groupBySource, ndcg10, pairedBootstrap, perSource, table } from './loso.mjs'
import { loadPrerequisites } from './prerequisites.mjs'

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback
}
const root = resolve(new URL('../..', import.meta.url).pathname)
const dataDir = resolve(root, option('--data', 'bench/data/retrieval-dev'))
const dumpDir = resolve(option('--dump', '/tmp/fusion-dump'))

// ---- data ------------------------------------------------------------------------------
export function loadDump(dir) {
  const rows = readFileSync(join(dir, 'signals.jsonl'), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l))
  const toolIds = JSON.parse(readFileSync(join(dir, 'tool-ids.json'), 'utf8'))
  return { rows, toolIds }
}

// ---- features --------------------------------------------------------------------------
// A candidate: {o, rank (lexical, -1 outside the top 1,000), s (lexical score), strength, weak,
// whole, clauses: [cos], clauseLex: [score]}; `lexical`: it is one of the lexical top D.
const WHOLE_SHARE = 0.25
const zOf = (values) => {
  const n = values.length || 1
  const mean = values.reduce((a, x) => a + x, 0) / n
  const sd = Math.sqrt(values.reduce((a, x) => a + (x - mean) ** 2, 0) / n)
  return values.map((x) => (sd > 1e-6 ? (x - mean) / sd : 0))
}
const rankInv = (r) => 1 / Math.log2(2 + r)
function ranksBy(values) {
  const order = values.map((_, i) => i).sort((a, b) => values[b] - values[a] || a - b)
  const rank = new Array(values.length)
  order.forEach((i, r) => { rank[i] = r })
  return rank
}

// Every feature the study knows, by name; --features picks the model's.
export const FEATURES = {
  lex: (f) => f.lex,
  lexRank: (f) => f.lexRank,
  zMix: (f) => f.zMix,
  zWhole: (f) => f.zWhole,
  zBest: (f) => f.zBest,
  simRank: (f) => f.simRank,
  gap: (f) => f.gap,
  strength: (f) => f.strength,
  weak: (f) => f.weak,
  lexLong: (f) => f.lex * f.long,
  zMixLong: (f) => f.zMix * f.long,
  zBestMulti: (f) => f.zBest * f.multi,
  lexMulti: (f) => f.lex * f.multi,
  champion: (f) => f.champion,
  needRank: (f) => f.needRank,
  needLex: (f) => f.needLex,
  needZ: (f) => f.needZ,
  outside: (f) => f.outside,
  // log of the size of the candidate's server (source and owner), over 10.
  ownerSize: (f) => f.ownerSize,
  // Query-level gates on the similarity's weight: the lexical ranking's confidence (second score
  // over the first), the encoder's (best raw similarity; best standardized similarity / 5), and
  // the lexical top hit's match strength.
  zMixConf: (f) => f.zMix * f.conf,
  zMixSimTop: (f) => f.zMix * f.simTop,
  zMixZTop: (f) => f.zMix * f.zTop,
  zMixStrTop: (f) => f.zMix * f.strTop,
}
export const SHIPPED = { lex: 1, zMix: 0.2 }

/** Per query: the candidate list and a feature record per candidate. */
export function candidateFeatures(row, { pool = 'lexical', filter = null, serverSize = null } = {}) {
  const nClauses = row.clauses
  let cands = row.pool.map(([o, rank, s, strength, weak, whole, clauses, clauseLex]) => ({ o, rank, s, strength, weak, whole, clauses, clauseLex }))
  const top = new Set(row.lexTop)
  cands = cands.filter((c) => pool === 'all' || top.has(c.o) || (pool === 'dense' && c.clauseLex.every((x) => x === 0)) || (pool === 'needs' && c.clauseLex.some((x) => x > 0)))
  if (filter) cands = cands.filter((c) => filter(c.o))
  // Exact id/name matches stay first, outside the fusion (as in the product).
  const exact = new Set(row.lexTop.slice(0, row.exact))
  cands = cands.filter((c) => !exact.has(c.o))
  const lexPart = cands.filter((c) => top.has(c.o))
  const s1 = Math.max(0, ...lexPart.map((c) => c.s))
  const mix = cands.map((c) => {
    const best = Math.max(c.whole, ...c.clauses)
    return WHOLE_SHARE * c.whole + (1 - WHOLE_SHARE) * best
  })
  const best = cands.map((c) => Math.max(c.whole, ...c.clauses))
  // Standardized over the lexical part (the shipped rule's pool) so extra candidates do not
  // move the lexical candidates' values.
  const zOver = (values) => {
    const ref = values.filter((_, i) => top.has(cands[i].o))
    const n = ref.length || 1
    const mean = ref.reduce((a, x) => a + x, 0) / n
    const sd = Math.sqrt(ref.reduce((a, x) => a + (x - mean) ** 2, 0) / n)
    return values.map((x) => (sd > 1e-6 ? (x - mean) / sd : 0))
  }
  const zMix = zOver(mix)
  const zWhole = zOver(cands.map((c) => c.whole))
  const zBest = zOver(best)
  const simRank = ranksBy(mix)
  const maxMix = Math.max(...mix)
  const long = Math.min(1, row.words / 100)
  const lexSorted = lexPart.map((c) => c.s).sort((a, b) => b - a)
  const conf = lexSorted.length > 1 && lexSorted[0] > 0 ? lexSorted[1] / lexSorted[0] : 1
  const simTop = Math.max(...mix)
  const zTop = Math.max(...zMix) / 5
  const topHit = lexPart.reduce((best, c) => (best === null || c.s > best.s ? c : best), null)
  const strTop = topHit ? topHit.strength : 0
  const multi = nClauses > 0 ? 1 : 0
  // Needs (clauses): each candidate's rank within each need by the need's cosine, and the need's
  // own lexical score relative to its best.
  const champion = new Array(cands.length).fill(0)
  const needRank = new Array(cands.length).fill(0)
  const needLex = new Array(cands.length).fill(0)
  const needZ = new Array(cands.length).fill(0)
  for (let k = 0; k < nClauses; k++) {
    const cos = cands.map((c) => c.clauses[k])
    const z = zOver(cos)
    const lexMax = Math.max(0, ...cands.map((c) => c.clauseLex[k]))
    const score = cands.map((c, i) => (lexMax > 0 ? c.clauseLex[k] / lexMax : 0) + 0.2 * z[i])
    const r = ranksBy(score)
    cands.forEach((c, i) => {
      if (r[i] === 0) champion[i] += 1 / nClauses
      needRank[i] = Math.max(needRank[i], rankInv(r[i]))
      needLex[i] = Math.max(needLex[i], lexMax > 0 ? c.clauseLex[k] / lexMax : 0)
      needZ[i] = Math.max(needZ[i], z[i])
    })
  }
  const feats = cands.map((c, i) => ({
    lex: s1 > 0 ? c.s / s1 : 0,
    lexRank: c.rank >= 0 ? rankInv(c.rank) : rankInv(1000),
    zMix: zMix[i],
    zWhole: zWhole[i],
    zBest: zBest[i],
    simRank: rankInv(simRank[i]),
    gap: mix[i] - maxMix,
    strength: c.strength,
    weak: c.weak,
    long,
    multi,
    conf,
    simTop,
    zTop,
    strTop,
    champion: champion[i],
    needRank: nClauses ? needRank[i] : rankInv(simRank[i]),
    needLex: nClauses ? needLex[i] : (s1 > 0 ? c.s / s1 : 0),
    needZ: nClauses ? needZ[i] : zMix[i],
    outside: top.has(c.o) ? 0 : 1,
    ownerSize: serverSize ? Math.log(1 + serverSize[c.o]) / 10 : 0,
  }))
  return { cands, feats, exact: [...exact] }
}

// ---- the model -------------------------------------------------------------------------
/** Matrix of one query's features (rows: candidates), the gold indices in the pool. */
export function design(queries, names) {
  return queries.map((q) => {
    const X = q.feats.map((f) => names.map((n) => FEATURES[n](f)))
    const gold = q.cands.map((c, i) => (q.goldSet.has(c.o) ? i : -1)).filter((i) => i >= 0)
    return { X, gold }
  })
}

/**
 * Newton's method on the listwise softmax loss with L2 towards w0:
 * L(w) = sum_q a_q · (−mean over gold g of log softmax(Xw)_g) + lambda/2 · |w − w0|^2.
 * Deterministic (fixed order, no sampling); stops when the step is below 1e-10.
 */
export function train(data, weights, { lambda, w0 }) {
  const F = w0.length
  let w = [...w0]
  const lossAt = (w) => {
    let L = 0
    data.forEach(({ X, gold }, q) => {
      if (!gold.length || !weights[q]) return
      const z = X.map((x) => x.reduce((a, v, j) => a + v * w[j], 0))
      const m = Math.max(...z)
      const lse = m + Math.log(z.reduce((a, v) => a + Math.exp(v - m), 0))
      L += weights[q] * gold.reduce((a, g) => a + (lse - z[g]), 0) / gold.length
    })
    return L + (lambda / 2) * w.reduce((a, v, j) => a + (v - w0[j]) ** 2, 0)
  }
  let loss = lossAt(w)
  for (let iter = 0; iter < 50; iter++) {
    const grad = w.map((v, j) => lambda * (v - w0[j]))
    const H = Array.from({ length: F }, (_, i) => Array.from({ length: F }, (_, j) => (i === j ? lambda : 0)))
    data.forEach(({ X, gold }, q) => {
      if (!gold.length || !weights[q]) return
      const a = weights[q]
      const z = X.map((x) => x.reduce((s, v, j) => s + v * w[j], 0))
      const m = Math.max(...z)
      const e = z.map((v) => Math.exp(v - m))
      const sum = e.reduce((s, v) => s + v, 0)
      const p = e.map((v) => v / sum)
      const mu = new Array(F).fill(0)
      X.forEach((x, i) => { for (let j = 0; j < F; j++) mu[j] += p[i] * x[j] })
      for (let j = 0; j < F; j++) grad[j] += a * (mu[j] - gold.reduce((s, g) => s + X[g][j], 0) / gold.length)
      X.forEach((x, i) => {
        if (p[i] < 1e-12) return
        for (let j = 0; j < F; j++) for (let k = 0; k <= j; k++) H[j][k] += a * p[i] * (x[j] - mu[j]) * (x[k] - mu[k])
      })
    })
    for (let j = 0; j < F; j++) for (let k = j + 1; k < F; k++) H[j][k] = H[k][j]
    const step = solve(H, grad)
    let t = 1
    let next
    let nextLoss
    for (;;) {
      next = w.map((v, j) => v - t * step[j])
      nextLoss = lossAt(next)
      if (nextLoss <= loss + 1e-12 || t < 1e-6) break
      t /= 2
    }
    const moved = Math.sqrt(step.reduce((s, v) => s + (t * v) ** 2, 0))
    w = next
    loss = nextLoss
    if (moved < 1e-10) break
  }
  return w
}

/**
 * Coordinate ascent on the weighted nDCG@10 itself (Metzler and Croft's linear ranker): from w0,
 * each weight but the first (the lexical term's, which fixes the scale) in turn is moved by the
 * step from STEPS that most raises sum_q a_q · nDCG@10(q); a sweep that raises it by less than
 * 1e-9 ends training. Deterministic: fixed order, ties keep the smaller move.
 */
const STEPS = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1].flatMap((s) => [s, -s])
export function trainAscent(data, weights, { w0, maxSweeps = 30 }) {
  const F = w0.length
  const w = [...w0]
  const active = data.map((d, q) => (weights[q] > 0 && d.gold.length ? q : -1)).filter((q) => q >= 0)
  const base = new Map(active.map((q) => [q, new Float64Array(data[q].X.length)]))
  const golds = new Map(active.map((q) => [q, new Set(data[q].gold)]))
  const ideal = new Map(active.map((q) => { let s = 0; for (let i = 0; i < Math.min(10, data[q].gold.length); i++) s += 1 / Math.log2(i + 2); return [q, s] }))
  const rescore = () => { for (const q of active) { const b = base.get(q); data[q].X.forEach((x, i) => { let s = 0; for (let j = 0; j < F; j++) s += x[j] * w[j]; b[i] = s }) } }
  // Weighted nDCG@10 with weight j moved by d (ties: pool order).
  const objective = (j, d) => {
    let total = 0
    for (const q of active) {
      const b = base.get(q)
      const X = data[q].X
      const n = b.length
      const top = []
      for (let i = 0; i < n; i++) {
        const v = b[i] + d * X[i][j]
        if (top.length < 10 || v > top[top.length - 1][0]) {
          let k = top.length
          while (k > 0 && top[k - 1][0] < v) k--
          top.splice(k, 0, [v, i])
          if (top.length > 10) top.pop()
        }
      }
      let dcg = 0
      const g = golds.get(q)
      top.forEach(([, i], r) => { if (g.has(i)) dcg += 1 / Math.log2(r + 2) })
      total += weights[q] * dcg / ideal.get(q)
    }
    return total
  }
  rescore()
  let current = objective(0, 0)
  for (let sweep = 0; sweep < maxSweeps; sweep++) {
    const before = current
    for (let j = 1; j < F; j++) {
      let bestD = 0
      let bestV = current
      for (const d of STEPS) {
        const v = objective(j, d)
        if (v > bestV + 1e-9) { bestV = v; bestD = d }
      }
      if (bestD !== 0) { w[j] += bestD; rescore(); current = bestV }
    }
    if (current < before + 1e-9) break
  }
  return w
}

/** Solves H x = g (H symmetric positive definite) by Cholesky. */
function solve(H, g) {
  const n = g.length
  const L = Array.from({ length: n }, () => new Array(n).fill(0))
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = H[i][j]
      for (let k = 0; k < j; k++) s -= L[i][k] * L[j][k]
      L[i][j] = i === j ? Math.sqrt(Math.max(s, 1e-12)) : s / L[j][j]
    }
  }
  const y = new Array(n).fill(0)
  for (let i = 0; i < n; i++) { let s = g[i]; for (let k = 0; k < i; k++) s -= L[i][k] * y[k]; y[i] = s / L[i][i] }
  const x = new Array(n).fill(0)
  for (let i = n - 1; i >= 0; i--) { let s = y[i]; for (let k = i + 1; k < n; k++) s -= L[k][i] * x[k]; x[i] = s / L[i][i] }
  return x
}

// ---- ranking and scoring -----------------------------------------------------------------
/** The fused order of one query: exact hits, the pool by w·x (ties: pool order), then the rest of the lexical list. */
export function order(q, X, w) {
  const score = X.map((x) => x.reduce((a, v, j) => a + v * w[j], 0))
  const idx = score.map((_, i) => i).sort((a, b) => score[b] - score[a] || a - b)
  const out = [...q.exact, ...idx.map((i) => q.cands[i].o)]
  return out
}

/** Each need's best candidate right after the first hit (the needs' champions by fused rank), then the fused order. */
function assemble(q, fused, spec) {
  // spec: GATE[:MAX]: needs' champions only for requests of at most MAX clauses.
  const [gate, max = '8'] = spec.split(':')
  if (!q.row.clauses || q.row.clauses > Number(max)) return fused
  const rankOf = new Map(fused.map((o, r) => [o, r]))
  const champs = []
  for (let k = 0; k < q.row.clauses; k++) {
    const lexMax = Math.max(0, ...q.cands.map((c) => c.clauseLex[k]))
    if (lexMax <= 0 && gate !== 'all') continue
    const cos = q.cands.map((c) => c.clauses[k])
    const mean = cos.reduce((a, x) => a + x, 0) / cos.length
    const sd = Math.sqrt(cos.reduce((a, x) => a + (x - mean) ** 2, 0) / cos.length) || 1
    let bi = 0
    let bv = -Infinity
    q.cands.forEach((c, i) => {
      const v = (lexMax > 0 ? c.clauseLex[k] / lexMax : 0) + 0.2 * (cos[i] - mean) / sd
      if (v > bv || (v === bv && (rankOf.get(c.o) ?? 1e9) < (rankOf.get(q.cands[bi].o) ?? 1e9))) { bv = v; bi = i }
    })
    champs.push(q.cands[bi].o)
  }
  const out = [fused[0]]
  const seen = new Set(out)
  for (const o of champs.sort((a, b) => (rankOf.get(a) ?? 1e9) - (rankOf.get(b) ?? 1e9))) if (!seen.has(o)) { seen.add(o); out.push(o) }
  for (const o of fused) if (!seen.has(o)) { seen.add(o); out.push(o) }
  return out
}

function metrics(ranked, gold) {
  const n = ndcg10(ranked, gold)
  const top = ranked.slice(0, 10)
  const complete = gold.size > 0 && [...gold].every((g) => top.includes(g)) ? 1 : 0
  return { n, complete }
}

// ---- main ------------------------------------------------------------------------------
function main() {
  const { rows, toolIds } = loadDump(dumpDir)
  const queryText = readFileSync(join(dataDir, 'queries.jsonl'), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l).query)
  const promote = loadPrerequisites(dataDir, toolIds)
  const groups = groupBySource(rows.map((r) => r.set))
  const sources = [...groups.keys()]
  const serverOf = toolIds.map((id) => id.slice(0, id.lastIndexOf(':')))
  const sourceServers = new Map()
  for (const r of rows) {
    if (!sourceServers.has(r.set)) sourceServers.set(r.set, new Set())
    for (const g of r.gold) sourceServers.get(r.set).add(serverOf[g])
  }
  const own = args.includes('--own-source-only')
  const sizes = new Map()
  for (const sv of serverOf) sizes.set(sv, (sizes.get(sv) ?? 0) + 1)
  const serverSize = serverOf.map((sv) => sizes.get(sv))
  const pool = option('--pool', 'lexical')
  const queries = rows.map((row, i) => {
    const filter = own ? (o) => sourceServers.get(row.set).has(serverOf[o]) : null
    const { cands, feats, exact } = candidateFeatures(row, { pool, filter, serverSize })
    return { row, cands, feats, exact, goldSet: new Set(row.gold), text: queryText[i], filter }
  })
  const finish = (q, fused, assembleGate) => {
    const ranked = assembleGate && assembleGate !== 'none' ? assemble(q, fused, assembleGate) : fused
    return metrics(promote(ranked, { top: 10, perNeed: 2, query: q.text }), q.goldSet)
  }
  // Lexical: the lexical top list (own-source filtered when asked), prerequisites placed.
  const lexRuns = queries.map((q) => finish(q, [...q.exact, ...q.row.lexTop.filter((o) => !q.exact.includes(o) && (!q.filter || q.filter(o)))]))
  // The default: every signal the product's fusion has at hand without extra retrieval.
  const names = option('--features', 'lex,zMix,zWhole,zBest,lexRank,simRank,gap,strength,weak,lexLong,zMixLong,zBestMulti,lexMulti').split(',')
  const w0 = names.map((n) => SHIPPED[n] ?? 0)
  const data = design(queries, names)
  const shippedRuns = queries.map((q, i) => finish(q, order(q, data[i].X, w0)))
  const assembleGate = option('--assemble', 'none')
  const weighting = option('--weighting', 'source')
  const weightsFor = (train) => rows.map((r) => (train.has(r.set) ? (weighting === 'source' ? 1000 / groups.get(r.set).length : 1) : 0))
  // --group a,b: sources sharing a catalog (metatool and metatool-multi: the same 199 plugins,
  // queries from one generator) are held out together, so a fold never trains on the held-out
  // source's own tools (query_adapter.py showed what that leaks).
  const group = new Set(option('--group', 'metatool,metatool-multi').split(',').filter(Boolean))
  const heldWith = (held) => (group.has(held) ? group : new Set([held]))
  const lambdas = option('--lambda', '1').split(',').map(Number)
  const score = (runs, key) => perSource(runs.map((r) => r[key]), groups)
  const fmt = (v) => v.toFixed(1)
  const report = []
  for (const lambda of lambdas) {
    const fit = (weights) => (args.includes('--fixed') ? w0 : option('--trainer', 'ascent') === 'ascent' ? trainAscent(data, weights, { w0 }) : train(data, weights, { lambda, w0 }))
    const wAll = fit(weightsFor(new Set(sources)))
    const inSample = queries.map((q, i) => finish(q, order(q, data[i].X, wAll), assembleGate))
    const loso = new Array(queries.length)
    const foldWeights = {}
    for (const held of sources) {
      const w = fit(weightsFor(new Set(sources.filter((s) => !heldWith(held).has(s)))))
      foldWeights[held] = w
      for (const i of groups.get(held)) loso[i] = finish(queries[i], order(queries[i], data[i].X, w), assembleGate)
    }
    report.push({ lambda, wAll, inSample, loso, foldWeights })
  }
  const lex = score(lexRuns, 'n')
  const shipped = score(shippedRuns, 'n')
  if (!args.includes('--json')) console.log(`features ${names.join(',')}; pool ${pool}; weighting ${weighting}; assemble ${assembleGate}${own ? '; own source only' : ''}`)
  for (const r of args.includes('--json') ? [] : report) {
    const ins = score(r.inSample, 'n')
    const lo = score(r.loso, 'n')
    const rowsOut = [['source', 'lexical', 'hybrid', 'learned', 'LOSO', 'LOSO − hybrid [95% CI]', 'LOSO − lexical [95% CI]', 'C@10 lex/hyb/LOSO', 'OpenClaw']]
    for (const s of sources) {
      const idx = groups.get(s)
      const bh = pairedBootstrap(r.loso.map((x) => x.n), shippedRuns.map((x) => x.n), idx)
      const bl = pairedBootstrap(r.loso.map((x) => x.n), lexRuns.map((x) => x.n), idx)
      const c = (runs) => fmt(score(runs, 'complete').bySource[s])
      rowsOut.push([s, fmt(lex.bySource[s]), fmt(shipped.bySource[s]), fmt(ins.bySource[s]), fmt(lo.bySource[s]),
        `${bh.diff >= 0 ? '+' : ''}${bh.diff.toFixed(1)} [${bh.low.toFixed(1)}, ${bh.high.toFixed(1)}]`,
        `${bl.diff >= 0 ? '+' : ''}${bl.diff.toFixed(1)} [${bl.low.toFixed(1)}, ${bl.high.toFixed(1)}]`,
        `${c(lexRuns)} / ${c(shippedRuns)} / ${c(r.loso)}`, fmt(reference[s].ndcg10)])
    }
    const cm = (runs) => fmt(score(runs, 'complete').macro)
    rowsOut.push(['macro', fmt(lex.macro), fmt(shipped.macro), fmt(ins.macro), fmt(lo.macro), '', '', `${cm(lexRuns)} / ${cm(shippedRuns)} / ${cm(r.loso)}`, fmt(reference.macro.ndcg10)])
    console.log(`\n${option('--trainer', 'ascent')}${option('--trainer', 'ascent') === 'newton' ? ` lambda ${r.lambda}` : ''}: weights (all seven) ${names.map((n, j) => `${n} ${r.wAll[j].toFixed(3)}`).join(', ')}`)
    console.log(table(rowsOut))
    if (args.includes('--fold-weights')) for (const [s, w] of Object.entries(r.foldWeights)) console.log(`  without ${s}: ${w.map((v) => v.toFixed(3)).join(' ')}`)
  }
  if (args.includes('--json')) {
    // For bench/quality.mjs --learned: per source, the three rankings in-sample and the learned
    // ranking's LOSO figure, nDCG@10 and Complete@10, with the paired bootstrap of LOSO − hybrid.
    const r = report[0]
    const out = { features: names, pool, assemble: assembleGate, weights: Object.fromEntries(names.map((n, j) => [n, r.wAll[j]])), sets: {}, macro: {} }
    const runs = { lexical: lexRuns, hybrid: shippedRuns, learned: r.inSample, loso: r.loso }
    for (const s of sources) {
      const b = pairedBootstrap(r.loso.map((x) => x.n), shippedRuns.map((x) => x.n), groups.get(s))
      out.sets[s] = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, { ndcg10: score(v, 'n').bySource[s], complete10: score(v, 'complete').bySource[s] }]))
      out.sets[s].losoVsHybrid = b
    }
    out.macro = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, { ndcg10: score(v, 'n').macro, complete10: score(v, 'complete').macro }]))
    console.log(JSON.stringify(out))
    return
  }
  if (option('--scores', null)) {
    const r = report[0]
    writeFileSync(option('--scores', null), JSON.stringify({ lexical: lexRuns, hybrid: shippedRuns, learned: r.inSample, loso: r.loso }))
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) main()
