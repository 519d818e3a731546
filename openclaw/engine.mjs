// The native engine behind OpenClaw's Tool Search seam (openclaw/seam.mjs): ranks a run's
// catalog with this package's index and runs `tool_search_code` cells in this package's
// contained child. OpenClaw keeps everything else (policy, approvals, hooks, execution, result
// handling, counters, session logs): the seam hands the engine OpenClaw's own entries, limit and
// bridge, and any failure here leaves that call to OpenClaw's own engine, logged.
//
// One engine per process, at globalThis[Symbol.for('openclaw-tool-search.engine')], installed by
// the plugin (openclaw/plugin.mjs) or `--import openclaw-tool-search/openclaw/register`; it
// serves only once the plugin has enabled it with its settings.
import { existsSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { setTimeout as delay } from 'node:timers/promises'
import { ENGINE_KEY, releaseSupport } from './seam.mjs'

const require = createRequire(import.meta.url)
const PACKAGE = require('../package.json')

export const PLUGIN_ID = 'openclaw-tool-search'

/** Settings under `plugins.entries.openclaw-tool-search.config` (openclaw.plugin.json's schema). */
export const DEFAULT_SETTINGS = Object.freeze({
  enabled: true,
  /** `auto`: hybrid when the model is installed, else lexical. */
  ranking: 'auto',
  modelDir: undefined,
  /** Folder of the tool-vector cache, or `false` for memory only. */
  vectorCache: undefined,
  /** Folder where a large catalog's search index is stored for the next process, or `false`; default: the vector cache's. */
  indexCache: undefined,
  /** Keep OpenClaw's own engine on releases outside the tested range (they are served when every structural check passes). */
  requireTestedRelease: false,
  /** Learned ranking: successful calls after a search move the tool up for requests like it (the cache folder keeps it). */
  learning: true,
  /** Whose calls teach whose ranking: `agent` (each OpenClaw agent its own prior) or `gateway` (one shared prior). */
  learningScope: 'agent',
  /** Query text on OpenTelemetry spans; default (undefined): OpenClaw's own diagnostics.otel.captureContent. */
  captureContent: undefined,
  replace: Object.freeze({ ranking: true, codeMode: true }),
})

/** Settings from a plugin config object, defaults filled in; throws on a value the schema refuses. */
export function resolveSettings(config) {
  const raw = config && typeof config === 'object' ? config : {}
  const replace = raw.replace && typeof raw.replace === 'object' ? raw.replace : {}
  const settings = {
    enabled: raw.enabled !== false,
    ranking: raw.ranking ?? DEFAULT_SETTINGS.ranking,
    modelDir: raw.modelDir,
    vectorCache: raw.vectorCache,
    indexCache: raw.indexCache,
    requireTestedRelease: raw.requireTestedRelease === true,
    learning: raw.learning !== false && raw.learning?.enabled !== false,
    learningScope: raw.learning?.scope ?? DEFAULT_SETTINGS.learningScope,
    captureContent: raw.captureContent,
    replace: {
      ranking: replace.ranking !== false,
      codeMode: replace.codeMode !== false,
    },
  }
  if (!['auto', 'lexical', 'hybrid'].includes(settings.ranking)) {
    throw new Error(`ranking must be "auto", "lexical" or "hybrid", not ${JSON.stringify(settings.ranking)}`)
  }
  if (settings.modelDir !== undefined && typeof settings.modelDir !== 'string') throw new Error('modelDir must be a string')
  if (settings.vectorCache !== undefined && settings.vectorCache !== false && typeof settings.vectorCache !== 'string') {
    throw new Error('vectorCache must be a folder path or false')
  }
  if (settings.indexCache !== undefined && typeof settings.indexCache !== 'boolean' && (typeof settings.indexCache !== 'string' || settings.indexCache === '')) {
    throw new Error('indexCache must be a folder path, true or false')
  }
  if (raw.requireTestedRelease !== undefined && typeof raw.requireTestedRelease !== 'boolean') throw new Error('requireTestedRelease must be true or false')
  if (raw.learning !== undefined && typeof raw.learning !== 'boolean' && !isObject(raw.learning)) throw new Error('learning must be true, false or { enabled, scope }')
  if (isObject(raw.learning)) {
    const unknown = Object.keys(raw.learning).filter((key) => key !== 'enabled' && key !== 'scope')
    if (unknown.length > 0) throw new Error(`learning has no setting ${unknown.join(', ')} (only enabled, scope)`)
    if (raw.learning.enabled !== undefined && typeof raw.learning.enabled !== 'boolean') throw new Error('learning.enabled must be true or false')
  }
  if (!['agent', 'gateway'].includes(settings.learningScope)) throw new Error(`learning.scope must be "agent" or "gateway", not ${JSON.stringify(settings.learningScope)}`)
  if (raw.captureContent !== undefined && typeof raw.captureContent !== 'boolean') throw new Error('captureContent must be true or false')
  return settings
}

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

/** Entries whose tools are new since this many builds are forgotten by the record cache. */
const RECORD_GENERATIONS = 4
/** Builds that repair refused records, at most (a record can have one refusal per field). */
const REPAIR_ROUNDS = 4
/** Refused records named in a run's warning; the rest are counted. */
const REPAIRS_NAMED = 5
/**
 * How long a search waits for the tool vectors of a hybrid catalog, at most: while they are read
 * from the vector cache (a one-shot `agent exec` process finds them there), or when at most
 * NEARLY_READY are left to embed. A catalog still embedding more ranks lexically at once.
 */
const VECTOR_WAIT_MS = 2000
/** Searches of a run a call can be attributed to (learned ranking), newest kept. */
const REMEMBERED_SEARCHES = 16
const NEARLY_READY = 64
/** Agents whose learned prior stays open between their runs (the most recent ones). */
const AGENTS_KEPT = 32
const VECTOR_POLL_MS = 10
/** The files a model folder holds. */
const MODEL_FILES = ['config.json', 'vocab.txt', 'model.safetensors']

class Engine {
  constructor() {
    this.version = PACKAGE.version
    /** Set by the plugin; until then the engine serves nothing. */
    this.settings = undefined
    /** Until the plugin hands over OpenClaw's logger, lines wait here (stderr at exit if it never does). */
    this.early = []
    this.log = {
      info: (message) => this.early.push(['info', message]),
      warn: (message) => this.early.push(['warn', message]),
    }
    process.once('exit', () => {
      for (const [, message] of this.early.splice(0)) process.stderr.write(`${message}\n`)
    })
    this.native = undefined
    this.nativeError = undefined
    /** Per catalog entries array: Promise<View>. */
    this.views = new WeakMap()
    /** Per OpenClaw catalog: the last filtered view (allowedIds / includeMcp), checked by identity. */
    this.filtered = new WeakMap()
    this.lastView = undefined
    /** Record cache: entry id → its content then, and its record. Equal entries of later runs get the same record object. */
    this.records = new Map()
    /** Per record the native catalog refused: the record indexed instead, and what was changed. */
    this.repairs = new WeakMap()
    this.generation = 0
    /** Per run id: what the engine served. */
    this.runs = new Map()
    this.warned = new Set()
    this.seamModules = []
    /** OpenClaw's public emitDiagnosticEvent, once found from its patched module (or null). */
    this.emitDiagnostic = undefined
    /** Per OpenClaw version: whether this engine serves it (releaseAllowed). */
    this.releases = new Map()
    /** Catalog versions made, by how (`status()`): a new catalog's index state, or `unchanged`. */
    this.versions = {}
    /** Runs whose line was written. */
    this.served = 0
    /** Per OpenClaw agent, its latest view and learning catalog (learningCatalog), least recent first. */
    this.agentCatalogs = new Map()
  }

  /** Called by the plugin's register(): settings, OpenClaw's logger. */
  configure(settings, logger, openclawConfig) {
    this.settings = settings
    const telemetry = this.telemetry()
    if (telemetry && settings.enabled) telemetry.configureTelemetry({ captureContent: settings.captureContent ?? openclawCapturesContent(openclawConfig) })
    if (logger && this.log !== logger) {
      this.log = logger
      // Lines from before the plugin registered (the seam under --import) go to OpenClaw's log.
      for (const [level, message] of this.early.splice(0)) logger[level](message)
    }
  }

  get active() {
    return this.settings?.enabled === true
  }

  /** The seam is in place but the plugin never enabled the engine: say so once, serve nothing. */
  inactive() {
    if (this.settings === undefined) {
      this.warnOnce(
        'inactive',
        'the seam is installed (--import) but the plugin is not enabled in this process ' +
          "(plugins.entries.openclaw-tool-search); OpenClaw's built-in Tool Search serves it",
      )
    }
    return undefined
  }

  /**
   * The patched module says it was evaluated, with its release: the version, its support
   * (`tested` / `untested`) and the release cases the seam found (seam.mjs RELEASE_CASES).
   */
  seamLoaded(url, release) {
    this.seamModules.push({ url, release: typeof release === 'string' ? { version: release } : release })
    if (this.emitDiagnostic === undefined) {
      this.emitDiagnostic = null
      openclawDiagnostics(url).then(
        (emit) => {
          this.emitDiagnostic = emit
        },
        () => {},
      )
    }
  }

  /** The package's OpenTelemetry module (js/telemetry.js), the copy index.js uses; null if it cannot load. */
  telemetry() {
    if (this.telemetryModule !== undefined) return this.telemetryModule
    try {
      this.telemetryModule = this.requirePackage('js/telemetry.js')
    } catch {
      this.telemetryModule = null
    }
    return this.telemetryModule
  }

  /**
   * What the engine did, in OpenClaw's public diagnostic events (type `tool_search.*`) for
   * OpenClaw's own subscribers, when diagnostics are on. Never query text or tool arguments.
   */
  diagnostic(event) {
    try {
      this.emitDiagnostic?.(event)
    } catch {
      // a failing subscriber must not fail the search
    }
  }

  /** A request left to OpenClaw's own engine: counted in the run's line, a span, a diagnostic event. */
  fellBack(stats, kind, reason, detail) {
    stats.fallbacks += 1
    this.telemetry()?.recordFallback(kind, reason, detail)
    this.diagnostic({ type: 'tool_search.fallback', kind, reason })
  }

  /**
   * Whether this engine serves a module of this OpenClaw release: a tested release always; an
   * untested one (newer, a beta, a hot fix) whose module passed every structural check unless
   * `requireTestedRelease` is set. Says which, once per version, in OpenClaw's log.
   */
  releaseAllowed(version) {
    if (typeof version !== 'string' || this.settings === undefined) return true
    const known = this.releases.get(version)
    if (known !== undefined) return known
    const release = releaseSupport(version)
    let allowed = release.support !== 'unsupported'
    if (release.support === 'unsupported') {
      this.seamRefused(release.reason)
    } else if (release.support === 'untested' && this.settings.requireTestedRelease) {
      allowed = false
      this.seamRefused(`${release.reason}, and requireTestedRelease is set`)
    } else if (release.support === 'untested') {
      this.warnOnce(
        `untested:${version}`,
        `${release.reason}: served natively because every structural check of its Tool Search module passed ` +
          "(set requireTestedRelease: true to keep OpenClaw's built-in Tool Search on untested releases)",
      )
    }
    this.releases.set(version, allowed)
    return allowed
  }

  /** The release of the patched Tool Search module in this process (version, support, cases). */
  servedRelease() {
    return this.seamModules[0]?.release
  }

  /** Whether OpenClaw's Tool Search module in this process carries the seam. */
  seamPatched() {
    return this.seamModules.length > 0
  }

  /** One line, whoever notices first (the plugin or the load hook), for one reason. */
  seamRefused(reason) {
    this.warnOnce(`seam:${reason}`, `OpenClaw's own Tool Search was left in place: ${reason}`)
  }

  /** Reports what the load hook does with OpenClaw's Tool Search module, now and later. */
  watchSeam(state) {
    if (this.watching) return
    this.watching = true
    const report = (module) => {
      if (!module.patched) this.seamRefused(module.reason)
    }
    for (const module of state.modules) report(module)
    state.listeners.add(report)
  }

  /** One warning per distinct text, in OpenClaw's log. */
  warnOnce(key, message) {
    if (this.warned.has(key)) return
    this.warned.add(key)
    this.log.warn(`${PLUGIN_ID}: ${message}`)
  }

  /**
   * A module of the package from its own copy (the plugin's rootDir): OpenClaw may evaluate plugin
   * modules from a temporary copy of their sources, which need not hold the addon.
   */
  requirePackage(file) {
    const own = this.packageRoot ? join(this.packageRoot, file) : undefined
    return own && existsSync(own) ? require(own) : require(`../${file}`)
  }

  loadNative() {
    if (this.native || this.nativeError) return this.native
    try {
      this.native = this.requirePackage('index.js')
    } catch (error) {
      this.nativeError = error
      this.warnOnce('native', `the native addon could not be loaded (${error?.message ?? error}); OpenClaw's built-in Tool Search stays in use`)
    }
    return this.native
  }

  statsFor(ctx) {
    const runId = typeof ctx?.runId === 'string' && ctx.runId ? ctx.runId : 'unknown-run'
    let stats = this.runs.get(runId)
    if (!stats) {
      stats = { runId, sessionKey: ctx?.sessionKey, agentId: agentOf(ctx), searches: 0, cells: 0, fallbacks: 0, learned: 0, shown: [], rankings: new Set(), indexes: new Set(), searchMs: 0 }
      this.runs.set(runId, stats)
      // Runs that never report their end (a crashed turn) must not grow this map without bound.
      if (this.runs.size > 1000) this.runs.delete(this.runs.keys().next().value)
    }
    return stats
  }

  /**
   * The seam's run-end hook (OpenClaw tears down the run's catalog): one line in OpenClaw's log
   * saying what this engine served in the run.
   */
  runEnded(params) {
    if (!this.active || !this.releaseAllowed(this.servedRelease()?.version)) return undefined
    const runId = typeof params?.runId === 'string' && params.runId ? params.runId : undefined
    const stats = (runId && this.runs.get(runId)) ?? { runId: runId ?? 'unknown-run', searches: 0, cells: 0, fallbacks: 0, learned: 0, rankings: new Set(), indexes: new Set() }
    if (runId) this.runs.delete(runId)
    this.served += 1
    // What the run learned is written now, off the event loop (an `agent exec` process ends with its turn).
    if (stats.learned > 0) stats.shown?.at(-1)?.catalog.flushLearning().catch(() => {})
    if (!params?.catalogRef?.current && stats.searches === 0 && stats.cells === 0) return undefined
    const rankings = [...stats.rankings].join('+') || 'none'
    // How the index that served came to be: loaded from the index cache, built (and saved), derived.
    const indexes = [...stats.indexes].join('+') || 'none'
    // Whenever a search ranked otherwise than configured, the line says why (the first reason).
    const why = stats.degraded ? ` (configured hybrid: ${stats.degraded})` : ''
    const line =
      `${PLUGIN_ID} ${this.version}: run ${stats.runId} served searches=${stats.searches} cells=${stats.cells}` +
      ` ranking=${rankings}${why} index=${indexes} fallbacks=${stats.fallbacks} learned=${stats.learned}`
    this.log.info(line)
    return line
  }

  // ---------------------------------------------------------------- ranking

  /** The seam's ranking hook: OpenClaw's visible entries in this engine's order, or undefined for OpenClaw's own. */
  async rank({ runtime, catalog, entries, query, limit, release }) {
    if (!this.active) return this.inactive()
    if (!this.settings.replace.ranking || typeof query !== 'string' || !this.releaseAllowed(release?.version)) return undefined
    const stats = this.statsFor(runtime?.ctx)
    try {
      const native = this.loadNative()
      if (!native) {
        this.fellBack(stats, 'ranking', 'native_unavailable', this.nativeError?.message)
        return undefined
      }
      const started = performance.now()
      const view = await this.viewFor(catalog, entries)
      if (view.problem) {
        this.fellBack(stats, 'ranking', 'catalog_not_indexable', view.problem)
        this.warnOnce(`view:${view.problem}`, `${view.problem}; OpenClaw's built-in ranking answers this catalog's searches`)
        return undefined
      }
      const status = await vectorsFor(view.catalog)
      const ranking = status.active
      // The run's agent learns (and ranks with) its own prior, unless the gateway shares one.
      const ranker = this.learningCatalog(view, stats)
      const hits = ranking === 'hybrid' ? await ranker.searchAsync(query, { limit }) : ranker.search(query, { limit })
      if (status.ranking === 'hybrid' && ranking !== 'hybrid') stats.degraded ??= hybridMissing(status)
      if (view.repaired.length > 0 && stats.repairsWarned !== view) {
        stats.repairsWarned = view
        this.log.warn(`${PLUGIN_ID}: ${repairsMessage(view.repaired, entries.length)}`)
      }
      const ranked = []
      for (const hit of hits) {
        const entry = view.byNativeId.get(hit.id)
        if (entry) ranked.push(entry)
      }
      exactMatchFirst(ranked, view, query, limit, release)
      if (this.settings.learning) {
        // What this search showed: a later successful call of one of them teaches the catalog (toolCalled).
        stats.shown.push({ query, ids: new Set(ranked.map((entry) => entry.id)), view, catalog: ranker })
        if (stats.shown.length > REMEMBERED_SEARCHES) stats.shown.shift()
      }
      stats.searches += 1
      stats.rankings.add(ranking)
      stats.indexes.add(status.index?.state ?? 'unknown')
      if (status.index?.warning) this.warnOnce(`index:${status.index.warning}`, status.index.warning)
      const ms = performance.now() - started
      stats.searchMs += ms
      this.diagnostic({
        type: 'tool_search.search',
        durationMs: ms,
        queryLength: query.length,
        hits: ranked.length,
        weakMatch: hits.length === 0 || hits[0]?.weak === true,
        ranking,
        index: status.index?.state ?? 'unknown',
      })
      return ranked
    } catch (error) {
      this.fellBack(stats, 'ranking', 'search_failed', `${error?.code ? `${error.code} ` : ''}${error?.message ?? error}`)
      this.warnOnce(`rank:${error?.code ?? error?.message}`, `search fell back to OpenClaw's built-in ranking: ${error?.code ? `${error.code} ` : ''}${error?.message ?? error}`)
      return undefined
    }
  }

  /**
   * The seam's call hook: OpenClaw runs `entry` (a `tool_call`, a cell's bridged call) and
   * `result` is its promise. When the call succeeds and one of the run's searches showed the tool,
   * the catalog learns that the search's words led to it (the latest such search); a failed or
   * refused call is counted and teaches nothing; a call no search showed is left alone.
   */
  toolCalled({ runtime, entry, result, release }) {
    if (!this.active || !this.settings.learning || !this.settings.replace.ranking || typeof entry?.id !== 'string') return
    if (!this.releaseAllowed(release?.version)) return
    const runId = typeof runtime?.ctx?.runId === 'string' && runtime.ctx.runId ? runtime.ctx.runId : 'unknown-run'
    const stats = this.runs.get(runId)
    const search = stats?.shown?.findLast((shown) => shown.ids.has(entry.id))
    const id = search?.view.nativeIdOf.get(entry.id)
    if (!id) return
    const record = (ok) => {
      try {
        if (search.catalog.recordOutcome({ query: search.query, id, ok }).learned) stats.learned += 1
      } catch (error) {
        this.warnOnce(`learn:${error?.code ?? error?.message}`, `a call could not be learned from: ${error?.code ? `${error.code} ` : ''}${error?.message ?? error}`)
      }
    }
    Promise.resolve(result).then(
      (value) => record(callSucceeded(value)),
      () => record(false),
    )
  }

  /**
   * The catalog a run's searches rank with and its calls teach: the view's own (learning in the
   * gateway's scope) or, with `learning.scope: "agent"`, the same index learning in the scope of
   * the run's OpenClaw agent (`agent:<id>`), made once per view and agent.
   */
  learningCatalog(view, stats) {
    if (!this.settings.learning || this.settings.learningScope !== 'agent' || !stats.agentId) return view.catalog
    // One entry per agent, its latest view's: it keeps the agent's prior open between runs (a
    // prior no catalog holds is read from its file again); beyond AGENTS_KEPT the least recent go.
    const known = this.agentCatalogs.get(stats.agentId)
    if (known?.view === view) return known.catalog
    const catalog = view.catalog.withLearningScope(`agent:${stats.agentId}`)
    this.agentCatalogs.delete(stats.agentId)
    this.agentCatalogs.set(stats.agentId, { view, catalog })
    if (this.agentCatalogs.size > AGENTS_KEPT) this.agentCatalogs.delete(this.agentCatalogs.keys().next().value)
    return catalog
  }

  /**
   * The seam's catalog hook (OpenClaw registered a run's catalog): start building its native
   * index now, off the event loop, so the first search finds it ready (with hybrid ranking, its
   * tool vectors too: read from the vector cache or computed in the background).
   */
  catalogRegistered(catalog) {
    if (!this.active || !this.settings.replace.ranking || !Array.isArray(catalog?.entries)) return
    if (!this.releaseAllowed(this.servedRelease()?.version) || !this.loadNative()) return
    // A failed build is reported (and falls back) when a search uses it.
    this.viewFor(catalog, catalog.entries).catch(() => {})
  }

  /** The native view of an entries array: the whole catalog's, or a filtered one's. */
  viewFor(catalog, entries) {
    const cached = this.views.get(entries)
    if (cached) return cached
    if (entries !== catalog.entries) {
      const last = this.filtered.get(catalog)
      if (last && sameList(last.entries, entries)) return last.view
      const view = this.buildView(entries, false)
      this.filtered.set(catalog, { entries, view })
      return view
    }
    const view = this.buildView(entries, true)
    this.views.set(entries, view)
    return view
  }

  /**
   * The record of an entry: the same record object for an entry of a later run with the same id
   * and the same content (its strings equal, its schema the same object), so the package's
   * record cache (js/catalog.js) finds the tool without serializing it again.
   */
  recordFor(entry) {
    const parameters = isObject(entry.parameters) ? entry.parameters : undefined
    const mcp = isObject(entry.mcp) ? entry.mcp : undefined
    const known = this.records.get(entry.id)
    if (
      known &&
      known.source === entry.source &&
      known.sourceName === entry.sourceName &&
      known.name === entry.name &&
      known.label === entry.label &&
      known.description === entry.description &&
      known.parameters === parameters &&
      known.mcp === mcpKey(mcp)
    ) {
      known.used = this.generation
      return known.record
    }
    const record = { source: entry.source, owner: entry.sourceName, name: entry.name, description: entry.description ?? '' }
    if (typeof entry.label === 'string' && entry.label) record.label = entry.label
    if (parameters) record.inputSchema = parameters
    if (mcp && typeof mcp.serverName === 'string' && typeof mcp.toolName === 'string') {
      record.mcp = { serverName: mcp.serverName, toolName: mcp.toolName }
      if (typeof mcp.safeServerName === 'string') record.mcp.safeServerName = mcp.safeServerName
      if (typeof mcp.operation === 'string') record.mcp.operation = mcp.operation
    }
    this.records.set(entry.id, {
      source: entry.source,
      sourceName: entry.sourceName,
      name: entry.name,
      label: entry.label,
      description: entry.description,
      parameters,
      mcp: mcpKey(mcp),
      record,
      used: this.generation,
    })
    return record
  }

  sweepRecords(live) {
    if (this.records.size <= 2 * live + 1000) return
    for (const [key, known] of this.records) {
      if (known.used < this.generation - RECORD_GENERATIONS) this.records.delete(key)
    }
  }

  catalogOptions() {
    // OpenClaw passes its own limit with each search: the catalog must not clamp below it.
    const limits = this.native.toolSearchLimits()
    const options = { maxSearchLimit: limits.maxSearchLimitCap, searchDefaultLimit: limits.searchDefaultLimitDefault }
    if (this.settings.ranking !== 'auto') options.ranking = this.settings.ranking
    if (this.settings.modelDir) options.model = this.settings.modelDir
    if (this.settings.vectorCache !== undefined) options.vectorCache = this.settings.vectorCache
    if (this.settings.indexCache !== undefined) options.indexCache = this.settings.indexCache
    if (this.settings.learning) options.learning = true
    return options
  }

  async buildView(entries, whole) {
    const { ToolCatalog } = this.native
    this.generation += 1
    const originals = entries.map((entry) => this.recordFor(entry))
    const records = originals.map((record) => this.repairs.get(record)?.record ?? record)
    this.sweepRecords(records.length)
    const options = this.catalogOptions()
    // A new run of a whole catalog with the same settings: the last one's next version (the
    // catalog derives it owner by owner when few changed, and equals a full build either way).
    const last = whole && this.lastView?.options === JSON.stringify(options) ? this.lastView.catalog : undefined
    let catalog = last ? await last.updateAsync(records) : await ToolCatalog.build(records, options)
    // Per tool, not per catalog: a record the native catalog refuses is indexed in a form it takes
    // (the refused part dropped, or its name made safe), mapped back to OpenClaw's own entry; the
    // rest of the catalog is untouched. OpenClaw keeps validating and running its own calls.
    for (let round = 0; round < REPAIR_ROUNDS && catalog.excluded.length > 0; round++) {
      const taken = new Set(records.map(nativeId))
      let changed = false
      for (const excluded of catalog.excluded) {
        const repair = repairRecord(records[excluded.index], excluded, taken, round)
        if (!repair) continue
        const original = originals[excluded.index]
        const notes = this.repairs.get(original)?.notes ?? []
        this.repairs.set(original, { record: repair.record, notes: [...notes, `${printable(excluded.reason)}: ${repair.note}`] })
        records[excluded.index] = repair.record
        changed = true
      }
      if (!changed) break
      catalog = await ToolCatalog.build(records, options)
    }
    // How this version came to be: unchanged from the last run's, derived from it (an update),
    // built, or loaded from the index cache.
    const how = last && catalog.fingerprint === last.fingerprint ? 'unchanged' : (catalog.rankingStatus().index?.state ?? 'unknown')
    this.versions[how] = (this.versions[how] ?? 0) + 1
    const view = { catalog, byId: new Map(), byNativeId: new Map(), nativeIdOf: new Map(), records, repaired: [], problem: undefined }
    for (let i = 0; i < entries.length; i++) {
      view.byId.set(entries[i].id, entries[i])
      view.byNativeId.set(nativeId(records[i]), entries[i])
      view.nativeIdOf.set(entries[i].id, nativeId(records[i]))
      if (records[i] !== originals[i]) view.repaired.push({ entry: entries[i], notes: this.repairs.get(originals[i]).notes })
    }
    if (catalog.size !== entries.length) {
      const first = catalog.excluded[0]
      view.problem =
        `${entries.length - catalog.size} of ${entries.length} tools cannot be indexed natively` +
        (first ? ` (first: ${printable(entries[first.index]?.id ?? first.name ?? 'a tool')}: ${first.code} ${printable(first.reason)})` : '')
    }
    if (whole) this.lastView = { catalog, options: JSON.stringify(options), view }
    return view
  }

  /**
   * The audit of the live gateway's catalog (the whole catalog its latest run registered), for
   * the plugin's gateway method `openclaw-tool-search.audit`: the package's `catalog.audit()`,
   * each tool also named by OpenClaw's own id (`openclawId`), and the releases that served it.
   */
  async auditLive(params) {
    const findability = params?.findability
    if (findability !== undefined && typeof findability !== 'boolean') throw coded('INVALID_REQUEST', 'findability must be true or false')
    const view = await this.lastView?.view
    if (!view) throw coded('UNAVAILABLE', 'no run has registered a Tool Search catalog in this gateway yet: run a turn first')
    const audit = await view.catalog.audit(findability === undefined ? undefined : { findability })
    for (const tool of audit.tools) {
      const entry = view.byNativeId.get(tool.id)
      if (entry) tool.openclawId = entry.id
    }
    return { ...audit, gateway: { openclaw: this.servedRelease()?.version ?? null, plugin: this.version }, learning: this.learningScopes(view) }
  }

  /**
   * The live gateway's catalog as this engine indexed it (its latest run's whole catalog), for the
   * plugin's gateway method `openclaw-tool-search.catalog`: the records (repaired ones as indexed),
   * the native id and OpenClaw's id of each, the catalog options and fingerprint. The CLI reads the saved answer
   * (`openclaw-tool-search search live.json "…"`) to replay a search offline.
   */
  async catalogLive() {
    const last = this.lastView
    const view = await last?.view
    if (!view) throw coded('UNAVAILABLE', 'no run has registered a Tool Search catalog in this gateway yet: run a turn first')
    // Per record, as indexed: the native id it ranks under and OpenClaw's id of its entry.
    const nativeIds = view.records.map(nativeId)
    return {
      gateway: { openclaw: this.servedRelease()?.version ?? null, plugin: this.version },
      fingerprint: view.catalog.fingerprint,
      options: JSON.parse(last.options),
      records: view.records,
      nativeIds,
      openclawIds: nativeIds.map((id) => view.byNativeId.get(id)?.id ?? null),
    }
  }

  /**
   * What the gateway learned, per scope: how scopes are chosen (`agent` or `gateway`) and each
   * scope's prior in the learning folder (`learningFiles`), or null when learning is off.
   */
  learningScopes(view) {
    if (!this.settings.learning) return null
    const status = view.catalog.learningStatus()
    const folder = status?.file ? dirname(status.file) : undefined
    let scopes = []
    try {
      scopes = folder ? this.native.learningFiles(folder) : [status].filter(Boolean)
    } catch {
      scopes = [status].filter(Boolean)
    }
    return { scope: this.settings.learningScope, folder: folder ?? null, scopes }
  }

  /**
   * What the engine holds in this process, for the plugin's gateway method
   * `openclaw-tool-search.status` (a long-lived gateway's memory accounting): runs it tracks and
   * has served, catalog versions by how they were made, its record cache, the package's native
   * memory (catalogs held, builds kept, stored records), the process's memory and the learning
   * scopes.
   */
  async status() {
    const memory = process.memoryUsage()
    const view = this.lastView?.view
    let native = null
    try {
      native = this.native?.nativeMemory?.() ?? null
    } catch {
      native = null
    }
    return {
      gateway: { openclaw: this.servedRelease()?.version ?? null, plugin: this.version },
      active: this.active,
      runs: { open: this.runs.size, served: this.served },
      versions: { ...this.versions },
      records: this.records.size,
      native,
      process: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, externalBytes: memory.external, arrayBuffersBytes: memory.arrayBuffers },
      learning: view && this.settings?.learning ? this.learningScopes(view) : null,
    }
  }

  // ---------------------------------------------------------------- code mode

  /** The seam's code-mode hook: a Promise of the cell's value, or undefined for OpenClaw's own child. */
  runCodeModeChild(params, openclaw) {
    if (!this.active) return this.inactive()
    if (!this.settings.replace.codeMode || !this.releaseAllowed(openclaw?.release?.version)) return undefined
    const native = this.loadNative()
    if (!native) return undefined
    const stats = this.statsFor(params.runtime?.ctx)
    return (async () => {
      const result = await native.runCodeCell(params.code, {
        timeoutMs: params.config?.codeTimeoutMs,
        signal: params.signal,
        logStyle: 'json',
        bridge: async (op, args, signal) => {
          const value = await openclaw.runCodeModeBridgeRequest(params.runtime, op, args, {
            parentToolCallId: params.parentToolCallId,
            signal,
            onUpdate: params.onUpdate,
          })
          return openclaw.toToolSearchJsonSafe(value)
        },
      })
      if (!result.ok && result.error?.code === 'CODE_MODE_UNAVAILABLE') {
        this.fellBack(stats, 'code_cell', 'code_mode_unavailable', result.error.message)
        this.warnOnce('code-unavailable', `code cells run in OpenClaw's own child: ${result.error.message}`)
        return openclaw.builtin(params)
      }
      for (const line of result.logs ?? []) params.logs.push(line)
      stats.cells += 1
      const bridgeCalls = result.telemetry?.bridgeCalls ?? {}
      this.diagnostic({
        type: 'tool_search.code_cell',
        durationMs: result.telemetry?.durationMs,
        outcome: result.ok ? 'ok' : 'error',
        ...(result.ok ? {} : { errorCode: result.error?.code }),
        bridgeCalls: { search: bridgeCalls.search ?? 0, describe: bridgeCalls.describe ?? 0, call: bridgeCalls.call ?? 0 },
        warm: result.telemetry?.warm === true,
      })
      // Where OpenClaw makes a cell's value JSON-safe differs by release (openclaw.release.cellJsonSafe):
      // up to 2026.9.2 its runCodeMode passes the child's value through toToolSearchJsonSafe, from
      // 2026.9.3 only its child does. This value crossed from the contained child as JSON text, so it
      // is JSON-safe already and the model sees the same value in both cases.
      if (result.ok) return result.value
      throw new Error(cellErrorMessage(result.error))
    })()
  }
}

