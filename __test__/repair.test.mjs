// `repair: true`: refused records indexed in a safe form in one build, reported in `repaired`.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { binding } from './helpers.mjs'

const { ToolCatalog } = binding

/** An array nested past the record reader's depth: the record cannot be read as a whole. */
const tooDeep = () => {
  let value = []
  for (let i = 0; i < 200; i++) value = [value]
  return value
}

/** A catalog with one tool of each kind the catalog refuses, and a duplicate. */
function oddTools() {
  return [
    { name: 'read_file', description: 'Read a file from the local disk' },
    { name: 'tool_search', description: 'Search the public web for pages about a topic' },
    { name: 'send\u200Bmail', description: 'Send an email message to a recipient' },
    { name: 'git:status', description: 'Show the working tree status of a git repository' },
    { name: 'make_chart', description: 'Draw a bar chart from numbers', inputSchema: 'not a schema' },
    { name: 'list_invoices', description: 'List the unpaid invoices of a customer', extra: tooDeep() },
    { name: 'read_file', description: 'Read a file from the local disk, registered again' },
  ]
}

/** What each odd tool (by its position) is indexed under. */
const REPAIRED_IDS = {
  1: 'openclaw:core:tool_search_2',
  2: 'openclaw:core:sendmail',
  3: 'openclaw:core:git_status',
  4: 'openclaw:core:make_chart',
  5: 'openclaw:core:list_invoices',
}

test('one build with repair: true indexes every repairable tool under the id it reports', async () => {
  const tools = oddTools()
  const catalog = await ToolCatalog.build(tools, { repair: true, cache: false })
  assert.deepEqual(
    catalog.repaired.map(({ index, code, field }) => ({ index, code, field })),
    [
      { index: 1, code: 'CONTROL_TOOL', field: 'name' },
      { index: 2, code: 'INVALID_FIELD', field: 'name' },
      { index: 3, code: 'INVALID_FIELD', field: 'name' },
      { index: 4, code: 'INVALID_SCHEMA', field: 'inputSchema' },
      { index: 5, code: 'UNREADABLE_RECORD', field: undefined },
    ],
  )
  for (const repaired of catalog.repaired) {
    assert.equal(repaired.id, REPAIRED_IDS[repaired.index])
    assert.equal(typeof repaired.reason, 'string')
    assert.ok(repaired.reason.length > 0)
    // Found by what it does, first, under the reported id; and described by it.
    const [hit] = catalog.search(tools[repaired.index].description, { limit: 3 })
    assert.equal(hit.id, repaired.id, tools[repaired.index].description)
    assert.equal(catalog.describe(repaired.id).id, repaired.id)
  }
  assert.equal(catalog.repaired[0].change, 'renamed to openclaw:core:tool_search_2')
  assert.equal(catalog.repaired[3].change, 'indexed without its input schema')
  assert.deepEqual(catalog.describe('openclaw:core:make_chart').parameters, {})
  // Only the replaced duplicate stays out.
  assert.deepEqual(
    catalog.excluded.map(({ index, code }) => ({ index, code })),
    [{ index: 0, code: 'DUPLICATE_ID' }],
  )
  assert.equal(catalog.size, 6)
  // Each tool given, by its position: the id it is indexed under (the replaced duplicate: null).
  assert.deepEqual(catalog.recordIds, [null, ...[1, 2, 3, 4, 5].map((i) => REPAIRED_IDS[i]), 'openclaw:core:read_file'])
})

test('without repair the same tools are excluded as before, and nothing is repaired', async () => {
  const plain = await ToolCatalog.build(oddTools(), { cache: false })
  assert.deepEqual(plain.repaired, [])
  assert.deepEqual(
    plain.excluded.map(({ index, code, field }) => ({ index, code, field })),
    [
      { index: 0, code: 'DUPLICATE_ID', field: undefined },
      { index: 1, code: 'CONTROL_TOOL', field: 'name' },
      { index: 2, code: 'INVALID_FIELD', field: 'name' },
      { index: 3, code: 'INVALID_FIELD', field: 'name' },
      { index: 4, code: 'INVALID_SCHEMA', field: 'inputSchema' },
      { index: 5, code: 'UNREADABLE_RECORD', field: undefined },
    ],
  )
  assert.deepEqual(plain.ids(), ['openclaw:core:read_file'])
  assert.deepEqual(plain.recordIds, [null, null, null, null, null, null, 'openclaw:core:read_file'])
  // The repairs report the refusals a build without them does, word for word.
  const repaired = await ToolCatalog.build(oddTools(), { repair: true, cache: false })
  assert.deepEqual(
    repaired.repaired.map(({ index, code, reason }) => ({ index, code, reason })),
    plain.excluded.filter((x) => x.code !== 'DUPLICATE_ID').map(({ index, code, reason }) => ({ index, code, reason })),
  )
  assert.notEqual(repaired.fingerprint, plain.fingerprint)
  // A catalog with nothing to repair is the same catalog either way.
  const clean = [{ name: 'a_tool', description: 'does a' }]
  assert.equal((await ToolCatalog.build(clean, { repair: true })).fingerprint, (await ToolCatalog.build(clean)).fingerprint)
})

