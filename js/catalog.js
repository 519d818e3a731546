'use strict'
// ToolCatalog's constructor and build(): the JS half of a run's catalog cost.
//
// A gateway passes mostly the same tool objects run after run. Each distinct
// tool object is serialized (JSON.stringify) and stored in the addon's record
// store once (by a digest of its text); the stored record's id (two numbers)
// is remembered here, keyed by the object (a WeakMap), with the identity of
// each top-level field the catalog reads. A later build passing the same
// object sends only the id (one Uint32Array for the whole catalog), and a
// catalog whose records were all seen before is found without serializing or
// copying any tool text. The store evicts records no catalog has used for a
// while; a tool whose id has gone stale is serialized again.
//
// Identity first: a tool whose nested schema is changed in place keeps its
// first text. Pass a new object (or a new inputSchema object), or build with
// `cache: false`, which bypasses this cache and the addon's catalog cache,
// and marks each object it read: later builds serialize those objects again
// every time (a gateway that edits a tool in place says so once).
//
// build(), appendAsync() and withSourceAsync() work in slices of at most
// SLICE_MS on the event loop; parsing and indexing run on a libuv worker.

const { performance } = require('node:perf_hooks')
const telemetry = require('./telemetry.js')

/**
 * Longest stretch build() works on the event loop before yielding a turn. A
 * young-generation scavenge (2-3 ms: the caller's fresh tool objects) can land
 * in any slice; 1 ms keeps the two together under 5 ms.
 */
const SLICE_MS = 1
/**
 * Serialized text handed to the addon per call (bounds one call's copy and
 * hash; a slice's last call runs after its deadline).
 */
const FLUSH_CHARS = 32 * 1024
/** The clock is read every CLOCK_MASK + 1 tools (a power of two, less one). */
const CLOCK_MASK = 7

/** @type {WeakMap<object, Seen>} */
const seen = new WeakMap()
/** Objects once built with `cache: false`: serialized again on every build. */
const readFresh = new WeakSet()
let anyReadFresh = false

/** Marks a record JSON cannot express; the addon excludes it with this reason. */
const UNREADABLE = '\u0000openclaw-tool-search:unreadable:'
/** Longest reason kept from a hostile object's error. */
const MAX_REASON_CHARS = 200

/**
 * What was stored for one tool object: its record's id in the addon's store,
 * and the top-level fields the catalog knows (`KNOWN_FIELDS` in
 * crates/core/src/catalog/records.rs; a test ties the two lists), as they were
 * then (compared by identity).
 * @typedef {{ slot: number, generation: number, fields: Fields }} Seen
 * @typedef {ReturnType<typeof fieldsOf>} Fields
 */
function fieldsOf(tool) {
  return {
    id: tool.id,
    source: tool.source,
    owner: tool.owner,
    name: tool.name,
    label: tool.label,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    parameters: tool.parameters,
    input_schema: tool.input_schema,
    outputSchema: tool.outputSchema,
    catalogMode: tool.catalogMode,
    mcp: tool.mcp,
    annotations: tool.annotations,
  }
}

function sameFields(tool, f) {
  return (
    tool.name === f.name &&
    tool.description === f.description &&
    tool.inputSchema === f.inputSchema &&
    tool.owner === f.owner &&
    tool.source === f.source &&
    tool.id === f.id &&
    tool.label === f.label &&
    tool.title === f.title &&
    tool.parameters === f.parameters &&
    tool.input_schema === f.input_schema &&
    tool.outputSchema === f.outputSchema &&
    tool.catalogMode === f.catalogMode &&
    tool.mcp === f.mcp &&
    tool.annotations === f.annotations
  )
}

const isObject = (value) => typeof value === 'object' && value !== null

/** The options' answer to "may built results be reused?" (strict builds never reuse). */
function reusesResults(options) {
  return !(isObject(options) && (options.cache === false || options.strict === true))
}

/** Whether the options ask for every object to be read afresh from now on. */
function marksFresh(options) {
  return isObject(options) && options.cache === false
}