/**
 * The exact-match rule of the release's own ranking, where it differs from the native one. The
 * native ranking puts every entry whose id or name equals the trimmed query (ignoring case) first,
 * which is OpenClaw's rule up to 2026.9.4 (`exactMatch: 'id-or-name'`). From 2026.9.5
 * (`'id-first'`) an entry whose id is spelled exactly is the only exact match, so it leads.
 */
function exactMatchFirst(ranked, view, query, limit, release) {
  if (release?.exactMatch !== 'id-first') return
  const spelled = view.byId.get(query.trim())
  if (!spelled || ranked[0] === spelled) return
  const at = ranked.indexOf(spelled)
  if (at >= 0) ranked.splice(at, 1)
  ranked.unshift(spelled)
  if (ranked.length > limit) ranked.length = limit
}

/**
 * The catalog's ranking status once its tool vectors are ready, or as soon as waiting would not
 * help: a hybrid catalog whose vectors are being read (from the vector cache) or nearly all
 * embedded is waited for, at most VECTOR_WAIT_MS; one still embedding many ranks lexically now.
 */
async function vectorsFor(catalog) {
  let status = catalog.rankingStatus()
  const deadline = performance.now() + VECTOR_WAIT_MS
  while (status.ranking === 'hybrid' && status.active !== 'hybrid' && performance.now() < deadline) {
    if (status.state !== 'pending' && !(status.state === 'embedding' && status.total - status.done <= NEARLY_READY)) break
    await delay(VECTOR_POLL_MS)
    status = catalog.rankingStatus()
  }
  return status
}

