#!/usr/bin/env node
// Retrieval quality of the search engine on the dev set: per source, with
// OpenClaw's reference, the macro, and the leave-one-source-out (LOSO) study
// of every ranking lever (bench/QUALITY.md explains the method).
//
// Usage: node bench/quality.mjs [--record] [--runs N] [--data DIR] [--no-levers]
//          [--hybrid VECTOR_DIR] [--learned DUMP] [--no-addon-hybrid] [--param key=value ...]
//   Last, both rankings through the addon (bench/quality-hybrid.mjs; skipped with the reason
//   when no model is installed; --no-addon-hybrid skips it).
//   Runs the Rust evaluation example (crates/core/examples/quality.rs, release
//   build) N times (default 3): quality metrics are deterministic; build time
//   and latency are medians.
//   Then the lever study (skip with --no-levers; about a minute): each lever
//   on/off and over a small grid, one at a time from the shipped defaults,
//   per source; for each held-out source the value with the best macro over the
//   other six, and its held-out score; a paired bootstrap per source.
//   --hybrid VECTOR_DIR also reports the shipped hybrid rule with its LOSO estimate
//   (bench/experiments/multi-vector.mjs --final) from cached sentence vectors
//   (tool vectors: crates/embed/examples/rerank.rs --text plain --max-tokens 32; query
//   vectors: crates/core/examples/clause_vectors.rs --product).
//   --learned DUMP also reports the learned fusion (bench/experiments/fusion.mjs: a linear ranker
//   over the engine's signals, trained by coordinate ascent on nDCG@10) beside lexical and hybrid,
//   in-sample and leave-one-source-out, with Complete@10, from the signals that
//   crates/core/examples/fusion_dump.rs writes to DUMP (a minute or two with the model).
//   --record writes the new run to bench/results/quality.json.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { groupBySource, leaveOneSourceOut, losoScores, pairedBootstrap, perSource, table } from './experiments/loso.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const flag = (name) => args.includes(name)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback
}
const dataDir = option('--data', 'bench/data/retrieval-dev')
const runs = Math.max(1, Number.parseInt(option('--runs', '3'), 10) || 3)
const resultsPath = join(root, 'bench/results/quality.json')
// --param key=value (repeatable): evaluate with a lever changed from the shipped defaults.
const overrides = args.flatMap((a, i) => (a === '--param' && args[i + 1] ? ['--param', args[i + 1]] : []))
const cargoArgs = ['run', '--release', '-q', '--target', 'x86_64-unknown-linux-gnu', '-p', 'tool-search-core', '--example', 'quality', '--', dataDir, ...overrides]

// OpenClaw 2026.9.6 on this data, all 13,163 tools (bench/data/retrieval-dev/SOURCES.md).
export const reference = {
  metatool: { ndcg10: 29.7, r10: 40.0, complete10: 40.0 },
  'metatool-multi': { ndcg10: 15.4, r10: 22.1, complete10: 5.2 },
  nestful: { ndcg10: 53.4, r10: 59.9, complete10: 31.4 },
  restbench: { ndcg10: 32.2, r10: 38.4, complete10: 17.2 },
  'seal-dev': { ndcg10: 91.1, r10: 93.9, complete10: 84.3 },
  taubench: { ndcg10: 21.9, r10: 28.4, complete10: 17.2 },
  toolalpaca: { ndcg10: 53.7, r10: 67.1, complete10: 63.9 },
  macro: { ndcg10: 42.5, r10: 50.0, complete10: 37.0 },
}

