'use strict'
// The package's ToolCatalog: a JS class holding a native catalog (binding.js), whose methods call
// the native ones inside OpenTelemetry spans (js/telemetry.js) and run the JS half of a run's
// catalog cost. The native class is not changed: every catalog a method answers is wrapped here
// (one wrapper per native catalog), and native code taking a catalog is given the native one
// (`nativeCatalog`).
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
// build(), appendAsync(), withSourceAsync() and updateAsync() work in slices of at most
// SLICE_MS on the event loop; parsing and indexing run on a libuv worker.

const { performance } = require('node:perf_hooks')
const native = require('../binding.js')
const { forwardMissing } = require('./forward.js')
const telemetry = require('./telemetry.js')

const Native = native.ToolCatalog

// ------------------------------------------------------------ the record contract
//
// What this file must agree on with the addon, read from it (`contract()`, whose one home is the
// core): the top-level fields of a tool record the catalog reads, the marker of a record JSON
// cannot express, and the fields such a record may still carry readably (a `repair` build indexes
// the tool by them).

const CONTRACT = native.contract()
/** Top-level fields of a tool record the catalog reads: the record cache compares them. */
const RECORD_FIELDS = CONTRACT.recordFields
/** Marks a record JSON cannot express; the addon excludes it with the reason that follows. */
const UNREADABLE = CONTRACT.unreadableMarker
/** The fields of such a record sent beside the marker when they are readable. */
const UNREADABLE_FIELDS = CONTRACT.unreadableFields

// ------------------------------------------------------------ the record cache

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

/**
 * What was stored for one tool object: its record's id in the addon's store,
 * and the values of RECORD_FIELDS as they were then (compared by identity).
 * @typedef {{ slot: number, generation: number, fields: Record<string, unknown> }} Seen
 */

/** @type {WeakMap<object, Seen>} */
const seen = new WeakMap()
/** Objects once built with `cache: false`: serialized again on every build. */
const readFresh = new WeakSet()
let anyReadFresh = false

/** Longest reason kept from a hostile object's error. */
const MAX_REASON_CHARS = 200

/**
 * `fieldsOf(tool)`: the values of `fields` on `tool` (an object with those keys);
 * `sameFields(tool, values)`: whether each is still the same (by identity). Compiled from the
 * list into what one would write by hand (named property loads, an object literal): a cached
 * build compares every field of every tool, and a loop over the names, or an array of the values,
 * costs a cached build of 13,000 tools about a fifth more. That loop where the host forbids
 * compiling code (`--disallow-code-generation-from-strings`).
 * @param {string[]} fields
 * @returns {{ fieldsOf: (tool: any) => Record<string, unknown>, sameFields: (tool: any, values: Record<string, unknown>) => boolean }}
 */
function fieldChecks(fields) {
  try {
    // `__proto__` in an object literal would set the prototype: not a field a record can have.
    if (fields.includes('__proto__')) throw new TypeError('__proto__ is not a record field')
    const keys = fields.map((field) => JSON.stringify(String(field)))
    const same = keys.map((key) => `tool[${key}] === values[${key}]`)
    return {
      fieldsOf: /** @type {any} */ (new Function('tool', `return { ${keys.map((key) => `${key}: tool[${key}]`).join(', ')} }`)),
      sameFields: /** @type {any} */ (new Function('tool', 'values', `return ${same.length > 0 ? same.join(' && ') : 'true'}`)),
    }
  } catch {
    return {
      fieldsOf: (tool) => {
        const values = Object.create(null)
        for (const field of fields) values[field] = tool[field]
        return values
      },
      sameFields: (tool, values) => fields.every((field) => tool[field] === values[field]),
    }
  }
}

const { fieldsOf, sameFields } = fieldChecks(RECORD_FIELDS)

