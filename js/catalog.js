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
// `cache: false`, which bypasses this cache and the addon's catalog cache.
//
// build() works in slices of at most SLICE_MS on the event loop; parsing and
// indexing run on a libuv worker.

const { performance } = require('node:perf_hooks')

/** Longest stretch build() works on the event loop before yielding a turn. */
const SLICE_MS = 2
/** Serialized text handed to the addon per call (bounds one call's copy and hash). */
const FLUSH_CHARS = 128 * 1024

/** @type {WeakMap<object, Seen>} */
const seen = new WeakMap()

/**
 * What was stored for one tool object: its record's id in the addon's store,
 * and the top-level fields the catalog reads, as they were then (compared by
 * identity).
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
    tool.mcp === f.mcp
  )
}

const isObject = (value) => typeof value === 'object' && value !== null

/** The options' answer to "may built results be reused?" (strict builds never reuse). */
function reusesResults(options) {
  return !(isObject(options) && (options.cache === false || options.strict === true))
}

/** Attempts at naming every tool by a stored record before giving up. */
const MAX_ROUNDS = 3

/**
 * The stored-record ids of `tools` (a Uint32Array of slot, generation pairs),
 * gathered in steps.
 */
class RecordIds {
  constructor(native, tools, useCache) {
    this.native = native
    // A copy: the caller may change its array between build()'s slices.
    this.tools = Array.prototype.slice.call(tools)
    this.useCache = useCache
    this.ids = new Uint32Array(2 * tools.length)
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
      if ((this.next & 31) === 0 && performance.now() >= deadline) break
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
      if (this.useCache && isObject(tool)) {
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
    try {
      text = JSON.stringify(tool)
    } catch {
      text = undefined
    }
    // The addon excludes a record it cannot read (reason given in `excluded`);
    // `null` stands for one JSON cannot express (a BigInt, a cycle, a throwing getter).
    if (text === undefined) {
      text = 'null'
      fields = undefined
    }
    this.pending.push(index, fields)
    this.texts.push(text)
    this.pendingChars += text.length
  }

  flush() {
    if (this.texts.length === 0) return
    const ids = this.native.__internRecords(`[${this.texts.join(',')}]`)
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

/** The package's ToolCatalog: the native class, built through the record cache. */
function defineToolCatalog(native) {
  const Native = native.ToolCatalog

  class ToolCatalog extends Native {
    /**
     * Build (or reuse, when unchanged) the catalog for a run, on the calling
     * turn. Returns the native catalog object.
     */
    constructor(tools, options) {
      if (!Array.isArray(tools)) return new Native(tools, options) // throws the coded error
      const records = new RecordIds(native, tools, reusesResults(options))
      for (let round = 0; ; round++) {
        records.step(Infinity)
        const missing = native.__missingRecords(records.ids)
        if (missing.length === 0) return native.__catalogFromSlots(records.ids, options)
        if (round + 1 >= MAX_ROUNDS) throw storeChurn()
        records.retry(missing)
      }
    }

    /** The constructor's work in slices of a few ms; parsing and indexing on a libuv worker. */
    static async build(tools, options) {
      if (!Array.isArray(tools)) return Native.build(tools, options)
      const records = new RecordIds(native, tools, reusesResults(options))
      for (let round = 0; ; round++) {
        while (!records.step(performance.now() + SLICE_MS)) await nextTurn()
        // Checked and handed to the build in one turn: nothing is evicted in between.
        const missing = native.__missingRecords(records.ids)
        if (missing.length === 0) return native.__buildFromSlots(records.ids, options)
        if (round + 1 >= MAX_ROUNDS) throw storeChurn()
        records.retry(missing)
      }
    }

    /** Catalogs come from the native class (append, restrict, fromJson): all are ToolCatalogs. */
    static [Symbol.hasInstance](value) {
      return value instanceof Native
    }
  }
  return ToolCatalog
}

function storeChurn() {
  const error = new Error('tool records were evicted from the record store while the catalog was built; build again')
  error.code = 'INTERNAL'
  return error
}

module.exports = { defineToolCatalog }