// The lever study: each lever's candidate settings (one `--param` override on top
// of the shipped defaults). `off` is the lever switched off (the baseline it must
// beat); a lever without an off state (field weights, b, k1) is compared with its
// shipped value. Values equal to the shipped default give the same run as it.
// A setting of several overrides joins them with '+' (each value switches its lever on).
export const levers = [
  {
    lever: 'concept expansions',
    off: 'expansion=0',
    values: ['expansion=0.35+literal_tier=1', 'expansion=0.5+literal_tier=1', 'expansion=0.7+literal_tier=1', 'expansion=1+literal_tier=1'],
  },
  { lever: 'filler-word removal', off: 'drop_request_filler=0', values: ['drop_request_filler=1'] },
  {
    lever: 'clause weighting',
    off: 'multi_intent=0',
    values: ['multi_intent=1+clause_weight=0.15', 'multi_intent=1+clause_weight=0.3', 'multi_intent=1+clause_weight=0.5', 'multi_intent=1+clause_weight=1', 'multi_intent=1+clause_weight=0.3+split_on_connectors=1'],
  },
  // The tier only separates literal matches from expansion-only ones: judged with expansions on.
  { lever: 'literal tier', off: 'literal_tier=0+expansion=0.7', values: ['literal_tier=1+expansion=0.7'] },
  {
    lever: 'redundancy-aware selection',
    off: 'diversity=0',
    values: ['diversity=0.15', 'diversity=0.3', 'diversity=0.5', 'diversity=0.3+diversity_depth=15', 'diversity=0.3+diversity_depth=60'],
  },
  { lever: 'typo joining', off: 'typo_weight=0', values: ['typo_weight=0.5', 'typo_weight=0.8'] },
  { lever: 'prerequisite tools', off: 'prerequisite_depth=0', values: ['prerequisite_depth=3', 'prerequisite_depth=5', 'prerequisite_depth=10'] },
  { lever: 'k1', values: ['k1=0.6', 'k1=0.8', 'k1=1', 'k1=1.2'] },
  { lever: 'name weight', values: ['w.name=2', 'w.name=3', 'w.name=4'] },
  { lever: 'description weight', values: ['w.description=0.7', 'w.description=1', 'w.description=1.5'] },
  { lever: 'parameter-name weight', values: ['w.param_names=0.3', 'w.param_names=0.6', 'w.param_names=1'] },
  { lever: 'parameter-description weight', values: ['w.param_descriptions=0.2', 'w.param_descriptions=0.4', 'w.param_descriptions=0.8'] },
  { lever: 'owner weight', values: ['w.owner=0.5', 'w.owner=1', 'w.owner=1.5'] },
  { lever: 'description b', values: ['b.description=0.5', 'b.description=0.75', 'b.description=0.9'] },
  { lever: 'name b', values: ['b.name=0.3', 'b.name=0.5', 'b.name=0.75'] },
]

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

function cargo(extra) {
  return execFileSync('cargo', [...cargoArgs, ...extra], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 256 * 1024 * 1024,
  })
}

const fmt = (value) => (typeof value === 'number' ? value.toFixed(1) : '-')
const signed = (d) => `${d >= 0 ? '+' : ''}${d.toFixed(1)}`

function mainTable(current, previous) {
  const delta = (now, before) => {
    if (typeof before !== 'number') return ''
    const d = now - before
    return Math.abs(d) < 0.05 ? ' (=)' : ` (${signed(d)})`
  }
  const metrics = ['ndcg10', 'r5', 'r10', 'complete10']
  const rows = [['set', 'queries', 'nDCG@10', 'R@5', 'R@10', 'Complete@10', 'OpenClaw nDCG/R@10/C@10']]
  const rowFor = (name, now, before, count) => [
    name,
    String(count ?? ''),
    ...metrics.map((m) => fmt(now[m]) + delta(now[m], before?.[m])),
    reference[name] ? `${fmt(reference[name].ndcg10)} / ${fmt(reference[name].r10)} / ${fmt(reference[name].complete10)}` : '',
  ]
  for (const [name, now] of Object.entries(current.sets)) rows.push(rowFor(name, now, previous?.sets?.[name], now.queries))
  rows.push(rowFor('macro', current.macro, previous?.macro, current.queries))
  return table(rows)
}

