// What the model is sent per mode, and the directory's render cost.
//   node bench/surfaces.mjs [--json]
// 1. Surface bytes (OpenAI Responses tool array + directory prompt) for direct
//    schemas vs each Tool Search mode, on 36 fake plugin tools (the QA
//    scenario), and the first 500 and 5,000 tools of the dev catalog.
// 2. Directory render time on the 13,163-tool dev catalog: first render
//    (distinct budgets, so each one misses the memo) and memoized (same
//    snapshot and options, new session each time).
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { median } from './timing.mjs'

const require = createRequire(import.meta.url)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const { ToolCatalog, ToolSearchSession, resolveToolSearchConfig, probeCodeMode } = require(join(root, 'index.js'))
// Code sessions render the code surface only where code mode runs (else they fall back to tools).
await probeCodeMode()
const dataDir = join(root, 'bench', 'data', 'retrieval-dev')

const dev = readFileSync(join(dataDir, 'catalog.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
const fake = Array.from({ length: 36 }, (_, i) => {
  const name = `fake_plugin_tool_${String(i + 1).padStart(2, '0')}`
  return {
    name,
    owner: 'fake-plugin',
    description: `Fake plugin tool number ${i + 1}: returns FAKE_PLUGIN_OK with the marker it receives.`,
    parameters: { type: 'object', properties: { marker: { type: 'string' } }, required: ['marker'], additionalProperties: false },
  }
})

const executor = async () => null
const config = (mode) => resolveToolSearchConfig(mode === 'direct' ? false : { mode }, { codeModeSupported: true })
const us = (ns) => Number(ns) / 1e3

const bytes = []
for (const [label, tools] of [['36 fake', fake], ['500 dev', dev.slice(0, 500)], ['5,000 dev', dev.slice(0, 5000)]]) {
  const catalog = new ToolCatalog(tools)
  const row = { catalog: label, catalogTools: catalog.size }
  for (const mode of ['direct', 'code', 'tools', 'directory']) {
    const surface = new ToolSearchSession(catalog, config(mode), { executor }).surface('openai-responses')
    row[mode] = { tools: surface.tools.length, toolBytes: surface.bytes.tools, promptBytes: surface.bytes.directoryPrompt }
  }
  bytes.push(row)
}

// Directory render on the full dev catalog.
const catalog = new ToolCatalog(dev)
const first = []
for (let i = 0; i < 15; i++) {
  // contextTokens 100,000 + 10i -> budget 10,000 + i: a distinct memo key each time.
  const session = new ToolSearchSession(catalog, config('directory'), { executor, contextTokens: 100_000 + 10 * i })
  const t0 = process.hrtime.bigint()
  const text = session.directoryPrompt()
  first.push(us(process.hrtime.bigint() - t0))
  if (!text) throw new Error('no directory')
}
const full = new ToolSearchSession(catalog, config('directory'), { executor })
const t0 = process.hrtime.bigint()
const fullText = full.directoryPrompt()
const fullFirstUs = us(process.hrtime.bigint() - t0)
const memo = []
for (let i = 0; i < 200; i++) {
  const session = new ToolSearchSession(catalog, config('directory'), { executor })
  const t = process.hrtime.bigint()
  session.directoryPrompt()
  memo.push(us(process.hrtime.bigint() - t))
}
const render = {
  catalog: 'dev 13,163',
  directoryChars: fullText.length,
  firstRenderUs18k: Math.round(fullFirstUs),
  firstRenderMedianUs: Math.round(median(first)),
  memoizedMedianUs: Math.round(median(memo) * 10) / 10,
}

if (process.argv.includes('--json')) {
  console.log(JSON.stringify({ bytes, render }, null, 2))
} else {
  console.log('Surface bytes (openai-responses): tool definitions + directory prompt')
  console.log('catalog     tools | direct         | code      | tools     | directory (tools + prompt)')
  for (const r of bytes) {
    const cell = (m) => `${r[m].toolBytes}`.padStart(9)
    console.log(
      `${r.catalog.padEnd(11)} ${String(r.catalogTools).padStart(5)} | ${cell('direct')} (${r.direct.tools}) | ${cell('code')} | ${cell('tools')} | ${r.directory.toolBytes} + ${r.directory.promptBytes}`,
    )
  }
  console.log(`\nDirectory render, ${render.catalog} tools (${render.directoryChars} chars):`)
  console.log(`  first render, 18k budget: ${render.firstRenderUs18k} µs`)
  console.log(`  first render, median of 15 budgets: ${render.firstRenderMedianUs} µs`)
  console.log(`  memoized (new session, same snapshot), median of 200: ${render.memoizedMedianUs} µs`)
}