/**
 * Whether OpenClaw's call succeeded: `callEntry` resolves to `{ tool, result }`; a result marked
 * blocked (a hook or approval refused it) or an error is not a success.
 */
function coded(code, message) {
  return Object.assign(new Error(message), { code })
}

function callSucceeded(value) {
  const result = value?.result ?? value
  const status = result?.details?.status
  return result?.isError !== true && !['blocked', 'error', 'failed', 'denied', 'approval-pending'].includes(status)
}

/** Why a hybrid catalog ranked lexically. */
function hybridMissing(status) {
  if (status.state === 'failed') return status.error ?? 'the tool vectors could not be made'
  return `tool vectors warming: ${status.done.toLocaleString('en-US')} of ${status.total.toLocaleString('en-US')}`
}

/**
 * What is wrong with the plugin's model settings, before any catalog is built: a `modelDir`
 * that is missing, not a folder or without a model file, or `ranking: 'hybrid'` with no model
 * installed. Undefined when nothing is.
 */
export function modelProblem(settings, capability) {
  if (settings.modelDir !== undefined) {
    let stat
    try {
      stat = statSync(settings.modelDir)
    } catch {
      return `modelDir ${settings.modelDir} does not exist`
    }
    if (!stat.isDirectory()) return `modelDir ${settings.modelDir} is not a folder`
    const missing = MODEL_FILES.filter((file) => !existsSync(join(settings.modelDir, file)))
    if (missing.length > 0) return `modelDir ${settings.modelDir} has no ${missing.join(', ')}`
    return undefined
  }
  if (settings.ranking === 'hybrid' && capability && !capability.hybrid) return `ranking is hybrid but no model is installed (${capability.reason ?? 'no model folder'})`
  return undefined
}

