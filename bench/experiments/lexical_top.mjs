#!/usr/bin/env node
// The engine's lexical top K for every dev query, for the encoder tuning's hard negatives
// (bench/experiments/tune_encoder.py): one JSON line per query, {"set", "hits": [tool id, ...]}.
//
//   node bench/experiments/lexical_top.mjs DATA_DIR [K] > top.jsonl
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const { ToolCatalog } = require(join(root, 'index.js'))
const [dataDir, k = '30'] = process.argv.slice(2)
const lines = (file) => readFileSync(join(dataDir, file), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
const catalog = new ToolCatalog(lines('catalog.jsonl'), { ranking: 'lexical' })
for (const q of lines('queries.jsonl')) {
  const hits = catalog.search(q.query, { limit: Number(k) }).map((h) => h.id)
  process.stdout.write(`${JSON.stringify({ set: q.set, hits })}\n`)
}
