// Per-source scoring, leave-one-source-out (LOSO) selection and the paired
// bootstrap that bench/quality.mjs, bench/quality-hybrid.mjs and
// bench/experiments/hybrid-rerank.mjs share.
//
// A "run" is one configuration's per-query scores (nDCG@10 as a fraction, in
// queries.jsonl order). Sources are the queries' `set`s; the macro is the
// unweighted mean over sources, as the quality example reports it.

/**
 * nDCG@10 of one ranking (ids or ordinals) against the relevant set: binary
 * relevance, ideal DCG over min(10, |relevant|), as the quality example computes it.
 */
export function ndcg10(ranked, relevant) {
  let dcg = 0
  for (let i = 0; i < Math.min(10, ranked.length); i++) if (relevant.has(ranked[i])) dcg += 1 / Math.log2(i + 2)
  let ideal = 0
  for (let i = 0; i < Math.min(10, relevant.size); i++) ideal += 1 / Math.log2(i + 2)
  return ideal > 0 ? dcg / ideal : 0
}

/** Query indices of each source, sources in sorted order. */
export function groupBySource(sets) {
  const groups = new Map()
  sets.forEach((set, i) => {
    if (!groups.has(set)) groups.set(set, [])
    groups.get(set).push(i)
  })
  return new Map([...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

const mean = (values) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length)

/** Mean of `scores` over each source (percent) and their macro. */
export function perSource(scores, groups) {
  const bySource = {}
  for (const [source, indices] of groups) bySource[source] = 100 * mean(indices.map((i) => scores[i]))
  return { bySource, macro: mean(Object.values(bySource)) }
}

/**
 * Leave-one-source-out: for each held-out source, the candidate with the best
 * macro over the other sources (ties: the earlier candidate, so list the
 * incumbent first) and its score on the held-out source.
 * candidates: [{label, scores}]. Returns {bySource: {source: {label, score}}, macro}.
 */
export function leaveOneSourceOut(candidates, groups) {
  const tables = candidates.map((c) => perSource(c.scores, groups).bySource)
  const sources = [...groups.keys()]
  const bySource = {}
  for (const heldOut of sources) {
    let best = 0
    let bestMacro = -Infinity
    tables.forEach((table, c) => {
      const others = sources.filter((s) => s !== heldOut).map((s) => table[s])
      const m = mean(others)
      if (m > bestMacro + 1e-9) {
        bestMacro = m
        best = c
      }
    })
    bySource[heldOut] = { label: candidates[best].label, index: best, score: tables[best][heldOut] }
  }
  return { bySource, macro: mean(Object.values(bySource).map((r) => r.score)) }
}

/** The candidate with the best macro over all sources (ties: the earlier one). */
export function bestByMacro(candidates, groups) {
  let best = 0
  let bestMacro = -Infinity
  candidates.forEach((c, i) => {
    const m = perSource(c.scores, groups).macro
    if (m > bestMacro + 1e-9) {
      bestMacro = m
      best = i
    }
  })
  return { index: best, label: candidates[best].label, macro: bestMacro }
}

/** Deterministic PRNG (mulberry32): bootstrap intervals and replays are reproducible. */
export function prng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * Paired bootstrap of mean(a - b) over `indices` (percent points): the observed
 * difference and its 95% interval (2,000 resamples of the source's queries).
 * A change "costs more than noise" on a source when the interval's upper end is below 0.
 */
export function pairedBootstrap(a, b, indices, resamples = 2000, seed = 14) {
  const diffs = indices.map((i) => a[i] - b[i])
  const observed = 100 * mean(diffs)
  const random = prng(seed)
  const means = []
  for (let r = 0; r < resamples; r++) {
    let sum = 0
    for (let j = 0; j < diffs.length; j++) sum += diffs[Math.floor(random() * diffs.length)]
    means.push((100 * sum) / diffs.length)
  }
  means.sort((x, y) => x - y)
  return { diff: observed, low: means[Math.floor(0.025 * resamples)], high: means[Math.floor(0.975 * resamples) - 1] }
}

/**
 * Held-out per-query scores of a LOSO selection: each query takes the score of
 * the candidate chosen without its source (for bootstrapping LOSO against a baseline).
 */
export function losoScores(candidates, groups) {
  const loso = leaveOneSourceOut(candidates, groups)
  const scores = new Array(candidates[0].scores.length).fill(0)
  for (const [source, indices] of groups) {
    const chosen = candidates[loso.bySource[source].index].scores
    for (const i of indices) scores[i] = chosen[i]
  }
  return { ...loso, scores }
}

/**
 * Leave-one-source-out under a floor: for each held-out source, the candidate with the best
 * macro over the other sources among those that keep every other source at or above the
 * baseline, strictly (`floor: 'strict'`) or within noise (`'noise'`: the paired bootstrap's
 * upper end against the baseline is >= 0, the project's lever rule). No eligible candidate:
 * the baseline itself. Returns {bySource: {source: {label, score}}, macro, scores} (scores: the
 * held-out per-query scores, for bootstrapping the selection against another rule).
 */
export function leaveOneSourceOutWithFloor(candidates, baseline, groups, { floor = 'noise', resamples = 500 } = {}) {
  const sources = [...groups.keys()]
  const base = perSource(baseline, groups).bySource
  const tables = candidates.map((c) => perSource(c.scores, groups).bySource)
  const keeps = candidates.map((c, i) =>
    Object.fromEntries(
      sources.map((s) => [
        s,
        floor === 'noise' ? pairedBootstrap(c.scores, baseline, groups.get(s), resamples).high >= 0 : tables[i][s] >= base[s] - 1e-9,
      ]),
    ),
  )
  const bySource = {}
  const scores = new Array(baseline.length).fill(0)
  for (const heldOut of sources) {
    const eligible = candidates.filter((_, i) => sources.every((s) => s === heldOut || keeps[i][s]))
    const others = new Map([...groups].filter(([name]) => name !== heldOut))
    const chosen = eligible.length ? eligible[bestByMacro(eligible, others).index] : { label: 'baseline', scores: baseline }
    for (const i of groups.get(heldOut)) scores[i] = chosen.scores[i]
    bySource[heldOut] = { label: chosen.label, score: perSource(chosen.scores, groups).bySource[heldOut] }
  }
  return { bySource, macro: mean(Object.values(bySource).map((r) => r.score)), scores }
}

/** Plain fixed-width table. */
export function table(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)))
  return rows.map((r) => r.map((cell, c) => String(cell).padEnd(widths[c])).join('  ')).join('\n')
}