/**
 * The OpenClaw agent a run belongs to: its tool runtime's `agentId`, else the agent its session
 * key names (`agent:<id>:…`, OpenClaw's own form); undefined when neither says.
 */
function agentOf(ctx) {
  const id = typeof ctx?.agentId === 'string' && ctx.agentId.trim() ? ctx.agentId : /^agent:([^:]+):/i.exec(String(ctx?.sessionKey ?? ''))?.[1]
  return id?.trim() ? id.trim().toLowerCase().slice(0, 128) : undefined
}

/** The native catalog's id of a record (`<source>:<owner>:<name>`). */
function nativeId(record) {
  return `${record.source ?? 'openclaw'}:${record.owner}:${record.name}`
}

// Characters the native catalog refuses in a name or owner: controls, format characters (zero
// width, bidirectional overrides, tags) and the fillers and selectors that render as nothing.
const UNSAFE_IN_NAMES = /[\p{Cc}\p{Cf}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u3164\uFE00-\uFE0F\uFFA0\u{E0000}-\u{E0FFF}]/gu

/** A text with the characters a log line should not carry as they are written `\u{…}`. */
function printable(text) {
  return String(text).replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u034F\u115F\u1160\u3164\uFE00-\uFE0F\uFFA0]/gu, (c) => `\\u{${c.codePointAt(0).toString(16).toUpperCase()}}`)
}

