// The native engine behind OpenClaw's Tool Search seam (openclaw/seam.mjs): ranks a run's
// catalog with this package's index and runs `tool_search_code` cells in this package's
// contained child. OpenClaw keeps everything else (policy, approvals, hooks, execution, result
// handling, counters, session logs): the seam hands the engine OpenClaw's own entries, limit and
// bridge, and any failure here leaves that call to OpenClaw's own engine, logged.
//
// This file wires the parts: the Engine holds the process's state (below) and its methods are the
// seam's hooks, the plugin's calls and what the parts ask of each other, each answered by its part:
// settings.mjs, releases.mjs, views.mjs (with records.mjs, repair.mjs), ranking.mjs, learning.mjs,
// cells.mjs, diagnostics.mjs and audit.mjs. It keeps the early log and loading the native addon.
//
// One engine per process, at globalThis[Symbol.for('openclaw-tool-search.engine')], installed by
// the plugin (openclaw/plugin.mjs) or `--import openclaw-tool-search/openclaw/register`; it
// serves only once the plugin has enabled it with its settings.
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import * as audit from './audit.mjs'
import * as cells from './cells.mjs'
import * as diagnostics from './diagnostics.mjs'
import * as learning from './learning.mjs'
import * as ranking from './ranking.mjs'
import * as releases from './releases.mjs'
import { ENGINE_KEY } from './seam.mjs'
import { PLUGIN_ID } from './settings.mjs'
import * as views from './views.mjs'

export { diagnosticRuntimeFile, openclawCapturesContent } from './diagnostics.mjs'
export { DEFAULT_SETTINGS, modelProblem, PLUGIN_ID, resolveSettings } from './settings.mjs'

const require = createRequire(import.meta.url)
const PACKAGE = require('../package.json')

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
    /** The package's folder as OpenClaw loaded the plugin (its rootDir), where requirePackage looks first. */
    this.packageRoot = undefined
    this.native = undefined
    this.nativeError = undefined
    /** js/telemetry.js once loaded (null: it could not be). */
    this.telemetryModule = undefined
    this.warned = new Set()
    // Views (views.mjs, records.mjs)
    /** Per catalog entries array: Promise<View>. */
    this.views = new WeakMap()
    /** Per OpenClaw catalog: the last filtered view (allowedIds / includeMcp), checked by identity. */
    this.filtered = new WeakMap()
    this.lastView = undefined
    /** Record cache: entry id → its content then, and its record. Equal entries of later runs get the same record object. */
    this.records = new Map()
    this.generation = 0
    /** Catalog versions made, by how (`status()`): a new catalog's index state, or `unchanged`. */
    this.versions = {}
    // Runs and diagnostics (diagnostics.mjs)
    /** Per run id: what the engine served. */
    this.runs = new Map()
    /** Runs whose line was written. */
    this.served = 0
    /** OpenClaw's public emitDiagnosticEvent, once found from its patched module (or null). */
    this.emitDiagnostic = undefined
    // Releases and the seam (releases.mjs, plugin.mjs, register.mjs)
    /** The patched Tool Search modules evaluated in this process, with their release (seamLoaded). */
    this.seamModules = []
    /** Whether the seam was installed by `--import` (register.mjs) before OpenClaw loaded. */
    this.preloaded = false
    /** Whether watchSeam reports the load hook's modules, and the plugin its before_tool_call check. */
    this.watching = false
    this.hookRegistered = false
    /** Per OpenClaw version: whether this engine serves it (releaseAllowed). */
    this.releases = new Map()
    // Learning (learning.mjs)
    /** Per OpenClaw agent, its latest view and learning catalog (learningCatalog), least recent first. */
    this.agentCatalogs = new Map()
  }

  /** Called by the plugin's register(): settings, OpenClaw's logger. */
  configure(settings, logger, openclawConfig) {
    this.settings = settings
    const telemetry = this.telemetry()
    if (telemetry && settings.enabled) telemetry.configureTelemetry({ captureContent: settings.captureContent ?? diagnostics.openclawCapturesContent(openclawConfig) })
    if (logger && this.log !== logger) {
      this.log = logger
      // Lines from before the plugin registered (the seam under --import) go to OpenClaw's log.
      for (const [level, message] of this.early.splice(0)) logger[level](message)
    }
  }

  get active() {
    return this.settings?.enabled === true
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

  /** The release of the patched Tool Search module in this process (version, support, cases). */
  servedRelease() {
    return this.seamModules[0]?.release
  }

  /** Whether OpenClaw's Tool Search module in this process carries the seam. */
  seamPatched() {
    return this.seamModules.length > 0
  }

  // The seam's hooks (seam.mjs calls them on the global engine; a throw leaves OpenClaw's own way).
  rank(request) {
    return ranking.rank(this, request)
  }
  toolCalled(call) {
    return learning.toolCalled(this, call)
  }
  runCodeModeChild(params, openclaw) {
    return cells.runCodeModeChild(this, params, openclaw)
  }
  catalogRegistered(catalog) {
    return views.catalogRegistered(this, catalog)
  }
  runEnded(params) {
    return diagnostics.runEnded(this, params)
  }
  seamLoaded(url, release) {
    return releases.seamLoaded(this, url, release)
  }

  // Releases and the seam (releases.mjs).
  inactive() {
    return releases.inactive(this)
  }
  releaseAllowed(version) {
    return releases.releaseAllowed(this, version)
  }
  seamRefused(reason) {
    return releases.seamRefused(this, reason)
  }
  watchSeam(state) {
    return releases.watchSeam(this, state)
  }

  // Telemetry, diagnostic events and run statistics (diagnostics.mjs).
  telemetry() {
    return diagnostics.telemetry(this)
  }
  diagnostic(event) {
    return diagnostics.diagnostic(this, event)
  }
  fellBack(stats, kind, reason, detail) {
    return diagnostics.fellBack(this, stats, kind, reason, detail)
  }
  statsFor(ctx) {
    return diagnostics.statsFor(this, ctx)
  }

  // Views and learning (views.mjs, learning.mjs).
  viewFor(catalog, entries) {
    return views.viewFor(this, catalog, entries)
  }
  catalogOptions() {
    return views.catalogOptions(this)
  }
  learningCatalog(view, stats) {
    return learning.learningCatalog(this, view, stats)
  }
  learningScopes(view) {
    return learning.learningScopes(this, view)
  }

  // The plugin's gateway methods (audit.mjs).
  auditLive(params) {
    return audit.auditLive(this, params)
  }
  catalogLive() {
    return audit.catalogLive(this)
  }
  status() {
    return audit.status(this)
  }
}

/** The process's engine, created once. */
export function engine() {
  globalThis[Symbol.for(ENGINE_KEY)] ??= new Engine()
  return globalThis[Symbol.for(ENGINE_KEY)]
}
