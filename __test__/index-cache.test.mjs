// The stored search index, across processes as a gateway meets it: the first process with a
// large catalog builds and stores its index, the next loads it and ranks the same; after one
// server changed, the next loads the other servers' part and indexes that server alone; a
// damaged or foreign file is refused and rebuilt; `indexCache: false` stores nothing.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const require = createRequire(import.meta.url)
const { ToolCatalog } = require('../index.js')
const addon = require.resolve('../index.js')

const words = ['weather', 'invoice', 'calendar', 'email', 'repository', 'ticket', 'payment', 'forecast', 'contact', 'report']
const tools = Array.from({ length: 400 }, (_, i) => ({
  source: 'mcp',
  owner: `server${i % 9}`,
  name: `${words[i % words.length]}_${i}`,
  description: `Finds the ${words[(i * 3) % words.length]} ${words[(i * 7 + 1) % words.length]} of an account`,
  inputSchema: { type: 'object', properties: { [`field${i % 11}`]: { type: 'string', description: 'a value' } } },
}))
const queries = ['weather forecast for an account', 'pay an invoice', 'email_3', 'open a support ticket']

/** One new process: builds the catalog with `options`, reports the index status and rankings. */
function processRun(options, catalog = tools) {
  const script = `
    const { ToolCatalog } = require(${JSON.stringify(addon)})
    const [tools, options, queries] = JSON.parse(require('node:fs').readFileSync(0, 'utf8'))
    ToolCatalog.build(tools, options).then((catalog) => {
      process.stdout.write(JSON.stringify({
        index: catalog.rankingStatus().index,
        rankings: queries.map((q) => catalog.search(q, { limit: 10 }).map((h) => h.id)),
      }))
    })`
  const out = execFileSync(process.execPath, ['-e', script], { input: JSON.stringify([catalog, { ranking: 'lexical', ...options }, queries]) })
  return JSON.parse(out)
}

const indexFiles = (dir) => readdirSync(dir).filter((name) => name.endsWith('.index'))

test('a later process loads the index the first one stored, and ranks the same', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ots-index-cache-'))
  try {
    const first = processRun({ indexCache: dir })
    assert.deepEqual(first.index, { state: 'saved' })
    const [file] = indexFiles(dir)
    assert.ok(file, 'one stored index')
    assert.equal(statSync(join(dir, file)).mode & 0o777, 0o600)
    assert.equal(statSync(dir).mode & 0o777, 0o700)
    const second = processRun({ indexCache: dir })
    assert.deepEqual(second.index, { state: 'loaded' })
    assert.deepEqual(second.rankings, first.rankings)
    const uncached = processRun({ indexCache: false })
    assert.deepEqual(uncached.index, { state: 'off' })
    assert.deepEqual(uncached.rankings, first.rankings)

    // Damaged: refused with the reason, rebuilt, stored again for the next process.
    const bytes = readFileSync(join(dir, file))
    bytes[bytes.length >> 1] ^= 0x20
    writeFileSync(join(dir, file), bytes)
    const rebuilt = processRun({ indexCache: dir })
    assert.equal(rebuilt.index.state, 'saved')
    assert.match(rebuilt.index.warning, /stored index part .*\.index refused \(damaged, or written with another installation's key\): its tools are indexed again/)
    assert.deepEqual(rebuilt.rankings, first.rankings)
    assert.deepEqual(processRun({ indexCache: dir }).index, { state: 'loaded' })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test("after one server's tools changed, the next process loads the other servers' part and indexes that server alone", () => {
  const dir = mkdtempSync(join(tmpdir(), 'ots-index-parts-'))
  try {
    assert.equal(processRun({ indexCache: dir }).index.state, 'saved')
    // server4 changes a description and adds a tool.
    const changed = tools.map((tool, i) => (i === 4 ? { ...tool, description: `${tool.description}, weekly forecast included` } : tool))
    changed.push({ source: 'mcp', owner: 'server4', name: 'forecast_weekly', description: 'Weekly weather forecast of an account' })
    const partly = processRun({ indexCache: dir }, changed)
    assert.deepEqual(partly.index, { state: 'loadedInPart' })
    assert.equal(indexFiles(dir).length, 2, "the whole catalog's part and server4's")
    const built = processRun({ indexCache: false }, changed)
    assert.deepEqual(partly.rankings, built.rankings)
    assert.ok(built.rankings[0].includes('mcp:server4:forecast_weekly'), JSON.stringify(built.rankings[0]))
    const next = processRun({ indexCache: dir }, changed)
    assert.deepEqual(next.index, { state: 'loaded' })
    assert.deepEqual(next.rankings, built.rankings)
    // The catalog as it was is still served by the first part.
    assert.deepEqual(processRun({ indexCache: dir }).index, { state: 'loaded' })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the index cache follows vectorCache by default; a bad value is refused with a code', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ots-index-default-'))
  try {
    assert.deepEqual(processRun({ vectorCache: dir }).index, { state: 'saved' })
    assert.equal(indexFiles(dir).length, 1)
    assert.deepEqual(processRun({ vectorCache: false }).index, { state: 'off' })
    const small = await ToolCatalog.build(tools.slice(0, 10), { indexCache: dir })
    assert.deepEqual(small.rankingStatus().index, { state: 'off' })
    assert.throws(() => new ToolCatalog(tools.slice(0, 2), { indexCache: 5 }), (e) => e.code === 'INVALID_CATALOG' && /indexCache/.test(e.message))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