/** `text` as a name or owner the native catalog takes, unique among `taken` ids of this source/owner. */
function safeIdentifier(text, round) {
  const cleaned = Array.from(String(text).replace(UNSAFE_IN_NAMES, '').replaceAll(':', '_').trim()).slice(0, 200).join('')
  // A second refusal of a cleaned name: a plain ASCII stand-in.
  return round === 0 && cleaned ? cleaned : `tool_${hashText(String(text))}`
}

function hashText(text) {
  let hash = 2166136261
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619) >>> 0
  return hash.toString(36)
}

/**
 * The record the native catalog is asked to index instead of one it refused, by the refusal's
 * code and field (never its wording), and a note saying what changed; undefined when there is no
 * repair for it.
 */
function repairRecord(record, excluded, taken, round) {
  const without = (...keys) => Object.fromEntries(Object.entries(record).filter(([key]) => !keys.includes(key)))
  const renamed = (key) => {
    const next = { ...record }
    const base = safeIdentifier(record[key], round)
    next[key] = base
    for (let n = 2; taken.has(nativeId(next)); n++) next[key] = `${base}_${n}`
    taken.add(nativeId(next))
    return next
  }
  switch (excluded.code) {
    case 'INVALID_SCHEMA':
      if (excluded.field === 'inputSchema' && 'inputSchema' in record) return { record: without('inputSchema'), note: 'indexed without its input schema' }
      return undefined
    case 'UNREADABLE_RECORD': {
      const minimal = { source: record.source, owner: record.owner, name: record.name, description: typeof record.description === 'string' ? record.description : '' }
      return Object.keys(record).length > Object.keys(minimal).length ? { record: minimal, note: 'indexed by its name and description only' } : undefined
    }
    case 'CONTROL_TOOL':
      return { record: renamed('name'), note: 'a control tool\'s name, indexed under another' }
    case 'INVALID_FIELD':
      switch (excluded.field) {
        case 'name':
        case 'owner': {
          const next = renamed(excluded.field)
          return { record: next, note: `indexed as ${printable(nativeId(next))}` }
        }
        case 'mcp':
          return { record: without('mcp'), note: 'indexed without its MCP routing data' }
        case 'label':
          return { record: without('label'), note: 'indexed without its label' }
        case 'description':
          return { record: { ...record, description: '' }, note: 'indexed without its description' }
        case 'source':
          return { record: { ...record, source: 'client' }, note: 'indexed as a client tool' }
        default:
          return undefined
      }
    default:
      return undefined
  }
}