/**
 * The lever study on per-query runs: for each lever, per-source nDCG@10 of each
 * setting, the all-source choice, the LOSO choice per held-out source with its
 * score and a paired bootstrap against the baseline (off, or the shipped value).
 */
export function leverStudy(runsByLabel, sets) {
  const groups = groupBySource(sets)
  const sources = [...groups.keys()]
  const report = []
  for (const { lever, off, values } of levers) {
    const candidates = values.map((label) => ({ label, scores: runsByLabel.get(label) }))
    const baselineLabel = off ?? values.find((v) => sameAsDefault(runsByLabel, v)) ?? values[0]
    const baseline = runsByLabel.get(off ?? baselineLabel)
    const loso = losoScores(candidates, groups)
    const base = perSource(baseline, groups)
    const perSourceCheck = sources.map((s) => ({ source: s, ...pairedBootstrap(loso.scores, baseline, groups.get(s)) }))
    const all = candidates.map((c) => ({ label: c.label, ...perSource(c.scores, groups) }))
    const allChoice = all.reduce((best, c) => (c.macro > best.macro + 1e-9 ? c : best), all[0])
    const significantLoss = perSourceCheck.filter((c) => c.high < 0).map((c) => c.source)
    const keep = loso.macro > base.macro + 1e-9 && significantLoss.length === 0
    report.push({
      lever,
      off: off ?? null,
      baseline: baselineLabel,
      settings: (off ? [{ label: off, ...base }] : []).concat(all),
      allSourceChoice: allChoice.label,
      loso: Object.fromEntries(sources.map((s) => [s, { chosen: loso.bySource[s].label, score: loso.bySource[s].score }])),
      losoMacro: loso.macro,
      baselineMacro: base.macro,
      bootstrap: perSourceCheck,
      significantLoss,
      verdict: keep
        ? `keep: ${allChoice.label}`
        : off
          ? `drop (${off})`
          : `keep shipped value (${baselineLabel})`,
    })
  }
  return report
}

let defaultScores = null
function sameAsDefault(runsByLabel, label) {
  const scores = runsByLabel.get(label)
  return scores && defaultScores && scores.every((v, i) => v === defaultScores[i])
}

function printLeverStudy(report, sets) {
  const sources = [...groupBySource(sets).keys()]
  for (const r of report) {
    console.log(`\n## ${r.lever}: ${r.verdict}`)
    const rows = [['setting', ...sources, 'macro']]
    for (const s of r.settings) rows.push([s.label, ...sources.map((src) => fmt(s.bySource[src])), fmt(s.macro)])
    rows.push([
      'LOSO (held out)',
      ...sources.map((src) => `${fmt(r.loso[src].score)}`),
      fmt(r.losoMacro),
    ])
    rows.push(['  chosen', ...sources.map((src) => r.loso[src].chosen.replace(/^.*=/, '=')), ''])
    rows.push([
      `  vs ${r.baseline} (95% CI)`,
      ...r.bootstrap.map((b) => `${signed(b.diff)} [${signed(b.low)},${signed(b.high)}]`),
      signed(r.losoMacro - r.baselineMacro),
    ])
    console.log(table(rows))
  }
}

