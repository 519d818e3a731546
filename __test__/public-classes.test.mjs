// The package's ToolCatalog and ToolSearchSession (js/catalog.js, js/session.js): JS classes
// holding the native objects, with the native classes' whole surface, every catalog a method
// answers wrapped (one wrapper per native catalog), public catalogs unwrapped for native code,
// and the native classes left exactly as the addon made them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { fakeTools, root } from './helpers.mjs'

const require = createRequire(import.meta.url)
const native = require('../binding.js')
const { ToolCatalog, ToolSearchSession, resolveToolSearchConfig } = require('../index.js')
const catalogModule = require('../js/catalog.js')
const sessionModule = require('../js/session.js')
const { forwardMissing } = require('../js/forward.js')

const executor = async () => ({ content: [{ type: 'text', text: 'ok' }] })
const FUNCTION_KEYS = new Set(['length', 'name', 'prototype', 'arguments', 'caller'])

/** Each own member of `object`: `get`, `set`, `get/set`, `method` or `value`. */
function members(object, skip) {
  const kinds = {}
  for (const key of Reflect.ownKeys(object)) {
    if (skip(key)) continue
    const d = Object.getOwnPropertyDescriptor(object, key)
    kinds[String(key)] = d.get || d.set ? [d.get && 'get', d.set && 'set'].filter(Boolean).join('/') : typeof d.value === 'function' ? 'method' : 'value'
  }
  return kinds
}

for (const [name, Public, module] of [
  ['ToolCatalog', ToolCatalog, catalogModule],
  ['ToolSearchSession', ToolSearchSession, sessionModule],
]) {
  test(`${name}: every member of the native class and its prototype is on the public class, written out`, () => {
    const Native = native[name]
    const nativeProto = members(Native.prototype, (key) => key === 'constructor')
    const publicProto = members(Public.prototype, (key) => key === 'constructor')
    assert.ok(Object.keys(nativeProto).length > 0)
    for (const [key, kind] of Object.entries(nativeProto)) assert.equal(publicProto[key], kind, `${name}.prototype.${key}`)
    const nativeStatics = members(Native, (key) => FUNCTION_KEYS.has(key))
    const publicStatics = members(Public, (key) => FUNCTION_KEYS.has(key))
    for (const [key, kind] of Object.entries(nativeStatics)) assert.equal(publicStatics[key], kind, `${name}.${key}`)
    // Nothing left to the load-time forwarder: each member was written out with its wrapping decided.
    assert.deepEqual(module.forwarded, [], `members of the native ${name} that js/ does not write out`)
  })
}

test('the native classes are not modified by loading the package or using it', () => {
  const script = `
    const native = require('./binding.js')
    const snapshot = () => JSON.stringify(['ToolCatalog', 'ToolSearchSession'].map((name) => {
      const C = native[name]
      const of = (o) => Reflect.ownKeys(o).map((k) => {
        const d = Object.getOwnPropertyDescriptor(o, k)
        return [String(k), d.configurable, d.enumerable, d.writable, d.value === C ? 'C' : typeof d.value === 'function' ? d.value.name + '/' + d.value.length : typeof d.value, d.get && d.get.name, d.set && d.set.name]
      })
      return [of(C), of(C.prototype), Object.getPrototypeOf(C) === Function.prototype, Object.getPrototypeOf(C.prototype) === Object.prototype]
    }))
    const refs = (C) => [C, C.prototype, ...Reflect.ownKeys(C.prototype).map((k) => Object.getOwnPropertyDescriptor(C.prototype, k)).flatMap((d) => [d.value, d.get, d.set])]
    const before = snapshot()
    const identities = ['ToolCatalog', 'ToolSearchSession'].map((name) => refs(native[name]))
    const pkg = require('./index.js')
    const catalog = new pkg.ToolCatalog([{ name: 'a', description: 'reads a file' }])
    catalog.search('file')
    const session = new pkg.ToolSearchSession(catalog, pkg.resolveToolSearchConfig({ mode: 'tools' }), { executor: async () => null })
    session.useCatalog(catalog.append([{ name: 'b' }]))
    pkg.ToolCatalog.build([{ name: 'c' }]).then((built) => built.updateAsync([{ name: 'd' }])).then(() => {
      const after = snapshot()
      const same = ['ToolCatalog', 'ToolSearchSession'].every((name, i) => refs(native[name]).every((v, j) => v === identities[i][j]))
      console.log(JSON.stringify({ unchanged: before === after, same, before, after }))
    })
  `
  const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8', env: { ...process.env, OPENCLAW_TOOL_SEARCH_RANKING: 'lexical' } }))
  assert.equal(out.after, out.before)
  assert.ok(out.unchanged && out.same, 'the same descriptors and the same functions')
})

