// OpenTelemetry: the package's spans and metrics through @opentelemetry/api, read back with the
// SDK's in-memory exporters: one span per search, batch, catalog build or update, code cell,
// session search and fallback; counters beside them; no query text unless content capture is on.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import api, { SpanStatusCode } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { binding, fakeTools, needsCodeMode } from './helpers.mjs'
import { engine, openclawCapturesContent, resolveSettings } from '../openclaw/engine.mjs'

const require = createRequire(import.meta.url)
const telemetry = require('../js/telemetry.js')
const { ToolCatalog, ToolSearchSession, resolveToolSearchConfig, runCodeCell, configureTelemetry } = binding
const P = 'openclaw.tool_search.'
const QUERY = 'fake plugin tool number 17 marker'

const spans = new InMemorySpanExporter()
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 })

/** Spans ended since the last call, by name. */
function take(name) {
  const found = spans.getFinishedSpans().filter((span) => name === undefined || span.name === `${P}${name}`)
  spans.reset()
  return found
}

/** The summed data points of a metric, by its name. */
async function metric(name) {
  await reader.forceFlush()
  const batches = metricExporter.getMetrics()
  const last = batches.at(-1)
  for (const scope of last?.scopeMetrics ?? []) {
    for (const m of scope.metrics) if (m.descriptor.name === `${P}${name}`) return m.dataPoints
  }
  return []
}

test('nothing is recorded, and nothing changes, while no SDK is registered', () => {
  assert.equal(telemetry.telemetryActive(), false)
  const catalog = new ToolCatalog(fakeTools(20))
  assert.equal(catalog.search(QUERY, { limit: 3 })[0].name, 'fake_plugin_tool_17')
  assert.equal(take().length, 0)
})

test('registering an SDK later turns spans and metrics on', () => {
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  api.trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] }))
  api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))
  assert.equal(telemetry.telemetryActive(), true)
})

test('one span per search: query length, limit, hits, weak match, ranking; no query text by default', async () => {
  const catalog = new ToolCatalog(fakeTools(20))
  take()
  const hits = catalog.search(QUERY, { limit: 3 })
  const [span] = take('search')
  assert.ok(span, 'a search span')
  assert.equal(span.attributes[`${P}query.length`], QUERY.length)
  assert.equal(span.attributes[`${P}limit`], 3)
  assert.equal(span.attributes[`${P}hits`], hits.length)
  assert.equal(span.attributes[`${P}weak_match`], false)
  assert.equal(span.attributes[`${P}ranking`], 'lexical')
  assert.equal(span.attributes[`${P}catalog.tools`], 20)
  assert.equal(span.attributes[`${P}outcome`], 'ok')
  assert.equal(span.status.code, SpanStatusCode.UNSET)
  assert.ok(!JSON.stringify(span.attributes).includes('number 17'), 'no query text')

  await catalog.searchAsync('zzqx vvkw')
  const [nothing] = take('search')
  assert.equal(nothing.attributes[`${P}hits`], 0)
  assert.equal(nothing.attributes[`${P}weak_match`], true, 'nothing found is a weak match')
})

test('a failed search is an error span and still throws its coded error', async () => {
  const catalog = new ToolCatalog(fakeTools(5))
  take()
  assert.throws(() => catalog.search('x', { limit: 0 }), (error) => error.code === 'INVALID_LIMIT')
  await assert.rejects(catalog.searchAsync('x', { limit: 1.5 }), (error) => error.code === 'INVALID_LIMIT')
  const failed = take('search')
  assert.equal(failed.length, 2)
  for (const span of failed) {
    assert.equal(span.status.code, SpanStatusCode.ERROR)
    assert.equal(span.attributes['error.type'], 'INVALID_LIMIT')
    assert.equal(span.attributes[`${P}outcome`], 'error')
  }
})

test('a batch is one span counting each query', async () => {
  const catalog = new ToolCatalog(fakeTools(20))
  take()
  const before = (await metric('searches')).reduce((sum, point) => sum + point.value, 0)
  catalog.searchBatch({ queries: [{ query: 'fake plugin tool 3' }, { query: 'qqzzvv' }] })
  const [span] = take('search')
  assert.equal(span.attributes[`${P}via`], 'batch')
  assert.equal(span.attributes[`${P}batch.queries`], 2)
  assert.equal(span.attributes[`${P}weak_matches`], 1)
  const after = (await metric('searches')).reduce((sum, point) => sum + point.value, 0)
  assert.equal(after - before, 2)
})

