import { test } from 'node:test'
import assert from 'node:assert/strict'
import { binding, fakeTools, fakeTool, sampleCatalogText, throwsCode } from './helpers.mjs'

const { ToolCatalog, resolveToolSearchConfig, toolSearchLimits } = binding

test('builds from tool objects with defaults, ids and order', () => {
  const catalog = new ToolCatalog([
    { name: 'zeta', description: 'last' },
    { source: 'client', name: 'select_file' },
    { source: 'mcp', owner: 'github', name: 'create_issue', inputSchema: { type: 'object' } },
    { id: 'openclaw:browser:browser_request', owner: 'browser', name: 'browser_request', label: 'Browser' },
  ])
  assert.equal(catalog.size, 4)
  assert.deepEqual(catalog.ids(), ['client:client:select_file', 'mcp:github:create_issue', 'openclaw:browser:browser_request', 'openclaw:core:zeta'])
  assert.match(catalog.fingerprint, /^[0-9a-f]{32}$/)
})

test('parameters is an alias of inputSchema, and the hint is TypeScript-style', () => {
  const catalog = new ToolCatalog([fakeTool(17)])
  const [hit] = catalog.search('fake plugin tool 17')
  assert.equal(hit.id, 'openclaw:fake-plugin:fake_plugin_tool_17')
  assert.equal(hit.input, '{ marker: string }')
  assert.equal(hit.sourceName, 'fake-plugin')
  const d = catalog.describe('fake_plugin_tool_17')
  assert.deepEqual(d.parameters.required, ['marker'])
})

test('fromJson reads the dev-catalog JSONL format', () => {
  const catalog = ToolCatalog.fromJson(sampleCatalogText())
  assert.ok(catalog.size > 100)
  const t = catalog.telemetry()
  assert.equal(t.catalogSize, catalog.size)
  assert.ok(t.sources.openclaw > 0 && t.sources.mcp > 0)
})

test('build and buildFromJson settle later (not within the call) and match the sync builds', async () => {
  const text = sampleCatalogText()
  const pending = ToolCatalog.buildFromJson(text, { cache: false })
  let settled = false
  pending.then(() => (settled = true), () => (settled = true))
  await Promise.resolve()
  assert.equal(settled, false, 'a sync build would have finished before the first await')
  const built = await pending
  const sync = ToolCatalog.fromJson(text, { cache: false })
  assert.ok(built instanceof ToolCatalog)
  assert.equal(built.fingerprint, sync.fingerprint)
  assert.deepEqual(built.ids(), sync.ids())
  assert.deepEqual(built.search('create an issue'), sync.search('create an issue'))
  const fromObjects = await ToolCatalog.build(fakeTools())
  assert.equal(fromObjects.fingerprint, new ToolCatalog(fakeTools()).fingerprint)
})

test('appendAsync matches append and keeps the counter scope', async () => {
  const catalog = new ToolCatalog(fakeTools(4), { policy: { agent: { deny: ['fake_plugin_tool_02'] } } })
  const more = [{ name: 'fake_plugin_tool_02', owner: 'elsewhere', description: 'x' }, { name: 'extra_tool', owner: 'fake-plugin', description: 'An extra tool' }]
  const grown = await catalog.appendAsync(more)
  const sync = catalog.append(more)
  assert.equal(grown.fingerprint, sync.fingerprint)
  assert.deepEqual(grown.ids(), sync.ids())
  assert.equal(grown.telemetry().counterScope, catalog.telemetry().counterScope)
  await assert.rejects(catalog.restrict(['fake_plugin_tool_01']).appendAsync([]), (e) => e.code === 'INVALID_REQUEST')
})

