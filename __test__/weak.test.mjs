// Weak-match marking through the addon: a search whose best hits share only
// common words with the query marks them `weak: true`, and tool_search's text
// says so; a capability match and an exact name are never marked.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { binding } from './helpers.mjs'

const { ToolCatalog, ToolSearchSession, resolveToolSearchConfig } = binding

// "get", "current" and "status" are in every device tool (common words).
const devices = ['printer', 'reactor', 'pump', 'boiler', 'turbine', 'router', 'elevator', 'furnace', 'camera', 'drone',
  'satellite', 'freezer', 'generator', 'compressor', 'conveyor', 'crane', 'valve', 'heater', 'sensor', 'battery',
  'inverter', 'scanner', 'robot', 'kiosk', 'antenna', 'locker', 'projector', 'thermostat']
const tools = () => [
  ...devices.map((d) => ({ name: `get_${d}_status`, description: `Get the current status of the ${d}.` })),
  { name: 'send_email', description: 'Send an email message to a recipient.' },
  { name: 'status', description: 'Current status of the gateway.' },
]

test('catalog.search marks hits that matched only common words', () => {
  const catalog = new ToolCatalog(tools())
  const weak = catalog.search('get the current status of my flux capacitor')
  assert.ok(weak.length > 0)
  assert.ok(weak.every((h) => h.weak === true), JSON.stringify(weak))
  const [strong] = catalog.search('send an email')
  assert.equal(strong.name, 'send_email')
  assert.equal('weak' in strong, false)
  const [exact] = catalog.search('status')
  assert.equal(exact.name, 'status')
  assert.equal('weak' in exact, false)
  const batch = catalog.searchBatch({ queries: [{ query: 'turbine' }, { query: 'current status of the flux capacitor' }] })
  assert.equal('weak' in batch.results[0].candidates[0], false)
  assert.equal(batch.results[1].candidates[0].weak, true)
})

test('tool_search adds a note when nothing matched well', async () => {
  const s = new ToolSearchSession(new ToolCatalog(tools()), resolveToolSearchConfig({ mode: 'tools' }), {
    executor: async () => ({ content: [] }),
  })
  const weak = await s.handle('tool_search', { query: 'get the current status of my flux capacitor' })
  assert.equal(weak.ok, true)
  assert.equal(weak.value[0].weak, true)
  assert.match(weak.content, /Note: no tool matched well;/)
  const strong = await s.handle('tool_search', { query: 'status of the turbine' })
  assert.equal(strong.value[0].name, 'get_turbine_status')
  assert.doesNotMatch(strong.content, /Note:/)
})
