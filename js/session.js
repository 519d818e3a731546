'use strict'
// The package's ToolSearchSession: a JS class holding a native session (binding.js), made over
// the native catalog behind a public one (js/catalog.js), with its events also feeding
// OpenTelemetry (searches and code cells as spans) while an SDK listens when the session is
// made. The native class is not changed.

const native = require('../binding.js')
const { nativeCatalog, wrapAnswer } = require('./catalog.js')
const { forwardMissing } = require('./forward.js')
const telemetry = require('./telemetry.js')

const Native = native.ToolSearchSession
/** @type {(value: unknown) => unknown} set in the class's static block */
let nativeOf

/** A session answering one run's control-tool calls (index.d.ts describes each member). */
class ToolSearchSession {
  /** The native session this one calls. */
  #native

  constructor(catalog, config, options) {
    this.#native = new Native(nativeCatalog(catalog), config, withTelemetry(options))
  }

  static {
    nativeOf = (value) => (typeof value === 'object' && value !== null && #native in value ? value.#native : nativeCatalog(value))
  }

  useCatalog(catalog) {
    return this.#native.useCatalog(nativeCatalog(catalog))
  }

  get mode() {
    return this.#native.mode
  }

  surface(format, options) {
    return this.#native.surface(format, options)
  }

  directoryPrompt() {
    return this.#native.directoryPrompt()
  }

  handles(toolName) {
    return this.#native.handles(toolName)
  }

  handle(toolName, args, options) {
    return this.#native.handle(toolName, args, options)
  }

  hydrate(userPrompt, options) {
    return this.#native.hydrate(userPrompt, options)
  }

  recordRequestBytes(bytes) {
    return this.#native.recordRequestBytes(bytes)
  }

  telemetry() {
    return this.#native.telemetry()
  }
}

/**
 * The session's options with `onEvent` also recording each event for OpenTelemetry, while
 * something listens; otherwise (and for options the native constructor refuses) as given.
 */
function withTelemetry(options) {
  if (!telemetry.telemetryActive() || options === null || typeof options !== 'object') return options
  const onEvent = options.onEvent
  // A bad onEvent is the native constructor's to refuse.
  if (onEvent !== undefined && onEvent !== null && typeof onEvent !== 'function') return options
  return {
    ...options,
    onEvent(event) {
      telemetry.recordSessionEvent(event)
      if (typeof onEvent === 'function') onEvent(event)
    },
  }
}

/** Members of the native class this file does not write out (an addon newer than it): forwarded as they are. */
const forwarded = forwardMissing(ToolSearchSession, Native, nativeOf, wrapAnswer)

module.exports = { ToolSearchSession, forwarded }