test('build, buildFromJson and appendAsync reject (never throw) with the sync forms\' error codes', async () => {
  const cases = [
    [() => ToolCatalog.build(5), () => new ToolCatalog(5)],
    [() => ToolCatalog.build([], { strict: 'yes' }), () => new ToolCatalog([], { strict: 'yes' })],
    [() => ToolCatalog.build([{ name: 7 }], { strict: true }), () => new ToolCatalog([{ name: 7 }], { strict: true })],
    [() => ToolCatalog.buildFromJson(42), () => ToolCatalog.fromJson(42)],
    [() => ToolCatalog.buildFromJson('[{"name":"a"}]', { policy: { profile: { allow: ['group:nope'] } } }), () => ToolCatalog.fromJson('[{"name":"a"}]', { policy: { profile: { allow: ['group:nope'] } } })],
    [() => new ToolCatalog(fakeTools(2)).appendAsync('nope'), () => new ToolCatalog(fakeTools(2)).append('nope')],
  ]
  for (const [asyncForm, syncForm] of cases) {
    let expected
    assert.throws(syncForm, (e) => {
      expected = e.code
      return true
    })
    assert.match(expected, /^[A-Z_]+$/)
    const promise = asyncForm()
    assert.ok(promise instanceof Promise)
    await assert.rejects(promise, (e) => e instanceof Error && e.code === expected)
  }
})

test('an unchanged catalog reuses its build and keeps its fingerprint', () => {
  const a = new ToolCatalog(fakeTools())
  const b = new ToolCatalog(fakeTools())
  assert.equal(a.fingerprint, b.fingerprint)
  assert.notEqual(a.telemetry().counterScope, b.telemetry().counterScope, 'a replaced catalog gets a new counter scope')
  const c = new ToolCatalog([...fakeTools(35), fakeTool(36, { description: 'changed' })])
  assert.notEqual(a.fingerprint, c.fingerprint)
})

test('search limits: default, cap, and INVALID_LIMIT', () => {
  const catalog = new ToolCatalog(fakeTools())
  assert.equal(catalog.search('fake plugin tool').length, 8)
  assert.equal(catalog.search('fake plugin tool', { limit: null }).length, 8)
  assert.equal(catalog.search('fake plugin tool', { limit: 2 }).length, 2)
  assert.equal(catalog.search('fake plugin tool', { limit: 1000 }).length, 20)
  for (const limit of [0, -3, 1.5, '3', Number.NaN]) {
    throwsCode(assert, () => catalog.search('fake', { limit }), 'INVALID_LIMIT', /^limit must be a positive integer\.$/)
  }
  const wide = new ToolCatalog(fakeTools(), { maxSearchLimit: 30, searchDefaultLimit: 12 })
  assert.equal(wide.search('fake plugin tool').length, 12)
  assert.equal(wide.search('fake plugin tool', { limit: 40 }).length, 30)
})

test('queries: empty and stopword-only give no hits; exact names are honoured', () => {
  const catalog = new ToolCatalog([...fakeTools(3), { name: '_', description: 'underscore' }])
  assert.deepEqual(catalog.search(''), [])
  assert.deepEqual(catalog.search('the of and'), [])
  assert.equal(catalog.search('_')[0]?.name, '_')
  assert.equal(catalog.search('fake_plugin_tool_02')[0].name, 'fake_plugin_tool_02')
  throwsCode(assert, () => catalog.search(42), 'INVALID_QUERY')
  throwsCode(assert, () => catalog.search('x'.repeat(1024 * 1024)), 'INVALID_QUERY')
})

