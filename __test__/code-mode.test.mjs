// Code mode through the binding: the session's tool_search_code on the real
// sandbox runner. Where the host has no sound Node, the fallback is asserted.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { binding, capability, fakeTools, needsCodeMode, requireCodeMode } from './helpers.mjs'

const { ToolCatalog, ToolSearchSession, resolveToolSearchConfig, codeModeCapability } = binding

function session(config = { mode: 'code', codeTimeoutMs: 5000 }, executor) {
  const catalog = new ToolCatalog(fakeTools())
  return new ToolSearchSession(catalog, resolveToolSearchConfig(config), {
    executor: executor ?? (async (call) => ({ content: [{ type: 'text', text: `FAKE_PLUGIN_OK ${call.name} ${JSON.stringify(call.args)}` }] })),
  })
}

test('capability report explains availability', () => {
  assert.equal(typeof capability.available, 'boolean')
  assert.equal(capability.pending, undefined, 'probeCodeMode() resolves with the final report')
  assert.deepEqual(codeModeCapability(), capability, 'the sync form answers from the cached probe')
  if (requireCodeMode) assert.equal(capability.available, true, `REQUIRE_CODE_MODE=1 but: ${capability.reason}`)
  if (!capability.available) {
    assert.match(capability.reason, /Node|launcher/)
    assert.equal(resolveToolSearchConfig(true).mode, 'tools')
    assert.match(resolveToolSearchConfig(true).fallbackReason, /code mode/)
  } else {
    assert.equal(resolveToolSearchConfig(true).mode, 'code')
    assert.equal(capability.node.sound, true)
    assert.ok(capability.layers && capability.layers.seccomp === true && capability.layers.setsid === true, JSON.stringify(capability.layers))
  }
})

test('a cell searches, describes and calls through the bridge', { skip: needsCodeMode }, async () => {
  const s = session()
  const r = await s.handle('tool_search_code', {
    code: `const [hit] = await openclaw.tools.search('fake plugin tool 17', { limit: 1 });
           const d = await openclaw.tools.describe(hit.id);
           console.log('found', d.id);
           return await openclaw.tools.call(d.id, { marker: 'm' });`,
  })
  assert.equal(r.ok, true, JSON.stringify(r))
  assert.match(JSON.stringify(r.value.value.result), /FAKE_PLUGIN_OK fake_plugin_tool_17/)
  assert.deepEqual(r.value.logs, ['found openclaw:fake-plugin:fake_plugin_tool_17'])
  assert.deepEqual(r.value.telemetry.bridgeCalls, { search: 1, describe: 1, call: 1 })
  const t = s.telemetry()
  assert.deepEqual([t.searchCount, t.describeCount, t.callCount, t.codeRuns], [1, 1, 1, 1])
  assert.equal(t.toolsCalled[0].via, 'tool_search_code')
})

test('a looping cell times out with CODE_TIMEOUT and aborts the in-flight call', { skip: needsCodeMode }, async () => {
  // The deadline also covers starting a child, which a loaded machine can stretch past a second:
  // the cell loops only once the host has answered a second call, and the host answers it only
  // once the first call has reached the executor (the bridge may dispatch the two in any order).
  const started = []
  let aborted = false
  let onAbort, onFirst
  const abortSeen = new Promise((resolve) => { onAbort = resolve })
  const firstSeen = new Promise((resolve) => { onFirst = resolve })
  const s = session({ mode: 'code', codeTimeoutMs: 3000 }, async (call) => {
    started.push(call.name)
    if (call.name !== 'fake_plugin_tool_01') {
      await firstSeen
      return 'ok'
    }
    onFirst()
    return new Promise((resolve) => {
      call.signal.addEventListener('abort', () => { aborted = true; onAbort(); resolve('late') })
    })
  })
  const r = await s.handle('tool_search_code', {
    code: `openclaw.tools.call('fake_plugin_tool_01', { marker: 'x' });
           await openclaw.tools.call('fake_plugin_tool_02', { marker: 'y' });
           while (true) {}`,
  })
  assert.equal(r.ok, false)
  assert.equal(r.error.code, 'CODE_TIMEOUT')
  assert.equal(r.value.error.kind, 'timeout')
  assert.deepEqual(started.toSorted(), ['fake_plugin_tool_01', 'fake_plugin_tool_02'], `the cell reached its loop: ${JSON.stringify(r.value.telemetry)}`)
  // The abort reaches the executor through the event loop; allow it a generous moment.
  let timer
  await Promise.race([abortSeen, new Promise((resolve) => { timer = setTimeout(resolve, 2000) })])
  clearTimeout(timer)
  assert.equal(aborted, true, 'the outstanding call was aborted')
})

test('errors inside the cell name openclaw.tools.* and policy still applies', { skip: needsCodeMode }, async () => {
  const catalog = new ToolCatalog(fakeTools(), { policy: { agent: { deny: ['fake_plugin_tool_17'] } } })
  let called = 0
  const s = new ToolSearchSession(catalog, resolveToolSearchConfig({ mode: 'code' }), { executor: async () => { called++; return 'x' } })
  const r = await s.handle('tool_search_code', {
    code: `try { await openclaw.tools.describe('fake_plugin_tool_17') } catch (e) { return String(e.message) }`,
  })
  assert.equal(r.ok, true, JSON.stringify(r))
  assert.match(r.value.value, /Unknown tool id: fake_plugin_tool_17\..*openclaw\.tools\.search/)
  const call = await s.handle('tool_search_code', { code: `return await openclaw.tools.call('openclaw:fake-plugin:fake_plugin_tool_17', { marker: 'x' })` })
  assert.equal(call.ok, false)
  assert.equal(called, 0)
})