/** A short, single-line text of what a hostile object threw (itself possibly hostile). */
function describeThrown(error) {
  let text
  try {
    text = error instanceof Error ? `${error.name}: ${error.message}` : `a thrown ${error === null ? 'null' : typeof error}`
  } catch {
    text = 'an exception'
  }
  text = String(text).replace(/\s+/g, ' ')
  return text.length > MAX_REASON_CHARS ? `${text.slice(0, MAX_REASON_CHARS)}…` : text
}

/** The JSON text standing for a tool JSON cannot express, with why. */
function unreadable(tool, threw, error) {
  const why = threw
      ? `the tool could not be serialized (JSON.stringify threw ${describeThrown(error)})`
      : `a tool must be a JSON object, not ${tool === undefined ? 'undefined' : typeof tool === 'function' ? 'a function' : `a ${typeof tool}`}`
  return JSON.stringify(UNREADABLE + why)
}

/** Attempts at naming every tool by a stored record before giving up. */
const MAX_ROUNDS = 3

/**
 * The stored-record ids of `tools` (a Uint32Array of slot, generation pairs),
 * gathered in steps.
 */
class RecordIds {
  /**
   * `useCache`: reuse and remember record ids per object; `markFresh`: the
   * objects are read afresh on every later build (`cache: false`).
   */
  constructor(native, tools, useCache, markFresh = false) {
    this.native = native
    // A copy: the caller may change its array between build()'s slices, and
    // its length is read once (a Proxy may answer differently each time).
    this.tools = Array.prototype.slice.call(tools)
    this.useCache = useCache
    this.markFresh = markFresh
    this.ids = new Uint32Array(2 * this.tools.length)
    /** Tool indexes still to visit. `undefined`: all of them, in order. */
    this.todo = undefined
    this.next = 0
    this.pending = [] // index, fields | undefined, ...
    this.texts = []
    this.pendingChars = 0
  }

  get remaining() {
    return this.todo === undefined ? this.tools.length : this.todo.length
  }

  /** Work until `deadline` (a performance.now() value) or the end; true when done. */
  step(deadline) {
    while (this.next < this.remaining) {
      const index = this.todo === undefined ? this.next : this.todo[this.next]
      this.next++
      this.visit(index, this.tools[index], this.todo === undefined)
      if (this.pendingChars >= FLUSH_CHARS) this.flush()
      if ((this.next & CLOCK_MASK) === 0 && performance.now() >= deadline) break
    }
    this.flush()
    return this.next >= this.remaining
  }

  /** Visit again (serializing) the tools whose ids the store no longer knows. */
  retry(missing) {
    this.todo = missing
    this.next = 0
  }

  visit(index, tool, mayReuse) {
    let fields
    try {
      if (this.markFresh && isObject(tool)) {
        readFresh.add(tool)
        seen.delete(tool)
        anyReadFresh = true
      } else if (this.useCache && isObject(tool) && !(anyReadFresh && readFresh.has(tool))) {
        const known = seen.get(tool)
        if (mayReuse && known !== undefined && sameFields(tool, known.fields)) {
          this.ids[2 * index] = known.slot
          this.ids[2 * index + 1] = known.generation
          return
        }
        fields = fieldsOf(tool)
      }
    } catch {
      fields = undefined // a throwing getter: serialized below, never cached
    }
    let text
    let threw = false
    let thrown
    try {
      text = JSON.stringify(tool)
    } catch (error) {
      threw = true
      thrown = error
    }
    // The addon excludes a record it cannot read, with the reason given here
    // (a BigInt, a cycle, a throwing getter or Proxy trap, a function).
    if (threw || typeof text !== 'string') {
      text = unreadable(tool, threw, thrown)
      fields = undefined
    }
    this.pending.push(index, fields)
    this.texts.push(text)
    this.pendingChars += text.length
  }

