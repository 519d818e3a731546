#!/usr/bin/env node
// The rankings of every dev query, written out so two builds can be compared byte for byte: a
// refactor that says "no behaviour change" proves it with this file's digests.
//
// Paths: `ToolCatalog` (lexical, and hybrid when the model is installed) and the OpenClaw engine
// (openclaw/engine.mjs's `rank`, handed OpenClaw-shaped entries, lexical and hybrid the same way).
// Each line of the dump is one query's top 10: ids and scores (scores as JavaScript prints them).
//
//   node bench/rankings.mjs [--out FILE] [--data DIR] [--limit N]
// Prints one digest per path; `--out` writes the full dump (diff two of them to see where they part).
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const { values: flags } = parseArgs({ options: { out: { type: 'string' }, data: { type: 'string' }, limit: { type: 'string', default: '10' } } })
const require = createRequire(import.meta.url)
const { ToolCatalog, rankingCapability } = require(join(root, 'index.js'))
const { engine, resolveSettings } = await import('../openclaw/engine.mjs')

const dataDir = resolve(flags.data ?? join(root, 'bench', 'data', 'retrieval-dev'))
const readJsonl = (file) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
const tools = readJsonl(join(dataDir, 'catalog.jsonl'))
const queries = readJsonl(join(dataDir, 'queries.jsonl'))
const limit = Number(flags.limit)
const hybrid = rankingCapability().hybrid === true

const records = tools.map((t) => ({ ...t }))
/** OpenClaw's catalog entries for the dev tools (toCatalogEntry's shape), new objects each call. */
const entriesOf = () => tools
  .map((t) => {
    const source = t.source ?? 'openclaw'
    const owner = t.owner ?? 'core'
    return { id: `${source}:${owner}:${t.name}`, source, sourceName: owner, name: t.name, label: t.label, description: t.description ?? '', parameters: t.inputSchema }
  })
  .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))

const dump = []
const digests = {}
function record(path, lines) {
  const text = lines.join('\n')
  digests[path] = createHash('sha256').update(text).digest('hex').slice(0, 16)
  dump.push(`## ${path}`, text)
}

for (const ranking of hybrid ? ['lexical', 'hybrid'] : ['lexical']) {
  const catalog = await ToolCatalog.build(records, { ranking, indexCache: false, vectorCache: false })
  if (ranking === 'hybrid') await catalog.whenRankingReady()
  const lines = []
  for (const q of queries) {
    const hits = ranking === 'hybrid' ? await catalog.searchAsync(q.query, { limit }) : catalog.search(q.query, { limit })
    lines.push(JSON.stringify([q.query, hits.map((h) => [h.id, h.score])]))
  }
  record(`ToolCatalog/${ranking}`, lines)

  // The process's one engine: a new entries array is a new catalog to it.
  const tool = engine()
  tool.packageRoot = root
  tool.configure(resolveSettings({ ranking, indexCache: false, vectorCache: false, learning: false }), { info() {}, warn: (m) => process.stderr.write(`${m}\n`) })
  const engineLines = []
  tool.loadNative()
  const entries = entriesOf()
  const catalogRef = { entries }
  // Tool vectors first, so the engine ranks hybrid rather than lexically while they are made.
  if (ranking === 'hybrid') await (await tool.viewFor(catalogRef, entries)).catalog.whenRankingReady()
  for (const q of queries) {
    const ranked = await tool.rank({ runtime: { ctx: { runId: 'rankings' } }, catalog: catalogRef, entries, query: q.query, limit })
    if (!ranked) throw new Error(`the engine fell back on ${JSON.stringify(q.query)}`)
    engineLines.push(JSON.stringify([q.query, ranked.map((e) => e.id)]))
  }
  record(`engine/${ranking}`, engineLines)
}

if (flags.out) writeFileSync(flags.out, `${dump.join('\n')}\n`)
console.log(JSON.stringify({ queries: queries.length, tools: tools.length, digests }, null, 2))
