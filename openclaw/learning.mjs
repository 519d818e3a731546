// Learned ranking: a successful call of a tool one of the run's searches showed teaches the catalog
// that the search's words led to it, in the scope of the run's OpenClaw agent (`learning.scope:
// "agent"`, the default) or of the whole gateway; and what each scope learned, for the audit and
// the status.
import { dirname } from 'node:path'

/** Searches of a run a call can be attributed to, newest kept. */
const REMEMBERED_SEARCHES = 16
/** Agents whose learned prior stays open between their runs (the most recent ones). */
const AGENTS_KEPT = 32

/**
 * The OpenClaw agent a run belongs to: its tool runtime's `agentId`, else the agent its session
 * key names (`agent:<id>:…`, OpenClaw's own form); undefined when neither says.
 */
export function agentOf(ctx) {
  const id = typeof ctx?.agentId === 'string' && ctx.agentId.trim() ? ctx.agentId : /^agent:([^:]+):/i.exec(String(ctx?.sessionKey ?? ''))?.[1]
  return id?.trim() ? id.trim().toLowerCase().slice(0, 128) : undefined
}

/** What a search showed (its entries, ranked by `catalog`): a later successful call of one of them teaches the catalog (toolCalled). */
export function rememberShown(engine, stats, { query, ranked, view, catalog }) {
  if (!engine.settings.learning) return
  stats.shown.push({ query, ids: new Set(ranked.map((entry) => entry.id)), view, catalog })
  if (stats.shown.length > REMEMBERED_SEARCHES) stats.shown.shift()
}

/**
 * The seam's call hook: OpenClaw runs `entry` (a `tool_call`, a cell's bridged call) and
 * `result` is its promise. When the call succeeds and one of the run's searches showed the tool,
 * the catalog learns that the search's words led to it (the latest such search); a failed or
 * refused call is counted and teaches nothing; a call no search showed is left alone.
 */
export function toolCalled(engine, { runtime, entry, result, release }) {
  if (!engine.active || !engine.settings.learning || !engine.settings.replace.ranking || typeof entry?.id !== 'string') return
  if (!engine.releaseAllowed(release?.version)) return
  const runId = typeof runtime?.ctx?.runId === 'string' && runtime.ctx.runId ? runtime.ctx.runId : 'unknown-run'
  const stats = engine.runs.get(runId)
  const search = stats?.shown?.findLast((shown) => shown.ids.has(entry.id))
  const id = search?.view.nativeIdOf.get(entry.id)
  if (!id) return
  const record = (ok) => {
    try {
      if (search.catalog.recordOutcome({ query: search.query, id, ok }).learned) stats.learned += 1
    } catch (error) {
      engine.warnOnce(`learn:${error?.code ?? error?.message}`, `a call could not be learned from: ${error?.code ? `${error.code} ` : ''}${error?.message ?? error}`)
    }
  }
  Promise.resolve(result).then(
    (value) => record(callSucceeded(value)),
    () => record(false),
  )
}

/**
 * Whether OpenClaw's call succeeded: `callEntry` resolves to `{ tool, result }`; a result marked
 * blocked (a hook or approval refused it) or an error is not a success.
 */
function callSucceeded(value) {
  const result = value?.result ?? value
  const status = result?.details?.status
  return result?.isError !== true && !['blocked', 'error', 'failed', 'denied', 'approval-pending'].includes(status)
}

/**
 * The catalog a run's searches rank with and its calls teach: the view's own (learning in the
 * gateway's scope) or, with `learning.scope: "agent"`, the same index learning in the scope of
 * the run's OpenClaw agent (`agent:<id>`), made once per view and agent.
 */
export function learningCatalog(engine, view, stats) {
  if (!engine.settings.learning || engine.settings.learningScope !== 'agent' || !stats.agentId) return view.catalog
  // One entry per agent, its latest view's: it keeps the agent's prior open between runs (a
  // prior no catalog holds is read from its file again); beyond AGENTS_KEPT the least recent go.
  const known = engine.agentCatalogs.get(stats.agentId)
  if (known?.view === view) return known.catalog
  const catalog = view.catalog.withLearningScope(`agent:${stats.agentId}`)
  engine.agentCatalogs.delete(stats.agentId)
  engine.agentCatalogs.set(stats.agentId, { view, catalog })
  if (engine.agentCatalogs.size > AGENTS_KEPT) engine.agentCatalogs.delete(engine.agentCatalogs.keys().next().value)
  return catalog
}

/**
 * What the gateway learned, per scope: how scopes are chosen (`agent` or `gateway`) and each
 * scope's prior in the learning folder (`learningFiles`), or null when learning is off.
 */
export function learningScopes(engine, view) {
  if (!engine.settings.learning) return null
  const status = view.catalog.learningStatus()
  const folder = status?.file ? dirname(status.file) : undefined
  let scopes = []
  try {
    scopes = folder ? engine.native.learningFiles(folder) : [status].filter(Boolean)
  } catch {
    scopes = [status].filter(Boolean)
  }
  return { scope: engine.settings.learningScope, folder: folder ?? null, scopes }
}