  flush() {
    if (this.texts.length === 0) return
    // The strings as they are: a joined copy would double the build's
    // garbage on the V8 heap (and the scavenges that stall the loop).
    const ids = this.native.__internRecords(this.texts)
    const { pending } = this
    for (let k = 0; k < this.texts.length; k++) {
      const index = pending[2 * k]
      const fields = pending[2 * k + 1]
      const slot = ids[2 * k]
      const generation = ids[2 * k + 1]
      this.ids[2 * index] = slot
      this.ids[2 * index + 1] = generation
      if (fields !== undefined) seen.set(this.tools[index], { slot, generation, fields })
    }
    this.pending = []
    this.texts = []
    this.pendingChars = 0
  }
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

/**
 * Per catalog made from stored records (build, the constructor, updateAsync):
 * their ids in the order given, so updateAsync with the same records answers
 * the catalog itself without a trip to the worker.
 * @type {WeakMap<object, Uint32Array>}
 */
const builtFrom = new WeakMap()

function heldRecords(catalog, ids) {
  builtFrom.set(catalog, ids)
  return catalog
}

function sameIds(a, b) {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * The package's ToolCatalog: the native class, constructed and built through
 * the record cache. A plain function whose `prototype` is the native class's,
 * so every catalog (also those native methods return: append, restrict,
 * fromJson) is `instanceof ToolCatalog`, and the native statics are inherited.
 */
function defineToolCatalog(native) {
  const Native = native.ToolCatalog

  /**
   * Build (or reuse, when unchanged) the catalog for a run, on the calling
   * turn. Returns the native catalog object.
   */
  function ToolCatalog(tools, options) {
    if (new.target === undefined) throw new TypeError("Class constructor ToolCatalog cannot be invoked without 'new'")
    return telemetry.tracedBuild('build', () => construct(tools, options))
  }
  function construct(tools, options) {
    if (!Array.isArray(tools)) return new Native(tools, options) // throws the coded error
    const records = new RecordIds(native, tools, reusesResults(options), marksFresh(options))
    for (let round = 0; ; round++) {
      records.step(Infinity)
      // The catalog, or the positions of records the store no longer holds.
      const built = native.__catalogFromSlots(records.ids, options)
      if (!Array.isArray(built)) return heldRecords(built, records.ids)
      if (round + 1 >= MAX_ROUNDS) throw storeChurn()
      records.retry(built)
    }
  }
  ToolCatalog.prototype = Native.prototype
  Object.defineProperty(Native.prototype, 'constructor', { configurable: true, writable: true, value: ToolCatalog })
  Object.setPrototypeOf(ToolCatalog, Native) // fromJson, buildFromJson

  /** The constructor's work in slices of a few ms; parsing and indexing on a libuv worker. */
  function build(tools, options) {
    return telemetry.tracedBuild('build', () => buildSliced(tools, options))
  }
  async function buildSliced(tools, options) {
    if (!Array.isArray(tools)) return Native.build(tools, options)
    const records = new RecordIds(native, tools, reusesResults(options), marksFresh(options))
    for (let round = 0; ; round++) {
      // Not on the calling turn: a slice there stalls the loop together with
      // the caller's own work and the next slice (setImmediate runs before timers).
      do await nextTurn()
      while (!records.step(performance.now() + SLICE_MS))
      // The worker looks the records up: the catalog, or the positions it no longer holds.
      const built = await native.__buildFromSlots(records.ids, options)
      if (!Array.isArray(built)) return heldRecords(built, records.ids)
      if (round + 1 >= MAX_ROUNDS) throw storeChurn()
      records.retry(built)
    }
  }
  // Defined, not assigned: the inherited native statics are read-only.
  const { fromJson: nativeFromJson, buildFromJson: nativeBuildFromJson } = Native
  Object.defineProperties(ToolCatalog, {
    build: method(build),
    fromJson: method(function fromJson(text, options) {
      return telemetry.tracedBuild('from_json', () => nativeFromJson.call(Native, text, options))
    }),
    buildFromJson: method(function buildFromJson(text, options) {
      return telemetry.tracedBuild('from_json', () => nativeBuildFromJson.call(Native, text, options))
    }),
  })

  // The async derived builds serialize as build() does: each tool on its own,
  // in slices of at most SLICE_MS; appendAsync and withSourceAsync never
  // through the record cache (a server's new list is read as it is now).
  // Non-arrays go to the native form, which rejects with the coded error.
  const {
    search: nativeSearch,
    searchAsync: nativeSearchAsync,
    searchBatch: nativeSearchBatch,
    searchBatchAsync: nativeSearchBatchAsync,
    append: nativeAppend,
    withSource: nativeWithSource,
    appendAsync: nativeAppendAsync,
    withSourceAsync: nativeWithSourceAsync,
    updateAsync: nativeUpdateAsync,
    __appendFromSlots: appendFromSlots,
    __withSourceFromSlots: withSourceFromSlots,
    __updateFromSlots: updateFromSlots,
  } = Native.prototype
  Object.defineProperties(Native.prototype, {
    // Searches and builds are timed for OpenTelemetry (js/telemetry.js; nothing while no SDK listens).
    search: method(function search(query, options) {
      return telemetry.tracedSearch(this, query, options, () => nativeSearch.call(this, query, options))
    }),
    searchAsync: method(function searchAsync(query, options) {
      return telemetry.tracedSearch(this, query, options, () => nativeSearchAsync.call(this, query, options))
    }),
    searchBatch: method(function searchBatch(request) {
      return telemetry.tracedSearchBatch(this, request, () => nativeSearchBatch.call(this, request))
    }),
    searchBatchAsync: method(function searchBatchAsync(request) {
      return telemetry.tracedSearchBatch(this, request, () => nativeSearchBatchAsync.call(this, request))
    }),
    append: method(function append(tools) {
      return telemetry.tracedBuild('append', () => nativeAppend.call(this, tools))
    }),
    withSource: method(function withSource(selector, tools) {
      return telemetry.tracedBuild('with_source', () => nativeWithSource.call(this, selector, tools))
    }),
    appendAsync: method(function appendAsync(tools) {
      return telemetry.tracedBuild('append', async () => {
        if (!Array.isArray(tools)) return nativeAppendAsync.call(this, tools)
        return sliced(native, tools, (ids) => appendFromSlots.call(this, ids))
      })
    }),
    withSourceAsync: method(function withSourceAsync(selector, tools) {
      return telemetry.tracedBuild('with_source', async () => {
        if (!Array.isArray(tools)) return nativeWithSourceAsync.call(this, selector, tools)
        return sliced(native, tools, (ids) => withSourceFromSlots.call(this, selector, ids))
      })
    }),
    // A new run's whole list: mostly the objects of the last run, read
    // through the record cache as build() reads them.
    updateAsync: method(function updateAsync(tools) {
      return telemetry.tracedBuild('update', async () => {
        if (!Array.isArray(tools)) return nativeUpdateAsync.call(this, tools)
        const held = builtFrom.get(this)
        let given
        const updated = await sliced(
          native,
          tools,
          (ids) => {
            given = ids
            // The same records in the same order: this catalog is the answer.
            return held !== undefined && sameIds(ids, held) ? this : updateFromSlots.call(this, ids)
          },
          true,
        )
        builtFrom.set(updated, given)
        return updated
      })
    }),
  })
  return ToolCatalog
}

/**
 * `build(ids)` (a native async build) of the stored-record ids of `tools`,
 * each serialized afresh (unless `useCache`), in slices. The worker answers the catalog, or the
 * positions of records evicted meanwhile, whose tools are serialized again.
 */
async function sliced(native, tools, build, useCache = false) {
  const records = new RecordIds(native, tools, useCache)
  for (let round = 0; ; round++) {
    do await nextTurn() // not on the calling turn (see build())
    while (!records.step(performance.now() + SLICE_MS))
    const built = await build(records.ids)
    if (!Array.isArray(built)) return built
    if (round + 1 >= MAX_ROUNDS) throw storeChurn()
    records.retry(built)
  }
}

/** A property a class defines: replaceable, not enumerable. */
function method(value) {
  return { configurable: true, writable: true, value }
}

function storeChurn() {
  const error = new Error('tool records were evicted from the record store while the catalog was built; build again')
  error.code = 'INTERNAL'
  return error
}

module.exports = { defineToolCatalog }