test('content capture records the query text, clipped; bad options are refused', () => {
  const catalog = new ToolCatalog(fakeTools(5))
  assert.deepEqual(configureTelemetry({ captureContent: true }), { captureContent: true })
  try {
    take()
    catalog.search(QUERY)
    catalog.search('tool '.repeat(100))
    const [first, long] = take('search')
    assert.equal(first.attributes[`${P}query`], QUERY)
    assert.equal(long.attributes[`${P}query`], 'tool '.repeat(100))
  } finally {
    configureTelemetry({ captureContent: false })
  }
  assert.throws(() => configureTelemetry({ capture: true }), (error) => error.code === 'INVALID_REQUEST')
  assert.throws(() => configureTelemetry({ captureContent: 'yes' }), (error) => error.code === 'INVALID_REQUEST')
  assert.deepEqual(configureTelemetry(), { captureContent: false })
})

test('builds and updates are spans with tools, refusals and how the index came to be', async () => {
  take()
  const catalog = await ToolCatalog.build([...fakeTools(6), { name: 'no_schema', owner: 'x', description: 'd', inputSchema: 5 }])
  const next = await catalog.updateAsync(fakeTools(8))
  next.append([{ name: 'extra_tool', owner: 'x', description: 'extra' }])
  ToolCatalog.fromJson(JSON.stringify(fakeTools(3)))
  const built = take('catalog.build')
  assert.deepEqual(built.map((span) => span.attributes[`${P}catalog.operation`]), ['build', 'update', 'append', 'from_json'])
  assert.equal(built[0].attributes[`${P}catalog.tools`], 6)
  assert.equal(built[0].attributes[`${P}catalog.excluded`], 1)
  assert.equal(built[0].attributes[`${P}index.state`], 'off')
  assert.equal(built[1].attributes[`${P}catalog.tools`], 8)
  assert.equal(built[1].attributes[`${P}index.state`], next.rankingStatus().index.state)
  assert.equal(built[2].attributes[`${P}catalog.tools`], 9)
  const points = await metric('catalog.builds')
  assert.ok(points.some((point) => point.attributes[`${P}catalog.operation`] === 'update' && point.value >= 1), JSON.stringify(points))
  assert.throws(() => new ToolCatalog('not a list'))
  const [refused] = take('catalog.build')
  assert.equal(refused.status.code, SpanStatusCode.ERROR)
})

test("a search's span is a child of the span active when it began", async () => {
  const catalog = new ToolCatalog(fakeTools(5))
  take()
  const tracer = api.trace.getTracer('host')
  let hostSpanId
  await tracer.startActiveSpan('host.tool', async (host) => {
    hostSpanId = host.spanContext().spanId
    await catalog.searchAsync('fake plugin tool 2')
    host.end()
  })
  const [search] = take('search')
  assert.ok(search, 'the search span')
  assert.equal(search.parentSpanContext?.spanId, hostSpanId)
})

test('a code cell is a span: outcome, bridge calls, warm, containment; never its code', { skip: needsCodeMode }, async () => {
  take()
  const code = `const hits = await openclaw.tools.search(${JSON.stringify(QUERY)}); return hits.length`
  const result = await runCodeCell(code, { bridge: async (op) => (op === 'search' ? [{ id: 'a' }] : null) })
  assert.equal(result.ok, true, JSON.stringify(result))
  const [cell] = take('code_cell')
  assert.equal(cell.attributes[`${P}outcome`], 'ok')
  assert.equal(cell.attributes[`${P}cell.bridge_calls.search`], 1)
  assert.equal(typeof cell.attributes[`${P}cell.warm`], 'boolean')
  assert.equal(cell.attributes[`${P}cell.containment.seccomp`], true)
  assert.ok(!JSON.stringify(cell.attributes).includes('number 17'), 'no code or query text')

  const failed = await runCodeCell('throw new Error("boom")', { bridge: async () => null })
  assert.equal(failed.ok, false)
  const [error] = take('code_cell')
  assert.equal(error.attributes['error.type'], failed.error.code)
  assert.equal(error.status.code, SpanStatusCode.ERROR)
  const points = await metric('code_cell.bridge_calls')
  assert.ok(points.some((point) => point.attributes[`${P}bridge.op`] === 'search' && point.value >= 1))
})