function main() {
  const results = []
  for (let i = 0; i < runs; i++) results.push(JSON.parse(cargo(['--json'])))
  const current = {
    ...results[0],
    buildMs: median(results.map((r) => r.buildMs)),
    searchP50Ms: median(results.map((r) => r.searchP50Ms)),
    searchP99Ms: median(results.map((r) => r.searchP99Ms)),
    prerequisiteTableMs: median(results.map((r) => r.prerequisiteTableMs)),
    prerequisiteDeriveMs: median(results.map((r) => r.prerequisiteDeriveMs)),
    runs,
    date: new Date().toISOString().slice(0, 10),
    command:
      `node bench/quality.mjs --runs ${runs}` +
      (dataDir === 'bench/data/retrieval-dev' ? '' : ` --data ${dataDir}`) +
      (option('--hybrid', null) ? ` --hybrid ${option('--hybrid', null)}` : '') +
      (overrides.length ? ` ${overrides.join(' ')}` : ''),
  }
  const previous = existsSync(resultsPath) ? JSON.parse(readFileSync(resultsPath, 'utf8')) : null

  console.log(`retrieval quality: ${current.catalogTools} tools, ${current.queries} queries (${dataDir})`)
  console.log(mainTable(current, previous))
  const ms = (key) => `${current[key]} ms${previous?.[key] != null ? ` (was ${previous[key]} ms)` : ''}`
  console.log(`build ${ms('buildMs')}; search p50 ${ms('searchP50Ms')}, p99 ${ms('searchP99Ms')} (medians of ${runs} runs)`)
  console.log(`prerequisite table ${ms('prerequisiteTableMs')}; derived with one server changed ${ms('prerequisiteDeriveMs')}`)
  if (previous) console.log(`compared with the run recorded ${previous.date ?? '(undated)'}`)
  const belowReference = Object.entries(reference).filter(
    ([name, ref]) => (name === 'macro' ? current.macro : current.sets[name])?.ndcg10 < ref.ndcg10,
  )
  if (belowReference.length) console.log(`below OpenClaw's nDCG@10 on: ${belowReference.map(([n]) => n).join(', ')}`)

  const sets = readFileSync(join(root, dataDir, 'queries.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l).set)

  if (!flag('--no-levers')) {
    const work = mkdtempSync(join(tmpdir(), 'ots-quality-'))
    try {
      const labels = ['default', ...new Set(levers.flatMap((l) => [l.off, ...l.values].filter(Boolean)))]
      const spec = join(work, 'levers.txt')
      writeFileSync(spec, labels.map((l) => (l === 'default' ? l : `${l} ${l.split('+').join(' ')}`)).join('\n') + '\n')
      const runsByLabel = new Map(
        cargo(['--per-query', spec])
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line))
          .map((r) => [r.label, r.ndcg10]),
      )
      defaultScores = runsByLabel.get('default')
      const report = leverStudy(runsByLabel, sets)
      console.log('\n# Lever study (nDCG@10 per source; LOSO: each held-out source scored with the setting that is best on the other six)')
      console.log('noise: paired bootstrap over the source\'s queries, 2,000 resamples; a loss counts when the 95% CI is entirely below 0')
      printLeverStudy(report, sets)
      current.levers = report.map((r) => ({
        lever: r.lever,
        verdict: r.verdict,
        losoMacro: Number(r.losoMacro.toFixed(2)),
        baselineMacro: Number(r.baselineMacro.toFixed(2)),
        loso: Object.fromEntries(Object.entries(r.loso).map(([s, v]) => [s, { chosen: v.chosen, ndcg10: Number(v.score.toFixed(1)) }])),
        significantLoss: r.significantLoss,
      }))
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
  }

  const vectorDir = option('--hybrid', null)
  if (vectorDir) {
    const out = execFileSync(process.execPath, [join(root, 'bench/experiments/multi-vector.mjs'), '--vectors', vectorDir, '--data', dataDir, '--final'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * 1024 * 1024,
    })
    const hybrid = JSON.parse(out)
    console.log('\n# Hybrid re-rank (final rule, from cached vectors)')
    const rows = [['set', 'lexical', 'hybrid', 'diff [95% CI]', 'LOSO hybrid', 'OpenClaw']]
    for (const [s, h] of Object.entries(hybrid.sets)) {
      rows.push([s, fmt(h.lexical), fmt(h.hybrid), `${signed(h.diff)} [${signed(h.low)},${signed(h.high)}]`, fmt(h.loso), fmt(reference[s]?.ndcg10)])
    }
    rows.push(['macro', fmt(hybrid.macro.lexical), fmt(hybrid.macro.hybrid), signed(hybrid.macro.hybrid - hybrid.macro.lexical), fmt(hybrid.macro.loso), fmt(reference.macro.ndcg10)])
    console.log(table(rows))
    console.log(hybrid.rule)
    current.hybrid = hybrid
  }

  const dumpDir = option('--learned', null)
  if (dumpDir) {
    const out = execFileSync(process.execPath, [join(root, 'bench/experiments/fusion.mjs'), '--dump', dumpDir, '--data', dataDir, '--json'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * 1024 * 1024,
    })
    const learned = JSON.parse(out)
    console.log('\n# Learned fusion (nDCG@10 and Complete@10; LOSO: trained on the other six sources)')
    console.log(`features: ${learned.features.join(', ')}; weights on all seven: ${Object.entries(learned.weights).map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', ')}`)
    const rows = [['set', 'lexical', 'hybrid', 'learned', 'learned LOSO', 'LOSO − hybrid [95% CI]', 'C@10 lexical / hybrid / LOSO', 'OpenClaw']]
    for (const [s, r] of Object.entries(learned.sets)) {
      const b = r.losoVsHybrid
      rows.push([s, fmt(r.lexical.ndcg10), fmt(r.hybrid.ndcg10), fmt(r.learned.ndcg10), fmt(r.loso.ndcg10), `${signed(b.diff)} [${signed(b.low)},${signed(b.high)}]`,
        `${fmt(r.lexical.complete10)} / ${fmt(r.hybrid.complete10)} / ${fmt(r.loso.complete10)}`, fmt(reference[s]?.ndcg10)])
    }
    const m = learned.macro
    rows.push(['macro', fmt(m.lexical.ndcg10), fmt(m.hybrid.ndcg10), fmt(m.learned.ndcg10), fmt(m.loso.ndcg10), signed(m.loso.ndcg10 - m.hybrid.ndcg10),
      `${fmt(m.lexical.complete10)} / ${fmt(m.hybrid.complete10)} / ${fmt(m.loso.complete10)}`, fmt(reference.macro.ndcg10)])
    console.log(table(rows))
    current.learned = learned
  }

  // The product's two rankings through the addon (the model from OPENCLAW_TOOL_SEARCH_MODEL_DIR
  // or the installed package; vectors from the on-disk cache, else computed: minutes).
  if (!flag('--no-addon-hybrid')) {
    const out = execFileSync(process.execPath, [join(root, 'bench/quality-hybrid.mjs'), '--json', '--data', resolve(root, dataDir)], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim()
    if (!out.startsWith('{')) {
      console.log(`\n# Hybrid ranking through the addon: ${out}`)
    } else {
      const product = JSON.parse(out)
      console.log('\n# Hybrid ranking through the addon (ranking: lexical vs hybrid, every query)')
      const rows = [['set', 'lexical', 'hybrid', 'diff', 'OpenClaw']]
      for (const [s, lexical] of Object.entries(product.lexical.perSet)) {
        const hybrid = product.hybrid.perSet[s]
        rows.push([s, fmt(lexical), fmt(hybrid), signed(hybrid - lexical), fmt(reference[s]?.ndcg10)])
      }
      rows.push(['macro', fmt(product.lexical.macro), fmt(product.hybrid.macro), signed(product.hybrid.macro - product.lexical.macro), fmt(reference.macro.ndcg10)])
      console.log(table(rows))
      console.log(`vectors ready in ${product.vectors.seconds.toFixed(1)} s (${product.vectors.reused} reused, ${product.vectors.embedded} embedded)`)
      current.addonHybrid = product
    }
  }

  if (flag('--record')) {
    mkdirSync(dirname(resultsPath), { recursive: true })
    writeFileSync(resultsPath, JSON.stringify(current, null, 2) + '\n')
    console.log(`recorded to ${resultsPath}`)
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