test('a hit that requires an identifier is followed by the tool of its server that finds it', () => {
  const tool = (owner, name, description, required) => ({
    owner, name, description,
    parameters: { type: 'object', properties: Object.fromEntries(required.map((p) => [p, { type: 'string' }])), required },
  })
  const tools = [
    tool('movies', 'get_person_movie_credits', 'Movie credits of a person: the films they directed or acted in.', ['person_id']),
    tool('movies', 'search_person', 'Search people by name.', ['query']),
    tool('movies', 'get_movie_details', 'Details of a movie.', ['movie_id']),
    tool('other', 'search_person', 'Search people in the company directory.', ['query']),
    ...fakeTools(10),
  ]
  const ids = (catalog, query, limit) => catalog.search(query, limit ? { limit } : undefined).map((h) => h.id)
  const catalog = new ToolCatalog(tools)
  const hits = ids(catalog, 'which films did Sofia Coppola direct? list her movie credits')
  assert.equal(hits[0], 'openclaw:movies:get_person_movie_credits', JSON.stringify(hits))
  assert.equal(hits[1], 'openclaw:movies:search_person', 'the look-up of its server, not the other server\'s')
  const full = catalog.search('which films did Sofia Coppola direct? list her movie credits')
  assert.equal(full[1].neededBy, 'openclaw:movies:get_person_movie_credits', 'the placed look-up names the hit that needs it')
  assert.deepEqual(full.filter((h) => 'neededBy' in h).length, 1, 'no other hit carries neededBy')
  assert.equal(catalog.describe('openclaw:movies:search_person').neededBy, undefined)
  assert.deepEqual(ids(catalog, 'movie credits of a person', 1), ['openclaw:movies:get_person_movie_credits'], 'the limit holds')
  // A provider the policy hides is never shown.
  const denied = new ToolCatalog(tools, { policy: { agent: { deny: ['openclaw:movies:search_person'] } } })
  assert.ok(!ids(denied, 'which films did Sofia Coppola direct? list her movie credits').includes('openclaw:movies:search_person'))
  // searchBatch ranks the same way.
  const batch = catalog.searchBatch({ query: 'which films did Sofia Coppola direct? list her movie credits' })
  assert.deepEqual(batch.results[0].candidates.slice(0, 2).map((h) => [h.id, h.neededBy]), [[hits[0], undefined], [hits[1], hits[0]]])
})

test('describe: exact id, unique name, suggestions, ambiguity', () => {
  const catalog = new ToolCatalog([...fakeTools(5), { name: 'read', owner: 'fs' }, { name: 'read', owner: 'docs' }])
  assert.equal(catalog.describe('openclaw:fs:read').id, 'openclaw:fs:read')
  throwsCode(assert, () => catalog.describe('read'), 'AMBIGUOUS_TOOL', /^Ambiguous tool name: read; use an exact tool id\.$/)
  throwsCode(
    assert,
    () => catalog.describe('fake_plugin_tool_6'),
    'TOOL_NOT_FOUND',
    /^Unknown tool id: fake_plugin_tool_6\. Did you mean: [^,]+, [^,]+, [^,?]+\? Use tool_search to find a tool, tool_describe to inspect it, then tool_call with the exact id or name\.$/
  )
})

test('MCP and client tools: input "unknown", no output schema, mcp routing info', () => {
  const catalog = new ToolCatalog([
    { source: 'mcp', owner: 'docs.io', name: 'fetch_page', description: 'Fetch a web page', inputSchema: { type: 'object', properties: { url: { type: 'string' } } }, outputSchema: { type: 'object' } },
    { source: 'client', name: 'pick_color', description: 'Let the user pick a color' },
  ])
  const [mcp] = catalog.search('fetch web page')
  assert.equal(mcp.input, 'unknown')
  assert.deepEqual(mcp.mcp, { serverName: 'docs.io', safeServerName: 'docs_io', toolName: 'fetch_page', operation: 'docs_io__fetch_page' })
  const d = catalog.describe('mcp:docs.io:fetch_page')
  assert.equal(d.outputSchema, undefined)
  assert.equal(d.parameters.properties.url.type, 'string')
  assert.equal(catalog.describe('pick_color').id, 'client:client:pick_color')
})