test('every catalog a method answers is a public ToolCatalog; the same native catalog, the same object', async () => {
  const tools = fakeTools(6)
  const catalog = new ToolCatalog(tools, { learning: { folder: false, scope: 'public-classes' } })
  const mcp = { source: 'mcp', owner: 'srv' }
  const derived = {
    append: catalog.append([{ name: 'more' }]),
    appendAsync: await catalog.appendAsync([{ name: 'more' }]),
    appendAsyncNotArray: await catalog.appendAsync('nope').catch((e) => e),
    withSource: catalog.withSource(mcp, [{ name: 'x' }]),
    withSourceAsync: await catalog.withSourceAsync(mcp, [{ name: 'x' }]),
    updateAsync: await catalog.updateAsync([...tools, { name: 'new' }]),
    withUnavailable: catalog.withUnavailable(mcp, 'down'),
    restrict: catalog.restrict(['fake_plugin_tool_01']),
    withLearningScope: catalog.withLearningScope('another'),
    fromJson: ToolCatalog.fromJson('[{"name":"j"}]'),
    buildFromJson: await ToolCatalog.buildFromJson('[{"name":"j"}]'),
    build: await ToolCatalog.build(tools),
    __appendFromSlots: await catalog.__appendFromSlots(new Uint32Array(0)),
  }
  for (const [method, value] of Object.entries(derived)) {
    if (method === 'appendAsyncNotArray') {
      assert.equal(value.code, 'INVALID_CATALOG')
      continue
    }
    assert.ok(value instanceof ToolCatalog, method)
    assert.equal(Object.getPrototypeOf(value), ToolCatalog.prototype, method)
    assert.equal(typeof value.size, 'number', method)
  }
  // The same records: the same catalog, the same object (a WeakMap, native → public).
  assert.equal(await catalog.updateAsync(tools), catalog)
  assert.equal(await catalog.updateAsync(tools.slice()), catalog)
  const updated = derived.updateAsync
  assert.equal(await updated.updateAsync([...tools, { name: 'new' }]), updated)
  // Answers that are not catalogs are the native ones.
  assert.deepEqual(await catalog.__withSourceFromSlots(mcp, new Uint32Array([4294967295, 0])), [0])
})

test('public catalogs are unwrapped for native code; anything else is refused with its coded error', async () => {
  const catalog = new ToolCatalog(fakeTools(4))
  const config = resolveToolSearchConfig({ mode: 'directory' })
  const session = new ToolSearchSession(catalog, config, { executor })
  assert.ok(session instanceof ToolSearchSession)
  assert.equal(session.mode, 'directory')
  assert.ok(session.handles('fake_plugin_tool_01'))
  session.useCatalog(catalog.append([{ name: 'appended_tool', description: 'an appended tool' }]))
  assert.ok(session.handles('appended_tool'))
  session.useCatalog(await catalog.withSourceAsync({ source: 'mcp', owner: 'srv' }, []))
  assert.equal(session.handles('appended_tool'), false)
  const result = await session.handle('fake_plugin_tool_02', { marker: 'm' })
  assert.equal(result.ok, true)
  // A native catalog itself is still a catalog to the native side.
  const bare = native.ToolCatalog.fromJson('[{"name":"bare"}]')
  assert.ok(new ToolSearchSession(bare, config, { executor }).handles('bare'))
  for (const notCatalog of [session, Object.create(ToolCatalog.prototype), {}, 'catalog', null]) {
    assert.throws(() => new ToolSearchSession(notCatalog, config, { executor }), { code: 'INVALID_REQUEST', message: 'catalog must be a ToolCatalog.' })
    assert.throws(() => session.useCatalog(notCatalog), { code: 'INVALID_REQUEST' })
  }
  assert.throws(() => ToolSearchSession(catalog, config, { executor }), TypeError)
})

test('errors keep their code and message; sync methods stay sync', async () => {
  const tools = fakeTools(3)
  const catalog = new ToolCatalog(tools)
  const bare = native.ToolCatalog.fromJson(JSON.stringify(tools))
  const thrown = (fn) => {
    try {
      fn()
    } catch (error) {
      return { code: error.code, message: error.message, type: error.constructor.name }
    }
    assert.fail('expected a throw')
  }
  for (const call of [
    (c) => c.search('x', { limit: 0 }),
    (c) => c.search(42),
    (c) => c.describe('no_such_tool'),
    (c) => c.validateArgs(7, {}),
    (c) => c.searchBatch({ queries: 'x' }),
    (c) => c.withUnavailable({ source: 'ftp', owner: 'x' }, 'down'),
    (c) => c.withSource({ source: 'ftp', owner: 'x' }, []),
    (c) => c.append('nope'),
    (c) => c.withLearningScope('x'),
  ]) {
    const expected = thrown(() => call(bare))
    assert.ok(expected.code, String(call))
    assert.deepEqual(thrown(() => call(catalog)), expected, String(call))
  }
  const rejected = await catalog.searchAsync('x', { limit: 0 }).catch((e) => e)
  assert.equal(rejected.code, 'INVALID_LIMIT')
  // Sync answers are values, not promises.
  assert.ok(Array.isArray(catalog.search('fake')))
  assert.equal(typeof catalog.searchBatch({ queries: [{ query: 'a' }] }).results, 'object')
  assert.equal(catalog.describe('fake_plugin_tool_01').id, 'openclaw:fake-plugin:fake_plugin_tool_01')
  assert.ok(catalog.append([]) instanceof ToolCatalog)
  assert.equal(catalog.rankingStatus().active, 'lexical')
  assert.deepEqual(catalog.ids(), bare.ids())
  assert.equal(catalog.fingerprint, bare.fingerprint)
  assert.ok(catalog.searchAsync('fake') instanceof Promise)
})

