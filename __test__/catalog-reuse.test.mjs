// ToolCatalog's per-object record cache (js/catalog.js) and the addon's record
// store: the same objects rebuild to the same catalog without re-reading them,
// changes to what the catalog reads are seen, and hostile records stay alone.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from './helpers.mjs'

const require = createRequire(import.meta.url)
const { ToolCatalog, releaseUnusedMemory } = require('../index.js')
const { RECORD_FIELDS } = require('../js/catalog.js')

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc')

function tools(prefix, n = 40) {
  return Array.from({ length: n }, (_, i) => ({
    name: `${prefix}_tool_${i}`,
    description: `Tool number ${i} of ${prefix}: reads and writes ${i % 2 ? 'calendar events' : 'spreadsheet rows'}`,
    inputSchema: { type: 'object', properties: { id: { type: 'string', description: 'record id' } }, required: ['id'] },
  }))
}

const shape = (catalog) => ({
  fingerprint: catalog.fingerprint,
  ids: catalog.ids(),
  excluded: catalog.excluded,
  hits: catalog.search('calendar events', { limit: 5 }).map((h) => h.id),
})

test('the same objects rebuild to the same catalog; equal fresh objects too', async () => {
  const list = tools('reuse_same')
  const first = new ToolCatalog(list)
  assert.ok(first instanceof ToolCatalog)
  assert.deepEqual(shape(new ToolCatalog(list)), shape(first))
  assert.deepEqual(shape(await ToolCatalog.build(list)), shape(first))
  // New objects with the same content: serialized again, same catalog.
  const copies = list.map((t) => structuredClone(t))
  assert.deepEqual(shape(await ToolCatalog.build(copies)), shape(first))
  assert.deepEqual(shape(new ToolCatalog(copies, { cache: false })), shape(first))
})

test('a replaced top-level field is seen; an in-place nested change only with cache: false', () => {
  const list = tools('reuse_change', 5)
  const before = new ToolCatalog(list)
  list[2].description = 'Sends a fax to a phone number'
  const after = new ToolCatalog(list)
  assert.notEqual(after.fingerprint, before.fingerprint)
  assert.equal(after.search('fax', { limit: 1 })[0].name, 'reuse_change_tool_2')

  list[3].inputSchema = { type: 'object', properties: { when: { type: 'string' } } }
  const replaced = new ToolCatalog(list)
  assert.notEqual(replaced.fingerprint, after.fingerprint)
  assert.deepEqual(Object.keys(replaced.describe('reuse_change_tool_3').parameters.properties), ['when'])

  // Identity first: a nested in-place change keeps the first text...
  list[3].inputSchema.properties.extra = { type: 'number' }
  const nested = new ToolCatalog(list)
  assert.equal(nested.fingerprint, replaced.fingerprint)
  // ...and cache: false reads every object again.
  const fresh = new ToolCatalog(list, { cache: false })
  assert.deepEqual(Object.keys(fresh.describe('reuse_change_tool_3').parameters.properties), ['when', 'extra'])
  // Removing a field is a change too.
  delete list[2].description
  assert.notEqual(new ToolCatalog(list).fingerprint, nested.fingerprint)
})

test('records JSON cannot express are excluded alone, the same way each time and in build()', async () => {
  const cyclic = { name: 'reuse_cyclic' }
  cyclic.self = cyclic
  const throwing = {
    name: 'reuse_throwing',
    get description() {
      throw new Error('getter')
    },
  }
  const revoked = Proxy.revocable({ name: 'reuse_proxy' }, {})
  revoked.revoke()
  const list = [
    ...tools('reuse_hostile', 3),
    null,
    5,
    'text',
    { name: 'reuse_bigint', description: 'x', size: 10n },
    cyclic,
    throwing,
    revoked.proxy,
    { name: 'reuse_ok', description: 'the last good one' },
  ]
  const sync = new ToolCatalog(list)
  assert.equal(sync.size, 4)
  assert.deepEqual(
    sync.excluded.map((e) => e.index),
    [3, 4, 5, 6, 7, 8, 9]
  )
  assert.deepEqual(shape(new ToolCatalog(list)), shape(sync))
  assert.deepEqual(shape(await ToolCatalog.build(list)), shape(sync))
  // The same records through the addon's own serializer.
  assert.deepEqual(sync.ids(), ['openclaw:core:reuse_hostile_tool_0', 'openclaw:core:reuse_hostile_tool_1', 'openclaw:core:reuse_hostile_tool_2', 'openclaw:core:reuse_ok'])
})

