// What the engine did, told three ways: OpenTelemetry spans (the package's js/telemetry.js),
// OpenClaw's public diagnostic events (`tool_search.*`, for OpenClaw's own subscribers), and per
// run, statistics ending in one line in OpenClaw's log; requests left to OpenClaw's own engine
// (fallbacks) are counted in all three. Never query text (unless captureContent) or tool arguments.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { agentOf } from './learning.mjs'
import { PLUGIN_ID } from './settings.mjs'

const isObject = (value) => typeof value === 'object' && value !== null

/**
 * OpenClaw's own rule for tool inputs on its traces (resolveDiagnosticModelContentCapturePolicy):
 * diagnostics on, diagnostics.otel enabled with traces, and captureContent true. A search query is
 * a tool input.
 */
export function openclawCapturesContent(config) {
  const diagnostics = config?.diagnostics
  if (!isObject(diagnostics) || diagnostics.enabled === false) return false
  const otel = diagnostics.otel
  return isObject(otel) && otel.enabled === true && otel.traces !== false && otel.captureContent === true
}

/** The package's OpenTelemetry module (js/telemetry.js), the copy index.js uses; null if it cannot load. */
export function telemetry(engine) {
  if (engine.telemetryModule !== undefined) return engine.telemetryModule
  try {
    engine.telemetryModule = engine.requirePackage('js/telemetry.js')
  } catch {
    engine.telemetryModule = null
  }
  return engine.telemetryModule
}

/**
 * What the engine did, in OpenClaw's public diagnostic events (type `tool_search.*`) for
 * OpenClaw's own subscribers, when diagnostics are on. Never query text or tool arguments.
 */
export function diagnostic(engine, event) {
  try {
    engine.emitDiagnostic?.(event)
  } catch {
    // a failing subscriber must not fail the search
  }
}

/** A request left to OpenClaw's own engine: counted in the run's line, a span, a diagnostic event. */
export function fellBack(engine, stats, kind, reason, detail) {
  stats.fallbacks += 1
  engine.telemetry()?.recordFallback(kind, reason, detail)
  engine.diagnostic({ type: 'tool_search.fallback', kind, reason })
}

/** The statistics of the run a tool runtime's context belongs to (the engine's `runs`, by run id). */
export function statsFor(engine, ctx) {
  const runId = typeof ctx?.runId === 'string' && ctx.runId ? ctx.runId : 'unknown-run'
  let stats = engine.runs.get(runId)
  if (!stats) {
    stats = { runId, sessionKey: ctx?.sessionKey, agentId: agentOf(ctx), searches: 0, cells: 0, fallbacks: 0, learned: 0, shown: [], rankings: new Set(), indexes: new Set(), searchMs: 0 }
    engine.runs.set(runId, stats)
    // Runs that never report their end (a crashed turn) must not grow this map without bound.
    if (engine.runs.size > 1000) engine.runs.delete(engine.runs.keys().next().value)
  }
  return stats
}

/**
 * A search served: counted in the run's statistics, its diagnostic event, and the index's warning
 * (said once). `hits` are the native catalog's, `ranked` OpenClaw's entries returned, `ranking`
 * how it ranked, `status` the catalog's ranking status, `started` when the search began.
 */
export function searched(engine, stats, { query, hits, ranked, ranking, status, started }) {
  stats.searches += 1
  stats.rankings.add(ranking)
  stats.indexes.add(status.index?.state ?? 'unknown')
  if (status.index?.warning) engine.warnOnce(`index:${status.index.warning}`, status.index.warning)
  const ms = performance.now() - started
  stats.searchMs += ms
  engine.diagnostic({
    type: 'tool_search.search',
    durationMs: ms,
    queryLength: query.length,
    hits: ranked.length,
    weakMatch: hits.length === 0 || hits[0]?.weak === true,
    ranking,
    index: status.index?.state ?? 'unknown',
  })
}

/**
 * The seam's run-end hook (OpenClaw tears down the run's catalog): one line in OpenClaw's log
 * saying what this engine served in the run.
 */
export function runEnded(engine, params) {
  if (!engine.active || !engine.releaseAllowed(engine.servedRelease()?.version)) return undefined
  const runId = typeof params?.runId === 'string' && params.runId ? params.runId : undefined
  const stats = (runId && engine.runs.get(runId)) ?? { runId: runId ?? 'unknown-run', searches: 0, cells: 0, fallbacks: 0, learned: 0, rankings: new Set(), indexes: new Set() }
  if (runId) engine.runs.delete(runId)
  engine.served += 1
  // What the run learned is written now, off the event loop (an `agent exec` process ends with its turn).
  if (stats.learned > 0) stats.shown?.at(-1)?.catalog.flushLearning().catch(() => {})
  if (!params?.catalogRef?.current && stats.searches === 0 && stats.cells === 0) return undefined
  const rankings = [...stats.rankings].join('+') || 'none'
  // How the index that served came to be: loaded from the index cache, built (and saved), derived.
  const indexes = [...stats.indexes].join('+') || 'none'
  // Whenever a search ranked otherwise than configured, the line says why (the first reason).
  const why = stats.degraded ? ` (configured hybrid: ${stats.degraded})` : ''
  const line =
    `${PLUGIN_ID} ${engine.version}: run ${stats.runId} served searches=${stats.searches} cells=${stats.cells}` +
    ` ranking=${rankings}${why} index=${indexes} fallbacks=${stats.fallbacks} learned=${stats.learned}`
  engine.log.info(line)
  return line
}

/** The file of OpenClaw's public diagnostic-event SDK in its package folder (its exports map names it). */
export function diagnosticRuntimeFile(dir) {
  const target = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).exports?.['./plugin-sdk/diagnostic-runtime']
  const file = typeof target === 'string' ? target : (target?.default ?? target?.import)
  return typeof file === 'string' ? join(dir, file) : undefined
}

/**
 * OpenClaw's public `emitDiagnosticEvent` (its plugin SDK's `plugin-sdk/diagnostic-runtime`), from
 * the package its patched Tool Search module belongs to; null when that package has none.
 */
export async function openclawDiagnostics(moduleUrl) {
  if (typeof moduleUrl !== 'string' || !moduleUrl.startsWith('file:')) return null
  let dir = dirname(fileURLToPath(moduleUrl))
  for (let depth = 0; depth < 4; depth++, dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (!existsSync(manifest)) continue
    if (JSON.parse(readFileSync(manifest, 'utf8')).name !== 'openclaw') continue
    const file = diagnosticRuntimeFile(dir)
    if (!file) return null
    const sdk = await import(pathToFileURL(file).href)
    return typeof sdk.emitDiagnosticEvent === 'function' ? sdk.emitDiagnosticEvent : null
  }
  return null
}