test("a session's searches are spans too, and its own onEvent still gets every event", async () => {
  const events = []
  const session = new ToolSearchSession(new ToolCatalog(fakeTools(20)), resolveToolSearchConfig({ mode: 'tools' }), {
    executor: async () => 'ok',
    onEvent: (event) => events.push(event),
  })
  assert.ok(session instanceof ToolSearchSession)
  take()
  const result = await session.handle('tool_search', { query: QUERY })
  assert.equal(result.ok, true, JSON.stringify(result))
  for (let i = 0; i < 50 && !events.some((e) => e.type === 'search'); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  assert.ok(events.some((e) => e.type === 'search'), 'the caller still gets its events')
  const [span] = take('search')
  assert.ok(span, 'a session search span')
  assert.equal(span.attributes[`${P}via`], 'session.tool_search')
  assert.equal(span.attributes[`${P}query.length`], QUERY.length)
  assert.ok(span.attributes[`${P}hits`] >= 1)
  assert.ok(!JSON.stringify(span.attributes).includes('number 17'))
  assert.throws(() => new ToolSearchSession(new ToolCatalog(fakeTools(2)), resolveToolSearchConfig({ mode: 'tools' }), { executor: async () => 'ok', onEvent: 5 }))
})

test("the plugin's fallbacks are spans with a reason, never the error text by default", () => {
  const tool = engine()
  tool.configure(resolveSettings({ ranking: 'lexical' }), { info() {}, warn() {} }, {})
  take()
  const stats = { fallbacks: 0 }
  tool.fellBack(stats, 'ranking', 'search_failed', `INTERNAL could not rank ${QUERY}`)
  assert.equal(stats.fallbacks, 1)
  const [span] = take('fallback')
  assert.equal(span.attributes[`${P}fallback.kind`], 'ranking')
  assert.equal(span.attributes[`${P}fallback.reason`], 'search_failed')
  assert.ok(!JSON.stringify(span.attributes).includes('number 17'))
})

test("the plugin follows OpenClaw's content-capture setting unless its own is set", () => {
  const on = { diagnostics: { otel: { enabled: true, captureContent: true } } }
  assert.equal(openclawCapturesContent(on), true)
  assert.equal(openclawCapturesContent({ diagnostics: { enabled: false, otel: { enabled: true, captureContent: true } } }), false)
  assert.equal(openclawCapturesContent({ diagnostics: { otel: { enabled: true, traces: false, captureContent: true } } }), false)
  assert.equal(openclawCapturesContent({ diagnostics: { otel: { captureContent: true } } }), false)
  assert.equal(openclawCapturesContent(undefined), false)
  const tool = engine()
  const log = { info() {}, warn() {} }
  try {
    tool.configure(resolveSettings({ ranking: 'lexical' }), log, on)
    assert.equal(configureTelemetry().captureContent, true)
    tool.configure(resolveSettings({ ranking: 'lexical', captureContent: false }), log, on)
    assert.equal(configureTelemetry().captureContent, false)
    tool.configure(resolveSettings({ ranking: 'lexical', captureContent: true }), log, {})
    assert.equal(configureTelemetry().captureContent, true)
  } finally {
    configureTelemetry({ captureContent: false })
  }
  assert.throws(() => resolveSettings({ captureContent: 'yes' }), /captureContent.* must be (true or false|boolean)/)
})

test('an SDK that throws fails no search, build, session event or fallback', async () => {
  const throwing = {
    getTracer: () => ({
      startSpan() {
        throw new Error('tracer broken')
      },
    }),
  }
  api.trace.disable()
  api.trace.setGlobalTracerProvider(throwing)
  try {
    const catalog = new ToolCatalog(fakeTools(5))
    assert.equal(catalog.search('fake plugin tool 3', { limit: 1 })[0].name, 'fake_plugin_tool_03')
    assert.equal((await catalog.searchAsync('fake plugin tool 4', { limit: 1 }))[0].name, 'fake_plugin_tool_04')
    assert.equal((await ToolCatalog.build(fakeTools(3))).size, 3)
    const events = []
    const session = new ToolSearchSession(catalog, resolveToolSearchConfig({ mode: 'tools' }), { executor: async () => 'ok', onEvent: (event) => events.push(event) })
    assert.equal((await session.handle('tool_search', { query: 'fake plugin tool 2' })).ok, true)
    for (let i = 0; i < 50 && !events.some((e) => e.type === 'search'); i++) await new Promise((resolve) => setTimeout(resolve, 10))
    assert.ok(events.some((e) => e.type === 'search'), "the caller's onEvent still runs")
    const stats = { fallbacks: 0 }
    engine().fellBack(stats, 'ranking', 'search_failed', 'x')
    assert.equal(stats.fallbacks, 1)
  } finally {
    api.trace.disable()
    api.trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] }))
  }
})
