// Live catalogs: one MCP server's tools replaced, removed or added (withSource).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { ToolCatalog } = require('../index.js')

const base = () =>
  new ToolCatalog([
    { source: 'mcp', owner: 'github', name: 'create_issue', description: 'Create an issue in a repository' },
    { source: 'mcp', owner: 'github', name: 'close_issue', description: 'Close an issue' },
    { source: 'mcp', owner: 'slack', name: 'post_message', description: 'Post a message to a channel' },
    { name: 'read', description: 'Read a file' },
  ])

// A server's tools/list answer, passed straight through.
const toolsList = [
  { name: 'create_issue', title: 'Create issue', description: 'Open a new issue', inputSchema: { type: 'object', properties: { title: { type: 'string' } } }, annotations: { readOnlyHint: false } },
  { name: 'list_pulls', description: 'List the pull requests of a repository', inputSchema: { type: 'object' } },
]

test('withSource replaces exactly one server, accepts tools/list, keeps the counter scope', async () => {
  const catalog = base()
  catalog.search('issue')
  const next = catalog.withSource({ source: 'mcp', owner: 'github' }, toolsList)
  assert.deepEqual(next.ids(), ['mcp:github:create_issue', 'mcp:github:list_pulls', 'mcp:slack:post_message', 'openclaw:core:read'])
  assert.equal(next.search('pull requests', { limit: 1 })[0].id, 'mcp:github:list_pulls')
  assert.equal(next.search('close issue').some((h) => h.id === 'mcp:github:close_issue'), false)
  assert.equal(next.describe('mcp:github:create_issue').label, 'Create issue')
  // One scope: search('issue') on the old catalog, then two on the new one.
  assert.equal(next.telemetry().searchCount, 3)
  assert.equal(catalog.telemetry().searchCount, 3)
  const async = await catalog.withSourceAsync({ source: 'mcp', owner: 'github' }, toolsList)
  assert.equal(async.fingerprint, next.fingerprint)
  // The same final tools built from scratch: the same content fingerprint and ranking.
  const full = new ToolCatalog([
    { source: 'mcp', owner: 'slack', name: 'post_message', description: 'Post a message to a channel' },
    { name: 'read', description: 'Read a file' },
    ...toolsList.map((t) => ({ ...t, source: 'mcp', owner: 'github' })),
  ], { cache: false }) // built from scratch, not the live version's data found by content
  assert.equal(full.fingerprint, next.fingerprint)
  for (const q of ['issue', 'message', 'pull requests of a repository', 'file']) {
    assert.deepEqual(next.search(q).map((h) => h.id), full.search(q).map((h) => h.id), q)
  }
})

test('withSource removes and adds servers; refuses foreign tools, bad selectors and views', async () => {
  const catalog = base()
  const removed = catalog.withSource({ source: 'mcp', owner: 'github' }, [])
  assert.deepEqual(removed.ids(), ['mcp:slack:post_message', 'openclaw:core:read'])
  const added = removed.withSource({ source: 'mcp', owner: 'linear' }, [{ name: 'create_ticket', description: 'Create a ticket' }])
  assert.ok(added.ids().includes('mcp:linear:create_ticket'))
  assert.throws(() => catalog.withSource({ source: 'mcp', owner: 'github' }, [{ name: 'read', source: 'openclaw', owner: 'core' }]), { code: 'INVALID_CATALOG' })
  assert.throws(() => catalog.withSource({ source: 'ftp', owner: 'x' }, []), { code: 'INVALID_REQUEST' })
  assert.throws(() => catalog.withSource({ owner: 'x' }, []), { code: 'INVALID_REQUEST' })
  assert.throws(() => catalog.withSource({ source: 'mcp', owner: 'github' }, 'nope'), { code: 'INVALID_CATALOG' })
  await assert.rejects(catalog.withSourceAsync(null, []), { code: 'INVALID_REQUEST' })
  assert.throws(() => catalog.restrict(['read']).withSource({ source: 'mcp', owner: 'github' }, []), { code: 'INVALID_REQUEST' })
  // The policy carries over.
  const denied = new ToolCatalog([{ name: 'read' }], { policy: { agent: { deny: ['mcp:github:*'] } } })
  assert.deepEqual(denied.withSource({ source: 'mcp', owner: 'github' }, toolsList).ids(), ['openclaw:core:read'])
})

test('withUnavailable keeps a disconnected server known but out of search and calls; fresh tools bring it back', async () => {
  const { ToolSearchSession, resolveToolSearchConfig } = require('../index.js')
  const down = base().withUnavailable({ source: 'mcp', owner: 'github' }, 'server github disconnected')
  assert.equal(down.size, 4)
  assert.equal(down.search('issue').some((h) => h.id.startsWith('mcp:github:')), false)
  assert.equal(down.describe('mcp:github:create_issue').id, 'mcp:github:create_issue')
  const calls = []
  const session = new ToolSearchSession(down, resolveToolSearchConfig({ mode: 'tools' }), {
    executor: async (call) => {
      calls.push(call.name)
      return { content: [{ type: 'text', text: 'ok' }] }
    },
  })
  const result = await session.handle('tool_call', { id: 'mcp:github:create_issue', args: {} })
  assert.equal(result.ok, false)
  assert.equal(result.error.code, 'TOOL_UNAVAILABLE')
  assert.match(result.content, /server github disconnected/)
  assert.deepEqual(calls, [])
  assert.equal((await session.handle('tool_call', { id: 'mcp:slack:post_message', args: {} })).ok, true)
  const back = down.withSource({ source: 'mcp', owner: 'github' }, toolsList)
  assert.equal(back.search('pull requests', { limit: 1 })[0].id, 'mcp:github:list_pulls')
  assert.throws(() => down.withUnavailable({ source: 'mcp', owner: 'github' }, 5), { code: 'INVALID_REQUEST' })
})