test('updateAsync of a repaired catalog repairs a newly odd tool, as a full build does', async () => {
  const catalog = await ToolCatalog.build(oddTools(), { repair: true, cache: false })
  const tools = [...oddTools(), { name: 'tool_call', description: 'Call a remote procedure over HTTP' }]
  const next = await catalog.updateAsync(tools)
  const renamed = next.repaired.find((r) => r.index === tools.length - 1)
  assert.equal(renamed?.code, 'CONTROL_TOOL')
  assert.equal(renamed.id, 'openclaw:core:tool_call_2')
  assert.equal(next.search('call a remote procedure over http', { limit: 1 })[0].id, renamed.id)
  const full = await ToolCatalog.build(tools, { repair: true, cache: false })
  assert.equal(next.fingerprint, full.fingerprint)
  assert.deepEqual(next.ids(), full.ids())
  assert.deepEqual(next.repaired, full.repaired)
  assert.deepEqual(next.excluded, full.excluded)
  assert.deepEqual(next.recordIds, full.recordIds)
  // And the catalog's other derived versions keep the setting.
  const appended = next.append([{ name: 'a:b', description: 'appended' }])
  assert.ok(appended.repaired.some((r) => r.id === 'openclaw:core:a_b'))
  const sourced = await next.withSourceAsync({ source: 'mcp', owner: 'docs' }, [{ name: 'fetch', description: 'fetch a page', inputSchema: 5 }])
  assert.ok(sourced.repaired.some((r) => r.id === 'mcp:docs:fetch' && r.code === 'INVALID_SCHEMA'))
  assert.equal(sourced.recordIds.at(-1), 'mcp:docs:fetch')
  // A view answers only the tools it allows; the same tools in another order, their own ids.
  assert.deepEqual(next.restrict(['read_file']).recordIds.filter((id) => id !== null), ['openclaw:core:read_file'])
  const reordered = await ToolCatalog.build(tools.slice().reverse(), { repair: true })
  const forward = await ToolCatalog.build(tools, { repair: true })
  assert.deepEqual(forward.recordIds, full.recordIds)
  const last = tools.length - 1
  // Reversed, the first read_file is the later record: it is the tool, the other one is replaced.
  assert.equal(reordered.recordIds[last], 'openclaw:core:read_file')
  assert.equal(reordered.recordIds[last - 6], null)
  assert.equal(reordered.recordIds[last - 2], forward.recordIds[2])
})

test('a tool JSON cannot express is indexed by the fields that can be read', () => {
  const base = new ToolCatalog([{ name: 'read_file' }], { repair: true, cache: false })
  const odd = { name: 'count_rows', description: 'Count the rows of a table', limit: 10n }
  const repaired = base.append([odd])
  assert.deepEqual(
    repaired.repaired.map(({ index, code, id }) => ({ index, code, id })),
    [{ index: 1, code: 'UNREADABLE_RECORD', id: 'openclaw:core:count_rows' }],
  )
  assert.match(repaired.repaired[0].reason, /BigInt/)
  assert.equal(repaired.describe('count_rows').description, 'Count the rows of a table')
  // Without repair: excluded alone, with the same reason.
  const plain = new ToolCatalog([{ name: 'read_file' }], { cache: false }).append([odd])
  assert.deepEqual(plain.excluded.map(({ index, code, reason }) => ({ index, code, reason })), [{ index: 1, code: 'UNREADABLE_RECORD', reason: repaired.repaired[0].reason }])
})

test('contract() reads the rules from their one home', async () => {
  const contract = binding.contract()
  // The fields a tool record may have, as the strict build accepts them.
  const record = Object.fromEntries(contract.recordFields.map((field) => [field, undefined]))
  record.name = 'all_fields'
  assert.equal(new ToolCatalog([record], { strict: true, cache: false }).size, 1)
  assert.throws(() => new ToolCatalog([{ name: 'x', notAField: 1 }], { strict: true, cache: false }), /unknown field/)
  // The name limit the catalog enforces.
  const { maxNameChars } = contract.limits
  const names = new ToolCatalog([{ name: 'n'.repeat(maxNameChars) }, { name: 'm'.repeat(maxNameChars + 1) }], { cache: false })
  assert.equal(names.size, 1)
  assert.equal(names.excluded[0].field, 'name')
  // Every control tool's name is refused as one.
  const control = new ToolCatalog(contract.controlTools.map((name) => ({ name })), { cache: false })
  assert.deepEqual(new Set(control.excluded.map((x) => x.code)), new Set(['CONTROL_TOOL']))
  assert.equal(control.excluded.length, contract.controlTools.length)
  // The marker stands for a tool JSON cannot express, in either form.
  const marked = ToolCatalog.fromJson(
    [JSON.stringify(`${contract.unreadableMarker}why`), JSON.stringify({ [contract.unreadableMarker]: 'why too', name: 'named' })].join('\n'),
    { cache: false },
  )
  assert.deepEqual(marked.excluded.map(({ code, reason }) => ({ code, reason })), [
    { code: 'UNREADABLE_RECORD', reason: 'why' },
    { code: 'UNREADABLE_RECORD', reason: 'why too' },
  ])
  assert.deepEqual(contract.unreadableFields, ['source', 'owner', 'name', 'description'])
  // A model folder the package found holds exactly these files.
  const capability = binding.rankingCapability()
  if (capability.model) {
    const { readdirSync } = await import('node:fs')
    const files = readdirSync(capability.model)
    for (const file of contract.modelFiles) assert.ok(files.includes(file), file)
  }
  // Plain data: a caller's change does not reach the next call.
  contract.controlTools.push('mine')
  assert.ok(!binding.contract().controlTools.includes('mine'))
})
