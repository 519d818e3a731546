// Gateway fidelity through the binding: configuration, catalog records, output schemas.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { binding, capability, fakeTools, needsCodeMode, throwsCode } from './helpers.mjs'

const { ToolCatalog, ToolSearchSession, resolveToolSearchConfig } = binding
const executor = async () => 'ok'

test('a session resolves a raw config exactly as resolveToolSearchConfig does on this host', { skip: needsCodeMode }, () => {
  const catalog = new ToolCatalog(fakeTools(2))
  for (const raw of [true, { mode: 'code' }, { enabled: true, mode: 'code' }]) {
    const s = new ToolSearchSession(catalog, raw, { executor })
    assert.equal(s.mode, resolveToolSearchConfig(raw).mode)
    assert.equal(s.mode, 'code', JSON.stringify(raw))
  }
  assert.equal(capability.available, true)
})

test('enabled: false disables Tool Search whatever the mode says', () => {
  const catalog = new ToolCatalog(fakeTools(2))
  assert.equal(resolveToolSearchConfig({ enabled: false, mode: 'code' }).mode, 'direct')
  assert.equal(new ToolSearchSession(catalog, { enabled: false, mode: 'tools' }, { executor }).mode, 'direct')
})

test('an unknown mode and numbers that fall back are reported as warnings', () => {
  const typo = resolveToolSearchConfig({ mode: 'directroy' }, { codeModeSupported: true })
  assert.equal(typo.warnings.length, 1)
  assert.match(typo.warnings[0], /directroy/)
  const numbers = resolveToolSearchConfig({ mode: 'tools', maxSearchLimit: 1.5, codeTimeoutMs: 999999 })
  assert.equal(numbers.warnings.length, 2, JSON.stringify(numbers.warnings))
  assert.equal(resolveToolSearchConfig({ mode: 'tools' }).warnings, undefined)
})

test('supplied MCP metadata is kept in hits', () => {
  const catalog = new ToolCatalog([
    { source: 'mcp', owner: 'GitHub-Enterprise', name: 'create_issue', description: 'Create an issue.', mcp: { serverName: 'GitHub Enterprise', toolName: 'issues.create' } },
  ])
  const [hit] = catalog.search('create issue')
  assert.equal(hit.mcp.serverName, 'GitHub Enterprise')
  assert.equal(hit.mcp.toolName, 'issues.create')
})

test('input_schema is accepted, and strict builds refuse unknown top-level fields', () => {
  const catalog = new ToolCatalog([{ name: 'anthropic_style', description: 'x', input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }])
  assert.equal(catalog.validateArgs('anthropic_style', {}).ok, false)
  throwsCode(assert, () => new ToolCatalog([{ name: 'odd', description: 'x', colour: 'red' }], { strict: true }), 'INVALID_CATALOG')
  assert.equal(new ToolCatalog([{ name: 'odd', description: 'x', colour: 'red' }]).size, 1)
})

test('a trusted result that does not match its output schema is a failed call', async () => {
  const tools = [{
    name: 'count_things', description: 'Count things.', parameters: { type: 'object' },
    outputSchema: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] },
  }]
  let answer = { content: [{ type: 'text', text: 'x' }], details: { count: 'many' } }
  const s = new ToolSearchSession(new ToolCatalog(tools), resolveToolSearchConfig({ mode: 'tools' }), { executor: async () => answer })
  const bad = await s.handle('tool_call', { id: 'count_things', args: {} })
  assert.equal(bad.ok, false)
  assert.equal(bad.error.code, 'TOOL_FAILED')
  assert.equal(bad.value, undefined, 'the mismatching result is not passed on')
  answer = { content: [{ type: 'text', text: '3' }], details: { count: 3 } }
  const good = await s.handle('tool_call', { id: 'count_things', args: {} })
  assert.equal(good.ok, true, good.content)
  // An unusable trusted output schema loses its hint, not its tool (as OpenClaw lists it): any
  // result passes, as with no output schema.
  const broken = new ToolCatalog([{ name: 'broken', description: 'x', outputSchema: { type: 'object', properties: { a: { $ref: 'http://example.invalid/s' } } } }])
  assert.equal(broken.size, 1)
  assert.deepEqual(broken.excluded, [])
  const kept = new ToolSearchSession(broken, resolveToolSearchConfig({ mode: 'tools' }), { executor: async () => ({ content: [{ type: 'text', text: 'ok' }], details: { a: 'anything' } }) })
  const called = await kept.handle('tool_call', { id: 'broken', args: {} })
  assert.equal(called.ok, true, called.content)
})