test('validateArgs: required, types, enums, extra properties, nested, suggestions', () => {
  const catalog = new ToolCatalog([
    {
      name: 'book',
      parameters: {
        type: 'object',
        additionalProperties: false,
        required: ['city', 'when'],
        properties: {
          city: { type: 'string' },
          when: { type: 'object', required: ['date'], properties: { date: { type: 'string' } } },
          seats: { type: 'integer' },
          kind: { enum: ['economy', 'business'] },
          tags: { type: 'array', items: { type: 'string' } },
        },
      },
    },
  ])
  assert.deepEqual(catalog.validateArgs('book', { city: 'Paris', when: { date: 'x' } }), { ok: true, errors: [] })
  const bad = catalog.validateArgs('book', { cty: 'Paris', when: {}, seats: 'two', kind: 'first', tags: [1] })
  assert.equal(bad.ok, false)
  const byPath = (p) => bad.errors.filter((e) => e.path === p).map((e) => e.message).join(' | ')
  assert.match(byPath(''), /city/)
  assert.ok(bad.errors.some((e) => e.suggestion === 'city'), JSON.stringify(bad.errors))
  assert.match(byPath('/when'), /date/)
  assert.match(byPath('/seats'), /integer/)
  assert.match(byPath('/kind'), /economy/)
  assert.match(byPath('/tags/0'), /string/)
  throwsCode(assert, () => catalog.validateArgs('nope', {}), 'TOOL_NOT_FOUND')
})

test('an invalid schema is reported as INVALID_SCHEMA, not a crash', () => {
  const catalog = new ToolCatalog([{ name: 'weird', inputSchema: { type: 'not-a-type' } }, { name: 'loop', inputSchema: { $ref: '#' } }])
  throwsCode(assert, () => catalog.validateArgs('weird', {}), 'INVALID_SCHEMA')
  const loop = (() => { try { return catalog.validateArgs('loop', { a: 1 }) } catch (e) { return e.code } })()
  assert.ok(loop === 'INVALID_SCHEMA' || typeof loop.ok === 'boolean')
})

test('policy layers: deny wins, allow restricts, groups and globs; denied tools vanish everywhere', () => {
  const tools = [...fakeTools(4), { source: 'mcp', owner: 'gh', name: 'create_issue', description: 'Create a GitHub issue' }, { source: 'client', name: 'pick_file' }]
  const catalog = new ToolCatalog(tools, {
    policy: { profile: { allow: ['group:plugins', 'mcp:gh:*'] }, session: { deny: ['fake_plugin_tool_02'] } },
  })
  assert.deepEqual(catalog.ids(), ['mcp:gh:create_issue', 'openclaw:fake-plugin:fake_plugin_tool_01', 'openclaw:fake-plugin:fake_plugin_tool_03', 'openclaw:fake-plugin:fake_plugin_tool_04'])
  assert.ok(catalog.search('fake plugin tool 2', { limit: 20 }).every((h) => h.name !== 'fake_plugin_tool_02'))
  throwsCode(assert, () => catalog.describe('fake_plugin_tool_02'), 'TOOL_NOT_FOUND')
  throwsCode(assert, () => catalog.describe(5), 'INVALID_REQUEST', /^idOrName must be a string\.$/)
  // Appending keeps the policy (the denied tool stays out) and the counter scope.
  const scope = catalog.telemetry().counterScope
  const grown = catalog.append([{ name: 'fake_plugin_tool_02', owner: 'elsewhere', description: 'x' }, { name: 'extra_tool', owner: 'fake-plugin', description: 'An extra tool' }])
  assert.equal(grown.size, catalog.size + 1)
  assert.equal(grown.telemetry().counterScope, scope)
  assert.equal(grown.telemetry().searchCount, catalog.telemetry().searchCount)
  assert.ok(grown.ids().includes('openclaw:fake-plugin:extra_tool'))
  assert.notEqual(new ToolCatalog(tools).telemetry().counterScope, scope)
  throwsCode(assert, () => catalog.restrict(['fake_plugin_tool_01']).append([]), 'INVALID_REQUEST')
  throwsCode(assert, () => catalog.append('nope'), 'INVALID_CATALOG')
  throwsCode(assert, () => catalog.validateArgs(null, {}), 'INVALID_REQUEST')
  throwsCode(assert, () => catalog.validateArgs('openclaw:fake-plugin:fake_plugin_tool_02', { marker: 'x' }), 'TOOL_NOT_FOUND')
  assert.throws(() => catalog.describe('fake_plugin_tool_0'), (e) => !e.message.includes('fake_plugin_tool_02'))
  throwsCode(assert, () => new ToolCatalog(tools, { policy: { agent: { deny: ['group:unknown'] } } }), 'INVALID_POLICY')
  throwsCode(assert, () => new ToolCatalog(tools, { policy: { agent: { alow: [] } } }), 'INVALID_CATALOG')
})

