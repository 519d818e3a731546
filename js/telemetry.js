'use strict'
// OpenTelemetry spans and metrics through `@opentelemetry/api`, the convention for instrumented
// libraries: a no-op until the host registers an SDK (a `--import` preload, its own start-up, or
// OpenClaw's diagnostics-otel plugin with OPENCLAW_OTEL_PRELOADED=1). One span per search, code
// cell, catalog build or update and fallback to OpenClaw's own engine, with counters beside them.
// Query text is recorded only when content capture is on (configureTelemetry, the env variable
// below, or the plugin's reading of OpenClaw's own diagnostics.otel.captureContent); tool
// arguments and cell code never are.

let api = null
try {
  api = require('@opentelemetry/api')
} catch {
  // Not installed (a bundler dropped it): telemetry stays off.
}

const SCOPE = 'openclaw-tool-search'
const VERSION = require('../package.json').version
/** Attribute names share this prefix (OpenClaw's own spans use `openclaw.`). */
const P = 'openclaw.tool_search.'
/** Characters of a query kept when content capture is on. */
const MAX_CAPTURED_CHARS = 1024
/** Queries of a batch named on its span when content capture is on. */
const MAX_CAPTURED_QUERIES = 16

const settings = { captureContent: envFlag(process.env.OPENCLAW_TOOL_SEARCH_OTEL_CAPTURE_CONTENT) }

function envFlag(value) {
  return typeof value === 'string' && ['1', 'true', 'yes', 'on'].includes(value.trim().toLowerCase())
}

/**
 * Telemetry settings for this process: `{ captureContent }` records query text (at most 1,024
 * characters) on search spans. Returns the settings now in force.
 */
function configureTelemetry(options) {
  if (options === undefined || options === null) return { ...settings }
  if (typeof options !== 'object' || Array.isArray(options)) throw invalid('configureTelemetry options must be an object')
  for (const key of Object.keys(options)) {
    if (key !== 'captureContent') throw invalid(`configureTelemetry: unknown option ${JSON.stringify(key)}`)
  }
  if (options.captureContent !== undefined) {
    if (typeof options.captureContent !== 'boolean') throw invalid('configureTelemetry: captureContent must be true or false')
    settings.captureContent = options.captureContent
  }
  return { ...settings }
}

function invalid(message) {
  return Object.assign(new TypeError(message), { code: 'INVALID_REQUEST' })
}

// ------------------------------------------------------------ providers

/** The tracer and instruments of the providers registered now (they may be registered late). */
let current = { tracerProvider: undefined, meterProvider: undefined, tracing: false, metering: false }

function instruments() {
  if (api === null) return current
  const tracerProvider = api.trace.getTracerProvider()
  const meterProvider = api.metrics.getMeterProvider()
  if (tracerProvider === current.tracerProvider && meterProvider === current.meterProvider) return current
  // Before an SDK registers, the API answers a proxy whose delegate is its no-op provider: skip
  // all attribute work then (a search stays at its native cost).
  const delegate = typeof tracerProvider.getDelegate === 'function' ? tracerProvider.getDelegate() : tracerProvider
  const tracing = delegate?.constructor?.name !== 'NoopTracerProvider'
  const metering = meterProvider?.constructor?.name !== 'NoopMeterProvider'
  const meter = api.metrics.getMeter(SCOPE, VERSION)
  current = {
    tracerProvider,
    meterProvider,
    tracing,
    metering,
    tracer: api.trace.getTracer(SCOPE, VERSION),
    searches: meter.createCounter(`${P}searches`, { description: 'Searches answered (a batch counts each query)' }),
    searchDuration: meter.createHistogram(`${P}search.duration`, { description: 'Time to answer a search or batch', unit: 'ms' }),
    cells: meter.createCounter(`${P}code_cells`, { description: 'Code cells run' }),
    cellDuration: meter.createHistogram(`${P}code_cell.duration`, { description: 'Wall time of a code cell', unit: 'ms' }),
    bridgeCalls: meter.createCounter(`${P}code_cell.bridge_calls`, { description: 'openclaw.tools requests made by code cells' }),
    builds: meter.createCounter(`${P}catalog.builds`, { description: 'Catalogs built or updated' }),
    buildDuration: meter.createHistogram(`${P}catalog.build.duration`, { description: 'Time to build or update a catalog', unit: 'ms' }),
    fallbacks: meter.createCounter(`${P}fallbacks`, { description: "Requests left to OpenClaw's built-in Tool Search" }),
  }
  return current
}

