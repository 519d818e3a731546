// ToolSearchSession through the addon: surfaces, dispatch with a JS executor,
// blocked / missing / failed results, cancellation, events and telemetry.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { getEventListeners } from 'node:events'
import { join } from 'node:path'
import { binding, capability, fakeTool, fakeTools, root, throwsCode } from './helpers.mjs'

const { ToolCatalog, ToolSearchSession, resolveToolSearchConfig } = binding

const tools = () => [
  ...fakeTools(36),
  { name: 'get_weather', owner: 'weather', description: 'Current weather and forecast for a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } },
  { source: 'mcp', owner: 'github', name: 'create_issue', description: 'Open a GitHub issue.',
    inputSchema: { type: 'object', properties: { title: { type: 'string' } } } },
  { source: 'client', name: 'select_file', description: 'Let the user pick a file.', inputSchema: { type: 'object', properties: {} } },
  { name: 'exec', description: 'Run a shell command.', catalogMode: 'direct-only',
    parameters: { type: 'object', properties: { command: { type: 'string' } } } },
]

/** A gateway executor double: records calls, answers per tool name. */
function gateway(answers = {}) {
  const calls = []
  const executor = async (call) => {
    calls.push(call)
    const answer = answers[call.name]
    if (answer) return answer(call)
    return { content: [{ type: 'text', text: `FAKE_PLUGIN_OK ${call.name} ${JSON.stringify(call.args)}` }], details: call.args }
  }
  return { calls, executor }
}

function session(mode, options = {}) {
  const raw = mode === 'direct' ? false : { mode }
  const config = resolveToolSearchConfig(raw, { codeModeSupported: true })
  const gw = gateway(options.answers)
  const events = []
  const s = new ToolSearchSession(new ToolCatalog(options.tools ?? tools()), config, {
    executor: gw.executor,
    onEvent: (e) => events.push(e),
    ...options.sessionOptions,
  })
  return { s, calls: gw.calls, events }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

/** Events arrive asynchronously (queued to the JS thread): wait for `count`. */
async function eventsOf(events, count) {
  for (let i = 0; i < 1000 && events.length < count; i++) await settle()
  return events
}

test('surfaces per mode and provider format', () => {
  const { s } = session('tools')
  const responses = s.surface('openai-responses')
  assert.deepEqual(responses.tools.map((t) => t.name), ['tool_search', 'tool_describe', 'tool_call', 'exec'])
  assert.equal(responses.tools[0].type, 'function')
  assert.equal(responses.tools[0].strict, false)
  assert.equal(responses.bytes.tools, Buffer.byteLength(JSON.stringify(responses.tools)))
  assert.equal(responses.directoryPrompt, undefined)
  const chat = s.surface('openai-chat')
  assert.equal(chat.tools[2].function.name, 'tool_call')
  const anthropic = s.surface('anthropic')
  assert.equal(anthropic.tools[1].input_schema.required[0], 'id')
  assert.deepEqual(s.surface().tools.map((t) => t.name), s.surface('neutral').tools.map((t) => t.name))
  throwsCode(assert, () => s.surface('gemini'), 'INVALID_REQUEST')

  const codeSession = session('code').s
  const code = codeSession.surface('openai-responses')
  if (capability.available) {
    assert.deepEqual(code.tools.map((t) => t.name), ['tool_search_code', 'exec'])
    assert.match(code.tools[0].description, /openclaw\.tools\.call\(id, args\?\)/)
  } else {
    // Never offered without a runner: the session falls back to tools mode (contract §7).
    assert.equal(codeSession.mode, 'tools')
    assert.deepEqual(code.tools.map((t) => t.name), ['tool_search', 'tool_describe', 'tool_call', 'exec'])
  }

  const direct = session('direct').s.surface('openai-responses')
  assert.equal(direct.tools.length, 36 + 4)
  assert.ok(direct.tools.some((t) => t.name === 'github__create_issue'))
  assert.ok(responses.bytes.tools < direct.bytes.tools)

  const dir = session('directory').s.surface('anthropic')
  assert.deepEqual(dir.tools.map((t) => t.name), ['tool_search', 'tool_describe', 'tool_call', 'exec', 'select_file'])
  assert.match(dir.directoryPrompt, /^Available deferred-schema tools:\n- fake_plugin_tool_01 \(fake-plugin\): /)
  assert.doesNotMatch(dir.directoryPrompt, /create_issue|select_file/)
  assert.equal(dir.bytes.directoryPrompt, Buffer.byteLength(dir.directoryPrompt))
})

test('structured search (two queries) then tool_call through the JS executor', async () => {
  const { s, calls, events } = session('tools')
  const found = await s.handle('tool_search', { queries: [{ query: 'fake plugin tool 07' }, { query: 'weather in a city' }] }, { toolCallId: 'call_1' })
  assert.equal(found.ok, true)
  assert.equal(found.value.results.length, 2)
  assert.equal(found.value.results[0].candidates[0].id, 'openclaw:fake-plugin:fake_plugin_tool_07')
  assert.deepEqual(JSON.parse(found.content), found.value)

  const described = await s.handle('tool_describe', { id: 'fake_plugin_tool_07' })
  assert.deepEqual(described.value.parameters.required, ['marker'])

  const called = await s.handle('tool_call', { id: 'openclaw:fake-plugin:fake_plugin_tool_07', args: { marker: 'qa' } }, { toolCallId: 'call_2' })
  assert.equal(called.ok, true, called.content)
  assert.deepEqual(called.value.tool, { id: 'openclaw:fake-plugin:fake_plugin_tool_07', name: 'fake_plugin_tool_07', source: 'openclaw', sourceName: 'fake-plugin' })
  assert.equal(called.value.result.content[0].text, 'FAKE_PLUGIN_OK fake_plugin_tool_07 {"marker":"qa"}')
  assert.equal(calls.length, 1)
  // The target call has its own id and names the tool_call wrapper as its parent.
  assert.equal(calls[0].toolCallId, 'tool_call:call_2:fake_plugin_tool_07')
  assert.equal(calls[0].parentToolCallId, 'call_2')
  assert.equal(calls[0].owner, 'fake-plugin')
  assert.ok(calls[0].signal instanceof AbortSignal)

  await eventsOf(events, 3)
  assert.deepEqual(events.map((e) => e.type), ['search', 'describe', 'call'])
  assert.deepEqual(events[0].queries, ['fake plugin tool 07', 'weather in a city'])
  assert.equal(events[2].tool.id, 'openclaw:fake-plugin:fake_plugin_tool_07')
  assert.equal(events[2].outcome, 'ok')
  assert.equal(typeof events[2].durationMs, 'number')

  const t = s.telemetry()
  assert.equal(t.searchCount, 2, 'one tool_search call with two queries counts two')
  assert.equal(t.describeCount, 1)
  assert.equal(t.callCount, 1)
  assert.deepEqual(t.toolsCalled.map((c) => [c.id, c.source]), [['openclaw:fake-plugin:fake_plugin_tool_07', 'openclaw']])
})

test('flattened arguments are repaired; invalid input never reaches the executor', async () => {
  const { s, calls } = session('tools')
  const repaired = await s.handle('tool_call', { id: 'fake_plugin_tool_03', marker: 'flat' })
  assert.equal(repaired.ok, true, repaired.content)
  assert.deepEqual(calls[0].args, { marker: 'flat' })
  const invalid = await s.handle('tool_call', { id: 'fake_plugin_tool_03', args: { markr: 'x' } })
  assert.equal(invalid.error.code, 'INVALID_ARGS')
  assert.match(invalid.content, /marker/)
  // Two selectors naming two tools, with no explicit args to tell which one is the target: refused.
  const ambiguous = await s.handle('tool_call', { id: 'fake_plugin_tool_03', toolId: 'fake_plugin_tool_04' })
  assert.equal(ambiguous.error.code, 'AMBIGUOUS_TOOL')
  const providerString = await s.handle('tool_call', '{"id":"fake_plugin_tool_05","args":{"marker":"s"}}')
  assert.equal(providerString.ok, true)
  assert.equal(calls.length, 2)
})

test('a block thrown by the executor is a blocked result, called once', async () => {
  const { s, calls, events } = session('tools', {
    answers: { fake_plugin_tool_09: () => { throw Object.assign(new Error('approval denied by operator'), { code: 'TOOL_BLOCKED' }) } },
  })
  const r = await s.handle('tool_call', { id: 'fake_plugin_tool_09', args: { marker: 'x' } })
  assert.equal(r.ok, false)
  assert.equal(r.status, 'blocked')
  assert.equal(r.error.code, 'TOOL_BLOCKED')
  assert.match(r.content, /approval denied by operator/)
  assert.equal(calls.length, 1)
  await eventsOf(events, 1)
  assert.equal(events.at(-1).outcome, 'blocked')
  assert.equal(s.telemetry().toolsCalled[0].blocked, 1)
})

test('a tool missing at the gateway fails closed; other throws are tool failures', async () => {
  const { s, calls } = session('tools', {
    answers: {
      fake_plugin_tool_10: () => { throw Object.assign(new Error('plugin unloaded'), { code: 'TOOL_UNAVAILABLE' }) },
      fake_plugin_tool_11: () => Promise.reject(new TypeError('boom')),
      fake_plugin_tool_12: () => { throw 'plain string' },
    },
  })
  const missing = await s.handle('tool_call', { id: 'fake_plugin_tool_10', args: { marker: 'x' } })
  assert.equal(missing.status, 'error')
  assert.equal(missing.error.code, 'TOOL_UNAVAILABLE')
  assert.match(missing.content, /plugin unloaded/)
  const failed = await s.handle('tool_call', { id: 'fake_plugin_tool_11', args: { marker: 'x' } })
  assert.equal(failed.error.code, 'TOOL_FAILED')
  assert.match(failed.content, /boom/)
  const thrownString = await s.handle('tool_call', { id: 'fake_plugin_tool_12', args: { marker: 'x' } })
  assert.match(thrownString.content, /plain string/)
  assert.equal(calls.length, 3)
})

test('policy-removed tools are unknown and never executed', async () => {
  const catalog = new ToolCatalog(tools(), { policy: { session: { deny: ['fake_plugin_tool_01'] } } })
  const gw = gateway()
  const s = new ToolSearchSession(catalog, resolveToolSearchConfig({ mode: 'directory' }), { executor: gw.executor })
  const r = await s.handle('tool_call', { id: 'openclaw:fake-plugin:fake_plugin_tool_01', args: { marker: 'x' } })
  assert.equal(r.error.code, 'TOOL_NOT_FOUND')
  const direct = await s.handle('fake_plugin_tool_01', { marker: 'x' })
  assert.equal(direct.error.code, 'TOOL_NOT_FOUND')
  assert.equal(gw.calls.length, 0)
  assert.doesNotMatch(s.surface().directoryPrompt, /fake_plugin_tool_01 /)
})

test('directory mode: exact hidden names dispatch, ids and near-misses do not', async () => {
  const { s, calls } = session('directory')
  assert.equal(s.handles('fake_plugin_tool_02'), true)
  assert.equal(s.handles('exec'), false)
  assert.equal(s.handles('openclaw:fake-plugin:fake_plugin_tool_02'), false)
  const ok = await s.handle('fake_plugin_tool_02', { marker: 'direct' })
  assert.equal(ok.ok, true, ok.content)
  assert.equal(calls[0].id, 'openclaw:fake-plugin:fake_plugin_tool_02')
  const byId = await s.handle('openclaw:fake-plugin:fake_plugin_tool_02', { marker: 'x' })
  assert.equal(byId.error.code, 'TOOL_NOT_FOUND')
  const nearMiss = await s.handle('fake_plugin_tool_2', { marker: 'x' })
  assert.equal(nearMiss.error.code, 'TOOL_NOT_FOUND')
  assert.equal(calls.length, 1)
})

test('hydrate returns at most four trusted schemas, required first', () => {
  const { s } = session('directory')
  const defs = s.hydrate('what is the weather forecast in Paris', { required: ['fake_plugin_tool_30', 'create_issue'] })
  assert.equal(defs[0].name, 'fake_plugin_tool_30')
  assert.ok(defs.some((d) => d.name === 'get_weather'))
  assert.ok(defs.length <= 4)
  assert.ok(!defs.some((d) => d.name === 'create_issue' || d.name === 'select_file'))
  assert.deepEqual(session('tools').s.hydrate('weather'), [])
  throwsCode(assert, () => s.hydrate('x', { maxTools: -1 }), 'INVALID_REQUEST')
})

test('client name collisions in directory mode throw at construction', () => {
  const clash = [...tools(), { source: 'client', name: 'get_weather', description: 'client copy' }]
  const config = resolveToolSearchConfig({ mode: 'directory' })
  throwsCode(assert, () => new ToolSearchSession(new ToolCatalog(clash), config, { executor: async () => null }), 'NAME_COLLISION', /client:client:get_weather/)
  throwsCode(assert, () => new ToolSearchSession(new ToolCatalog(tools()), config, {}), 'INVALID_REQUEST')
})

test('an aborted signal cancels a pending call and aborts the executor signal', async () => {
  let seen
  const { s } = session('tools', {
    answers: { fake_plugin_tool_20: (call) => { seen = call.signal; return new Promise(() => {}) } },
  })
  const controller = new AbortController()
  const pending = s.handle('tool_call', { id: 'fake_plugin_tool_20', args: { marker: 'x' } }, { signal: controller.signal })
  // The call reaches the executor through the addon's threads: on a loaded machine that can take
  // longer than a thousand turns of the loop, so wait by time (5 s at most).
  const until = Date.now() + 5000
  while (!seen && Date.now() < until) await settle()
  assert.ok(seen, 'the executor was not called')
  controller.abort()
  const r = await pending
  assert.equal(r.error.code, 'CANCELLED')
  while (!seen.aborted && Date.now() < until + 5000) await settle()
  assert.equal(seen.aborted, true)
})

test('a signal reused across calls keeps no listener once each call settles', async () => {
  const { s } = session('tools')
  const controller = new AbortController()
  for (let i = 0; i < 5; i++) {
    const r = await s.handle('tool_call', { id: 'fake_plugin_tool_03', args: { marker: String(i) } }, { signal: controller.signal })
    assert.equal(r.ok, true, r.content)
  }
  for (let i = 0; i < 100 && getEventListeners(controller.signal, 'abort').length > 0; i++) await settle()
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0)
  const already = AbortSignal.abort()
  assert.equal((await s.handle('tool_call', { id: 'fake_plugin_tool_03', args: { marker: 'x' } }, { signal: already })).error.code, 'CANCELLED')
})

test('tool_search_code runs through the sandbox, or is not offered without one; control tools outside the mode are refused', async () => {
  const { s: code, calls } = session('code')
  const available = capability.available === true
  const r = await code.handle('tool_search_code', {
    code: 'const [hit] = await openclaw.tools.search("fake plugin tool 05"); return (await openclaw.tools.call(hit.id, { marker: "cell" })).tool.id',
  })
  if (available) {
    assert.equal(r.ok, true, r.content)
    assert.equal(r.value.value, 'openclaw:fake-plugin:fake_plugin_tool_05')
    assert.equal(calls.length, 1)
    assert.ok(calls[0].parentToolCallId)
  } else {
    assert.equal(code.mode, 'tools')
    assert.equal(r.error.code, 'TOOL_NOT_FOUND')
    assert.equal(calls.length, 0)
  }
  const tools = session('tools').s
  assert.equal((await tools.handle('tool_search_code', { code: 'return 1' })).error.code, 'TOOL_NOT_FOUND')
})

test('surface events and byte telemetry', async () => {
  const { s, events } = session('directory', { sessionOptions: { contextTokens: 7680 } })
  const surface = s.surface('openai-responses')
  assert.ok(surface.directoryPrompt.length <= 768)
  s.recordRequestBytes(4096)
  throwsCode(assert, () => s.recordRequestBytes(-1), 'INVALID_REQUEST')
  await eventsOf(events, 1)
  const ev = events.find((e) => e.type === 'surface')
  assert.equal(ev.toolBytes, surface.bytes.tools)
  assert.equal(ev.directoryPromptBytes, surface.bytes.directoryPrompt)
  const t = s.telemetry()
  assert.equal(t.mode, 'directory')
  assert.equal(t.schemasUpFront, 5)
  // The client tool is shown as a direct tool, not cataloged (directory mode).
  assert.equal(t.catalogSchemasUpFront, 0)
  assert.equal(t.surfaceBytes.tools, surface.bytes.tools)
  assert.deepEqual(t.requestBytes, { total: 4096, requests: 1, last: 4096 })
  assert.deepEqual(t.sources, { openclaw: 37, mcp: 1, client: 0 })
})

test('a session does not keep the event loop alive', () => {
  // Weak threadsafe functions: a child that builds a session, renders a
  // surface and finishes a call must exit on its own (a ref'd executor or
  // onEvent would hold it open until the spawn timeout kills it).
  const script = `
    const b = require(${JSON.stringify(join(root, 'index.js'))})
    const s = new b.ToolSearchSession(new b.ToolCatalog([{ name: 'ping', description: 'Ping.' }]),
      b.resolveToolSearchConfig({ mode: 'tools' }), { executor: async () => 'pong', onEvent: () => {} })
    s.surface()
    s.handle('tool_call', { id: 'ping' }).then((r) => console.log(r.ok ? 'done' : r.content))
  `
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(child.signal, null, 'child was killed: the session kept the event loop alive')
  assert.equal(child.status, 0, child.stderr)
  assert.equal(child.stdout.trim(), 'done')
})

test('capability directory: off by default, on with capabilityDirectory, ordered by the turn prompt', () => {
  for (const mode of ['tools', 'code']) {
    const { s } = session(mode)
    assert.equal(s.surface('openai-responses').directoryPrompt, undefined, mode)
    assert.equal(s.directoryPrompt(), null, mode)
  }
  const { s } = session('tools', { sessionOptions: { capabilityDirectory: true } })
  const plain = s.surface('openai-responses')
  assert.match(plain.directoryPrompt, /^Deferred tools, by owner \(schemas not loaded\): find one with tool_search/)
  assert.equal(plain.bytes.directoryPrompt, Buffer.byteLength(plain.directoryPrompt))
  assert.equal(s.directoryPrompt(), plain.directoryPrompt)
  // The turn's prompt puts the tool it names first on its owner's line; the tools stay the same.
  const turn = s.surface('openai-responses', { prompt: 'tool search qa check target=fake_plugin_tool_17' })
  assert.deepEqual(turn.tools, plain.tools)
  assert.match(turn.directoryPrompt, /\(36 tools\): fake_plugin_tool_17, fake_plugin_tool_01,/)
  assert.ok(turn.directoryPrompt.includes('\n- MCP server github (1 tool)') && !turn.directoryPrompt.includes('create_issue'), turn.directoryPrompt)
  assert.equal(s.surface('openai-responses', null).directoryPrompt, plain.directoryPrompt)
  throwsCode(assert, () => s.surface('openai-responses', { prompt: 5 }), 'INVALID_REQUEST')
  throwsCode(assert, () => s.surface('openai-responses', 'x'), 'INVALID_REQUEST')
  throwsCode(assert, () => session('tools', { sessionOptions: { capabilityDirectory: 'yes' } }), 'INVALID_REQUEST')
})

test('session options: contextTokens that is negative, NaN or infinite is refused, not defaulted', () => {
  const catalog = new ToolCatalog(tools())
  const gw = gateway()
  for (const contextTokens of [-1, NaN, Infinity]) {
    throwsCode(assert, () => new ToolSearchSession(catalog, resolveToolSearchConfig({ mode: 'tools' }), { executor: gw.executor, contextTokens }), 'INVALID_REQUEST', /contextTokens must be a non-negative number/)
  }
})
