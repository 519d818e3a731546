// What a hostile caller, catalog or cell can make the gateway spend: coded
// errors for every bad argument, bounded arguments, per-cell budgets, call ids.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { binding, fakeTools, needsCodeMode, throwsCode } from './helpers.mjs'

const { ToolCatalog, ToolSearchSession, resolveToolSearchConfig, configureCodeMode } = binding

const executor = async (call) => ({ content: [{ type: 'text', text: `FAKE_PLUGIN_OK ${call.name}` }], details: call.args })

test('every bad argument gets a documented code, never a napi status', async () => {
  const catalog = new ToolCatalog(fakeTools(3))
  throwsCode(assert, () => catalog.search(5), 'INVALID_QUERY')
  throwsCode(assert, () => catalog.search('x', 5), 'INVALID_REQUEST')
  throwsCode(assert, () => catalog.search('x', { limit: 'two' }), 'INVALID_LIMIT')
  throwsCode(assert, () => catalog.describe({}), 'INVALID_REQUEST')
  throwsCode(assert, () => catalog.validateArgs(7, {}), 'INVALID_REQUEST')
  throwsCode(assert, () => catalog.searchBatch({ queries: 'x' }), 'INVALID_QUERY')
  throwsCode(assert, () => catalog.searchBatch(10n), 'INVALID_QUERY')
  // NaN crosses as JSON does (null), through the same path as every other value.
  const nan = catalog.validateArgs('fake_plugin_tool_01', { marker: NaN })
  assert.equal(nan.ok, false)
  assert.match(nan.errors[0].message, /must be a string, got null/)

  throwsCode(assert, () => new ToolSearchSession({}, resolveToolSearchConfig({ mode: 'tools' }), { executor }), 'INVALID_REQUEST')
  // Another class's instance, or an object with the catalog's prototype but no native catalog: the same coded error.
  const other = new ToolSearchSession(catalog, resolveToolSearchConfig({ mode: 'tools' }), { executor })
  for (const notCatalog of [other, Object.create(ToolCatalog.prototype), 'catalog']) {
    throwsCode(assert, () => new ToolSearchSession(notCatalog, resolveToolSearchConfig({ mode: 'tools' }), { executor }), 'INVALID_REQUEST')
    throwsCode(assert, () => other.useCatalog(notCatalog), 'INVALID_REQUEST')
  }
  throwsCode(assert, () => new ToolSearchSession(catalog, resolveToolSearchConfig({ mode: 'tools' }), 5), 'INVALID_REQUEST')
  throwsCode(assert, () => new ToolSearchSession(catalog, resolveToolSearchConfig({ mode: 'tools' }), { executor: 1 }), 'INVALID_REQUEST')
  const s = new ToolSearchSession(catalog, resolveToolSearchConfig({ mode: 'directory' }), { executor })
  throwsCode(assert, () => s.hydrate(5), 'INVALID_REQUEST')
  throwsCode(assert, () => s.hydrate('x', 5), 'INVALID_REQUEST')
  throwsCode(assert, () => s.handles(5), 'INVALID_REQUEST')
  throwsCode(assert, () => s.recordRequestBytes('12'), 'INVALID_REQUEST')
  throwsCode(assert, () => s.surface(5), 'INVALID_REQUEST')
  throwsCode(assert, () => s.handle(5, {}), 'INVALID_REQUEST')
  const bad = await s.handle('tool_call', { id: 'fake_plugin_tool_01' }, 'not options')
  assert.equal(bad.error.code, 'INVALID_REQUEST')
  throwsCode(assert, () => resolveToolSearchConfig(true, { codeModeSupported: 'yes' }), 'INVALID_CONFIG')
  // The probe has run (helpers awaited it): the budgets can no longer change.
  throwsCode(assert, () => configureCodeMode({ maxConcurrentCells: 2 }), 'INVALID_CONFIG')
  throwsCode(assert, () => configureCodeMode(null), 'INVALID_CONFIG')
})

test('arguments with too many values are refused before the executor', async () => {
  const calls = []
  const catalog = new ToolCatalog([{ name: 'ingest', description: 'Ingest records.', inputSchema: { type: 'object' } }])
  const s = new ToolSearchSession(catalog, resolveToolSearchConfig({ mode: 'tools' }), { executor: async (call) => { calls.push(call); return 'ok' } })
  const pad = Array.from({ length: 30_000 }, () => ({}))
  const r = await s.handle('tool_call', { id: 'ingest', args: { pad } })
  assert.equal(r.error.code, 'INVALID_ARGS')
  assert.match(r.error.message, /more than 25000 JSON values/)
  assert.equal(calls.length, 0)
  const ok = await s.handle('tool_call', { id: 'ingest', args: { pad: pad.slice(0, 1000) } })
  assert.equal(ok.ok, true, ok.content)
  assert.equal(calls[0].args.pad.length, 1000)
})

test('bridged calls carry the cell id, the tool name and their position', { skip: needsCodeMode }, async () => {
  const calls = []
  const s = new ToolSearchSession(new ToolCatalog(fakeTools(3)), resolveToolSearchConfig({ mode: 'code' }), {
    executor: async (call) => { calls.push(call); return 'ok' },
  })
  const r = await s.handle('tool_search_code', {
    code: `await openclaw.tools.call('fake_plugin_tool_02', { marker: 'a' }); await openclaw.tools.call('openclaw:fake-plugin:fake_plugin_tool_03', { marker: 'b' }); return 1`,
  }, { toolCallId: 'cell_7' })
  assert.equal(r.ok, true, r.content)
  assert.deepEqual(calls.map((c) => [c.toolCallId, c.parentToolCallId]), [
    ['tool_search_code:cell_7:fake_plugin_tool_02:1', 'cell_7'],
    ['tool_search_code:cell_7:fake_plugin_tool_03:2', 'cell_7'],
  ])
})

test('a cell that floods calls is refused beyond its budget, and the refusals are counted', { skip: needsCodeMode }, async () => {
  let started = 0
  const s = new ToolSearchSession(new ToolCatalog(fakeTools(3)), resolveToolSearchConfig({ mode: 'code', codeTimeoutMs: 20000 }), {
    executor: async () => { started++; await new Promise((resolve) => setTimeout(resolve, 300)); return 'ok' },
  })
  const r = await s.handle('tool_search_code', {
    code: `const big = 'x'.repeat(100000);
           const out = await Promise.all(Array.from({ length: 200 }, () =>
             openclaw.tools.call('fake_plugin_tool_01', { marker: big }).then(() => 'ok', (e) => e.code)));
           return { ok: out.filter((x) => x === 'ok').length, refused: out.filter((x) => x === 'budget_exceeded').length }`,
  })
  assert.equal(r.ok, true, r.content)
  const { ok, refused } = r.value.value
  assert.equal(ok + refused, 200)
  assert.ok(refused >= 100, `a 4 MiB cell budget refuses most 100 KB calls started at once: ${refused}`)
  assert.equal(started, ok, 'a refused call never reaches the executor')
  assert.equal(r.value.telemetry.callsRefused, refused)
  assert.ok(r.value.telemetry.peakCallBytes <= 4 * 1024 * 1024)
})