test('tools whose stored records were released are read again', async () => {
  const list = tools('reuse_released', 30)
  let catalog = await ToolCatalog.build(list)
  const expected = shape(catalog)
  catalog = null
  // Let the catalog object go, then release what nothing holds.
  for (let i = 0; i < 3; i++) {
    gc()
    await new Promise((resolve) => setImmediate(resolve))
  }
  const released = releaseUnusedMemory()
  assert.ok(released.records >= 30, `released ${JSON.stringify(released)}`)
  // The cached ids of these objects are stale now: both paths serialize them again.
  assert.deepEqual(shape(new ToolCatalog(list)), expected)
  releaseUnusedMemory()
  for (let i = 0; i < 3; i++) {
    gc()
    await new Promise((resolve) => setImmediate(resolve))
  }
  releaseUnusedMemory()
  assert.deepEqual(shape(await ToolCatalog.build(list)), expected)
  // And updateAsync of another catalog: the worker names the stale records, which are read again.
  const other = new ToolCatalog(tools('reuse_released_other', 3))
  releaseUnusedMemory()
  for (let i = 0; i < 3; i++) {
    gc()
    await new Promise((resolve) => setImmediate(resolve))
  }
  releaseUnusedMemory()
  const updated = await other.updateAsync(list)
  assert.ok(updated instanceof ToolCatalog)
  assert.deepEqual(shape(updated), expected)
})

test('arguments that are not tool arrays keep their coded errors', async () => {
  assert.throws(() => new ToolCatalog('nope'), { code: 'INVALID_CATALOG' })
  await assert.rejects(ToolCatalog.build({ length: 1 }), { code: 'INVALID_CATALOG' })
  assert.throws(() => new ToolCatalog([], { nope: true }), { code: 'INVALID_CATALOG' })
  await assert.rejects(ToolCatalog.build([], { strict: 'yes' }), { code: 'INVALID_CATALOG' })
})

test('a build over many slices equals the one-turn build', async () => {
  const list = tools('reuse_large', 3000).map((t, i) => ({ ...t, description: `${t.description} ${'detail '.repeat(i % 50)}` }))
  const sync = new ToolCatalog(list, { cache: false })
  const built = await ToolCatalog.build(list, { cache: false })
  assert.deepEqual(shape(built), shape(sync))
  assert.equal(built.size, 3000)
})

test('build() works on the tools as they were when it was called', async () => {
  const list = tools('reuse_snapshot', 2000)
  const expected = shape(new ToolCatalog(list, { cache: false }))
  const pending = ToolCatalog.build(list, { cache: false })
  // The caller changes its array while the build is still serializing in slices.
  list.push({ name: 'reuse_snapshot_late', description: 'added after build() was called' })
  list.length = 10
  assert.deepEqual(shape(await pending), expected)
})

test('build() reads no tool on the calling turn; record text reaches the addon as one catalog text would', async () => {
  let serialized = 0
  const list = tools('reuse_text', 300).map((t, i) => ({
    ...t,
    // Two-byte text and a lone surrogate (JSON.stringify escapes it) in some records.
    description: `${t.description} ${i % 3 === 0 ? 'café ☕ 日本語' : i % 3 === 1 ? 'lone \uD800 half' : 'plain'}`,
    toJSON() {
      serialized++
      const { toJSON, ...rest } = this
      return rest
    },
  }))
  const pending = ToolCatalog.build(list, { cache: false })
  assert.equal(serialized, 0, 'the slices start on a later turn')
  const built = await pending
  assert.equal(serialized, list.length)
  assert.deepEqual(shape(built), shape(ToolCatalog.fromJson(JSON.stringify(list))))
  assert.deepEqual(shape(built), shape(new ToolCatalog(list, { cache: false })))
})

test('the record cache compares every field the catalog knows (js/catalog.js against KNOWN_FIELDS)', () => {
  const rust = readFileSync(join(root, 'crates/core/src/catalog/records.rs'), 'utf8')
  const list = rust.match(/pub const KNOWN_FIELDS: &\[&str\] = &\[([\s\S]*?)\];/)
  assert.ok(list, 'KNOWN_FIELDS found in records.rs')
  const known = [...list[1].replace(/\/\/.*$/gm, '').matchAll(/"([^"]+)"/g)].map((m) => m[1]).sort()
  assert.deepEqual([...RECORD_FIELDS].sort(), known)
})

test('a later build reads a tool again when any field the catalog knows is replaced, and only then', () => {
  let serialized = 0
  const tool = {
    ...tools('reuse_fields', 1)[0],
    toJSON() {
      serialized++
      const { toJSON, ...rest } = this
      return rest
    },
  }
  const others = tools('reuse_fields_other', 3)
  const build = () => {
    serialized = 0
    new ToolCatalog([...others, tool])
    return serialized
  }
  build()
  assert.equal(build(), 0, 'an unchanged object is not read again')
  tool.extra = { unknown: 'field' }
  assert.equal(build(), 0, 'a field the catalog does not read is not compared')
  for (const field of RECORD_FIELDS) {
    const before = Object.getOwnPropertyDescriptor(tool, field)
    tool[field] = `${field} replaced`
    assert.equal(build(), 1, `replacing ${field} is seen`)
    assert.equal(build(), 0, `${field} compared by identity`)
    if (before) Object.defineProperty(tool, field, before)
    else delete tool[field]
    assert.equal(build(), 1, `restoring ${field} is seen`)
  }
})
