// What OpenTelemetry costs a search: the 13,163-tool dev catalog (lexical), each of 2,000 dev
// queries searched once (new queries, limit 8), timed per call, in three processes: no SDK
// registered (the default: spans are skipped), an SDK recording every span and counter (batch
// span processor, an exporter that discards), and the same with content capture on. Also the
// telemetry wrapper alone per call (a search that returns at once), so its own cost is visible.
//   node bench/telemetry.mjs [--json]
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { median } from './timing.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const here = fileURLToPath(import.meta.url)
const mode = process.argv.find((arg) => arg.startsWith('--mode='))?.slice(7)

if (mode === undefined) {
  const rows = []
  for (const m of ['none', 'sdk', 'sdk+capture']) rows.push(JSON.parse(execFileSync(process.execPath, [here, `--mode=${m}`], { cwd: root, encoding: 'utf8' })))
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(rows, null, 2))
  } else {
    console.log('| telemetry | search p50 | search p99 | wrapper alone, per call | spans recorded |')
    console.log('|---|---|---|---|---|')
    const base = rows[0].p50
    for (const r of rows) {
      console.log(`| ${r.mode} | ${r.p50.toFixed(1)} µs (${(r.p50 / base).toFixed(2)}×) | ${r.p99.toFixed(1)} µs | ${r.wrapperNs.toFixed(0)} ns | ${r.spans} |`)
    }
  }
} else {
  const require = createRequire(import.meta.url)
  let spans = 0
  if (mode !== 'none') {
    const api = require('@opentelemetry/api')
    const { BatchSpanProcessor, TracerProvider } = require('@opentelemetry/sdk-trace')
    const { MeterProvider, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics')
    const discard = {
      export(batch, done) {
        spans += batch.length
        done({ code: 0 })
      },
      shutdown: async () => {},
      forceFlush: async () => {},
    }
    const provider = new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter: discard, maxQueueSize: 65536, scheduledDelayMillis: 200 })] })
    api.trace.setGlobalTracerProvider(provider)
    const metricExporter = { export: (_metrics, done) => done({ code: 0 }), shutdown: async () => {}, forceFlush: async () => {} }
    api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 1000 })] }))
    globalThis.flushSpans = () => provider.forceFlush()
  }
  const { ToolCatalog, configureTelemetry } = require(join(root, 'index.js'))
  const telemetry = require(join(root, 'js', 'telemetry.js'))
  if (mode === 'sdk+capture') configureTelemetry({ captureContent: true })
  const dataDir = join(root, 'bench', 'data', 'retrieval-dev')
  const tools = readFileSync(join(dataDir, 'catalog.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).map(({ id, ...t }) => t)
  const queries = readFileSync(join(dataDir, 'queries.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).query).slice(0, 2000)
  const catalog = new ToolCatalog(tools, { ranking: 'lexical' })
  const times = []
  for (const query of queries) {
    const t0 = process.hrtime.bigint()
    catalog.search(query, { limit: 8 })
    times.push(Number(process.hrtime.bigint() - t0) / 1e3)
  }
  const hits = catalog.search(queries[0], { limit: 8 })
  const calls = 20000
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) telemetry.tracedSearch(catalog, queries[i % queries.length], { limit: 8 }, () => hits)
  const wrapperNs = Number(process.hrtime.bigint() - t0) / calls
  await globalThis.flushSpans?.()
  const sorted = [...times].sort((a, b) => a - b)
  process.stdout.write(JSON.stringify({ mode, p50: median(times), p99: sorted[Math.floor(sorted.length * 0.99)], wrapperNs, spans, tools: catalog.size, queries: queries.length }))
  process.exit(0)
}