/** Whether anything is listening (a registered tracer or meter provider). */
function telemetryActive() {
  const now = instruments()
  return now.tracing || now.metering
}

const clock = () => performance.timeOrigin + performance.now()

/**
 * Starts timing an operation: `{ start, context, now }`, or null when nothing listens. The parent
 * context is the one active when the operation began (the host's tool-execution span).
 */
function begin(start = clock()) {
  const now = instruments()
  if (!now.tracing && !now.metering) return null
  return { start, context: api.context.active(), now }
}

/**
 * Ends an operation begun with `begin()`: a span with `attributes`, and `metrics(instruments, ms,
 * outcome, attributes)` records its counters (`attributes` then hold `error.type` on error).
 */
function finish(started, name, attributes, error, metrics) {
  if (started === null) return
  const { now } = started
  const end = clock()
  const outcome = error === undefined ? 'ok' : 'error'
  attributes[`${P}outcome`] = outcome
  if (error !== undefined) attributes['error.type'] = errorType(error)
  if (now.tracing) {
    const span = now.tracer.startSpan(name, { startTime: started.start, attributes, kind: api.SpanKind.INTERNAL }, started.context)
    if (error !== undefined) span.setStatus({ code: api.SpanStatusCode.ERROR, message: errorType(error) })
    span.end(end)
  }
  if (now.metering && metrics) metrics(now, end - started.start, outcome, attributes)
}

function errorType(error) {
  if (typeof error?.code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(error.code)) return error.code
  return typeof error?.name === 'string' && /^[A-Za-z0-9_]{1,64}$/.test(error.name) ? error.name : 'Error'
}

const clip = (text) => (text.length > MAX_CAPTURED_CHARS ? text.slice(0, MAX_CAPTURED_CHARS) : text)

// ------------------------------------------------------------ what is recorded

/** Per catalog, its active ranking once it can no longer change (vectors ready, failed or none). */
const settledRanking = new WeakMap()

/** The ranking a catalog answered with now, read only while something listens. */
function activeRanking(catalog) {
  const settled = settledRanking.get(catalog)
  if (settled !== undefined) return settled
  try {
    const status = catalog.rankingStatus()
    if (status.state === 'off' || status.state === 'ready' || status.state === 'failed') settledRanking.set(catalog, status.active)
    return status.active
  } catch {
    return 'unknown'
  }
}

/** Of a list of hits: how many are weak, and whether the best is (or there is none). */
function weakness(hits) {
  let weak = 0
  for (const hit of hits) if (hit?.weak === true) weak += 1
  return { weak, weakMatch: hits.length === 0 || hits[0]?.weak === true }
}

/**
 * A search span: query length (never its text unless content capture is on), limit, hits, weak
 * hits, whether the best hit is weak (or nothing was found), the ranking used, the catalog size.
 */
function searchAttributes(catalog, query, limit, hits, via) {
  const attributes = { [`${P}via`]: via }
  if (typeof query === 'string') {
    attributes[`${P}query.length`] = query.length
    if (settings.captureContent) attributes[`${P}query`] = clip(query)
  }
  if (Number.isInteger(limit)) attributes[`${P}limit`] = limit
  if (Array.isArray(hits)) {
    const { weak, weakMatch } = weakness(hits)
    attributes[`${P}hits`] = hits.length
    attributes[`${P}weak_hits`] = weak
    attributes[`${P}weak_match`] = weakMatch
  }
  if (catalog) {
    attributes[`${P}ranking`] = activeRanking(catalog)
    attributes[`${P}catalog.tools`] = catalog.size
  }
  return attributes
}

/** A search's counters: each query of a batch counts. */
function countSearch(now, ms, outcome, attributes) {
  const labels = { [`${P}ranking`]: attributes[`${P}ranking`] ?? 'unknown', [`${P}outcome`]: outcome }
  if (attributes[`${P}weak_match`] !== undefined) labels[`${P}weak_match`] = attributes[`${P}weak_match`]
  now.searches.add(Math.max(1, attributes[`${P}batch.queries`] ?? 1), labels)
  now.searchDuration.record(ms, labels)
}

/** A code cell's counters: by outcome and error code, and its bridged requests by op. */
function countCell(now, ms, outcome, attributes) {
  const labels = { [`${P}outcome`]: outcome }
  if (attributes['error.type']) labels['error.type'] = attributes['error.type']
  now.cells.add(1, labels)
  now.cellDuration.record(ms, labels)
  for (const op of ['search', 'describe', 'call']) {
    const count = attributes[`${P}cell.bridge_calls.${op}`]
    if (count > 0) now.bridgeCalls.add(count, { [`${P}bridge.op`]: op })
  }
}