/** The run's one warning about the tools indexed in a repaired form. */
function repairsMessage(repaired, total) {
  const named = repaired.slice(0, REPAIRS_NAMED).map(({ entry, notes }) => `${printable(entry.id)} (owner ${printable(entry.sourceName)}): ${notes.join('; ')}`)
  const more = repaired.length > REPAIRS_NAMED ? `; and ${repaired.length - REPAIRS_NAMED} more` : ''
  return `${repaired.length} of ${total} tools could not be indexed as OpenClaw gave them and rank natively in a repaired form: ${named.join('; ')}${more}`
}

/** The text OpenClaw's child gives for the same failure where there is one; ours otherwise. */
function cellErrorMessage(error) {
  switch (error?.code) {
    case 'CODE_TIMEOUT':
      return 'tool_search_code timed out'
    case 'CODE_ABORTED':
      return 'tool_search_code aborted'
    default:
      return `tool_search_code failed (${error?.code ?? 'CODE_RUNTIME_ERROR'}): ${error?.message ?? 'unknown error'}`
  }
}

function mcpKey(mcp) {
  return mcp ? `${mcp.serverName}\u0000${mcp.safeServerName}\u0000${mcp.toolName}\u0000${mcp.operation}` : undefined
}

function sameList(a, b) {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** The process's engine, created once. */
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
async function openclawDiagnostics(moduleUrl) {
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

export function engine() {
  globalThis[Symbol.for(ENGINE_KEY)] ??= new Engine()
  return globalThis[Symbol.for(ENGINE_KEY)]
}