/** @type {(value: unknown) => value is object} */
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
  // Its readable fields beside the marker (an object), so a `repair` build can still index it;
  // without `repair` the addon excludes either form with the same reason.
  let readable
  try {
    readable = tool !== null && typeof tool === 'object' ? JSON.parse(JSON.stringify(tool, UNREADABLE_FIELDS) ?? 'null') : null
  } catch {
    readable = null
  }
  if (readable !== null && typeof readable === 'object' && !Array.isArray(readable) && Object.keys(readable).length > 0) {
    return JSON.stringify({ [UNREADABLE]: why, ...readable })
  }
  return JSON.stringify(UNREADABLE + why)
}

/**
 * The stored-record ids of `tools` (a Uint32Array of slot, generation pairs),
 * gathered in steps.
 */
class RecordIds {
  /**
   * `useCache`: reuse and remember record ids per object; `markFresh`: the
   * objects are read afresh on every later build (`cache: false`).
   */
  constructor(tools, useCache, markFresh = false) {
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
    const ids = native.__internRecords(this.texts)
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

// ------------------------------------------------------------ building from stored records

/** Attempts at naming every tool by a stored record before giving up. */
const MAX_ROUNDS = 3
/** What `slotRounds` yields when the next slice is to wait for a later turn. */
const NEXT_TURN = Symbol('next turn')

/**
 * The one loop building a catalog from stored records: the record ids of the tools are gathered
 * (on the calling turn, or `sliced`: in slices of at most SLICE_MS, each on a later turn), and the
 * addon answers them with the catalog, or with the positions of records the store evicted
 * meanwhile, whose tools are serialized again (at most MAX_ROUNDS rounds). A generator, so that
 * the constructor runs it synchronously (`buildNow`) and the async builds in slices
 * (`buildSliced`): it yields NEXT_TURN for a turn of the event loop, or the ids for the addon to
 * answer, and is resumed with that answer.
 * @param {RecordIds} records
 * @param {boolean} sliced
 * @returns {Generator<symbol | Uint32Array, object, any>}
 */
function* slotRounds(records, sliced) {
  for (let round = 0; ; round++) {
    if (sliced) {
      // Not on the calling turn: a slice there stalls the loop together with
      // the caller's own work and the next slice (setImmediate runs before timers).
      do yield NEXT_TURN
      while (!records.step(performance.now() + SLICE_MS))
    } else {
      records.step(Infinity)
    }
    /** The catalog, or the positions of records the store no longer holds. */
    const answer = yield records.ids
    if (!Array.isArray(answer)) return answer
    if (round + 1 >= MAX_ROUNDS) throw storeChurn()
    records.retry(answer)
  }
}

/** `slotRounds` on the calling turn; `fromSlots(ids)` answers synchronously. Returns the native catalog. */
function buildNow(records, fromSlots) {
  const rounds = slotRounds(records, false)
  let step = rounds.next()
  while (!step.done) step = rounds.next(fromSlots(step.value))
  return step.value
}

/** `slotRounds` in slices; `fromSlots(ids)` answers with a promise (a libuv worker's). Resolves with the native catalog. */
async function buildSliced(records, fromSlots) {
  const rounds = slotRounds(records, true)
  let step = rounds.next()
  while (!step.done) step = rounds.next(step.value === NEXT_TURN ? await nextTurn() : await fromSlots(step.value))
  return step.value
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

function storeChurn() {
  const error = new Error('tool records were evicted from the record store while the catalog was built; build again')
  Object.assign(error, { code: 'INTERNAL' })
  return error
}

/**
 * Per native catalog made from stored records (build, the constructor, updateAsync):
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

/** The constructor's build, on the calling turn: the native catalog. */
function construct(tools, options) {
  if (!Array.isArray(tools)) return new Native(tools, options) // throws the coded error
  const records = new RecordIds(tools, reusesResults(options), marksFresh(options))
  return heldRecords(buildNow(records, (ids) => native.__catalogFromSlots(ids, options)), records.ids)
}

/** The constructor's work in slices; parsing and indexing on a libuv worker. */
async function buildAsync(tools, options) {
  if (!Array.isArray(tools)) return wrapCatalog(await Native.build(tools, options)) // rejects with the coded error
  const records = new RecordIds(tools, reusesResults(options), marksFresh(options))
  return wrapCatalog(heldRecords(await buildSliced(records, (ids) => native.__buildFromSlots(ids, options)), records.ids))
}

// ------------------------------------------------------------ the public class

/**
 * The public catalog of each native catalog: one, so a method answering the same catalog answers
 * the same object.
 * @type {WeakMap<any, ToolCatalog>}
 */
const publicOf = new WeakMap()
/** The constructor's first argument when it wraps a native catalog rather than building one. */
const WRAP = Symbol('wrap a native catalog')
/** @type {(value: unknown) => unknown} set in the class's static block */
let nativeOf

/**
 * A tool catalog (index.d.ts describes each member). Every catalog a method answers (append,
 * restrict, updateAsync, ...) is one of these, `instanceof ToolCatalog`.
 */
class ToolCatalog {
  /** The native catalog this one calls. */
  #native

  /** Build (or reuse, when unchanged) the catalog for a run, on the calling turn, through the record cache. */
  constructor(tools, options) {
    const built = tools === WRAP ? options : telemetry.tracedBuild('build', () => construct(tools, options))
    const known = publicOf.get(built)
    if (known !== undefined) return known
    this.#native = built
    publicOf.set(built, this)
  }

  static {
    nativeOf = (value) => (isObject(value) && #native in value ? value.#native : value)
  }

  /** The constructor's work in slices of a few ms; parsing and indexing on a libuv worker. */
  static build(tools, options) {
    return telemetry.tracedBuild('build', () => buildAsync(tools, options))
  }

  static fromJson(text, options) {
    return telemetry.tracedBuild('from_json', () => wrapCatalog(Native.fromJson(text, options)))
  }

  static buildFromJson(text, options) {
    return telemetry.tracedBuild('from_json', () => Native.buildFromJson(text, options).then(wrapCatalog))
  }

  get size() {
    return this.#native.size
  }

  get fingerprint() {
    return this.#native.fingerprint
  }

  get directOnly() {
    return this.#native.directOnly
  }

  get excluded() {
    return this.#native.excluded
  }

  get repaired() {
    return this.#native.repaired
  }

  get recordIds() {
    return this.#native.recordIds
  }

  ids() {
    return this.#native.ids()
  }

  // Searches and builds are timed for OpenTelemetry (js/telemetry.js; nothing while no SDK listens).

  search(query, options) {
    const catalog = this.#native
    return telemetry.tracedSearch(catalog, query, options, () => catalog.search(query, options))
  }

  searchAsync(query, options) {
    const catalog = this.#native
    return telemetry.tracedSearch(catalog, query, options, () => catalog.searchAsync(query, options))
  }

  searchBatch(request) {
    const catalog = this.#native
    return telemetry.tracedSearchBatch(catalog, request, () => catalog.searchBatch(request))
  }

  searchBatchAsync(request) {
    const catalog = this.#native
    return telemetry.tracedSearchBatch(catalog, request, () => catalog.searchBatchAsync(request))
  }

  describe(idOrName) {
    return this.#native.describe(idOrName)
  }

  validateArgs(idOrName, args) {
    return this.#native.validateArgs(idOrName, args)
  }

  append(tools) {
    const catalog = this.#native
    return telemetry.tracedBuild('append', () => wrapCatalog(catalog.append(tools)))
  }

  withSource(selector, tools) {
    const catalog = this.#native
    return telemetry.tracedBuild('with_source', () => wrapCatalog(catalog.withSource(selector, tools)))
  }

  // The async derived builds serialize as build() does: each tool on its own, in slices;
  // appendAsync and withSourceAsync never through the record cache (a server's new list is read
  // as it is now). Non-arrays go to the native form, which rejects with the coded error.

  appendAsync(tools) {
    const catalog = this.#native
    return telemetry.tracedBuild('append', async () => {
      if (!Array.isArray(tools)) return wrapCatalog(await catalog.appendAsync(tools))
      return wrapCatalog(await buildSliced(new RecordIds(tools, false), (ids) => catalog.__appendFromSlots(ids)))
    })
  }

  withSourceAsync(selector, tools) {
    const catalog = this.#native
    return telemetry.tracedBuild('with_source', async () => {
      if (!Array.isArray(tools)) return wrapCatalog(await catalog.withSourceAsync(selector, tools))
      return wrapCatalog(await buildSliced(new RecordIds(tools, false), (ids) => catalog.__withSourceFromSlots(selector, ids)))
    })
  }

  /** A new run's whole list: mostly the objects of the last run, read through the record cache as build() reads them. */
  updateAsync(tools) {
    const catalog = this.#native
    return telemetry.tracedBuild('update', async () => {
      if (!Array.isArray(tools)) return wrapCatalog(await catalog.updateAsync(tools))
      const held = builtFrom.get(catalog)
      const records = new RecordIds(tools, true)
      const updated = await buildSliced(records, (ids) =>
        // The same records in the same order: this catalog is the answer.
        held !== undefined && sameIds(ids, held) ? catalog : catalog.__updateFromSlots(ids),
      )
      return wrapCatalog(heldRecords(updated, records.ids))
    })
  }

  withUnavailable(selector, reason) {
    return wrapCatalog(this.#native.withUnavailable(selector, reason))
  }

  restrict(allowedNames) {
    return wrapCatalog(this.#native.restrict(allowedNames))
  }

  telemetry() {
    return this.#native.telemetry()
  }

  audit(options) {
    return this.#native.audit(options)
  }

  recordOutcome(outcome) {
    return this.#native.recordOutcome(outcome)
  }

  withLearningScope(scope) {
    return wrapCatalog(this.#native.withLearningScope(scope))
  }

  learnedParts(query) {
    return this.#native.learnedParts(query)
  }

  learningStatus() {
    return this.#native.learningStatus()
  }

  resetLearning() {
    return this.#native.resetLearning()
  }

  flushLearning() {
    return this.#native.flushLearning()
  }

  rankingStatus() {
    return this.#native.rankingStatus()
  }

  whenRankingReady(onProgress) {
    return this.#native.whenRankingReady(onProgress)
  }

  // The native halves of the sliced builds (the ids of stored records in; the catalog, or the
  // positions of records the store no longer holds, out), used above on the native catalog.

  __appendFromSlots(ids) {
    return this.#native.__appendFromSlots(ids).then(wrapAnswer)
  }

  __withSourceFromSlots(selector, ids) {
    return this.#native.__withSourceFromSlots(selector, ids).then(wrapAnswer)
  }

  __updateFromSlots(ids) {
    return this.#native.__updateFromSlots(ids).then(wrapAnswer)
  }
}

/** The public catalog of a native one (made once, then the same object). */
function wrapCatalog(catalog) {
  return publicOf.get(catalog) ?? new ToolCatalog(WRAP, catalog)
}

/** A native answer with any native catalog in its public form. */
function wrapAnswer(value) {
  return value instanceof Native ? wrapCatalog(value) : value
}

/**
 * The native catalog behind a public one, for native code taking a catalog (ToolSearchSession);
 * any other value as it is (the native side refuses it with its coded error).
 * @param {unknown} value
 */
function nativeCatalog(value) {
  return nativeOf(value)
}

/** Members of the native class this file does not write out (an addon newer than it): forwarded as they are. */
const forwarded = forwardMissing(ToolCatalog, Native, nativeOf, wrapAnswer)

module.exports = { ToolCatalog, nativeCatalog, wrapAnswer, forwarded, RECORD_FIELDS }