/** `search` / `searchAsync` of a catalog, timed and recorded (the result is returned unchanged). */
function tracedSearch(catalog, query, options, run) {
  const started = begin()
  if (started === null) return run()
  const record = (hits, error) => finish(started, `${P}search`, searchAttributes(catalog, query, options?.limit, hits, 'catalog'), error, countSearch)
  return settle(run, record)
}

/** `searchBatch` / `searchBatchAsync`: one span for the batch, each query counted. */
function tracedSearchBatch(catalog, request, run) {
  const started = begin()
  if (started === null) return run()
  const record = (result, error) => {
    const results = Array.isArray(result?.results) ? result.results : []
    const attributes = { [`${P}via`]: 'batch', [`${P}batch.queries`]: results.length }
    let hits = 0
    let weak = 0
    let weakMatches = 0
    for (const entry of results) {
      const candidates = Array.isArray(entry?.candidates) ? entry.candidates : []
      const of = weakness(candidates)
      hits += candidates.length
      weak += of.weak
      if (of.weakMatch) weakMatches += 1
    }
    attributes[`${P}hits`] = hits
    attributes[`${P}weak_hits`] = weak
    attributes[`${P}weak_matches`] = weakMatches
    attributes[`${P}ranking`] = activeRanking(catalog)
    attributes[`${P}catalog.tools`] = catalog.size
    if (settings.captureContent) {
      const texts = results.slice(0, MAX_CAPTURED_QUERIES).map((entry) => (typeof entry?.query === 'string' ? clip(entry.query) : ''))
      if (texts.length > 0) attributes[`${P}queries`] = texts
    }
    finish(started, `${P}search`, attributes, error, countSearch)
  }
  return settle(run, record)
}

/**
 * A catalog build or update (`kind`: build, from_json, append, with_source, update): tools
 * indexed, tools refused, how the index came to be (loaded from the index cache, built, derived),
 * the configured ranking.
 */
function tracedBuild(kind, run) {
  const started = begin()
  if (started === null) return run()
  const record = (catalog, error) => {
    const attributes = { [`${P}catalog.operation`]: kind }
    if (catalog && error === undefined) {
      try {
        attributes[`${P}catalog.tools`] = catalog.size
        attributes[`${P}catalog.excluded`] = catalog.excluded.length
        const status = catalog.rankingStatus()
        attributes[`${P}ranking.configured`] = status.ranking
        attributes[`${P}index.state`] = status.index?.state ?? 'unknown'
        if (status.index?.warning) attributes[`${P}index.warning`] = true
      } catch {
        // a catalog that cannot answer is recorded without these
      }
    }
    finish(started, `${P}catalog.build`, attributes, error, (now, ms, outcome, attrs) => {
      const labels = { [`${P}catalog.operation`]: kind, [`${P}outcome`]: outcome }
      if (attrs[`${P}index.state`]) labels[`${P}index.state`] = attrs[`${P}index.state`]
      now.builds.add(1, labels)
      now.buildDuration.record(ms, labels)
    })
  }
  return settle(run, record)
}

/**
 * A code cell run through `runCodeCell`: its outcome and stable error code, how long it waited
 * for a slot, whether its child was warm, the `openclaw.tools` requests it made, and the
 * containment its child ran under (the launcher's layers, the cgroups). Never the code.
 */
function tracedCell(run) {
  const started = begin()
  if (started === null) return run()
  return settle(run, (result, error) => {
    const attributes = cellAttributes(result)
    const failure = error ?? (result && result.ok === false ? { code: result.error?.code ?? 'CODE_FAILED' } : undefined)
    finish(started, `${P}code_cell`, attributes, failure, countCell)
  })
}

