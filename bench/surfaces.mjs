// What the model is sent per mode, against OpenClaw's own surfaces, and the directory's render cost.
//   node bench/surfaces.mjs [--json] [--no-openclaw]
// 1. Surface bytes (OpenAI Responses tool array + prompt text) for direct schemas and each Tool
//    Search mode, on the QA gateway's catalogs (qa/fake-plugin.mts: 36 fake plugin tools plus MCP,
//    client and direct-only tools; 500 and 5,000 with generated filler), next to what OpenClaw
//    2026.9.6 sends for the same catalog, measured with its own functions (bench/openclaw-surfaces.mjs).
//    OpenClaw adds its directory prompt in every Tool Search mode; this package only in directory
//    mode (and in code and tools modes with `capabilityDirectory`, shown as its own column).
// 2. Directory render time on the 13,163-tool dev catalog: first render
//    (distinct budgets, so each one misses the memo) and memoized (same
//    snapshot and options, new session each time).
// OpenClaw needs Node >= 24.16: without --no-openclaw the bench re-executes itself on the QA's Node 24.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { median } from './timing.mjs'

const withOpenClaw = !process.argv.includes('--no-openclaw')
const [major, minor] = process.versions.node.split('.').map(Number)
if (withOpenClaw && (major < 24 || (major === 24 && minor < 16))) {
  const { openclawNode } = await import('../qa/openclaw/setup.mjs')
  const rerun = spawnSync(openclawNode(), process.argv.slice(1), { stdio: 'inherit', env: process.env })
  process.exit(rerun.status ?? 1)
}

const require = createRequire(import.meta.url)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const { ToolCatalog, ToolSearchSession, resolveToolSearchConfig, probeCodeMode } = require(join(root, 'index.js'))
// Code sessions render the code surface only where code mode runs (else they fall back to tools).
await probeCodeMode()
const dataDir = join(root, 'bench', 'data', 'retrieval-dev')
const { register } = await import('tsx/esm/api')
register()
const { buildQaCatalog } = await import('../qa/fake-plugin.mts')
let openclaw = null
if (withOpenClaw) {
  const { openclawPackage } = await import('../qa/openclaw/setup.mjs')
  const { loadOpenClaw, openclawSurface } = await import('./openclaw-surfaces.mjs')
  const functions = await loadOpenClaw(openclawPackage())
  openclaw = (records, mode) => openclawSurface(functions, records, mode)
}

const dev = readFileSync(join(dataDir, 'catalog.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))

const executor = async () => null
const config = (mode) => resolveToolSearchConfig(mode === 'direct' ? false : { mode }, { codeModeSupported: true })
const us = (ns) => Number(ns) / 1e3
const record = ({ kind: _kind, id: _id, ...tool }) => tool

const bytes = []
for (const size of [36, 500, 5000]) {
  const records = buildQaCatalog(size).tools.map(record)
  const catalog = new ToolCatalog(records)
  const row = { catalog: `${size} fake (QA)`, catalogTools: catalog.size }
  for (const mode of ['direct', 'code', 'tools', 'directory']) {
    const surface = new ToolSearchSession(catalog, config(mode), { executor }).surface('openai-responses')
    row[mode] = { tools: surface.tools.length, toolBytes: surface.bytes.tools, promptBytes: surface.bytes.directoryPrompt }
    if (mode === 'code' || mode === 'tools') {
      const withDirectory = new ToolSearchSession(catalog, config(mode), { executor, capabilityDirectory: true }).surface('openai-responses')
      row[mode].capabilityPromptBytes = withDirectory.bytes.directoryPrompt
    }
    if (openclaw && mode !== 'direct') row[mode].openclaw = openclaw(records, mode)
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
  const total = (m) => m.toolBytes + m.promptBytes
  const cell = (m) => `${total(m)} (${m.toolBytes} + ${m.promptBytes})`
  console.log('Surface bytes (openai-responses): tool definitions + prompt text; OpenClaw 2026.9.6 on the same catalog')
  for (const r of bytes) {
    console.log(`\n${r.catalog}: ${r.catalogTools} catalog tools; direct schemas ${r.direct.toolBytes} B (${r.direct.tools} tools)`)
    for (const mode of ['code', 'tools', 'directory']) {
      const ours = r[mode]
      const theirs = ours.openclaw ? cell(ours.openclaw) : 'not measured'
      const capability = ours.capabilityPromptBytes !== undefined ? `; with capabilityDirectory ${total(ours) + ours.capabilityPromptBytes}` : ''
      console.log(`  ${mode.padEnd(9)} ours ${cell(ours)}${capability}  |  OpenClaw ${theirs}`)
    }
  }
  console.log(`\nDirectory render, ${render.catalog} tools (${render.directoryChars} chars):`)
  console.log(`  first render, 18k budget: ${render.firstRenderUs18k} µs`)
  console.log(`  first render, median of 15 budgets: ${render.firstRenderMedianUs} µs`)
  console.log(`  memoized (new session, same snapshot), median of 200: ${render.memoizedMedianUs} µs`)
}