test('control tools and direct-only tools are never cataloged', () => {
  const catalog = new ToolCatalog([
    ...fakeTools(2),
    { name: 'tool_search' },
    { name: 'tool_call' },
    { name: 'message', catalogMode: 'direct-only', description: 'Send a message', parameters: { type: 'object' } },
  ])
  assert.equal(catalog.size, 2)
  assert.deepEqual(catalog.directOnly.map((t) => t.name), ['message'])
  assert.equal(catalog.excluded.filter((e) => /control tool/.test(e.reason)).length, 2)
  throwsCode(assert, () => catalog.describe('message'), 'TOOL_NOT_FOUND')
})

test('bad records are excluded with a reason, or rejected in strict mode', () => {
  const tools = [fakeTool(1), { id: 'openclaw:core:x', name: 'y' }, { name: 7 }, 'not an object', null]
  const catalog = new ToolCatalog(tools)
  assert.equal(catalog.size, 1)
  assert.equal(catalog.excluded.length, 4)
  throwsCode(assert, () => new ToolCatalog(tools, { strict: true }), 'INVALID_CATALOG', /tool #1/)
  throwsCode(assert, () => new ToolCatalog('nope'), 'INVALID_CATALOG')
  throwsCode(assert, () => ToolCatalog.fromJson('[{"name":"a"}'), 'INVALID_CATALOG')
})

test('restrict: a narrowed view with shared counters, never wider', () => {
  const catalog = new ToolCatalog(fakeTools(6))
  const view = catalog.restrict(new Set(['fake_plugin_tool_01', 'openclaw:fake-plugin:fake_plugin_tool_03']))
  assert.equal(view.size, 2)
  view.search('fake')
  view.describe('fake_plugin_tool_01')
  const t = catalog.telemetry()
  assert.equal(t.searchCount, 1)
  assert.equal(t.describeCount, 1)
  assert.equal(t.counterScope, view.telemetry().counterScope)
  throwsCode(assert, () => view.describe('fake_plugin_tool_02'), 'TOOL_NOT_FOUND')
  assert.equal(view.restrict(['fake_plugin_tool_02']).size, 0)
  throwsCode(assert, () => catalog.restrict([1, 2]), 'INVALID_REQUEST')
})

test('searchBatch: scalar first, limits, 4,000-character budget with truncated marks', () => {
  const tools = Array.from({ length: 40 }, (_, i) => ({ name: `sync_tool_${i}`, description: `Synchronise calendars and contacts ${'with many words '.repeat(12)}` }))
  const catalog = new ToolCatalog(tools)
  const result = catalog.searchBatch({ query: 'synchronise calendars', queries: [{ query: 'contacts', limit: 20 }, { query: 'zzzz' }] })
  assert.deepEqual(result.results.map((r) => r.query), ['synchronise calendars', 'contacts', 'zzzz'])
  assert.ok(JSON.stringify(result).length <= 4000, `${JSON.stringify(result).length}`)
  assert.equal(result.truncated, true)
  assert.ok(result.results[0].truncated || result.results[1].truncated)
  assert.equal(result.results[2].truncated, undefined)
  assert.deepEqual(result.results[2].candidates, [])
  throwsCode(assert, () => catalog.searchBatch({ queries: Array.from({ length: 17 }, (_, i) => ({ query: `q${i}` })) }), 'INVALID_QUERY', /16/)
  throwsCode(assert, () => catalog.searchBatch({ queries: [{ query: 'a'.repeat(300) }, { query: 'b'.repeat(300) }] }), 'INVALID_QUERY', /512/)
  throwsCode(assert, () => catalog.searchBatch({}), 'INVALID_QUERY')
  throwsCode(assert, () => catalog.searchBatch({ queries: [{ query: 'x', limit: 0 }] }), 'INVALID_LIMIT')
  throwsCode(assert, () => catalog.searchBatch({ queries: [{ query: 'x', limit: '3' }] }), 'INVALID_LIMIT', /^queries\[0\]\.limit: limit must be a positive integer\.$/)
  // Checked before any search, each refusal naming the offending path.
  throwsCode(assert, () => catalog.searchBatch({ queries: [{ query: 'x', limit: 20 }, { query: 'y', limit: 20 }, { query: 'z', limit: 11 }] }), 'INVALID_LIMIT', /^queries\[2\]\.limit: the limits together ask for 51 hits/)
  throwsCode(assert, () => catalog.searchBatch({ queries: [{ query: 'x' }, { query: '  ' }] }), 'INVALID_QUERY', /^queries\[1\]\.query is blank/)
  throwsCode(assert, () => catalog.searchBatch({ limit: 3, queries: [{ query: 'x' }] }), 'INVALID_LIMIT', /^limit: a top-level limit applies only to "query"/)
})

test('resolveToolSearchConfig: shapes, clamps and the code fallback', () => {
  const r = (raw, env) => resolveToolSearchConfig(raw, env)
  assert.equal(r(false).mode, 'direct')
  assert.equal(r(false).enabled, false)
  assert.equal(r(true, { codeModeSupported: true }).mode, 'code')
  assert.equal(r(undefined).mode, 'tools')
  assert.equal(r({}, { codeModeSupported: true }).mode, 'code')
  assert.equal(r({ mode: 'weird' }, { codeModeSupported: true }).mode, 'code')
  assert.equal(r({ mode: 'directory' }).mode, 'directory')
  const fallback = r(true, { codeModeSupported: false })
  assert.equal(fallback.mode, 'tools')
  assert.equal(fallback.requestedMode, 'code')
  assert.match(fallback.fallbackReason, /code mode/)
  const c = r({ mode: 'tools', codeTimeoutMs: 10, maxSearchLimit: 99, searchDefaultLimit: 60 })
  assert.deepEqual([c.codeTimeoutMs, c.maxSearchLimit, c.searchDefaultLimit], [1000, 50, 50])
  const d = r({ mode: 'tools', codeTimeoutMs: -5, maxSearchLimit: 1.5, searchDefaultLimit: 'x' })
  assert.deepEqual([d.codeTimeoutMs, d.maxSearchLimit, d.searchDefaultLimit], [10000, 20, 8])
  const n = r({ mode: 'tools', codeTimeoutMs: Number.NaN, maxSearchLimit: Infinity, searchDefaultLimit: () => 1 })
  assert.deepEqual([n.codeTimeoutMs, n.maxSearchLimit, n.searchDefaultLimit], [10000, 20, 8])
  assert.equal(new ToolCatalog(fakeTools(30), { maxSearchLimit: Number.NaN }).search('fake plugin', { limit: 40 }).length, 20)
  const e = r({ mode: 'tools', codeTimeoutMs: 120000, maxSearchLimit: 4, searchDefaultLimit: 9 })
  assert.deepEqual([e.codeTimeoutMs, e.maxSearchLimit, e.searchDefaultLimit], [60000, 4, 4])
})

test('toolSearchLimits: the numbers resolveToolSearchConfig applies, read from one place', () => {
  const limits = toolSearchLimits()
  const r = (raw) => resolveToolSearchConfig({ mode: 'tools', ...raw })
  assert.equal(r({}).codeTimeoutMs, limits.codeTimeoutMsDefault)
  assert.equal(r({ codeTimeoutMs: 1 }).codeTimeoutMs, limits.codeTimeoutMsMin)
  assert.equal(r({ codeTimeoutMs: 1e9 }).codeTimeoutMs, limits.codeTimeoutMsMax)
  assert.equal(r({}).maxSearchLimit, limits.maxSearchLimitDefault)
  assert.equal(r({ maxSearchLimit: 1e6 }).maxSearchLimit, limits.maxSearchLimitCap)
  assert.equal(r({}).searchDefaultLimit, limits.searchDefaultLimitDefault)
  const catalog = new ToolCatalog(fakeTools(80), { maxSearchLimit: limits.maxSearchLimitCap })
  assert.equal(catalog.search('fake plugin', { limit: 1000 }).length, limits.maxSearchLimitCap)
})

test('telemetry counts searches and describes per scope', () => {
  const catalog = new ToolCatalog(fakeTools(3))
  catalog.search('fake')
  catalog.searchBatch({ queries: [{ query: 'a' }, { query: 'b' }] })
  catalog.describe('fake_plugin_tool_01')
  const t = catalog.telemetry()
  // searchCount counts queries: the batch of two counts two.
  assert.deepEqual([t.catalogSize, t.searchCount, t.describeCount, t.callCount], [3, 3, 1, 0])
  assert.deepEqual(t.sources, { openclaw: 3, mcp: 0, client: 0 })
})

test('ToolCatalog is a plain JS class holding the native catalog: no instanceof hook, every catalog one', async () => {
  assert.equal(Object.hasOwn(ToolCatalog, Symbol.hasInstance), false)
  const catalog = new ToolCatalog(fakeTools(3))
  assert.equal(Object.getPrototypeOf(catalog), ToolCatalog.prototype)
  assert.equal(catalog.constructor, ToolCatalog)
  // Catalogs the methods make are ToolCatalogs too: each native answer is wrapped.
  for (const derived of [catalog.append([{ name: 'more' }]), catalog.restrict(['fake_plugin_tool_01']), ToolCatalog.fromJson('[]'), await ToolCatalog.build([]), await catalog.appendAsync([])]) {
    assert.ok(derived instanceof ToolCatalog)
    assert.equal(Object.getPrototypeOf(derived), ToolCatalog.prototype)
  }
  assert.equal({} instanceof ToolCatalog, false)
  assert.equal(Object.create(ToolCatalog.prototype) instanceof ToolCatalog, true) // plain JS semantics
  assert.throws(() => Object.create(ToolCatalog.prototype).search('x'), TypeError) // but no catalog behind it
  assert.throws(() => ToolCatalog([]), TypeError)
  throwsCode(assert, () => new ToolCatalog('not an array'), 'INVALID_CATALOG')
  await assert.rejects(ToolCatalog.build('not an array'), (e) => e.code === 'INVALID_CATALOG')
})

test('sync append and withSource exclude what JSON cannot express with the reason, never as null', () => {
  const catalog = new ToolCatalog(fakeTools(2))
  const bad = [undefined, () => 1, { name: 'big', n: 1n }, null, { name: 'fine', description: 'a fine tool' }]
  for (const derived of [catalog.append(bad), catalog.withSource({ source: 'mcp', owner: 'srv' }, bad)]) {
    const reasons = derived.excluded.map((e) => e.reason)
    assert.equal(reasons.length, 4, JSON.stringify(derived.excluded))
    assert.equal(reasons.filter((r) => /not undefined or a function/.test(r)).length, 2, JSON.stringify(reasons))
    assert.ok(reasons.some((r) => /JSON\.stringify threw/.test(r)), JSON.stringify(reasons))
    assert.ok(reasons.some((r) => /not null/.test(r)), JSON.stringify(reasons))
  }
})