function cellAttributes(result) {
  const attributes = {}
  const telemetry = result?.telemetry
  if (!telemetry || typeof telemetry !== 'object') return attributes
  const number = (key, value) => {
    if (typeof value === 'number' && Number.isFinite(value)) attributes[`${P}cell.${key}`] = value
  }
  number('queued_ms', telemetry.queuedMs)
  number('acquire_ms', telemetry.acquireMs)
  number('result_bytes', telemetry.resultBytes)
  number('log_lines', telemetry.logLines)
  number('calls_cancelled', telemetry.callsCancelled)
  number('calls_refused', telemetry.callsRefused)
  if (typeof telemetry.warm === 'boolean') attributes[`${P}cell.warm`] = telemetry.warm
  for (const op of ['search', 'describe', 'call']) number(`bridge_calls.${op}`, telemetry.bridgeCalls?.[op])
  const layers = telemetry.containment
  if (layers && typeof layers === 'object') {
    for (const key of ['seccomp', 'noNewPrivs', 'capsDropped', 'rlimits']) {
      if (typeof layers[key] === 'boolean') attributes[`${P}cell.containment.${snake(key)}`] = layers[key]
    }
    for (const key of ['landlock', 'netns', 'ipcns', 'uidDrop']) {
      if (typeof layers[key] === 'string') attributes[`${P}cell.containment.${snake(key)}`] = layers[key].slice(0, 64)
    }
  }
  if (Array.isArray(telemetry.cgroups)) attributes[`${P}cell.containment.cgroups`] = telemetry.cgroups.filter((c) => typeof c === 'string').slice(0, 4)
  return attributes
}

const snake = (key) => key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

/**
 * A request left to OpenClaw's built-in engine (`kind`: ranking or code_cell; `reason`: a short
 * stable category such as `catalog_not_indexable`, `search_failed`, `code_mode_unavailable`).
 * `detail` (an error message) is recorded only when content capture is on.
 */
function recordFallback(kind, reason, detail) {
  safely(() => fallbackSpan(kind, reason, detail))
}

function fallbackSpan(kind, reason, detail) {
  const started = begin()
  if (started === null) return
  const attributes = { [`${P}fallback.kind`]: kind, [`${P}fallback.reason`]: reason }
  if (settings.captureContent && typeof detail === 'string') attributes[`${P}fallback.detail`] = clip(detail)
  finish(started, `${P}fallback`, attributes, undefined, (now) => {
    now.fallbacks.add(1, { [`${P}fallback.kind`]: kind, [`${P}fallback.reason`]: reason })
  })
}

/**
 * A session's event (ToolSearchSession's `onEvent`): searches and code cells the session answered
 * as spans ending now, begun `durationMs` before. Describes, calls and surfaces are not spans.
 */
function recordSessionEvent(event) {
  safely(() => sessionSpan(event))
}

function sessionSpan(event) {
  if (event?.type !== 'search' && event?.type !== 'code') return
  const ms = typeof event.durationMs === 'number' && Number.isFinite(event.durationMs) ? Math.max(0, event.durationMs) : 0
  const started = begin(clock() - ms)
  if (started === null) return
  const error = event.outcome === 'ok' ? undefined : { code: event.errorCode ?? event.outcome }
  if (event.type === 'search') {
    const queries = Array.isArray(event.queries) ? event.queries : []
    const attributes = { [`${P}via`]: `session.${event.via}`, [`${P}batch.queries`]: queries.length }
    if (queries.length === 1 && typeof queries[0] === 'string') attributes[`${P}query.length`] = queries[0].length
    if (settings.captureContent) attributes[`${P}queries`] = queries.slice(0, MAX_CAPTURED_QUERIES).map((q) => (typeof q === 'string' ? clip(q) : ''))
    if (Array.isArray(event.hitIds)) attributes[`${P}hits`] = event.hitIds.length
    attributes[`${P}truncated`] = event.truncated === true
    finish(started, `${P}search`, attributes, error, countSearch)
  } else {
    finish(started, `${P}code_cell`, { [`${P}via`]: 'session' }, error, countCell)
  }
}

/** Calls `run`; hands its value (or its throw / rejection) to `record`; returns what `run` did. */
function settle(run, record) {
  let value
  try {
    value = run()
  } catch (error) {
    safely(record, undefined, error)
    throw error
  }
  if (value && typeof value.then === 'function') {
    return value.then(
      (resolved) => {
        safely(record, resolved, undefined)
        return resolved
      },
      (error) => {
        safely(record, undefined, error)
        throw error
      },
    )
  }
  safely(record, value, undefined)
  return value
}

/** Telemetry never fails the operation it watches. */
function safely(record, value, error) {
  try {
    record(value, error)
  } catch {
    // an SDK that throws is the host's problem, not the search's
  }
}

module.exports = {
  configureTelemetry,
  telemetryActive,
  tracedSearch,
  tracedSearchBatch,
  tracedBuild,
  tracedCell,
  recordFallback,
  recordSessionEvent,
}