test("the native builds of tool arrays are the package's: the native class refuses an array, and a non-array with INVALID_CATALOG", async () => {
  const tools = fakeTools(2)
  const bare = native.ToolCatalog.fromJson(JSON.stringify(tools))
  const refused = { code: 'INVALID_REQUEST', message: /the package's ToolCatalog/ }
  assert.throws(() => new native.ToolCatalog(tools), refused)
  await assert.rejects(native.ToolCatalog.build(tools), refused)
  await assert.rejects(bare.appendAsync(tools), refused)
  await assert.rejects(bare.updateAsync(tools), refused)
  await assert.rejects(bare.withSourceAsync({ source: 'mcp', owner: 'srv' }, tools), refused)
  // The public class builds the same arrays, and passes a non-array's coded error on.
  assert.equal((await ToolCatalog.build(tools)).size, 2)
  const notArray = { code: 'INVALID_CATALOG', message: 'tools must be an array of tool objects' }
  await assert.rejects(ToolCatalog.build('tools'), notArray)
  await assert.rejects(new ToolCatalog(tools).appendAsync(5), notArray)
  await assert.rejects(new ToolCatalog(tools).updateAsync({}), notArray)
  await assert.rejects(new ToolCatalog(tools).withSourceAsync({ source: 'mcp' }, []), { code: 'INVALID_REQUEST' })
})

test('the load-time forwarder covers a native member the public class lacks: arguments unwrapped, catalogs wrapped', async () => {
  class FakeNative {
    static make(n) {
      return new FakeNative(n)
    }
    constructor(n) {
      this.n = n
    }
    get double() {
      return this.n * 2
    }
    same(other) {
      return other === this
    }
    later() {
      return Promise.resolve(new FakeNative(this.n + 1))
    }
  }
  const inner = new WeakMap()
  const outer = new WeakMap()
  class Public {
    constructor(n) {
      inner.set(this, n)
    }
  }
  const toNative = (value) => inner.get(value) ?? value
  const toPublic = (value) => {
    if (!(value instanceof FakeNative)) return value
    if (!outer.has(value)) outer.set(value, new Public(value))
    return outer.get(value)
  }
  assert.deepEqual(forwardMissing(Public, FakeNative, toNative, toPublic).sort(), ['double', 'later', 'same', 'static make'])
  const made = Public.make(2)
  assert.ok(made instanceof Public)
  assert.equal(made.double, 4)
  assert.equal(made.same(made), true, 'a public argument reaches the native method unwrapped')
  const next = await made.later()
  assert.ok(next instanceof Public)
  assert.equal(next.double, 6)
  assert.deepEqual(forwardMissing(Public, FakeNative, toNative, toPublic), [], 'members already there are left alone')
})

test('where compiling code is forbidden, the record cache still compares every field', () => {
  const script = `
    const { ToolCatalog } = require('./index.js')
    const { RECORD_FIELDS } = require('./js/catalog.js')
    let serialized = 0
    const tool = { name: 'nocodegen', description: 'a tool', toJSON() { serialized++; const { toJSON, ...rest } = this; return rest } }
    const counts = []
    new ToolCatalog([tool])
    serialized = 0
    new ToolCatalog([tool])
    counts.push(serialized)
    for (const field of RECORD_FIELDS) {
      const before = tool[field]
      tool[field] = field + ' replaced'
      serialized = 0
      new ToolCatalog([tool])
      counts.push(serialized)
      tool[field] = before
      new ToolCatalog([tool])
    }
    console.log(JSON.stringify({ counts, fields: RECORD_FIELDS.length }))
  `
  const out = JSON.parse(
    execFileSync(process.execPath, ['--disallow-code-generation-from-strings', '-e', script], { cwd: root, encoding: 'utf8', env: { ...process.env, OPENCLAW_TOOL_SEARCH_RANKING: 'lexical' } }),
  )
  assert.deepEqual(out.counts, [0, ...Array(out.fields).fill(1)])
})
