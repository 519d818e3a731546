// Hostile input must give a clear error or a bounded result: never a crash or a hang.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { binding, fakeTools, throwsCode } from './helpers.mjs'

const { ToolCatalog } = binding

function nested(depth) {
  let schema = { type: 'string' }
  for (let i = 0; i < depth; i++) schema = { type: 'object', properties: { x: schema } }
  return schema
}

test('a 10 MB description is capped', () => {
  const catalog = new ToolCatalog([{ name: 'big', description: 'word '.repeat(2 * 1024 * 1024) }, ...fakeTools(2)])
  assert.equal(catalog.size, 3)
  assert.ok(catalog.describe('big').description.length <= 8192)
  assert.ok(catalog.search('word').length >= 1)
})

test('a schema nested 10,000 deep is excluded alone; the rest of the catalog stays', () => {
  const catalog = new ToolCatalog([{ name: 'deep', parameters: nested(10_000) }, ...fakeTools(2), { name: 'big', n: 10n }])
  assert.equal(catalog.size, 2)
  assert.equal(catalog.excluded.length, 2)
  assert.doesNotThrow(() => JSON.stringify(catalog.excluded))
})

test('tool names and owners cannot forge another id (policy bypass)', () => {
  const catalog = new ToolCatalog(
    [{ source: 'mcp', owner: 'evil', name: 'mcp:github:steal' }, { source: 'client', name: 'openclaw:core:exec' }, { source: 'mcp', owner: 'github', name: 'create_issue' }],
    { policy: { profile: { allow: ['mcp:github:*'] } } }
  )
  assert.deepEqual(catalog.ids(), ['mcp:github:create_issue'])
  assert.equal(catalog.excluded.filter((e) => /':'/.test(e.reason)).length, 2)
})

test('policy groups cannot expand without bound', () => {
  const groups = { a: Array(1000).fill('group:b'), b: Array(1000).fill('x') }
  throwsCode(assert, () => new ToolCatalog(fakeTools(1), { policy: { groups, agent: { deny: ['group:a'] } } }), 'INVALID_POLICY')
})

test('a schema nested 100 levels (200 JSON levels) is excluded alone, the rest stays', () => {
  const catalog = new ToolCatalog([{ name: 'deep', parameters: nested(100) }, ...fakeTools(2)])
  assert.equal(catalog.size, 2)
  assert.match(catalog.excluded[0].reason, /deep|depth|nest/i)
})

test('cyclic $ref: an in-place cycle is excluded at build, a descending one does not hang search, describe or validation', () => {
  const catalog = new ToolCatalog([
    { name: 'cyclic', parameters: { $ref: '#/definitions/a', definitions: { a: { $ref: '#/definitions/b' }, b: { $ref: '#/definitions/a' } } } },
    { name: 'self', parameters: { type: 'object', properties: { next: { $ref: '#' } } } },
  ])
  // A cycle that never descends into the value can only loop: excluded with the reason.
  assert.deepEqual(catalog.ids(), ['openclaw:core:self'])
  assert.equal(catalog.excluded[0].index, 0)
  assert.match(catalog.excluded[0].reason, /INVALID_SCHEMA/)
  assert.ok(catalog.describe('self').input.length <= 310)
  for (const name of ['self']) {
    try {
      const r = catalog.validateArgs(name, { next: { next: { next: 1 } } })
      assert.equal(typeof r.ok, 'boolean')
    } catch (err) {
      assert.equal(err.code, 'INVALID_SCHEMA')
    }
  }
})

test('invalid UTF-16 from JS does not crash', () => {
  const lone = 'bad \ud800 surrogate \udfff'
  let catalog
  try {
    catalog = new ToolCatalog([{ name: 'surrogate', description: lone }, ...fakeTools(1)])
  } catch (err) {
    assert.equal(err.code, 'INVALID_CATALOG')
    return
  }
  assert.ok(catalog.size >= 1)
  assert.ok(Array.isArray(catalog.search(lone)))
  throwsCode(assert, () => catalog.describe(lone), 'TOOL_NOT_FOUND')
})

test('100k tools build, search stays bounded', () => {
  const tools = Array.from({ length: 100_000 }, (_, i) => ({ name: `t${i}`, description: `tool number ${i} does task ${i % 97}` }))
  const catalog = new ToolCatalog(tools)
  assert.equal(catalog.size, 100_000)
  assert.equal(catalog.search('task 42', { limit: 5 }).length, 5)
})

test('a 1 MB query is an INVALID_QUERY error; batch caps hold', () => {
  const catalog = new ToolCatalog(fakeTools(3))
  throwsCode(assert, () => catalog.search('q'.repeat(1024 * 1024)), 'INVALID_QUERY')
  throwsCode(assert, () => catalog.searchBatch({ queries: [{ query: 'q'.repeat(1024 * 1024) }] }), 'INVALID_QUERY')
})

test('hostile names and option types are rejected cleanly', () => {
  throwsCode(assert, () => new ToolCatalog(fakeTools(1), { policy: 'deny everything' }), 'INVALID_CATALOG')
  const catalog = new ToolCatalog([{ name: '__proto__', description: 'proto' }, { name: 'constructor' }, { name: 'x'.repeat(10_000) }])
  assert.equal(catalog.size, 2)
  assert.equal(catalog.describe('__proto__').name, '__proto__')
  assert.equal(catalog.validateArgs('constructor', { __proto__: { polluted: true } }).ok, true)
  assert.equal({}.polluted, undefined)
})

test('results cross as JSON: a "__proto__" key in tool metadata stays an own property, never a prototype', () => {
  // Written as text: in a JS object literal `__proto__` would set the prototype, not a key.
  const catalog = ToolCatalog.fromJson(`[
    {"name": "t", "description": "d", "inputSchema": {"type": "object", "__proto__": {"polluted": true},
      "properties": {"n": {"type": "integer", "maximum": 9007199254740993}}}},
    {"name": "direct", "catalogMode": "direct-only", "__proto__": {"polluted": true}}
  ]`)
  const { parameters } = catalog.describe('t')
  assert.ok(Object.hasOwn(parameters, '__proto__'))
  assert.equal(Object.getPrototypeOf(parameters), Object.prototype)
  assert.equal(parameters.polluted, undefined)
  // Numbers are JS numbers, as a gateway's own JSON.parse would give (never BigInt).
  assert.equal(typeof parameters.properties.n.maximum, 'number')
  const [direct] = catalog.directOnly
  assert.ok(Object.hasOwn(direct, '__proto__'))
  assert.equal(direct.polluted, undefined)
  assert.equal({}.polluted, undefined)
})