test('session.useCatalog moves a session to the changed catalog, keeping telemetry and surface bytes', async () => {
  const { ToolSearchSession, resolveToolSearchConfig } = require('../index.js')
  const calls = []
  const executor = async (call) => {
    calls.push(call.name)
    return { content: [{ type: 'text', text: `OK ${call.name}` }] }
  }
  const catalog = base()
  const session = new ToolSearchSession(catalog, resolveToolSearchConfig({ mode: 'tools' }), { executor })
  const before = session.surface('openai-responses')
  assert.equal((await session.handle('tool_call', { id: 'mcp:github:close_issue', args: {} })).ok, true)
  session.useCatalog(catalog.withSource({ source: 'mcp', owner: 'github' }, toolsList))
  assert.deepEqual(session.surface('openai-responses'), before)
  const found = await session.handle('tool_search', { query: 'pull requests' })
  assert.equal(found.value[0].id, 'mcp:github:list_pulls')
  assert.equal((await session.handle('tool_call', { id: 'mcp:github:list_pulls', args: {} })).ok, true)
  const gone = await session.handle('tool_call', { id: 'mcp:github:close_issue', args: {} })
  assert.equal(gone.error.code, 'TOOL_NOT_FOUND')
  const t = session.telemetry()
  assert.equal(t.calls, 3)
  assert.equal(t.searches, 1)
  assert.deepEqual(calls, ['close_issue', 'list_pulls'])
  assert.throws(() => session.useCatalog({}), { code: 'INVALID_REQUEST' })
})

test('a chain of server changes on a larger catalog ranks as a full build of the final tools', async () => {
  const { sampleCatalogText } = await import('./helpers.mjs')
  const tools = sampleCatalogText().split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l))
  const queries = ['analyze evidence from a crime scene', 'send a message', 'weather forecast', 'search flights', 'convert currency', 'create an issue', 'database query', 'translate text', 'stock price', 'calendar event']
  let live = new ToolCatalog(tools)
  const server = (n) => Array.from({ length: 12 }, (_, i) => ({ name: `op_${n}_${i}`, description: `Operation ${i} of release ${n}: send weather alerts, convert files and search flights` }))
  for (let n = 0; n < 6; n++) live = live.withSource({ source: 'mcp', owner: 'churn' }, server(n))
  live = live.withSource({ source: 'mcp', owner: 'churn-two' }, server(9)).withSource({ source: 'mcp', owner: 'churn' }, [])
  const final = [...tools, ...server(9).map((t) => ({ ...t, source: 'mcp', owner: 'churn-two' }))]
  const full = new ToolCatalog(final, { cache: false })
  assert.equal(live.fingerprint, full.fingerprint)
  assert.deepEqual(live.ids(), full.ids())
  for (const q of queries) assert.deepEqual(live.search(q, { limit: 20 }).map((h) => h.id), full.search(q, { limit: 20 }).map((h) => h.id), q)
})

test('updateAsync: a new run of the whole list equals a build of it, derived or not, and keeps the counter scope', async () => {
  const tools = []
  for (let s = 0; s < 20; s++) {
    for (let t = 0; t < 20; t++) tools.push({ source: 'mcp', owner: `server${s}`, name: `op${t}_s${s}`, description: `Operation ${t} of server ${s}: exports reports` })
  }
  tools.push({ name: 'read', description: 'Read a file' })
  const catalog = await ToolCatalog.build(tools)
  catalog.search('exports reports')
  // The next run: new objects for one server's changed tools, one new server, the rest as before.
  const next = tools.filter((t) => t.name !== 'op3_s2').map((t) => (t.owner === 'server5' && t.name === 'op1_s5' ? { ...t, description: 'Sends mail now' } : t))
  next.push({ source: 'mcp', owner: 'mail', name: 'send', description: 'Send an email' })
  next.reverse()
  const updated = await catalog.updateAsync(next)
  const full = await ToolCatalog.build(next.map((t) => ({ ...t })), { cache: false })
  assert.equal(updated.fingerprint, full.fingerprint)
  assert.deepEqual(updated.ids(), full.ids())
  for (const query of ['send mail', 'operation 1 of server 5', 'read a file']) {
    assert.deepEqual(
      updated.search(query).map((h) => h.id),
      full.search(query).map((h) => h.id),
    )
  }
  assert.equal(updated.telemetry().searchCount, catalog.telemetry().searchCount)
  // The same tools again (new objects of the same content too): the catalog itself, no trip to the worker.
  assert.equal(await updated.updateAsync(next), updated)
  assert.equal(await updated.updateAsync(next.map((t) => ({ ...t }))), updated)
  // Most tools changed: a full build, still the same answer; a bad tool is excluded at its position.
  const most = tools.map((t, i) => (i % 2 ? { ...t, description: `${t.description} (v2)` } : t))
  most.splice(3, 0, { source: 'mcp', owner: 'server1', name: 42 })
  const rebuilt = await updated.updateAsync(most)
  const fresh = await ToolCatalog.build(most.map((t) => ({ ...t })), { cache: false })
  assert.equal(rebuilt.fingerprint, fresh.fingerprint)
  assert.deepEqual(rebuilt.excluded, fresh.excluded)
  assert.equal(rebuilt.excluded[0].index, 3)
  // Not an array: the coded error; a restricted view: INVALID_REQUEST.
  await assert.rejects(catalog.updateAsync('nope'), { code: 'INVALID_CATALOG' })
  await assert.rejects(catalog.restrict(['read']).updateAsync(tools), { code: 'INVALID_REQUEST' })
})
